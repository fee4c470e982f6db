"""An LLM architecture given inline in a spec instead of a catalog id.

Its own module because it is the largest spec model and the only one that describes a model
rather than a workload or a site; ``spec.models`` uses it in the workloads and re-exports it.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from generator.spec.base import SpecModel

__all__ = ["Attention", "InlineArchitecture", "Mlp"]


class Mlp(StrEnum):
    """Feed-forward block type: GELU has two matrices, SwiGLU three."""

    gelu = "gelu"
    swiglu = "swiglu"


class Attention(StrEnum):
    """Attention variant: grouped-query (MHA when kv_heads = heads) or DeepSeek's
    multi-head latent attention, which caches one compressed latent per token and layer."""

    gqa = "gqa"
    mla = "mla"


class InlineArchitecture(SpecModel):
    """A model architecture given inline instead of a catalog id."""

    name: str = Field(description="Display name of the model.", min_length=1)
    layers: int = Field(gt=0, description="Transformer layers (L).")
    hidden_size: int = Field(gt=0, description="Model width (h).")
    attention_heads: int = Field(gt=0, description="Query heads (a).")
    kv_heads: int | None = Field(
        default=None, gt=0, description="Key/value heads (g) for GQA; default = attention_heads."
    )
    ffn_hidden_size: int | None = Field(
        default=None, gt=0, description="FFN width (f); default 4 x hidden_size for gelu."
    )
    mlp: Mlp = Field(
        default=Mlp.gelu,
        description="Feed-forward type: gelu | swiglu (Llama, Mistral, Qwen). Required when "
                    "ffn_hidden_size is not 4 x hidden_size; otherwise gelu, said in the notes.",
    )
    vocab_size: int = Field(gt=0, description="Vocabulary size (V).")
    tied_embeddings: bool = Field(
        default=False, description="Input and output embeddings share one matrix."
    )
    experts: int = Field(default=1, ge=1, description="MoE experts per layer (1 = dense).")
    top_k: int = Field(default=1, ge=1, description="Experts active per token.")
    head_dim: int | None = Field(
        default=None, gt=0,
        description="Width of one attention head (d_h) where a x d_h != hidden_size "
                    "(Qwen3, GPT-OSS); default hidden_size / attention_heads. For MLA: the "
                    "non-rotary query/key width (qk_nope_head_dim).",
    )
    shared_experts: int = Field(
        default=0, ge=0, description="MoE: always-on experts per MoE layer (DeepSeek, Llama 4)."
    )
    shared_expert_ffn_hidden_size: int | None = Field(
        default=None, gt=0,
        description="MoE: FFN width of one shared expert; default ffn_hidden_size."
    )
    dense_ffn_hidden_size: int | None = Field(
        default=None, gt=0,
        description="MoE: FFN width of the dense (non-MoE) layers; default ffn_hidden_size, "
                    "which is the width of one routed expert.",
    )
    first_k_dense_layers: int = Field(
        default=0, ge=0, description="MoE: leading dense layers before the MoE layers start."
    )
    moe_layer_frequency: int = Field(
        default=1, ge=1,
        description="MoE: every n-th layer after the dense ones has experts (Llama 4 Maverick: 2).",
    )
    attention: Attention = Field(
        default=Attention.gqa,
        description="gqa (also MHA) | mla (multi-head latent attention: needs kv_lora_rank, "
                    "qk_rope_head_dim, v_head_dim; caches kv_lora_rank + qk_rope_head_dim "
                    "values per token per layer).",
    )
    q_lora_rank: int = Field(
        default=0, ge=0, description="MLA: rank of the compressed query (0 = not compressed)."
    )
    kv_lora_rank: int | None = Field(
        default=None, gt=0, description="MLA: rank of the compressed key/value latent."
    )
    qk_rope_head_dim: int | None = Field(
        default=None, gt=0, description="MLA: rotary part of each query/key head."
    )
    v_head_dim: int | None = Field(default=None, gt=0, description="MLA: value width per head.")
    sliding_window: int | None = Field(
        default=None, gt=0,
        description="Tokens a sliding-window attention layer attends (GPT-OSS: 128).",
    )
    sliding_window_layers: int = Field(
        default=0, ge=0,
        description="Layers that use sliding_window; the rest attend the whole sequence.",
    )

    @model_validator(mode="after")
    def _check_shapes(self) -> InlineArchitecture:
        if self.head_dim is None and self.hidden_size % self.attention_heads:
            raise ValueError("hidden_size must be divisible by attention_heads (or give head_dim)")
        if self.attention is Attention.mla and None in (
                self.kv_lora_rank, self.qk_rope_head_dim, self.v_head_dim):
            raise ValueError("attention mla needs kv_lora_rank, qk_rope_head_dim and v_head_dim")
        if self.sliding_window_layers > self.layers:
            raise ValueError("sliding_window_layers cannot exceed layers")
        if self.first_k_dense_layers >= self.layers and self.experts > 1:
            raise ValueError("first_k_dense_layers must leave at least one MoE layer")
        kv = self.kv_heads or self.attention_heads
        if self.attention_heads % kv:
            raise ValueError("attention_heads must be divisible by kv_heads")
        if self.top_k > self.experts:
            raise ValueError("top_k cannot exceed experts")
        if self.mlp is Mlp.swiglu and self.ffn_hidden_size is None:
            raise ValueError("ffn_hidden_size is required for swiglu models")
        ffn = self.ffn_hidden_size
        if "mlp" not in self.model_fields_set and ffn is not None and ffn != 4 * self.hidden_size:
            # gelu was assumed silently: a Llama-shaped model (ffn 14336 at h 4096) was
            # counted with two FFN matrices instead of three, 6.2 B parameters instead of 8.0
            raise ValueError(
                f"mlp is required when ffn_hidden_size ({ffn}) is not 4 x hidden_size: "
                "swiglu (Llama, Mistral, Qwen: three FFN matrices) or gelu (GPT: two)")
        return self
