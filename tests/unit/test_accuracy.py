"""Accuracy regression: the engine against every published measurement in calibration.csv.

Targets (issue 13): in-sample median |error| <= 8 % with >= 85 % of rows within +-20 %;
leave-one-source-out (each publication predicted by a refit that never saw it) median
<= 12 % with >= 75 % within. The in-sample figures are recomputed here; the cross-validated
ones take ~15 CPU-minutes, so ``benchmarks/fit.py`` records them in uncertainty.yaml and this
test holds the file to the data (same rows) and to what the model achieved, and replays one
fold for real. Rows the model cannot reach are named with their reasons and held to a
looser bound, so that a regression still fails.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
import yaml

from benchmarks.accuracy import evaluate, summary
from benchmarks.calibration import load_rows, unscored_rows
from benchmarks.crossval import Budget, Row, held_out
from generator.sizing.model.efficiency import default_efficiency
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
    "I48": "TensorRT-LLM 0.14 + Triton, 500 requests sent at once: 1.5x slower than the "
           "prefill-then-decode burst model says, where the same table's 467/256 burst (I43) "
           "is within 10 %; per-request serving overhead of that Triton release",
}
INFERENCE_MEDIAN = 0.09
INFERENCE_WITHIN20 = 0.85
"""In-sample on the 44 scored inference rows (the shipped fit: 8.4 %, 89 %)."""


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return evaluate()


@cache
def recorded() -> dict[str, float]:
    doc = yaml.safe_load(UNCERTAINTY_FILE.read_text(encoding="utf-8"))
    return {k: float(v) for k, v in doc["scores"].items()}


def test_every_row_is_predicted_or_named(rows: list[Row]) -> None:
    """Every row is scored, or listed with the reason the engine cannot express it yet."""
    unscored = unscored_rows(default_efficiency())
    assert len(rows) + len(unscored) == len(load_rows()) >= 220
    assert sum(r.case.inference is None for r in rows) >= 100
    assert sum(r.case.inference is not None for r in rows) >= 40
    assert all(math.isfinite(r.prediction.value) and r.prediction.value > 0 for r in rows)
    assert all(why for _, why in unscored)


def test_inference_in_sample(rows: list[Row]) -> None:
    s = summary([r for r in rows if r.case.inference is not None])
    assert s["median"] <= INFERENCE_MEDIAN
    assert s["within20"] >= INFERENCE_WITHIN20


def test_in_sample_targets(rows: list[Row]) -> None:
    s = summary(rows)
    assert s["median"] <= IN_SAMPLE_MEDIAN
    assert s["within20"] >= IN_SAMPLE_WITHIN20


def test_worst_rows(rows: list[Row]) -> None:
    bad = {r.case.id: round(100 * r.error, 1) for r in rows
           if r.case.id not in KNOWN_MISSES and abs(r.error) > ROW_LIMIT}
    assert not bad, f"rows beyond {ROW_LIMIT:.0%}: {bad}"
    misses = {r.case.id: round(100 * r.error, 1) for r in rows
              if r.case.id in KNOWN_MISSES and abs(r.error) > KNOWN_MISS_LIMIT}
    assert not misses, f"known misses got worse: {misses}"


def test_recorded_cross_validation_matches_the_data_and_holds() -> None:
    """uncertainty.yaml was written from the current calibration file (same row count) and
    the model achieved at least what this test records."""
    scores = recorded()
    scored = len(load_rows()) - len(unscored_rows(default_efficiency()))
    assert int(scores["rows"]) == scored, "calibration changed: rerun benchmarks.fit"
    assert scores["median_abs_error"] <= LOSO_MEDIAN
    assert scores["within_20pct"] >= LOSO_WITHIN20


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
