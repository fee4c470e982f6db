"""The output layer runs on the last pipeline stage only, by hand: GPT-OSS 120B (36 layers,
vocab 201,088, hidden 2,880) and Qwen3 235B-A22B under Megatron's embedding/loss split."""

from __future__ import annotations

import pytest

from generator.catalog.load import default_catalog
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.flops import hardware_flops
from generator.sizing.model.job import Job
from generator.sizing.training.steptime import busiest_stage, head_flops

CATALOG = default_catalog()


def job(model: str, kind: str = "pretrain", split: tuple[str, ...] = ()) -> Job:
    return Job(name="j", arch=from_catalog(CATALOG.models[model]), kind=kind,
               precision="bf16", framework="megatron", global_batch=64, seq_len=4096,
               steps=1, pipeline_split=split)


def test_head_flops_by_hand() -> None:
    """6 * 201,088 * 2,880 = 3,474,800,640 FLOPs a token to train GPT-OSS's output layer;
    4 * V * h when the base is frozen (no weight gradient)."""
    j = job("gpt-oss-120b")
    flops = hardware_flops(j.arch, "pretrain", 4096.0, "none")
    assert head_flops(j, flops) == 6 * 201_088 * 2_880 == 3_474_800_640
    lora = job("gpt-oss-120b", kind="lora")
    assert head_flops(lora, hardware_flops(lora.arch, "lora", 4096.0, "none")) == (
        4 * 201_088 * 2_880)


def test_the_last_stage_carries_the_head() -> None:
    """100 units of work a token, 20 of them the output layer: PP4 over 36 layers gives every
    rank 9/36 of the other 80 (20) and the last the head too: 40, not the even 25. Without
    pipelining the one stage runs all 100."""
    j = job("gpt-oss-120b")
    assert busiest_stage(j, 4, 100.0, 20.0) == pytest.approx(40.0)
    assert busiest_stage(j, 1, 100.0, 20.0) == pytest.approx(100.0)


def test_the_loss_split_gives_the_last_stage_a_layer_less() -> None:
    """Qwen3 235B (94 layers) at PP32 with the embedding and the loss counted: ranks of 2, 3
    and 2 layers. Work 94 + 10 with a head of 10: the middle rank runs 3 (3/94 of 94), the
    last 2 + 10 = 12; without the split ceil(94/32) = 3 layers + 10 = 13."""
    split = job("qwen3-235b-a22b", split=("embedding", "loss"))
    assert busiest_stage(split, 32, 104.0, 10.0) == pytest.approx(12.0)
    assert busiest_stage(job("qwen3-235b-a22b"), 32, 104.0, 10.0) == pytest.approx(13.0)
