"""NeMo AutoModel runs its pipeline schedule once per gradient-accumulation batch: a bubble
and an unhidden FSDP reduction per call (steptime.assemble's ``flushes``), by hand."""

from __future__ import annotations

import pytest

from benchmarks.stacks import local_batches_of
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.job import Layout
from generator.sizing.training.steptime import MicrobatchTime, assemble

EFF = default_efficiency()
MB = MicrobatchTime(compute=0.8, tp=0.0, cp=0.0, pp=0.0, overhead=0.0, zero3=0.0, ep=0.2)
LAY = Layout(tp=1, pp=4, dp=64, cp=1, vp=8, mbs=1, recompute="full", ep=64, etp=1)


def test_one_schedule_per_step_hides_most_of_the_reduction() -> None:
    """Megatron/torchtitan: one (p-1)/v bubble, the DP reduction behind the last backward."""
    fw = EFF.framework("fsdp")
    step = assemble(LAY, 32, MB, 0.3, 0.01, fw)
    assert step.bubble == pytest.approx(3 / 8 * 1.0)
    assert step.dp_exposed == pytest.approx(fw.dp_exposed * 0.3)


def test_a_schedule_per_local_batch_pays_bubble_and_reduction_each_time() -> None:
    """DeepSeek-V3 on AutoModel at GA 4 (row M17): four calls of 8 micro-batches, so
    4 x 3/8 of a micro-batch of bubble and 4 x 0.3 s of reduction after the last backward."""
    fw = EFF.framework("automodel")
    assert fw.schedule_per_local_batch
    step = assemble(LAY, 32, MB, 0.3, 0.01, fw, flushes=4)
    assert step.bubble == pytest.approx(4 * 3 / 8 * 1.0)
    assert step.dp_exposed == pytest.approx(4 * 0.3)
    assert step.total == pytest.approx(32 * 1.0 + 1.5 + 1.2 + 0.01 + fw.step_overhead_s)


def test_rows_state_their_gradient_accumulation() -> None:
    assert local_batches_of({"notes": "LBS 8, GA 4 as published; FSDP group 256"}) == 4
    assert local_batches_of({"notes": "no accumulation stated"}) == 1
