"""Parameter counts and KV-cache size (sizing-models.md §9.1).

P_layer = h*(a*d_h) [Q] + 2*h*(g*d_h) [K,V] + (a*d_h)*h [O] + k*h*f*E [MLP] + h*E [router]
+ 2h [norms]; P = L*P_layer + V*h*(1 if tied else 2) + h. Biases are left out: modern
models have none and GPT-3's are < 0.1 % of its weights. MoE "active" parameters use top-k
experts instead of E, which is what a token actually multiplies against.
"""

from __future__ import annotations

from functools import lru_cache

from generator.sizing.model.arch import Architecture


def attention_params(arch: Architecture) -> int:
    """Q and O are h x (a*d_h); K and V shrink with grouped-query attention (g heads)."""
    qo = 2 * arch.hidden * arch.heads * arch.head_dim
    kv = 2 * arch.hidden * arch.kv_heads * arch.head_dim
    return qo + kv


def expert_params(arch: Architecture) -> int:
    """One MLP (one expert): k matrices of h x f."""
    return arch.mlp_matrices * arch.hidden * arch.ffn


@lru_cache(maxsize=256)
def layer_params(arch: Architecture, *, active: bool = False) -> int:
    """One transformer block; ``active`` counts only the top-k experts a token uses."""
    experts = arch.top_k if active else arch.experts
    router = arch.hidden * arch.experts if arch.experts > 1 else 0
    return attention_params(arch) + experts * expert_params(arch) + router + 2 * arch.hidden


def embedding_params(arch: Architecture) -> int:
    """Input embedding plus the output projection unless the two are tied."""
    return arch.vocab * arch.hidden * (1 if arch.tied_embeddings else 2)


def total_params(arch: Architecture) -> int:
    """Every weight of the model."""
    return arch.layers * layer_params(arch) + embedding_params(arch) + arch.hidden


def active_params(arch: Architecture) -> int:
    """Weights one token touches (= total for dense models)."""
    return arch.layers * layer_params(arch, active=True) + embedding_params(arch) + arch.hidden


def non_embedding_params(arch: Architecture, *, active: bool = False) -> int:
    """Transformer blocks and the final norm: what scales compute with depth and width."""
    return arch.layers * layer_params(arch, active=active) + arch.hidden


def kv_bytes_per_token(arch: Architecture, bytes_per_value: float = 2.0) -> float:
    """K and V for every layer: 2 * L * g * d_h values (Llama-2-70B: 320 KiB in bf16)."""
    return 2 * arch.layers * arch.kv_heads * arch.head_dim * bytes_per_value


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
