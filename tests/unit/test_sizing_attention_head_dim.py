"""Attention at head dimension 64 on Hopper: exponent-bound, slower than at 128 (the
FlashAttention-3 paper's H100 measurements), by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.steptime import (
    attention_factor,
    flops_seconds,
    gemm_efficiency,
    token_flops,
)

CATALOG = default_catalog()
EFF = default_efficiency()
H100 = device_from_gpu(CATALOG.gpus["h100-sxm-80gb"])
B200 = device_from_gpu(CATALOG.gpus["b200-sxm-180gb"])


def job(model: str, framework: str = "megatron") -> Job:
    return Job(name="a", arch=from_catalog(CATALOG.models[model]), kind="pretrain",
               precision="bf16", framework=framework, global_batch=64, seq_len=4096, steps=1)


def test_measured_ratios() -> None:
    """cuDNN 408 / 609 TFLOP/s = 0.67 and FlashAttention-2 321 / 368 = 0.872 (FA3 paper,
    Fig. 5): data, not fitted."""
    assert EFF.compute.head_dim_64_attention == {"fused": 0.67, "fa2": 0.872}


def test_only_head_dim_64_on_hopper_slows() -> None:
    oss, llama = job("gpt-oss-120b"), job("llama3.1-8b")
    assert oss.arch.head_dim == 64 and llama.arch.head_dim == 128
    assert attention_factor(oss, H100, EFF) == 0.67
    assert attention_factor(llama, H100, EFF) == 1.0
    assert attention_factor(oss, B200, EFF) == 1.0
    fa2 = EFF.compute.fa2_efficiency["hopper"]
    assert attention_factor(job("gpt-oss-120b", "fsdp"), H100, EFF) == pytest.approx(0.872 * fa2)


def test_only_the_attention_core_takes_longer() -> None:
    """Same layout, the head-dim factor off and on: the difference is the attention core's
    FLOPs at η, divided by 0.67 less once."""
    oss = job("gpt-oss-120b")
    lay = Layout(tp=1, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none", ep=8, etp=1)
    flops = token_flops(oss, lay)
    flat = replace(EFF, compute=replace(EFF.compute, head_dim_64_attention={}))
    slow = flops_seconds(oss, lay, flops, 4096, H100, EFF)
    fast = flops_seconds(oss, lay, flops, 4096, H100, flat)
    eta = gemm_efficiency(oss, lay, H100, EFF)
    extra = flops.attention * (1 / 0.67 - 1) / eta * 4096 / H100.bf16_flops
    assert slow - fast == pytest.approx(extra)
