"""FLOPs per token and MFU against the papers' closed forms and NeMo 24.09's reported numbers.

Tolerances: 0.2 % against NeMo (its table rounds TFLOP/s to 3 digits), 0.1 % against the
closed forms (they drop the layer norms' weights).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.sizing.model.flops import (
    attention_flops,
    gpt_iteration_flops,
    hardware_flops,
    mfu,
    model_flops,
)
from generator.sizing.model.params import non_embedding_params
from tests.unit.sizing_models import GPT3_175B, GPT_22B, LLAMA2_7B, LLAMA2_70B, LLAMA3_8B


def test_llama2_7b_kappa12_matches_nemo() -> None:
    """NeMo 24.09 Llama-2-7B pretrain: 780 TFLOP/s at 16,934 tok/s/GPU -> 46.06 GFLOP/token."""
    assert model_flops(LLAMA2_7B, "pretrain", 4096).total == pytest.approx(780e12 / 16934, rel=2e-3)


@pytest.mark.parametrize(
    ("arch", "seq", "tflops", "tok_s"),
    [(LLAMA2_70B, 4096, 768, 1728), (LLAMA3_8B, 8192, 711, 12273)],
    ids=["llama2-70b", "llama3-8b"],
)
def test_nemo_pretraining_rows(arch, seq, tflops, tok_s) -> None:  # type: ignore[no-untyped-def]
    reported = tflops * 1e12 / tok_s
    assert model_flops(arch, "pretrain", seq).total == pytest.approx(reported, rel=2e-3)


@pytest.mark.parametrize(("arch", "batch"), [(GPT3_175B, 1536), (GPT_22B, 4)], ids=["175b", "22b"])
def test_gpt_closed_form(arch, batch) -> None:  # type: ignore[no-untyped-def]
    """72*B*s*L*h^2*(1 + s/(6h) + V/(12*L*h)) per iteration (Narayanan 2021, Korthikanti 2022)."""
    seq = 2048
    ours = model_flops(arch, "pretrain", seq).total * batch * seq
    closed = gpt_iteration_flops(batch, seq, arch.layers, arch.hidden, arch.vocab)
    assert ours == pytest.approx(closed, rel=1e-3)


def test_full_recompute_is_narayanan_eq3() -> None:
    """With full recompute: 96*B*s*L*h^2*(1 + s/(6h) + V/(16*L*h))."""
    a, b, s = GPT3_175B, 1, 2048
    ours = hardware_flops(a, "pretrain", s, "full").total * b * s
    eq3 = (
        96
        * b
        * s
        * a.layers
        * a.hidden**2
        * (1 + s / (6 * a.hidden) + a.vocab / (16 * a.layers * a.hidden))
    )
    assert ours == pytest.approx(eq3, rel=1e-3)


def test_selective_recompute_adds_attention_forward() -> None:
    """Korthikanti: selective recompute adds 4*B*s^2*h*L per iteration (MHA: a*d_h = h)."""
    a, s = GPT_22B, 2048
    hardware = hardware_flops(a, "pretrain", s, "selective").total
    extra = hardware - model_flops(a, "pretrain", s).total
    assert extra * s == pytest.approx(4 * s * s * a.hidden * a.layers, rel=1e-9)


def test_peft_drops_weight_gradients_only() -> None:
    """LoRA/P-tuning: 4 instead of 6 per base weight; the attention core keeps its backward."""
    sft = model_flops(LLAMA2_7B, "sft", 4096)
    lora = model_flops(LLAMA2_7B, "lora", 4096)
    assert lora.gemm / sft.gemm == pytest.approx(4 / 6)
    assert lora.attention == sft.attention == attention_flops(LLAMA2_7B, 4096)
    with_adapters = model_flops(LLAMA2_7B, "lora", 4096, adapter_params=1e6)
    assert with_adapters.gemm - lora.gemm == pytest.approx(6e6)


def test_recompute_never_counts_in_model_flops() -> None:
    base = model_flops(LLAMA2_7B, "pretrain", 4096).total
    full = hardware_flops(LLAMA2_7B, "pretrain", 4096, "full").total
    assert full - base == pytest.approx(
        2 * non_embedding_params(LLAMA2_7B) + attention_flops(LLAMA2_7B, 4096) / 3
    )
    assert hardware_flops(LLAMA2_7B, "pretrain", 4096, "none").total == base


def test_mfu_definition() -> None:
    """NeMo's 79 % (vs BF16 peak) for Llama-2-7B; vs the FP8 peak it is half that."""
    flops = model_flops(LLAMA2_7B, "pretrain", 4096).total
    assert mfu(flops, 16934, 989e12) == pytest.approx(0.789, abs=2e-3)
    assert mfu(flops, 16934, 1979e12) == pytest.approx(0.394, abs=2e-3)


def test_partial_recompute_scales_the_extra_forward() -> None:
    base = model_flops(LLAMA2_7B, "pretrain", 4096).total
    full = hardware_flops(LLAMA2_7B, "pretrain", 4096, "full").total
    half = hardware_flops(LLAMA2_7B, "pretrain", 4096, "full", fraction=0.5).total
    assert half - base == pytest.approx((full - base) / 2)


def test_sliding_window_attention_flops_by_hand() -> None:
    """gpt-oss-120b (config.json: sliding_window 128, layer_types sliding/full x 18, 64 heads
    of 64): at s = 4096 the attention core attends 18*4096 + 18*128 = 76,032 keys per query
    over the layers, so 12 * 76,032 * 4096 = 3.737e9 FLOPs per token instead of the
    7.248e9 of 36 full layers; below the window every layer attends the whole sequence."""
    from generator.catalog.load import default_catalog
    from generator.sizing.model.arch import from_catalog
    from generator.sizing.model.flops import attention_flops

    arch = from_catalog(default_catalog().models["gpt-oss-120b"])
    assert (arch.sliding_window, arch.sliding_window_layers) == (128, 18)
    assert arch.attended_tokens(4096) == 76_032
    assert attention_flops(arch, 4096) == pytest.approx(3_737_124_864)
    assert attention_flops(arch, 64) == pytest.approx(12 * 36 * 64 * 4096)
    full = replace(arch, sliding_window=0)
    assert attention_flops(full, 4096) == pytest.approx(12 * 36 * 4096 * 4096)
