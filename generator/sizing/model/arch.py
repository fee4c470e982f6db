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
from generator.spec.models import InlineArchitecture, Mlp


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
    top_k: int = 1

    @property
    def head_dim(self) -> int:
        """d_h = h / a."""
        return self.hidden // self.heads

    @property
    def mlp_matrices(self) -> int:
        """k in k*h*f: SwiGLU has gate, up and down projections; GELU has two."""
        return 3 if self.swiglu else 2


def from_catalog(model: ModelArchitecture) -> Architecture:
    """The catalog's published architecture as an ``Architecture``."""
    return Architecture(
        name=model.name, layers=model.layers, hidden=model.hidden_size,
        heads=model.attention_heads, kv_heads=model.kv_heads, ffn=model.ffn_hidden_size,
        swiglu=model.mlp is Mlp.swiglu, vocab=model.vocab_size,
        tied_embeddings=model.tied_embeddings, experts=model.experts, top_k=model.top_k,
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
    )


def resolve_model(ref: str | InlineArchitecture, catalog: Catalog) -> Architecture:
    """Turn a workload's ``model`` (catalog id or inline mapping) into an ``Architecture``."""
    if isinstance(ref, InlineArchitecture):
        return from_inline(ref)
    models = catalog.models
    if ref not in models:
        raise PodplanError(f"unknown model '{ref}' (known: {', '.join(sorted(models))})")
    return from_catalog(models[ref])
