"""The acceptance ladder's performance rungs in the lab, end to end, with stub tools.

What runs for real: the ladder's Slurm orchestration (srun on idle GPU nodes with their
GPUs granted, the wait for idle nodes before each rung, per-node output files, the ring of
ib_write_bw pairs over every rail (stub server and client meet over TCP on the rail's port),
nccl-tests on 1, 2 and N nodes with NCCL_ALGO=Ring exported across nodes; one rank per node
with -g 8 here, as a lab node gives a job one CPU), the collection onto the control node
with run.json, ``podplan accept`` on what was collected (report, named shortfall,
deterministic re-run), ``--drain`` through the real scontrol on the login node, and
``podplan calibrate`` feeding ``podplan size``. What is stood in for: the tools themselves
(tests/lab/stubs, clearly named, bind-mounted only by lab.sh), which check their job and
print the real output formats with made-up figures: one slow port, gpu002's mlx5_3.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.e2e.labrun import LAB, REPO, SPEC, Lab

NCCL_OPS = ["all_reduce"]
"""The lab runs one collective (three jobs); the other three take the same tasks with another
binary name, and the comparator reads all four on the fixtures."""
PERF_RUNGS = {"gpu_health": "collected", "dcgm_diag": "collected", "ib_write_bw": "collected",
              "nccl_tests": "collected", "train_step": "skip"}


def podplan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from generator.cli import main; sys.exit(main())",
         *args], cwd=REPO, text=True, capture_output=True, check=False, timeout=300)


def _scontrol_wrapper(tmp: Path, login: str) -> Path:
    """``scontrol`` on the lab's login node (lab.sh ssh passes one command string)."""
    path = tmp / "lab-scontrol"
    path.write_text(f'#!/bin/bash\nexec {LAB} ssh {login} "scontrol $(printf \'%q \' "$@")"\n')
    path.chmod(0o755)
    return path


def _slurm_view(lab: Lab, login: str) -> str:
    """What Slurm says about the nodes and jobs, for a failure message."""
    return lab.ssh(login, "sinfo --Node --format='%N %T %E'; squeue --all; "
                          "sacct --allocations --starttime=today --format=JobID,JobName,State,"
                          "Start,End,NodeList").stdout


def _run_ladder(lab: Lab, login: str) -> Path:
    runs = lab.inventory / ".acceptance" / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    recap = lab.playbook("performance ladder", "--tags", "acceptance",
                         "-e", "slurm_acceptance_performance=true",
                         "-e", json.dumps({"slurm_acceptance_nccl_ops": NCCL_OPS}))
    assert all(r["failed"] == 0 for r in recap.values()), recap
    new = sorted(set(runs.iterdir()) - before)
    assert len(new) == 1 and new[0].is_dir(), f"one new run directory expected: {new}"
    report = json.loads((lab.inventory / ".acceptance" / "report.json").read_text())
    statuses = {r["name"]: r["status"] for r in report["rungs"] if r["name"] in PERF_RUNGS}
    assert statuses == PERF_RUNGS, f"{report['rungs']}\n{_slurm_view(lab, login)}"
    return new[0]


def _check_collected(run: Path, compute: list[str]) -> None:
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["run"] == run.name and manifest["gpu_nodes"] == compute, manifest
    assert manifest["nccl_nodes"] == {"1": compute[:1], "2": compute[:2], "3": compute}
    for node in compute:
        for part in ("gpu/{}.query.csv", "gpu/{}.topo.txt", "dcgm/{}.diag.json",
                     "dcgm/{}.membw.json", "ib/{}.txt"):
            assert (run / part.format(node)).stat().st_size > 0, part.format(node)
    assert sorted(p.name for p in (run / "nccl").glob("*.txt")) == \
        sorted(f"{op}.{n}n.txt" for op in NCCL_OPS for n in (1, 2, 3))


def _check_accept(run: Path, tmp: Path, login: str, lab: Lab) -> Path:
    out = tmp / "accept"
    r = podplan("accept", str(SPEC), str(run), "--out", str(out), "--drain", "--scontrol",
                str(_scontrol_wrapper(tmp, login)))
    assert r.returncode == 1, f"a slow port must fail acceptance:\n{r.stdout}{r.stderr}"
    assert "ib_write_bw: gpu002 mlx5_3: mlx5_3 on gpu002: all its tests fall short" in r.stdout
    assert "drained gpu002: podplan-accept" in r.stdout, r.stdout
    report = out / "reports" / "slurm-lab" / "acceptance" / f"{run.name}.json"
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "fail" and list(doc["drain"]) == ["gpu002"], doc["drain"]
    node = lab.node(login, "gpu002")
    assert "DRAIN" in node["State"] and node["Reason"].startswith("podplan-accept"), node
    first = {p.name: p.read_bytes() for p in report.parent.iterdir()}
    again = podplan("accept", str(SPEC), str(run), "--out", str(out))
    assert again.returncode == 1
    assert {p.name: p.read_bytes() for p in report.parent.iterdir()} == first, \
        "the same results must give the same report"
    lab.sh(login, "scontrol update nodename=gpu002 state=resume")
    lab.wait("gpu002 back in service", lambda: "DRAIN" not in lab.node(login, "gpu002")["State"])
    return report


def _check_calibrate(report: Path, tmp: Path) -> None:
    refused = podplan("calibrate", "--from", str(report), "--out", str(tmp / "site.yaml"))
    assert refused.returncode == 2 and "acceptance run failed" in refused.stderr
    r = podplan("calibrate", "--from", str(report), "--out", str(tmp / "site.yaml"),
                "--allow-failed")
    assert r.returncode == 0, r.stderr
    spec = yaml.safe_load(SPEC.read_text())
    spec["site_calibration"] = "site.yaml"
    (tmp / "calibrated.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    sized = podplan("size", str(tmp / "calibrated.yaml"))
    assert sized.returncode == 0 and "site calibration in use: site.yaml" in sized.stdout, \
        sized.stdout + sized.stderr


def check_performance_ladder(lab: Lab, tmp: Path, login: str, compute: list[str]) -> None:
    """The performance rungs in the lab, then accept, drain and calibrate on what they
    collected (timed as ``performance ladder`` plus ``accept``)."""
    run = _run_ladder(lab, login)
    _check_collected(run, compute)
    start = time.monotonic()
    report = _check_accept(run, tmp, login, lab)
    _check_calibrate(report, tmp)
    lab.times["accept"] = time.monotonic() - start
    (lab.logs / "acceptance-report.md").write_text(report.with_suffix(".md").read_text())
