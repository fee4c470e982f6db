"""An offline trtllm-bench run is timed from its first request to its last: the requests go
through in waves and the last, partial wave counts (``calibration_inference.run_point``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.calibration import Case, load_cases
from benchmarks.calibration_inference import ServingSetup, point, run_point
from generator.sizing.inference import loaded_point
from generator.sizing.model.efficiency import default_efficiency

EFF = default_efficiency()


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in load_cases(EFF) if c.inference is not None}


def _setup(case: Case) -> ServingSetup:
    assert isinstance(case.serving, ServingSetup)
    return case.serving


def test_the_performance_overview_states_its_request_counts(cases: dict[str, Case]) -> None:
    """The page's dataset table, by (ISL, OSL), in both editions; online rows have none."""
    assert _setup(cases["I13"]).requests == 3000   # 128/2048, v1.0
    assert _setup(cases["I16"]).requests == 1500   # 5000/500
    assert _setup(cases["126"]).requests == 30000  # 128/128
    assert _setup(cases["I27"]).requests == 3000   # 1000/1000, v0.17 edition
    assert _setup(cases["I43"]).requests is None   # Triton online burst (its own model)


def test_whole_waves_run_at_the_steady_state_cycle(cases: dict[str, Case]) -> None:
    case = cases["I13"]
    job, lay = case.inference, _setup(case).layout
    assert job is not None
    steady = loaded_point(job, lay, 1000, case.device, case.node, EFF)
    run = run_point(case, 1000, 3000, EFF)
    assert run.tokens_per_s == pytest.approx(steady.tokens_per_s)
    assert run.tpot_s == steady.tpot_s and run.batch == 1000


def test_the_last_partial_wave_runs_at_its_own_batch(cases: dict[str, Case]) -> None:
    """3,000 requests in slots of 1,142 (I13): two full waves and one of 716, each OSL
    cycles long; throughput = 3,000 x OSL / (OSL x (2 c(1142) + c(716)))."""
    case = cases["I13"]
    job, lay = case.inference, _setup(case).layout
    assert job is not None
    full = loaded_point(job, lay, 1142, case.device, case.node, EFF).tpot_s
    tail = loaded_point(job, lay, 716, case.device, case.node, EFF).tpot_s
    run = run_point(case, 1142, 3000, EFF)
    assert run.tokens_per_s == pytest.approx(3000 / (2 * full + tail))
    assert tail < full
    steady = 1142 / full
    assert run.tokens_per_s < steady  # the partial wave costs throughput


def test_the_row_is_scored_on_the_run(cases: dict[str, Case]) -> None:
    case = cases["I13"]
    p, limit = point(case, EFF)
    assert p.tokens_per_s == pytest.approx(
        run_point(case, limit, 3000, EFF).tokens_per_s)
    unstated = replace(case, serving=replace(_setup(case), requests=None))
    q, _ = point(unstated, EFF)
    assert q.tokens_per_s > p.tokens_per_s
