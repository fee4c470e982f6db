"""Parameter counts and KV-cache size (sizing-models.md §9.1).

P_layer = h*(a*d_h) [Q] + 2*h*(g*d_h) [K,V] + (a*d_h)*h [O] + k*h*f*E [MLP] + h*E [router]
+ 2h [norms]; P = L*P_layer + V*h*(1 if tied else 2) + h. MoE models add shared experts
(S*k*h*f_s per MoE layer) and may keep dense layers (k*h*f_dense) before or between the MoE
layers; MLA replaces Q/K/V by low-rank projections (see ``attention_params``).
Biases are left out: modern models have none and GPT-3's are < 0.1 % of its weights. MoE
"active" parameters use top-k experts instead of E: what a token actually multiplies against.
"""

from __future__ import annotations

from functools import cache, lru_cache

from generator.sizing.model.arch import Architecture
from generator.sizing.model.kvcache import kv_cache_bytes_per_token


def attention_params(arch: Architecture) -> int:
    """Q and O are h x (a*d_h); K and V shrink with grouped-query attention (g heads).

    MLA (DeepSeek-V2/V3): queries through an optional low-rank q_lora (with its norm), keys
    and values through the kv_lora latent plus one shared rotary key of d_rope, expanded
    per head to the non-rotary key (d_h) and the value (d_v); O is (a*d_v) x h.
    """
    h, a = arch.hidden, arch.heads
    if arch.mla:
        qk = a * (arch.head_dim + arch.qk_rope_dim)
        r_q, r_kv = arch.q_lora_rank, arch.kv_lora_rank
        q = h * r_q + r_q + r_q * qk if r_q else h * qk
        kv = h * (r_kv + arch.qk_rope_dim) + r_kv + r_kv * a * (arch.head_dim + arch.v_head_dim)
        return q + kv + a * arch.v_head_dim * h
    qo = 2 * h * a * arch.head_dim
    kv = 2 * h * arch.kv_heads * arch.head_dim
    return qo + kv


def expert_params(arch: Architecture) -> int:
    """One MLP (one expert): k matrices of h x f."""
    return arch.mlp_matrices * arch.hidden * arch.ffn


@cache
def moe_layers(arch: Architecture) -> int:
    """Layers with routed experts: every ``moe_every``-th layer after the dense ones."""
    if not arch.moe:
        return 0
    return (arch.layers - arch.dense_layers) // arch.moe_every


def routed_params(arch: Architecture, *, active: bool = False) -> int:
    """Routed expert weights of one MoE layer (E experts, or the top-k a token uses): the
    weights expert parallelism shards."""
    return (arch.top_k if active else arch.experts) * expert_params(arch)


def _dense_mlp(arch: Architecture) -> int:
    return arch.mlp_matrices * arch.hidden * (arch.dense_ffn or arch.ffn)


def _shared_mlp(arch: Architecture) -> int:
    return arch.shared_experts * arch.mlp_matrices * arch.hidden * (arch.shared_ffn or arch.ffn)


@lru_cache(maxsize=256)
def layer_params(arch: Architecture, *, active: bool = False, moe: bool | None = None) -> int:
    """One transformer block; ``active`` counts only the top-k experts a token uses.

    ``moe``: which kind of block of an MoE model (default: an MoE block when the model has
    any, the heaviest block, which is what per-layer memory bounds need)."""
    is_moe = arch.moe if moe is None else (moe and arch.moe)
    norms = 2 * arch.hidden
    if not is_moe:
        return attention_params(arch) + _dense_mlp(arch) + norms
    router = arch.hidden * arch.experts
    return (attention_params(arch) + routed_params(arch, active=active) + _shared_mlp(arch)
            + router + norms)


@cache
def block_params(arch: Architecture, *, active: bool = False) -> int:
    """Every transformer block: the MoE blocks plus the dense ones."""
    n_moe = moe_layers(arch)
    return (n_moe * layer_params(arch, active=active, moe=True)
            + (arch.layers - n_moe) * layer_params(arch, active=active, moe=False))


def embedding_params(arch: Architecture) -> int:
    """Input embedding plus the output projection unless the two are tied."""
    return arch.vocab * arch.hidden * (1 if arch.tied_embeddings else 2)


@cache
def total_params(arch: Architecture) -> int:
    """Every weight of the model."""
    return block_params(arch) + embedding_params(arch) + arch.hidden


def active_params(arch: Architecture) -> int:
    """Weights one token touches (= total for dense models)."""
    return block_params(arch, active=True) + embedding_params(arch) + arch.hidden


@cache
def non_embedding_params(arch: Architecture, *, active: bool = False) -> int:
    """Transformer blocks and the final norm: what scales compute with depth and width."""
    return block_params(arch, active=active) + arch.hidden


@cache
def routed_active_params(arch: Architecture) -> int:
    """Routed expert weights one token multiplies against, over all MoE layers (their GEMMs
    are grouped and small, so they are timed apart from the dense ones)."""
    return moe_layers(arch) * routed_params(arch, active=True)


def kv_bytes_per_token(arch: Architecture, bytes_per_value: float = 2.0) -> float:
    """K and V for every layer (Llama-2-70B: 320 KiB in bf16); MLA caches its latent.
    Kept for existing callers: ``kvcache.kv_cache_bytes_per_token`` is the one formula."""
    return kv_cache_bytes_per_token(arch, bytes_per_value)


def lora_adapter_params(arch: Architecture, rank: int, targets: tuple[str, ...]) -> int:
    """r * (d_in + d_out) per targeted matrix per layer.

    Targets follow Megatron names: ``qkv`` (fused QKV), ``proj`` (attention output),
    ``fc1`` (up/gate), ``fc2`` (down). MoE adapters are counted on every expert.
    """
    h, dh = arch.hidden, arch.head_dim
    qkv_out = (arch.heads + 2 * arch.kv_heads) * dh
    fc1_out = arch.ffn * (2 if arch.swiglu else 1)
    shapes = {
        "qkv": (h, qkv_out, 1),
        "proj": (arch.heads * dh, h, 1),
        "fc1": (h, fc1_out, arch.experts),
        "fc2": (arch.ffn, h, arch.experts),
    }
    per_layer = 0
    for name in targets:
        d_in, d_out, copies = shapes[name]
        per_layer += rank * (d_in + d_out) * copies
    return arch.layers * per_layer


def ptuning_params(arch: Architecture, virtual_tokens: int, bottleneck: int) -> int:
    """P-tuning's prompt encoder: an MLP h -> bottleneck -> h per virtual token table."""
    return virtual_tokens * arch.hidden + 2 * arch.hidden * bottleneck + bottleneck + arch.hidden
