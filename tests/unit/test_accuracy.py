"""Accuracy regression: the engine against every published measurement in calibration.csv.

Targets (issue 13): in-sample median |error| <= 8 % with >= 85 % of rows within +-20 %;
leave-one-source-out (each publication predicted by a refit that never saw it) median
<= 12 % with >= 75 % within. The in-sample figures are recomputed here; the cross-validated
ones take ~15 CPU-minutes, so ``benchmarks/fit.py`` records them per fit stage in
uncertainty.yaml and this test holds the file to the data (same rows per stage) and to what
the model achieved, and replays one fold of each stage for real. MoE training and inference
(their own fit stages) miss issue 13's targets; each is held to what it reaches. Rows the
model cannot reach are named with their reasons and held to a looser bound, so a regression
still fails.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
import yaml

from benchmarks.accuracy import evaluate, summary
from benchmarks.calibration import load_rows, unscored_rows
from benchmarks.crossval import (
    STAGES,
    Budget,
    Row,
    held_out,
    is_dense_case,
    is_inference_case,
    is_moe_case,
)
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.uncertainty import UNCERTAINTY_FILE

IN_SAMPLE_MEDIAN = 0.08
IN_SAMPLE_WITHIN20 = 0.85
LOSO_MEDIAN = 0.12
"""Leave-one-source-out targets (the shipped fit reaches 9.4 % and 76 %, recorded in
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
"""Dense training rows beyond ROW_LIMIT and why; held to KNOWN_MISS_LIMIT."""
INFERENCE_MEDIAN = 0.13
INFERENCE_WITHIN20 = 0.68
"""In-sample on the 64 scored inference rows (the shipped fit: 11.1 %, 69 %): issue 13's
targets are missed, the misses are named below; these hold the figures against regression.
(Before the serving step was split into kernel classes, trtllm-bench's own limits and the
stated KV dtypes were modelled: 14.8 %, 64 %.)"""
INFERENCE_LOSO_MEDIAN = 0.15
INFERENCE_LOSO_WITHIN20 = 0.60
"""The inference stage cross-validated (14.1 %, 64 %, with every stage refitted after the
output layer moved to the last pipeline stage; 13.7 %, 66 % on the earlier training fit;
before the offline runs' finite request counts were modelled: 12.8 %, 64 %; earlier: 20.2 %,
50 %): six publications, one of which (TensorRT-LLM's performance overview) holds 28 of
the 64 rows."""
INFERENCE_ROW_LIMIT = 0.40
INFERENCE_MISSES = {
    **{i: "TensorRT-LLM v1.0's Llama 4 Maverick on 8 H100s runs at 0.55-0.7x the roofline "
          "fitted on the other rows (Scout on 4 H100s within 34 %, Maverick on H200 within "
          "21 %, Qwen3-235B on the same page within 28 %); the page states neither the KV "
          "dtype nor EP, and its attention-DP switch is misplaced in the published YAML "
          "(scored as TP8); a Llama-4-specific kernel path of that release is not modelled"
       for i in ("I13", "I14", "I15", "I16")},
    "I48": "TensorRT-LLM 0.14 + Triton, 500 requests sent at once: 1.5x slower than the "
           "prefill-then-decode burst model says, where the same table's 467/256 burst (I43) "
           "is within 15 %; per-request serving overhead of that Triton release",
    "I73": "TensorRT-LLM v0.7a static batch of 192 at 128/2048 on one H200: 1.55x slower than "
           "the roofline fitted on the v0.14-v1.0 rows (the same blog's 128/128 row, I72, is "
           "within 11 %); the blog credits v0.7's new GQA generation kernels with 2.4x over "
           "v0.6, decode-attention efficiency of that release is not modelled",
}
"""Inference rows beyond INFERENCE_ROW_LIMIT and why; held to KNOWN_MISS_LIMIT."""


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return evaluate()


@cache
def recorded() -> dict[str, dict[str, float]]:
    """The cross-validated scores benchmarks/fit.py recorded, per fit stage."""
    doc = yaml.safe_load(UNCERTAINTY_FILE.read_text(encoding="utf-8"))
    return {k: {f: float(x) for f, x in v.items() if f != "fitted"}
            for k, v in doc["scores"].items() if isinstance(v, dict)}


def test_every_row_is_predicted_or_named(rows: list[Row]) -> None:
    """Every row is scored, or listed with the reason the engine cannot express it yet."""
    unscored = unscored_rows(default_efficiency())
    assert len(rows) + len(unscored) == len(load_rows()) >= 220
    assert sum(r.case.inference is None for r in rows) >= 100
    assert sum(r.case.inference is not None for r in rows) >= 60
    moe_serving = {r.case.id for r in rows if r.case.inference is not None
                   and r.case.inference.moe}
    assert {"I9", "I13", "I17", "I21", "I56"} <= moe_serving  # Qwen3, Llama 4, DeepSeek-R1
    assert all(math.isfinite(r.prediction.value) and r.prediction.value > 0 for r in rows)
    assert all(why for _, why in unscored)


def test_inference_in_sample(rows: list[Row]) -> None:
    s = summary([r for r in rows if is_inference_case(r.case)])
    assert s["median"] <= INFERENCE_MEDIAN
    assert s["within20"] >= INFERENCE_WITHIN20


def test_inference_rows_hold_their_fit(rows: list[Row]) -> None:
    """Every inference row within INFERENCE_ROW_LIMIT, or named with its reason."""
    serving = [r for r in rows if is_inference_case(r.case)]
    bad = {r.case.id: round(100 * r.error, 1) for r in serving
           if r.case.id not in INFERENCE_MISSES and abs(r.error) > INFERENCE_ROW_LIMIT}
    assert not bad, f"inference rows beyond {INFERENCE_ROW_LIMIT:.0%}: {bad}"
    worse = {r.case.id: round(100 * r.error, 1) for r in serving
             if r.case.id in INFERENCE_MISSES and abs(r.error) > KNOWN_MISS_LIMIT}
    assert not worse, f"known inference misses got worse: {worse}"


def test_in_sample_targets(rows: list[Row]) -> None:
    """Issue 13's targets on the dense rows (MoE training is its own group, below)."""
    s = summary([r for r in rows if is_dense_case(r.case)])
    assert s["median"] <= IN_SAMPLE_MEDIAN
    assert s["within20"] >= IN_SAMPLE_WITHIN20


def test_worst_rows(rows: list[Row]) -> None:
    bad = {r.case.id: round(100 * r.error, 1) for r in rows
           if r.case.id not in KNOWN_MISSES and is_dense_case(r.case)
           and abs(r.error) > ROW_LIMIT}
    assert not bad, f"rows beyond {ROW_LIMIT:.0%}: {bad}"
    misses = {r.case.id: round(100 * r.error, 1) for r in rows
              if r.case.id in KNOWN_MISSES and abs(r.error) > KNOWN_MISS_LIMIT}
    assert not misses, f"known misses got worse: {misses}"


MOE_IN_SAMPLE_MEDIAN = 0.14
MOE_IN_SAMPLE_WITHIN20 = 0.62
"""What the MoE stage reaches in-sample (8.5 %, 76 % on 25 rows since moe8; 11.1 %, 79 % on
the 24 rows before; 13.6 %, 62 % before the output layer was put on the last pipeline stage) on
its scored rows (superseded
rows are neither fitted nor scored, benchmarks/superseded.py): both miss issue 13's
in-sample targets (8 %, 85 %); the misses are named in SOURCES-moe-inference.md. These
hold the figures against regression. (8.2 %, 71 % before the AutoModel rows' optimizer
state was counted as the bf16 Adam state they ran: the over-counted memory forced full
recompute on M21/M22 and hid an AutoModel time miss; SOURCES-moe-inference.md, "MoE
memory: layouts that ran must fit".)"""
MOE_ROW_LIMIT = 0.40
MOE_MISSES: dict[str, str] = {
    "M31": "MLPerf v6.0 GPT-OSS 20B on 64 B200 (-39 %): the expert-data-parallel reduce-"
           "scatter/all-gather (16 ranks, two a node, BF16 as its config states) cannot hide "
           "behind its two micro-batches, against a measured 0.33 s step; neither a smaller "
           "per-step cost nor more NICs for that group is stated (SOURCES-moe-inference.md, "
           "moe8)",
}
"""MoE rows beyond MOE_ROW_LIMIT and why; held to KNOWN_MISS_LIMIT."""


def test_moe_rows_hold_their_fit(rows: list[Row]) -> None:
    """The MoE stage against its recorded in-sample figures, row by row."""
    moe = [r for r in rows if is_moe_case(r.case)]
    assert len(moe) == 25
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
    assert scores["inference"]["median_abs_error"] <= INFERENCE_LOSO_MEDIAN
    assert scores["inference"]["within_20pct"] >= INFERENCE_LOSO_WITHIN20


MOE_LOSO_MEDIAN = 0.25
"""The MoE stage cross-validated (20.4 %, 50 % within 20 %, worst 65 % on M1): B200 rows now
come from three publications, yet Megatron-Bridge's fold still comes out fast (+6 to
+65 %): without its rows the per-MoE-layer host-sync time and the B200 fraction are fitted
on rows that pay less of it (the MLPerf rows run CUDA-graphed without it)."""


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
    assert all(is_moe_case(r.case) for r in fold)
    assert summary(fold)["median"] <= 0.25


def test_one_inference_fold_replayed() -> None:
    """An inference-stage fold: MLPerf Inference v4.1's four Llama 2 70B rows (Offline and
    Server, throughput and TTFT), predicted with the serving parameters refitted on the
    other publications only (no training stage ever sees an inference row)."""
    fold = held_out("mlperf inference v4.1 results, closed division, nvidia dgx-h100",
                    budget=Budget(60, 1))
    assert len(fold) == 4
    assert all(is_inference_case(r.case) for r in fold)
    assert summary(fold)["median"] <= INFERENCE_FOLD_MEDIAN


INFERENCE_FOLD_MEDIAN = 0.40
