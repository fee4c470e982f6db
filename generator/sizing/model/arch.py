"""One architecture value type for every formula, whatever the model reference looked like.

A workload names its model either by catalog id or inline (``InlineArchitecture``); the
formulas must not care which. ``Architecture`` is a plain frozen dataclass (not pydantic)
because the planner reads its fields in its inner loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.load import Catalog
from generator.catalog.models import ModelArchitecture
from generator.errors import PodplanError
from generator.spec.architecture import Attention, InlineArchitecture, Mlp


@dataclass(frozen=True, slots=True)
class Architecture:
    """A decoder-only transformer, in the notation of sizing-models.md (L, h, a, g, f, V)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    swiglu: bool
    vocab: int
    tied_embeddings: bool = False
    experts: int = 1
    """Routed experts per MoE layer (1 = dense)."""
    top_k: int = 1
    kv_channels: int = 0
    """Head width d_h where the query projection is not h wide (Qwen3, GPT-OSS: a*d_h != h);
    0 means h / a. Megatron's ``kv_channels``."""
    shared_experts: int = 0
    """Always-on experts per MoE layer (DeepSeek, Llama 4), each ``shared_ffn`` wide."""
    shared_ffn: int = 0
    """Width of one shared expert; 0 means ``ffn``."""
    dense_ffn: int = 0
    """Width of the MLP of the dense (non-MoE) layers of an MoE model; 0 means ``ffn``."""
    dense_layers: int = 0
    """Leading dense layers before the MoE layers start (DeepSeek's first_k_dense_replace)."""
    moe_every: int = 1
    """Every n-th remaining layer is an MoE layer (Llama 4 Maverick: 2), the others dense."""
    q_lora_rank: int = 0
    """MLA: rank of the compressed query (0: queries not compressed, DeepSeek-V2-Lite)."""
    kv_lora_rank: int = 0
    """MLA: rank of the compressed key/value latent; > 0 marks multi-head latent attention."""
    qk_rope_dim: int = 0
    """MLA: rotary part of each query/key head (shared across heads for the key)."""
    v_head_dim: int = 0
    """MLA: value width per head (the non-rotary query/key width is ``kv_channels``)."""
    sliding_window: int = 0
    """Tokens a sliding-window (local) attention layer looks back over (GPT-OSS: 128)."""
    sliding_window_layers: int = 0
    """Layers that use the sliding window; the others attend over the whole sequence
    (GPT-OSS alternates the two: 18 of its 36 layers)."""

    def attended_tokens(self, seq: float) -> float:
        """Keys per query summed over the layers: s for a full-attention layer, min(w, s)
        for a sliding-window one (the attention core's work scales with it)."""
        local = self.sliding_window_layers if self.sliding_window else 0
        return (self.layers - local) * seq + local * min(float(self.sliding_window), seq)

    @property
    def head_dim(self) -> int:
        """d_h: ``kv_channels`` when given, else h / a (for MLA: the non-rotary q/k width)."""
        return self.kv_channels or self.hidden // self.heads

    @property
    def mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3, Kimi K2)."""
        return self.kv_lora_rank > 0

    @property
    def attention_width(self) -> float:
        """a * d_h of the attention core: QK^T runs over the query/key head width, softmax*V
        over the value width; MLA's differ (192 and 128 for DeepSeek-V3), so their mean."""
        if self.mla:
            return self.heads * (self.head_dim + self.qk_rope_dim + self.v_head_dim) / 2.0
        return float(self.heads * self.head_dim)

    @property
    def moe(self) -> bool:
        return self.experts > 1

    @property
    def mlp_matrices(self) -> int:
        """k in k*h*f: SwiGLU has gate, up and down projections; GELU has two."""
        return 3 if self.swiglu else 2


def _variant_fields(model: ModelArchitecture | InlineArchitecture) -> dict[str, int]:
    """MoE and attention-variant fields, named alike in the catalog and the spec."""
    mla = model.attention is Attention.mla
    return {
        "kv_channels": model.head_dim or 0,
        "shared_experts": model.shared_experts,
        "shared_ffn": model.shared_expert_ffn_hidden_size or 0,
        "dense_ffn": model.dense_ffn_hidden_size or 0,
        "dense_layers": model.first_k_dense_layers,
        "moe_every": model.moe_layer_frequency,
        "q_lora_rank": model.q_lora_rank if mla else 0,
        "kv_lora_rank": (model.kv_lora_rank or 0) if mla else 0,
        "qk_rope_dim": (model.qk_rope_head_dim or 0) if mla else 0,
        "v_head_dim": (model.v_head_dim or 0) if mla else 0,
        "sliding_window": model.sliding_window or 0,
        "sliding_window_layers": model.sliding_window_layers if model.sliding_window else 0,
    }


def from_catalog(model: ModelArchitecture) -> Architecture:
    """The catalog's published architecture as an ``Architecture``."""
    return Architecture(
        name=model.name, layers=model.layers, hidden=model.hidden_size,
        heads=model.attention_heads, kv_heads=model.kv_heads, ffn=model.ffn_hidden_size,
        swiglu=model.mlp is Mlp.swiglu, vocab=model.vocab_size,
        tied_embeddings=model.tied_embeddings, experts=model.experts, top_k=model.top_k,
        **_variant_fields(model),
    )


def from_inline(model: InlineArchitecture) -> Architecture:
    """An inline architecture; kv_heads defaults to heads (MHA), ffn to 4h (GELU only).

    The spec already refuses a SwiGLU model without ``ffn_hidden_size``: SwiGLU widths are
    not a fixed multiple of h (Llama uses 8h/3 rounded, 3.5h, 2.69h ...).
    """
    return Architecture(
        name=model.name, layers=model.layers, hidden=model.hidden_size,
        heads=model.attention_heads, kv_heads=model.kv_heads or model.attention_heads,
        ffn=model.ffn_hidden_size or 4 * model.hidden_size,
        swiglu=model.mlp is Mlp.swiglu, vocab=model.vocab_size,
        tied_embeddings=model.tied_embeddings, experts=model.experts, top_k=model.top_k,
        **_variant_fields(model),
    )


def resolve_model(ref: str | InlineArchitecture, catalog: Catalog) -> Architecture:
    """Turn a workload's ``model`` (catalog id or inline mapping) into an ``Architecture``."""
    if isinstance(ref, InlineArchitecture):
        return from_inline(ref)
    models = catalog.models
    if ref not in models:
        raise PodplanError(f"unknown model '{ref}' (known: {', '.join(sorted(models))})")
    return from_catalog(models[ref])
