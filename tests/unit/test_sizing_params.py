"""Parameter counts and KV cache against sizing-models.md §9.1 (computed from the HF configs).

Tolerance: 0.05 % on parameter counts (the table rounds to 4 significant figures), exact
on KV bytes.
"""

from __future__ import annotations

import pytest

from generator.catalog.models import ModelArchitecture
from generator.sizing.model.arch import from_catalog, from_inline
from generator.sizing.model.params import (
    active_params,
    kv_bytes_per_token,
    lora_adapter_params,
    non_embedding_params,
    total_params,
)
from generator.spec.architecture import InlineArchitecture, Mlp
from tests.unit.sizing_models import (
    GPT3_175B,
    LLAMA2_7B,
    LLAMA2_13B,
    LLAMA2_70B,
    LLAMA3_8B,
    LLAMA3_70B,
    LLAMA31_405B,
    MIXTRAL_8X7B,
    MIXTRAL_8X22B,
)

KIB = 1024


@pytest.mark.parametrize(
    ("arch", "total_b", "active_b", "kv_kib"),
    [
        (LLAMA2_7B, 6.74, 6.74, 512),
        (LLAMA2_13B, 13.02, 13.02, 800),
        (LLAMA2_70B, 68.98, 68.98, 320),
        (LLAMA3_8B, 8.03, 8.03, 128),
        (LLAMA3_70B, 70.55, 70.55, 320),
        (LLAMA31_405B, 405.85, 405.85, 504),
        (MIXTRAL_8X7B, 46.70, 12.88, 128),
        (MIXTRAL_8X22B, 140.6, 39.2, 224),
        (GPT3_175B, 174.6, 174.6, 4608),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_published_parameter_counts(arch, total_b, active_b, kv_kib) -> None:  # type: ignore[no-untyped-def]
    assert total_params(arch) / 1e9 == pytest.approx(total_b, rel=5e-4)
    assert active_params(arch) / 1e9 == pytest.approx(active_b, rel=2e-3)
    assert kv_bytes_per_token(arch) == kv_kib * KIB


def test_llama2_70b_hand_worked() -> None:
    """L * (Q,O 2h^2 + K,V 2*h*g*d_h + MLP 3hf + norms 2h) + 2Vh + h, written out."""
    h, f, g, dh, layers, v = 8192, 28672, 8, 128, 80, 32000
    per_layer = 2 * h * h + 2 * h * g * dh + 3 * h * f + 2 * h
    assert total_params(LLAMA2_70B) == layers * per_layer + 2 * v * h + h
    assert non_embedding_params(LLAMA2_70B) == layers * per_layer + h


def test_fp8_kv_halves_bytes() -> None:
    assert kv_bytes_per_token(LLAMA2_70B, 1.0) == 160 * KIB


def test_lora_adapter_count() -> None:
    """r * (d_in + d_out) per targeted matrix: Llama-2-7B, r=16, qkv only = 32*16*(4096+12288)."""
    assert lora_adapter_params(LLAMA2_7B, 16, ("qkv",)) == 32 * 16 * (4096 + 3 * 4096)
    both = lora_adapter_params(LLAMA2_7B, 8, ("proj", "fc2"))
    assert both == 32 * 8 * ((4096 + 4096) + (11008 + 4096))


def test_inline_defaults() -> None:
    """kv_heads defaults to heads (MHA), ffn to 4h for GELU."""
    arch = from_inline(
        InlineArchitecture(name="toy", layers=2, hidden_size=64, attention_heads=4, vocab_size=100)
    )
    assert (arch.kv_heads, arch.ffn, arch.swiglu) == (4, 256, False)


def test_catalog_architecture_maps_every_field() -> None:
    model = ModelArchitecture(
        id="x",
        name="X",
        sources=["S1"],
        status="V",
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        ffn_hidden_size=28672,
        mlp=Mlp.swiglu,
        vocab_size=32000,
    )
    assert from_catalog(model) == LLAMA2_70B.__class__("X", 80, 8192, 64, 8, 28672, True, 32000)
