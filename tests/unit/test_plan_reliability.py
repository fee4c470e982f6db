"""Failure rate, Young/Daly interval, goodput, wall-clock and automatic hot spares."""

from __future__ import annotations

import math

import pytest

from benchmarks.synthetic_plan import synthetic_sizing
from generator.catalog.load import default_catalog
from generator.plan.catalog_models import FailureStats
from generator.plan.reliability import (
    REPAIR_HOURS,
    RESTART_OVERHEAD_HOURS,
    auto_spares,
    failures_per_gpu_hour,
    plan_reliability,
    reliability_note,
)


def _stats() -> FailureStats:
    return default_catalog().family("reliability", FailureStats)["llama3-405b-pretraining"]


def test_rate_is_llama3s_466_interruptions_in_54_days_on_16384_gpus() -> None:
    assert failures_per_gpu_hour(_stats()) == pytest.approx(466 / (16384 * 54 * 24))
    # ~ one interruption every 2.8 hours at Llama 3 scale
    assert 1 / (failures_per_gpu_hour(_stats()) * 16384) == pytest.approx(2.78, abs=0.01)


def test_young_daly_interval_goodput_and_wallclock() -> None:
    stats = _stats()
    sizing = synthetic_sizing("r", 16, checkpoint_gb=1000.0, time_hours=100.0)
    rel = plan_reliability(sizing, stats, write_gbps=20.0, read_gbps=40.0, spares=0)
    rate = 466 / (16384 * 54 * 24)
    mtbf = 1 / (rate * 128)
    delta = 1000 / 20 / 3600
    tau = math.sqrt(2 * delta * mtbf)
    restart = RESTART_OVERHEAD_HOURS + 1000 / 40 / 3600
    goodput = 1 - delta / tau - (tau / 2 + restart) / mtbf
    assert rel.checkpoint_write_s == pytest.approx(50.0)
    assert rel.checkpoint_interval_hours == pytest.approx(tau, abs=1e-3)
    assert rel.goodput == pytest.approx(goodput, abs=1e-4)
    assert rel.wallclock_hours == pytest.approx(100 / goodput, abs=1e-2)
    assert rel.expected_interruptions == pytest.approx(rate * 128 * 100 / goodput, abs=1e-3)


def test_bigger_jobs_lose_more_to_failures() -> None:
    stats = _stats()
    small = plan_reliability(synthetic_sizing("s", 8), stats, 20.0, 40.0, 0)
    big = plan_reliability(synthetic_sizing("b", 2048), stats, 20.0, 40.0, 0)
    assert big.goodput < small.goodput
    assert big.expected_interruptions > small.expected_interruptions


def test_slower_checkpoints_lower_goodput() -> None:
    stats = _stats()
    s = synthetic_sizing("s", 256)
    assert (
        plan_reliability(s, stats, 5.0, 10.0, 0).goodput
        < plan_reliability(s, stats, 50.0, 100.0, 0).goodput
    )


def test_llama3_scale_with_fast_checkpoints_is_above_ninety_percent() -> None:
    # Meta reports >90 % effective training time for the 16,384-GPU Llama 3 run.
    sizing = synthetic_sizing("l3", 2048, checkpoint_gb=5000.0, time_hours=1000.0)
    rel = plan_reliability(sizing, _stats(), write_gbps=2000.0, read_gbps=2000.0, spares=0)
    assert 0.9 < rel.goodput < 0.97
    assert rel.expected_interruptions == pytest.approx(rel.wallclock_hours / 2.78, rel=0.01)
    assert reliability_note(rel) is not None


def test_inference_only_has_no_run_time() -> None:
    sizing = synthetic_sizing("i", 2).model_copy(update={"training": []})
    rel = plan_reliability(sizing, _stats(), 10.0, 20.0, 0)
    assert rel.goodput == 1.0 and rel.wallclock_hours == 0.0


def test_auto_spares_cover_nodes_in_repair() -> None:
    stats = _stats()
    assert auto_spares(8, 8, stats) == 1  # always at least one when asked for
    big = auto_spares(2048, 8, stats)
    mean = 2048 * 8 * (stats.gpu_or_hbm_interruptions_per_gpu_hour or 0) * REPAIR_HOURS
    assert mean < big < 2 * mean + 5
    assert auto_spares(4096, 8, stats) > big


def test_short_run_note_does_not_say_about_zero_interruptions() -> None:
    # 'about 0 interruptions cost 0.3 % in lost work' read as a contradiction on short runs
    rel = plan_reliability(synthetic_sizing("s", 16, time_hours=10.0), _stats(), 10.0, 20.0, 0)
    assert rel.expected_interruptions < 1
    note = reliability_note(rel)
    assert note is not None and "about 0 " not in note and " 0 s each" not in note
    assert f"{rel.expected_interruptions:.2g} interruptions are expected (most likely none)" in note


def test_a_run_within_one_interval_is_charged_its_final_checkpoint_in_words() -> None:
    """1 h on 64 GPUs, 700 GB at 20 GB/s (35 s): Young/Daly's interval is 3.72 h, so the
    run writes no periodic checkpoint; the plan charges its final write once and says so."""
    sizing = synthetic_sizing("s", 8, checkpoint_gb=700.0, time_hours=1.0)
    rel = plan_reliability(sizing, _stats(), write_gbps=20.0, read_gbps=40.0, spares=0)
    assert rel.final_checkpoint_only and rel.checkpoint_hours == pytest.approx(35 / 3600, abs=1e-6)
    assert rel.restart_hours == RESTART_OVERHEAD_HOURS
    assert reliability_note(rel) == (
        "Goodput 0.990: the run is shorter than one checkpoint interval (223 min, Young/Daly), "
        "so it writes only its final checkpoint, 35 s (1.0% of the time); 0.001 interruptions "
        "are expected (most likely none); on average they cost 0.1% in lost work and restarts "
        "(6 min each). Faster checkpoint storage or asynchronous checkpointing raise goodput.")


def test_two_training_runs_are_named_and_the_shares_cover_both() -> None:
    """Two runs: the interval and write time are the longest run's, the checkpoint share
    covers both, so the note names the runs instead of speaking of 'the run'."""
    one = synthetic_sizing("a", 8, checkpoint_gb=700.0, time_hours=1.0)
    other = one.training[0].model_copy(update={"name": "b"})
    sizing = one.model_copy(update={"training": [*one.training, other]})
    rel = plan_reliability(sizing, _stats(), write_gbps=20.0, read_gbps=40.0, spares=0)
    assert reliability_note(rel, ["a", "b"]) == (
        "Goodput 0.990 over the 2 training runs (a, b): the longest run is shorter than one "
        "checkpoint interval (223 min, Young/Daly), so it writes only its final checkpoint, "
        "35 s; checkpoints take 1.0% of the 2 runs' time; 0.003 interruptions are expected "
        "(most likely none); on average they cost 0.1% in lost work and restarts (6 min "
        "each). Faster checkpoint storage or asynchronous checkpointing raise goodput.")
    long = plan_reliability(synthetic_sizing("s", 16, time_hours=200.0), _stats(), 10.0, 20.0, 0)
    note = reliability_note(long, ["pre", "sft"])
    assert note is not None and "the longest run checkpoints every" in note
    assert "of the 2 runs' time" in note and "the run " not in note
