"""Accuracy regression: the engine against every published measurement in calibration.csv.

Targets (issue 13): in-sample median |error| <= 8 % with >= 85 % of rows within +-20 %;
leave-one-source-out (each publication predicted by a refit that never saw it) median
<= 12 % with >= 75 % within. The in-sample figures are recomputed here; the cross-validated
ones take ~15 CPU-minutes, so ``benchmarks/fit.py`` records them per fit stage in
uncertainty.yaml and this test holds the file to the data (same rows per stage) and to what
the model achieved, and replays one fold of each stage for real. MoE training (its own fit
stage) misses issue 13's targets; it is held to what it reaches. Rows the model cannot
reach are named with their reasons and held to a looser bound, so a regression still fails.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
import yaml

from benchmarks.accuracy import dense, evaluate, is_moe, summary
from benchmarks.calibration import load_rows
from benchmarks.crossval import STAGES, Budget, Row, held_out
from generator.sizing.uncertainty import UNCERTAINTY_FILE

IN_SAMPLE_MEDIAN = 0.08
IN_SAMPLE_WITHIN20 = 0.85
LOSO_MEDIAN = 0.12
"""Leave-one-source-out targets (the shipped fit reaches 10.7 % and 77 %, recorded in
uncertainty.yaml by benchmarks/fit.py)."""
LOSO_WITHIN20 = 0.75
ROW_LIMIT = 0.35
KNOWN_MISS_LIMIT = 1.0
FOLD_MEDIAN = 0.15

DELL_4GPU = (
    "Dell's 4-GPU runs are 1.3-1.5x more efficient per GPU than its 8- and 16-GPU runs of "
    "the same job (its Table 8 layouts were not published); podplan scales them linearly"
)
DELL_SFT = (
    "SFT extrapolated by Dell from 50 steps, 3.3-3.8x slower than LoRA on the same GPUs "
    "where FLOPs say 1.5x; consistent with a memory-driven TP4+ layout of 2023 NeMo"
)
HF_FIXED_COST = (
    "HF Trainer throughput over 30 steps includes start-up; the same per-GPU work runs 2.4x "
    "faster per GPU on 128 GPUs than on 8, which no per-step model reproduces"
)
KNOWN_MISSES = {
    "D1": DELL_4GPU, "D2": DELL_4GPU, "D8": DELL_4GPU, "D9": DELL_4GPU,
    "D10": DELL_SFT, "D13": DELL_SFT,
    "T044": HF_FIXED_COST,
    "T054": "Oracle's MLPerf v5.0 LoRA run is 30 % slower than Azure's identical one (T053)",
}


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return evaluate()


@cache
def recorded() -> dict[str, dict[str, float]]:
    """The cross-validated scores benchmarks/fit.py recorded, per fit stage."""
    doc = yaml.safe_load(UNCERTAINTY_FILE.read_text(encoding="utf-8"))
    return {k: {f: float(x) for f, x in v.items() if f != "fitted"}
            for k, v in doc["scores"].items() if isinstance(v, dict)}


def test_every_row_is_predicted(rows: list[Row]) -> None:
    assert len(rows) == len(load_rows()) >= 125
    assert sum(r.case.inference is None for r in rows) >= 100
    assert all(math.isfinite(r.prediction.value) and r.prediction.value > 0 for r in rows)


def test_in_sample_targets(rows: list[Row]) -> None:
    """Issue 13's targets on the dense rows (MoE training is its own group, below)."""
    s = summary(dense(rows))
    assert s["median"] <= IN_SAMPLE_MEDIAN
    assert s["within20"] >= IN_SAMPLE_WITHIN20


def test_worst_rows(rows: list[Row]) -> None:
    bad = {r.case.id: round(100 * r.error, 1) for r in rows
           if r.case.id not in KNOWN_MISSES and not is_moe(r) and abs(r.error) > ROW_LIMIT}
    assert not bad, f"rows beyond {ROW_LIMIT:.0%}: {bad}"
    misses = {r.case.id: round(100 * r.error, 1) for r in rows
              if r.case.id in KNOWN_MISSES and abs(r.error) > KNOWN_MISS_LIMIT}
    assert not misses, f"known misses got worse: {misses}"


