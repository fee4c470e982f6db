"""Wall-clock (compute + evaluation + checkpoints + failures) against hand-worked values,
evaluation passes, and the properties the issue names: wall-clock is never below compute,
and more rails never make a step slower."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import Node
from generator.sizing.model.job import Evaluation, Job, Layout
from generator.sizing.training.evaluation import evaluation_passes, evaluation_seconds
from generator.sizing.training.steptime import forward_time, microbatch_time, step_time
from generator.sizing.wallclock import RunEnvironment, wall_clock
from tests.unit.sizing_models import H100, LLAMA2_7B, LLAMA2_70B, XE9680_8NIC

EFF = default_efficiency()
RATE = 466 / (16384 * 54 * 24)  # Llama 3: interruptions per GPU-hour
ENV = RunEnvironment(checkpoint_write_gbps=20.0, checkpoint_read_gbps=40.0,
                     failures_per_gpu_hour=RATE, restart_overhead_hours=0.1)


def test_young_daly_by_hand() -> None:
    """100 h compute + 5 h evaluation on 1,024 GPUs, a 1 TB checkpoint at 20 GB/s."""
    wc = wall_clock(100.0, 5.0, 1024, 1000.0, ENV)
    mtbf = 1 / (RATE * 1024)
    delta = 1000 / 20 / 3600
    tau = math.sqrt(2 * delta * mtbf)
    restart = 0.1 + 1000 / 40 / 3600
    writing, losing = delta / tau, (tau / 2 + restart) / mtbf
    total = 105.0 / (1 - writing - losing)
    assert wc.interval_h == pytest.approx(tau)
    assert wc.checkpoint_write_s == pytest.approx(50.0)
    assert wc.total_h == pytest.approx(total)
    assert wc.checkpoint_h == pytest.approx((total - 105) * writing / (writing + losing))
    assert wc.failures_h == pytest.approx((total - 105) * losing / (writing + losing))
    assert wc.interruptions == pytest.approx(RATE * 1024 * total)


def test_a_run_shorter_than_one_interval_writes_only_its_final_checkpoint() -> None:
    """1 h on 64 GPUs, a 700 GB checkpoint at 20 GB/s: delta = 700 / 20 / 3600 = 0.009722 h,
    M = 1 / (RATE x 64) = 711.96 h, tau = sqrt(2 x delta x M) = 3.72 h > 1 h. No periodic
    checkpoint falls in the run: it is charged its final write once (35 s), and an
    interruption loses the work since the start (0.5 h on average) plus the 0.1 h relaunch:
    wall-clock = (1 + 0.009722) / (1 - 0.6 / 711.96) = 1.010574 h. Young/Daly charged
    delta / tau of the run for writes it never makes and tau / 2 = 1.86 h per interruption,
    more than the run itself."""
    wc = wall_clock(1.0, 0.0, 64, 700.0, ENV)
    assert wc.final_only and wc.interval_h == pytest.approx(3.7207, abs=1e-4)
    assert wc.checkpoint_h == pytest.approx(0.0097222, abs=1e-7)
    assert wc.checkpoint_write_s == pytest.approx(35.0)
    assert wc.total_h == pytest.approx(1.010574, abs=1e-6)
    assert wc.failures_h == pytest.approx(1.010574 - 1.0 - 0.0097222, abs=1e-6)
    assert wc.restart_h == 0.1  # nothing to read back
    longer = wall_clock(4.0, 0.0, 64, 700.0, ENV)  # past one interval: Young/Daly again
    assert not longer.final_only and longer.checkpoint_h < 4.0 * 0.0097222 / 3.7207 * 1.01


def test_without_storage_only_restarts_are_lost() -> None:
    env = RunEnvironment(0.0, 0.0, RATE, 0.1)
    wc = wall_clock(10.0, 0.0, 64, 100.0, env)
    assert wc.checkpoint_h == 0.0 and wc.interval_h == 0.0
    assert wc.total_h == pytest.approx(10.0 / (1 - 0.1 * RATE * 64))


@settings(max_examples=60, deadline=None)
@given(
    compute=st.floats(1e-4, 1e5), evaluation=st.floats(0, 1e3), gpus=st.integers(1, 32768),
    ckpt=st.floats(0, 1e4), write=st.floats(0, 500),
)
def test_wall_clock_is_never_below_compute(  # type: ignore[no-untyped-def]
    compute, evaluation, gpus, ckpt, write
) -> None:
    env = RunEnvironment(write, write * 2, RATE, 0.1)
    wc = wall_clock(compute, evaluation, gpus, ckpt, env)
    assert wc.total_h >= compute + evaluation
    assert min(wc.checkpoint_h, wc.failures_h) >= 0
    assert math.isfinite(wc.total_h)


def job(evaluation: Evaluation | None = None) -> Job:
    return Job("t", LLAMA2_7B, "pretrain", "bf16", "nemo", 128, 4096, 1000,
                evaluation=evaluation)


def test_evaluation_passes_and_time_by_hand() -> None:
    """128,000 samples, evaluating 2,000 every 10,000: 12 passes of ceil(2000 / (8 x 1))
    forward-only micro-batches each (+ the pipeline fill, none at PP1)."""
    j = job(Evaluation(every_samples=10_000, samples=2_000))
    lay = Layout(tp=1, pp=1, dp=8, cp=1, vp=1, mbs=1, recompute="none")
    assert evaluation_passes(j) == 12
    fwd = forward_time(j, lay, H100, XE9680_8NIC, EFF)
    assert evaluation_seconds(j, lay, H100, XE9680_8NIC, EFF) == pytest.approx(12 * 250 * fwd)
    # a forward pass is about a third of a training micro-batch
    train = microbatch_time(j, lay, H100, XE9680_8NIC, EFF).total
    assert 0.25 * train < fwd < 0.5 * train
    assert evaluation_seconds(job(), lay, H100, XE9680_8NIC, EFF) == 0.0


RAILS = st.sampled_from([1, 2, 4, 8])


@settings(max_examples=40, deadline=None)
@given(
    nics=RAILS, more=RAILS, tp=st.sampled_from([1, 2, 8]), dp=st.sampled_from([2, 16, 64]),
    framework=st.sampled_from(["nemo", "fsdp", "hf", "deepspeed"]),
    kind=st.sampled_from(["pretrain", "lora"]),
)
def test_more_rails_never_slower(  # type: ignore[no-untyped-def]
    nics, more, tp, dp, framework, kind
) -> None:
    low, high = sorted((nics, more))
    j = Job("t", LLAMA2_70B, kind, "bf16", framework, dp * 4, 4096, 10,
            adapter_params=1e8 if kind == "lora" else 0.0)
    t = tp if framework in ("nemo", "fsdp") else 1
    lay = Layout(tp=t, pp=1, dp=dp, cp=1, vp=1, mbs=1, recompute="full")
    slow = step_time(j, lay, H100, Node(gpus=8, nics=low, nic_gbps=400), EFF).total
    fast = step_time(j, lay, H100, Node(gpus=8, nics=high, nic_gbps=400), EFF).total
    assert fast <= slow * (1 + 1e-12)
