"""``podplan sweep`` on a spec that only serves: each GPU type sized by the SLOs as ``plan``
sizes it, compared by GPUs, latency, $ per million output tokens and capex."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from generator import pipeline
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.sizing import size
from generator.sweep.command import sweep_text
from generator.sweep.grid import parse_grid
from generator.sweep.run import SweepResult, run_sweep
from generator.sweep.serving import HOURS_PER_MONTH

CHAT = "examples/llama31-70b-chat.yaml"
CATALOG = default_catalog()


@cache
def _sweep(spec: str = CHAT, gpus: str | None = None, gpu: str | None = None) -> SweepResult:
    loaded = pipeline.load_checked(spec, CATALOG)
    return run_sweep(loaded, parse_grid(loaded.spec, CATALOG, gpus, gpu, None, None), CATALOG)


def test_every_gpu_is_sized_as_plan_would_size_it() -> None:
    """Each point's GPUs, TPOT and TTFT are `podplan size` on the spec with that GPU."""
    result = _sweep()
    assert result.serving and result.deadline_hours is None
    loaded = pipeline.load_checked(CHAT, CATALOG)
    for p in result.points:
        if not p.fits:
            continue
        spec = loaded.spec.model_copy(update={
            "hardware": loaded.spec.hardware.model_copy(update={"gpu": p.gpu})})
        est = size(spec, CATALOG).inference[0]
        assert (p.gpus, p.tpot_ms, p.ttft_ms, p.meets_slo) == (
            est.gpus, est.tpot_ms, est.ttft_ms, est.meets_slo)
        assert p.layout == f"{est.replicas} x TP{est.tp} PP{est.pp} b{est.max_batch}"


def test_usd_per_million_tokens_is_the_month_over_the_load() -> None:
    """600 requests a minute x 1,000 output tokens = 10,000 tokens/s around the clock."""
    for p in _sweep().points:
        if p.usd_per_month is not None:
            tokens = 600 / 60 * 1000 * HOURS_PER_MONTH * 3600
            assert p.usd_per_mtok == pytest.approx(p.usd_per_month / (tokens / 1e6))


def test_the_cheapest_meeting_the_slos_is_marked_and_a_refused_gpu_kept() -> None:
    result = _sweep()
    good = [p for p in result.points if p.meets_slo and p.usd_per_mtok is not None]
    assert result.best is min(good, key=lambda p: p.usd_per_mtok or 0.0)
    assert result.best.gpu == "h200-sxm-141gb" and result.ranked_by == "usd_per_mtok"
    (a100,) = [p for p in result.points if p.gpu == "a100-sxm-80gb"]
    assert not a100.fits and a100.note == "NVIDIA A100 SXM4 80GB has no FP8 tensor cores"


def test_a_missed_slo_point_says_it_was_sized_at_the_nearest_reach(tmp_path: Path) -> None:
    spec = tmp_path / "slo.yaml"
    spec.write_text("name: slo\nworkloads:\n  - {name: big, kind: inference, model: "
                    "llama3.1-405b, precision: bf16, input_tokens: 2000, output_tokens: 500, "
                    "requests_per_minute: 120, tpot_ms: 45}\n")
    result = _sweep(str(spec), gpu="h100-sxm-80gb,h200-sxm-141gb")
    h100, h200 = result.points
    assert (h100.meets_slo, h100.gpus, h100.meets_deadline) == (False, 864, False)
    assert h100.note == ("SLOs out of reach for big: sized at batch 1 on the nearest layout "
                         "(`podplan size` names what would meet them)")
    assert h200.meets_slo is True and result.best is h200


def test_gpus_fixes_the_cluster_and_says_when_the_load_does_not_fit() -> None:
    result = _sweep(gpus="8", gpu="h100-sxm-80gb")
    (p,) = result.points
    assert p.fits and p.gpus == 6 and p.nodes == 1
    small = _sweep("examples/deepseek-r1-serve.yaml", gpus="8", gpu="h100-sxm-80gb").points[0]
    assert not small.fits and small.note.startswith("does not fit: inference needs 64 GPUs")


def test_formats_carry_the_serving_columns() -> None:
    doc = json.loads(sweep_text(CHAT, None, None, None, None, "json"))
    assert "deadline_hours" not in doc and doc["cheapest_by"] == "usd_per_mtok"
    assert set(doc["points"][0]) >= {"layout", "tpot_ms", "ttft_ms", "meets_slo",
                                     "usd_per_mtok", "usd_per_month"}
    assert not set(doc["points"][0]) & {"time_hours", "usd_per_run", "meets_deadline"}
    table = sweep_text(CHAT, None, None, None, None, "table")
    head = table.splitlines()[0].split()
    assert head[:9] == ["GPU", "GPUs", "nodes", "layout", "TPOT", "ms", "TTFT", "ms", "SLO"]
    html = sweep_text(CHAT, None, None, None, None, "html")
    assert '<title id="sweep-serving-t">Cost against TPOT</title>' in html
    assert not re.search(r'\b(?:src|href)="(?!#)', html)
    assert html.count("<tr>") == 1 + 3


def test_a_deadline_is_refused_for_a_spec_that_only_serves() -> None:
    loaded = pipeline.load_checked(CHAT, CATALOG)
    with pytest.raises(PodplanError) as err:
        parse_grid(loaded.spec, CATALOG, None, None, None, 3.0)
    (problem,) = err.value.problems
    assert (problem.path, problem.message) == (
        "--deadline-hours", "the spec only serves: there is no run to time")