MOE_IN_SAMPLE_MEDIAN = 0.13
MOE_IN_SAMPLE_WITHIN20 = 0.60
"""What the MoE stage reaches in-sample (12.1 %, 62 %): issue 13's targets are missed, the
misses are named below; these hold the figures against regression."""
MOE_ROW_LIMIT = 0.40
CONTAINER = "Megatron-Bridge's older container runs this layout {:.1f}x slower than its newer"
MOE_MISSES = {
    "M5": CONTAINER.format(1.7) + " one (M4: 25.11 vs 26.02.01, same model and GPUs)",
    "M1": "Megatron-Bridge GPT-OSS on H100 (attention sinks) runs 24 % slower than AutoModel's "
          "on the same 64 GPUs (M22); podplan models no attention-sink kernel",
    "M2": "as M1 (older container, bigger micro-batch)",
}
"""MoE rows beyond MOE_ROW_LIMIT and why; held to KNOWN_MISS_LIMIT."""


def test_moe_rows_hold_their_fit(rows: list[Row]) -> None:
    """The MoE stage against its recorded in-sample figures, row by row."""
    moe = [r for r in rows if is_moe(r)]
    assert len(moe) == 24
    s = summary(moe)
    assert s["median"] <= MOE_IN_SAMPLE_MEDIAN
    assert s["within20"] >= MOE_IN_SAMPLE_WITHIN20
    bad = {r.case.id: round(100 * r.error, 1) for r in moe
           if r.case.id not in MOE_MISSES and abs(r.error) > MOE_ROW_LIMIT}
    assert not bad, f"MoE rows beyond {MOE_ROW_LIMIT:.0%}: {bad}"
    worse = {r.case.id: round(100 * r.error, 1) for r in moe
             if r.case.id in MOE_MISSES and abs(r.error) > KNOWN_MISS_LIMIT * 1.5}
    assert not worse, f"known MoE misses got worse: {worse}"


def test_recorded_cross_validation_matches_the_data_and_holds(rows: list[Row]) -> None:
    """uncertainty.yaml was written from the current calibration file (same rows per fit
    stage) and the dense stage meets issue 13's cross-validated targets."""
    scores = recorded()
    for stage in STAGES:
        count = sum(stage.selects(r.case) for r in rows)
        assert int(scores[stage.name]["rows"]) == count, (
            f"calibration changed: rerun benchmarks.fit --stages {stage.name}")
    assert scores["dense"]["median_abs_error"] <= LOSO_MEDIAN
    assert scores["dense"]["within_20pct"] >= LOSO_WITHIN20
    assert scores["moe"]["median_abs_error"] <= MOE_LOSO_MEDIAN


MOE_LOSO_MEDIAN = 0.65
"""The MoE stage cross-validated (62 %): one publication (Megatron-Bridge) holds 16 of the
24 rows and every B200 row, so its fold fits the MoE physics on 8 rows of other stacks."""


def test_far_better_than_the_seed_rule(rows: list[Row]) -> None:
    s = summary(rows)
    assert s["median"] < s["seed_median"] / 4


def test_one_fold_replayed() -> None:
    """A real leave-one-source-out fold (a small budget, a few seconds): IBM's fms-fsdp rows
    (FSDP and HSDP on 128 A100 and 96 H100), predicted by a fit that never saw them."""
    fold = held_out("ibm foundation-model-stack fms-fsdp readme 'training throughput "
                    "benchmarks'", budget=Budget(iterations=150, restarts=1))
    assert len(fold) == 8
    assert summary(fold)["median"] <= FOLD_MEDIAN


def test_one_moe_fold_replayed() -> None:
    """An MoE-stage fold: NeMo AutoModel's six rows (FSDP2 + DeepEP), predicted with the
    MoE parameters refitted on the other publications only (the dense stage never saw them,
    so the fold reuses its fit)."""
    fold = held_out("nemo automodel performance summary", budget=Budget(60, 1))
    assert len(fold) == 6
    assert all(is_moe(r) for r in fold)
    assert summary(fold)["median"] <= 0.25
