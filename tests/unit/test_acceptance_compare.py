"""The comparator on the fixtures: what passes, what falls short, who gets drained."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from generator.acceptance.compare import REASON_MAX, Comparison, compare
from generator.acceptance.report import render
from generator.acceptance.results import read_run
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.sizing.acceptance import AcceptanceModel, build_model
from generator.spec.load import load_spec
from tests.fixtures.acceptance.build import Faults, build_run

FIX = Path("tests/fixtures/acceptance")


@pytest.fixture(scope="module")
def model() -> AcceptanceModel:
    return build_model(load_spec(str(FIX / "spec.yaml")).spec, default_catalog(), 4)


def _cmp(root: Path, model: AcceptanceModel) -> Comparison:
    return compare(read_run(root), model)


def test_a_healthy_cluster_passes_every_check(model: AcceptanceModel) -> None:
    cmp = _cmp(FIX / "run-healthy", model)
    assert cmp.verdict == "pass" and not cmp.shortfalls and cmp.drain() == {}
    assert cmp.measured_rungs == ["gpu_health", "dcgm_diag", "hbm_bandwidth", "ib_write_bw",
                                  "nccl_tests"]
    assert cmp.not_measured == {"train_step": "slurm_acceptance_train_command is empty"}
    assert len(cmp.checks) > 300 and all(c.status == "pass" for c in cmp.checks)


def test_the_three_faults_are_named_and_their_nodes_drained(model: AcceptanceModel) -> None:
    cmp = _cmp(FIX / "run-faults", model)
    named = {(s.rung, s.subject): s for s in cmp.shortfalls}
    slow = named[("ib_write_bw", "gpu002 mlx5_3")]
    assert slow.drain == ("gpu002",) and "gpu002->gpu001 196 Gb/s" in slow.what
    assert "gpu003->gpu002 196 Gb/s" in slow.what
    clocks = named[("gpu_health", "gpu003")]
    assert clocks.what == "GPU 0-7: application SM clock 71.2 % of max (1410 of 1980 MHz)"
    gpus = [s for s in cmp.shortfalls if s.subject == "gpu004" and "GPUs present" in s.what]
    assert gpus[0].what == "7 of 8 GPUs present (indices 0-6)"
    assert set(cmp.drain()) == {"gpu002", "gpu003", "gpu004"}
    for reason in cmp.drain().values():
        assert reason.startswith("podplan-accept 20260101T120000Z: ") and len(reason) <= REASON_MAX
    nccl = [s for s in cmp.shortfalls if s.rung == "nccl_tests"]
    two = [s for s in nccl if s.subject.endswith(" on gpu001, gpu002")]
    assert {s.subject.split()[0] for s in two} == {"all_reduce", "all_gather", "reduce_scatter"}
    assert all("includes gpu002, named above" in s.what and not s.drain for s in two)
    four = [s for s in nccl if s.subject.endswith("gpu004")]
    assert len(four) == 4 and all("did not finish" in s.what for s in four)
    assert all("gpu004" in s.subject and "named above" in s.what for s in four)


def _ib_only(tmp: Path, nodes: list[str], faults: Faults) -> Path:
    run = build_run(tmp, nodes, faults)
    for sub in ("gpu", "dcgm", "nccl"):
        shutil.rmtree(run / sub)
    doc = json.loads((run / "run.json").read_text())
    doc["rungs"] = [r for r in doc["rungs"] if r["name"] == "ib_write_bw"]
    (run / "run.json").write_text(json.dumps(doc))
    return run


def test_two_nodes_cannot_say_which_end_of_a_slow_rail(tmp_path: Path,
                                                        model: AcceptanceModel) -> None:
    cmp = _cmp(_ib_only(tmp_path, ["gpu001", "gpu002"], Faults(slow_rail=("gpu001", "mlx5_5"))),
               model)
    [short] = cmp.shortfalls
    assert short.subject == "mlx5_5" and short.drain == () and "every test" in short.what


def test_a_slow_link_between_two_healthy_ends_names_both(tmp_path: Path,
                                                         model: AcceptanceModel) -> None:
    run = _ib_only(tmp_path, ["gpu001", "gpu002", "gpu003", "gpu004"], Faults())
    text = (run / "ib/gpu003.txt").read_text()
    (run / "ib/gpu003.txt").write_text(text.replace("392.40", "201.00", 1))
    [short] = _cmp(run, model).shortfalls
    assert short.subject == "mlx5_0 gpu003-gpu002" and short.drain == ()


def test_a_rail_missing_from_a_node_is_an_error(tmp_path: Path, model: AcceptanceModel) -> None:
    run = _ib_only(tmp_path, ["gpu001", "gpu002", "gpu003"], Faults())
    manifest = json.loads((run / "run.json").read_text())
    manifest["rails"].append({"device": "mlx5_8", "rate_gbps": 400})
    (run / "run.json").write_text(json.dumps(manifest))
    errors = [c for c in _cmp(run, model).checks if c.status == "error"]
    assert sorted(c.subject for c in errors) == ["mlx5_8 gpu001", "mlx5_8 gpu002",
                                                 "mlx5_8 gpu003"]


def test_a_slow_training_step_falls_short(tmp_path: Path, model: AcceptanceModel) -> None:
    step = model.train_step(32)
    assert step is not None
    run = build_run(tmp_path, ["gpu001", "gpu002", "gpu003", "gpu004"],
                    train_steps_ms=[9000.0] + [step.expected * 1500] * 9)
    cmp = _cmp(run, model)
    [short] = [s for s in cmp.shortfalls if s.rung == "train_step"]
    assert short.subject == "4 nodes" and "expected <=" in short.what
    fast = build_run(tmp_path / "fast", ["gpu001", "gpu002", "gpu003", "gpu004"],
                     train_steps_ms=[9000.0] + [step.expected * 1000] * 9)
    assert _cmp(fast, model).verdict == "pass"


def test_reports_are_the_same_bytes_for_the_same_results(model: AcceptanceModel) -> None:
    a = render(_cmp(FIX / "run-faults", model), default_catalog())
    b = render(_cmp(FIX / "run-faults", model), default_catalog())
    assert a == b
    doc = json.loads(a[0])
    assert doc["verdict"] == "fail" and doc["run"]["id"] == "20260101T120000Z"
    assert doc["summary"]["not_measured"] == {"train_step": "slurm_acceptance_train_command "
                                                            "is empty"}
    md = a[1]
    assert md.startswith("# Acceptance: accept-fixture, run 20260101T120000Z\n")
    assert "| ib_write_bw | gpu002 mlx5_3 |" in md and "- A3: NVIDIA/nccl-tests issue 290" in md


def test_run_directories_that_are_not_runs(tmp_path: Path) -> None:
    with pytest.raises(PodplanError, match="not found"):
        read_run(tmp_path / "nope")
    with pytest.raises(PodplanError, match="empty"):
        read_run(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(PodplanError, match="no acceptance results"):
        read_run(tmp_path)
    (tmp_path / "run.json").write_text('{"run": "yesterday"}')
    with pytest.raises(PodplanError, match="20260101T120000Z"):
        read_run(tmp_path)


def test_without_a_manifest_the_run_id_is_the_newest_file_time(tmp_path: Path) -> None:
    run = build_run(tmp_path, ["gpu001", "gpu002"])
    (run / "run.json").unlink()
    for p in run.rglob("*"):
        if p.is_file():
            os.utime(p, (1767225600, 1767225600))
    r = read_run(run)
    assert r.id == "20260101T000000Z" and r.nodes == ["gpu001", "gpu002"]


@pytest.mark.parametrize(("change", "says"), [
    ({"rails": 5}, "'rails': input should be a valid list, not 5"),
    ({"gpu_nodes": [None]}, "'gpu_nodes.0': input should be a valid string"),
    ({"rungs": [1]}, "'rungs.0': should be a JSON object"),
    ({"nccl_nodes": {"two": ["gpu001"]}}, "'nccl_nodes' keys are node counts, not 'two'"),
    ({"cluster": 7}, "'cluster': input should be a valid string"),
])
def test_a_manifest_of_the_wrong_shape_is_refused(tmp_path: Path, change: dict[str, object],
                                                  says: str) -> None:
    run = build_run(tmp_path, ["gpu001", "gpu002"])
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, **change}))
    with pytest.raises(PodplanError, match="not a ladder run manifest") as err:
        read_run(run)
    assert says in str(err.value)


def test_a_directory_of_garbage_is_refused_with_what_was_wrong(tmp_path: Path) -> None:
    run = build_run(tmp_path, ["gpu001", "gpu002"])
    for p in run.rglob("*"):
        if p.is_file() and p.name != "run.json":
            p.write_bytes(b"\x00\xffnot a tool's output\n")
    with pytest.raises(PodplanError) as err:
        read_run(run)
    assert "is output of the ladder's tools: gpu/gpu001.query.csv:1: not nvidia-smi" in \
        str(err.value)


def test_unreadable_or_lost_outputs_fail_the_run_and_drain_nothing(
        tmp_path: Path, model: AcceptanceModel) -> None:
    run = build_run(tmp_path, ["gpu001", "gpu002", "gpu003"])
    (run / "gpu/gpu002.query.csv").write_text("garbage\n")
    (run / "ib/gpu003.txt").write_text("hello\n")
    for p in (run / "dcgm").glob("*.membw.json"):
        p.unlink()
    cmp = _cmp(run, model)
    assert cmp.verdict == "fail" and cmp.drain() == {}
    errors = {(c.rung, c.subject) for c in cmp.checks if c.status == "error"}
    assert {("gpu_health", "gpu002"), ("ib_write_bw", "gpu003")} <= errors
    [lost] = cmp.shortfalls
    assert (lost.rung, lost.subject) == ("hbm_bandwidth", "run")
    assert cmp.not_measured["hbm_bandwidth"].startswith("collected by the ladder, but")


def test_nvidia_smi_saying_it_failed_is_a_node_without_gpus(tmp_path: Path,
                                                            model: AcceptanceModel) -> None:
    run = build_run(tmp_path, ["gpu001", "gpu002"])
    (run / "gpu/gpu002.query.csv").write_text(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.\n\n")
    [short] = [s for s in _cmp(run, model).shortfalls if s.subject == "gpu002"]
    assert short.what.startswith("0 of 8 GPUs present (indices none; gpu/gpu002.query.csv:1: "
                                 "NVIDIA-SMI has failed") and short.drain == ("gpu002",)


def test_a_verdict_without_a_figure_is_said_in_the_results_table() -> None:
    """DCGM's memory test may print a verdict and no bandwidth: the row says so, not a bare '-'."""
    from generator.acceptance.report import _results_table
    row = {"rung": "hbm_bandwidth", "test": "dcgmi diag", "scope": "per GPU",
           "metric": "STREAM triad bandwidth", "expected": 2539.0, "unit": "GB/s",
           "pass_if": "at_least", "limit": 2285.0, "tolerance_pct": 10.0, "measured": None,
           "passed": 24, "checks": 24, "failed": []}
    doc = {"design": {"nccl_listed_sizes": []}, "results": [row, {**row, "checks": 0,
                                                                  "passed": 0}]}
    lines = _results_table(doc)
    assert "| verdict only, no figure | 24/24 |" in lines[2]
    assert lines[3].endswith("| - | 0/0 |")
