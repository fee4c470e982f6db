"""``podplan accept`` and ``podplan calibrate`` through the real entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli.runner import podplan
from tests.fixtures.acceptance.build import CHECKED_IN, NODES, build_run

FIX = Path("tests/fixtures/acceptance")
SPEC = str(FIX / "spec.yaml")
REPORT = "reports/accept-fixture/acceptance/20260101T120000Z"


def test_expected_json_is_the_documented_list() -> None:
    r = podplan("accept", SPEC, "--expected", "--json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert {tuple(sorted(x)) for x in rows} == {tuple(sorted(
        ["test", "scope", "metric", "unit", "expected", "tolerance_pct", "source"]))}
    ib = next(x for x in rows if x["test"] == "ib_write_bw")
    assert (ib["expected"], ib["unit"], ib["tolerance_pct"]) == (388.0, "Gb/s", 5.0)
    assert any(x["test"] == "training step" for x in rows)


def test_expected_table_says_the_hbm_floor_setting() -> None:
    r = podplan("accept", SPEC, "--expected")
    assert r.code == 0 and "slurm_acceptance_hbm_floor_mbps: 2285370" in r.out
    assert r.out.splitlines()[0].split()[:3] == ["test", "scope", "metric"]


def test_accept_writes_the_report_and_exits_1_on_a_shortfall(tmp_path: Path) -> None:
    r = podplan("accept", SPEC, str(FIX / "run-faults"), "--out", str(tmp_path))
    assert r.code == 1, r.err
    assert r.out.splitlines()[2].startswith("acceptance of accept-fixture, run "
                                            "20260101T120000Z: FAIL")
    assert "  ib_write_bw: gpu002 mlx5_3: mlx5_3 on gpu002: all its tests fall short" in r.out
    md, js = (tmp_path / f"{REPORT}.md").read_text(), (tmp_path / f"{REPORT}.json").read_text()
    again = podplan("-q", "accept", SPEC, str(FIX / "run-faults"), "--out", str(tmp_path))
    assert again.code == 1 and "wrote" not in again.out
    assert (tmp_path / f"{REPORT}.md").read_text() == md
    assert (tmp_path / f"{REPORT}.json").read_text() == js


def test_accept_a_healthy_run_exits_0(tmp_path: Path) -> None:
    r = podplan("accept", SPEC, str(FIX / "run-healthy"), "--out", str(tmp_path))
    assert r.code == 0 and ": PASS (0 shortfalls;" in r.out
    assert "not measured: train_step" in r.out


def _fake(tmp_path: Path, name: str, code: int = 0) -> Path:
    tool = tmp_path / "bin" / name
    tool.parent.mkdir(exist_ok=True)
    tool.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >>{tmp_path}/argv\n'
                    f'echo "slurm_update error: Invalid node name specified" >&2\nexit {code}\n')
    tool.chmod(0o755)
    return tool


def test_drain_calls_scontrol_per_node_with_the_reason(tmp_path: Path) -> None:
    fake = _fake(tmp_path, "scontrol")
    r = podplan("accept", SPEC, str(FIX / "run-faults"), "--out", str(tmp_path), "--drain",
                "--scontrol", str(fake))
    assert r.code == 1
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[:3] == ["update", "NodeName=gpu002", "State=DRAIN"]
    assert argv[3] == "Reason=podplan-accept 20260101T120000Z: ib_write_bw mlx5_3 196 Gb/s < 369"
    assert [a for a in argv if a.startswith("NodeName=")] == [
        "NodeName=gpu002", "NodeName=gpu003", "NodeName=gpu004"]
    assert "drained gpu003: podplan-accept" in r.out


def test_drain_over_ssh_quotes_the_arguments_and_reports_refusals(tmp_path: Path) -> None:
    fake = _fake(tmp_path, "ssh", code=1)
    r = podplan("accept", SPEC, str(FIX / "run-faults"), "--out", str(tmp_path), "--drain",
                "--scontrol", f"{fake} login01 scontrol")
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[:3] == ["login01", "scontrol", "update"]
    assert argv[5].startswith("'Reason=podplan-accept 20260101T120000Z: ib_write_bw")
    assert "not drained gpu002: slurm_update error: Invalid node name specified" in r.out


def test_accept_user_errors_exit_2(tmp_path: Path) -> None:
    assert podplan("accept", SPEC).code == 2
    r = podplan("accept", "examples/slurm-lab.yaml", str(FIX / "run-faults"), "--out",
                str(tmp_path))
    assert r.code == 2 and "holds a run of cluster 'accept-fixture'" in r.err
    r = podplan("accept", SPEC, str(tmp_path / "missing"), "--out", str(tmp_path))
    assert r.code == 2 and "results directory not found" in r.err
    r = podplan("accept", SPEC, str(FIX / "run-faults"), "--out", str(tmp_path), "--drain",
                "--scontrol", str(tmp_path / "no-such-scontrol"))
    assert r.code == 2 and "not found" in r.err
    r = podplan("accept", SPEC, "--expected", str(FIX / "run-faults"))
    assert r.code == 2 and "--expected prints the plan's values" in r.err
    r = podplan("accept", SPEC, str(FIX / "run-faults"), "--json")
    assert r.code == 2 and "--json goes with --expected" in r.err
    garbage = tmp_path / "garbage"
    (garbage / "nccl").mkdir(parents=True)
    (garbage / "nccl/all_reduce.1n.txt").write_bytes(bytes(range(256)))
    r = podplan("accept", SPEC, str(garbage), "--out", str(tmp_path / "g"))
    assert r.code == 2 and "is output of the ladder's tools" in r.err
    assert "Traceback" not in r.err and not (tmp_path / "g").exists()


@pytest.mark.parametrize(("change", "says"), [
    ({"results": 5}, "'results': input should be a valid list"),
    ({"results": [{"rung": "nccl_tests"}]}, "'results.0.test': field required"),
    ({"design": {}}, "'design.server': field required"),
    ({"cluster": "../../etc/x"}, "'cluster': string should match pattern"),
    ({"version": 2}, "'version': input should be 1"),
])
def test_calibrate_refuses_json_that_is_not_a_report(tmp_path: Path, change: dict[str, object],
                                                     says: str) -> None:
    doc = json.loads(_report(tmp_path, "run-healthy").read_text())
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**doc, **change}))
    r = podplan("calibrate", "--from", str(bad), "--out", str(tmp_path / "site.yaml"))
    assert r.code == 2 and "not an acceptance report written by podplan accept" in r.err
    assert says in r.err and not (tmp_path / "site.yaml").exists()


def _report(tmp_path: Path, run: str) -> Path:
    podplan("-q", "accept", SPEC, str(FIX / run), "--out", str(tmp_path))
    return tmp_path / f"{REPORT}.json"


def test_calibrate_refuses_a_failed_run_and_feeds_size(tmp_path: Path) -> None:
    bad = podplan("calibrate", "--from", str(_report(tmp_path / "f", "run-faults")))
    assert bad.code == 2 and "the acceptance run failed" in bad.err
    out = tmp_path / "site.yaml"
    r = podplan("calibrate", "--from", str(_report(tmp_path, "run-healthy")), "--out", str(out))
    assert r.code == 0 and r.out.startswith(f"wrote {out}: fabric x")
    doc = yaml.safe_load(out.read_text())
    assert doc["hardware"] == {"server": "xe9680", "gpu": "h100-sxm-80gb"}
    assert 0.9 < doc["factors"]["nvlink"] < 1.1 and 0.9 < doc["factors"]["fabric"] < 1.1
    assert "compute" not in doc["factors"]
    spec = yaml.safe_load(Path(SPEC).read_text())
    spec["site_calibration"] = "site.yaml"
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    plain, cal = podplan("size", SPEC), podplan("size", str(tmp_path / "spec.yaml"))
    assert cal.code == 0 and "note: site calibration in use: site.yaml (cluster accept-fixture"\
        in cal.out
    assert "site calibration" not in plain.out


def test_a_calibration_of_other_hardware_is_ignored_and_said(tmp_path: Path) -> None:
    out = tmp_path / "site.yaml"
    podplan("calibrate", "--from", str(_report(tmp_path, "run-healthy")), "--out", str(out))
    spec = yaml.safe_load(Path(SPEC).read_text())
    spec.update(site_calibration="site.yaml", hardware={"server": "xe9680",
                                                        "gpu": "h200-sxm-141gb", "gpus": 32})
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    r = podplan("size", str(tmp_path / "spec.yaml"))
    assert r.code == 0 and "site calibration site.yaml ignored: it was measured on " \
        "h100-sxm-80gb" in r.out


def test_broken_site_calibrations_are_located_errors(tmp_path: Path) -> None:
    spec = yaml.safe_load(Path(SPEC).read_text())
    spec["site_calibration"] = "site.yaml"
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    r = podplan("size", str(tmp_path / "spec.yaml"))
    assert r.code == 2 and "site_calibration: site calibration not found" in r.err
    (tmp_path / "site.yaml").write_text("version: 1\ncluster: x\nrun: y\nhardware: {server: "
                                        "xe9680, gpu: h100-sxm-80gb}\nfactors: {fabric: 9}\n")
    r = podplan("size", str(tmp_path / "spec.yaml"))
    assert r.code == 2 and "factors.fabric: must be a number in (0.2, 2.0)" in r.err


def test_the_checked_in_fixtures_are_what_the_builder_writes(tmp_path: Path) -> None:
    for name, faults in CHECKED_IN.items():
        fresh = build_run(tmp_path / name, NODES, faults)
        files = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
        kept = sorted(p.relative_to(FIX / name) for p in (FIX / name).rglob("*") if p.is_file())
        assert files == kept, name
        for f in files:
            assert (fresh / f).read_bytes() == (FIX / name / f).read_bytes(), f
    shutil.rmtree(tmp_path)
