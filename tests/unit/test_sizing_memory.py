"""Per-GPU training memory against Korthikanti et al. 2022 and the bytes/param table of
sizing-models.md §9.3, plus monotonicity properties. Exact arithmetic: tolerance 1e-9."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.sizing.model.efficiency import (
    Efficiency,
    default_efficiency,
    from_mapping,
    read_mapping,
)
from generator.sizing.model.job import Job, Layout
from generator.sizing.model.params import layer_params
from generator.sizing.training.memory import (
    activation_bytes,
    layer_activation_bytes,
    stage_params,
    state_bytes,
    training_memory,
)
from tests.unit.sizing_models import GPT3_175B, LLAMA2_7B, LLAMA2_70B, LLAMA3_8B

EFF = default_efficiency()


def job(arch=GPT3_175B, kind="pretrain", framework="megatron", gbs=64, seq=2048, adapters=0.0):  # type: ignore[no-untyped-def]
    return Job("t", arch, kind, "bf16", framework, gbs, seq, 1, adapter_params=adapters)


def eff_with(**memory: object) -> Efficiency:
    doc = read_mapping()
    doc["memory"].update(memory)
    return from_mapping(doc)


def test_korthikanti_sp_selective_34sbh_over_t() -> None:
    """TP + SP + selective recompute (= FlashAttention): 34*s*b*h/t per layer for f = 4h."""
    lay = Layout(tp=8, pp=8, dp=1, cp=1, vp=1, mbs=1, recompute="selective")
    s, b, h, t = 2048, 1, 12288, 8
    assert layer_activation_bytes(job(), lay, EFF) == pytest.approx(34 * s * b * h / t)


def test_korthikanti_no_recompute_without_flash() -> None:
    """Without fused attention and recompute (Megatron of 2021): s*b*h*(34 + 5*a*s/h)/t."""
    lay = Layout(tp=8, pp=8, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    got = layer_activation_bytes(job(framework="megatron-2021"), lay, EFF)
    assert got == pytest.approx(s * b * h * (34 + 5 * a * s / h) / t)


def test_korthikanti_without_sequence_parallelism() -> None:
    """Korthikanti's Eq. without SP: the norms' and dropouts' 10 sbh stay on every TP rank,
    s*b*h*(10 + 24/t) for f = 4h (FSDP-style stacks run TP without SP)."""
    lay = Layout(tp=8, pp=1, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    s, b, h, t = 2048, 1, 12288, 8
    got = layer_activation_bytes(job(framework="fsdp"), lay, EFF)
    assert got == pytest.approx(s * b * h * (10 + 24 / t))
    assert got > layer_activation_bytes(job(framework="megatron"), lay, EFF)


def test_megatron_generalisation_for_swiglu() -> None:
    """Megatron's sbh*(18 + 4f/h)/t: 32 sbh/t for Llama-2-70B (f = 3.5h)."""
    lay = Layout(tp=4, pp=4, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    s, h = 4096, 8192
    got = layer_activation_bytes(job(LLAMA2_70B, seq=s), lay, EFF)
    assert got == pytest.approx(32 * s * h / 4)


def test_pipeline_in_flight_and_interleave() -> None:
    """First stage: L/p layers x min(p, m) micro-batches x (1 + (p-1)/(p*v)) when interleaved."""
    j = job()
    base = Layout(tp=8, pp=8, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    per_layer = layer_activation_bytes(j, base, EFF)
    assert activation_bytes(j, base, EFF) == pytest.approx(12 * per_layer * 8)
    inter = base._replace(vp=3)
    assert activation_bytes(j, inter, EFF) == pytest.approx(12 * per_layer * 8 * (1 + 7 / 24))
    few = job(gbs=4)  # m = 4 < p = 8: only 4 in flight
    assert activation_bytes(few, base, EFF) == pytest.approx(12 * per_layer * 4)


def test_full_recompute_keeps_layer_inputs() -> None:
    """Full recompute: 2sbh/t per layer in flight plus one layer's working set."""
    j = job()
    lay = Layout(tp=8, pp=8, dp=1, cp=1, vp=1, mbs=1, recompute="full")
    s, h, t = 2048, 12288, 8
    one = layer_activation_bytes(j, lay, EFF)
    assert activation_bytes(j, lay, EFF) == pytest.approx(12 * 2 * s * h / t * 8 + one)


def test_logits_when_single_stage() -> None:
    """p = 1 adds the fp32 logits and loss: 4*s*b*(h + V)/t."""
    j = job(LLAMA3_8B, seq=8192, gbs=8)
    lay = Layout(tp=1, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none")
    layers = 32 * layer_activation_bytes(j, lay, EFF)
    assert activation_bytes(j, lay, EFF) == pytest.approx(layers + 4 * 8192 * (4096 + 128256))


@pytest.mark.parametrize("d", [1, 8, 64])
def test_distributed_optimizer_bytes_per_param(d: int) -> None:
    """Megatron distributed optimizer: 2 (bf16) + grad bytes + 12/(d*c) per parameter."""
    j = job()
    lay = Layout(tp=8, pp=8, dp=d, cp=1, vp=1, mbs=1, recompute="none")
    fw = EFF.framework("megatron")
    psi = stage_params(j, 8, 8)
    w, g, o = state_bytes(j, lay, fw, EFF)
    assert (w / psi, g / psi, o / psi) == pytest.approx((2.0, fw.grad_bytes, 12.0 / d))


def test_zero3_shards_everything() -> None:
    """ZeRO-3 / FSDP: 16/d bytes/param plus the gathered layers."""
    eff = eff_with(zero3_live_layers=0)
    j = job(LLAMA2_7B, framework="fsdp", seq=4096, gbs=64)
    lay = Layout(tp=1, pp=1, dp=64, cp=1, vp=1, mbs=1, recompute="none")
    fw = eff.framework("fsdp")
    psi = stage_params(j, 1, 1)
    assert sum(state_bytes(j, lay, fw, eff)) / psi == pytest.approx((2 + fw.grad_bytes + 12) / 64)
    live = state_bytes(j, lay, fw, eff_with(zero3_live_layers=2))[0] - 2 * psi / 64
    assert live == pytest.approx(2 * 2 * layer_params(LLAMA2_7B))


def test_lora_freezes_base() -> None:
    """Frozen bf16 base (2 bytes/param); adapters carry 2 + 4 + 12 bytes."""
    j = job(LLAMA2_70B, kind="lora", framework="nemo", seq=4096, adapters=1e8)
    lay = Layout(tp=4, pp=1, dp=2, cp=1, vp=1, mbs=1, recompute="none")
    w, g, o = state_bytes(j, lay, EFF.framework("nemo"), EFF)
    assert w == pytest.approx(2 * stage_params(j, 4, 1) + 2 * 1e8 / 4)
    assert (g, o) == pytest.approx((4 * 1e8 / 4, 12 * 1e8 / 4))


SIZES = st.sampled_from([1, 2, 4, 8])


def _total(j: Job, lay: Layout) -> float:
    return training_memory(j, lay, EFF).total


@settings(max_examples=150, deadline=None)
@given(
    arch=st.sampled_from([LLAMA2_7B, LLAMA2_70B, GPT3_175B, LLAMA3_8B]),
    kind=st.sampled_from(["pretrain", "sft", "lora"]),
    framework=st.sampled_from(["nemo", "megatron", "fsdp"]),
    tp=SIZES,
    pp=SIZES,
    dp=SIZES,
    mbs=st.sampled_from([1, 2]),
    recompute=st.sampled_from(["none", "selective", "full"]),
)
def test_memory_never_grows_with_more_parallelism(  # type: ignore[no-untyped-def]
    arch, kind, framework, tp, pp, dp, mbs, recompute
) -> None:
    j = job(arch, kind, framework, gbs=256, seq=4096, adapters=1e7 if kind == "lora" else 0.0)
    lay = Layout(tp, pp, dp, 1, 1, mbs, recompute)
    here = _total(j, lay)
    assert _total(j, lay._replace(tp=tp * 2)) <= here * (1 + 1e-12)
    assert _total(j, lay._replace(dp=dp * 2)) <= here * (1 + 1e-12)
    # FSDP under pipeline parallelism keeps each stage's weights gathered (no reshard after
    # forward), so adding stages to a ZeRO-3 layout can cost memory: not monotone there.
    if arch.layers % (pp * 2) == 0 and framework != "fsdp":
        assert _total(j, lay._replace(pp=pp * 2)) <= here * (1 + 1e-12)


def test_uneven_stages_use_the_largest() -> None:
    j = job(LLAMA2_7B)
    assert stage_params(j, 1, 3) == pytest.approx(
        math.ceil(32 / 3) * layer_params(LLAMA2_7B) + 32000 * 4096
    )


def test_partial_recompute_interpolates() -> None:
    """k of a stage's layers keep only their input; the rest keep everything."""
    j = job()
    none = Layout(tp=8, pp=8, dp=1, cp=1, vp=1, mbs=1, recompute="none")
    full = none._replace(recompute="full")
    part = full._replace(recompute_layers=6)
    per_layer = layer_activation_bytes(j, none, EFF)
    kept = 2 * 2048 * 12288 / 8
    assert activation_bytes(j, part, EFF) == pytest.approx((6 * kept + 6 * per_layer) * 8
                                                           + per_layer)
    assert activation_bytes(j, full, EFF) < activation_bytes(j, part, EFF)
    assert activation_bytes(j, part, EFF) < activation_bytes(j, none, EFF)
