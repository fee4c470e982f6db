"""A run directory collected by the acceptance ladder, read and parsed.

Layout (written by ``ansible/roles/slurm_acceptance``, rungs ``gpu_health`` .. ``train_step``)::

    run.json                   the run: id (UTC start, 20260101T120000Z), cluster, nodes
                               tested, rails, and each rung's status
    report.json                the functional rungs' report (controllers .. topology)
    gpu/<node>.query.csv       nvidia-smi --query-gpu=<QUERY_FIELDS> --format=csv,nounits
    gpu/<node>.topo.txt        nvidia-smi topo -m
    dcgm/<node>.diag.json      dcgmi diag -r 2 -j
    dcgm/<node>.membw.json     dcgmi diag -r memory_bandwidth -j
    ib/<node>.txt              ib_write_bw, one marked section per rail and peer
    nccl/<op>.<n>n.txt         nccl-tests <op>_perf on n nodes (rank 0's output)
    train/<n>n.txt             the optional training step's log, n nodes

The run id names the report (``reports/<name>/acceptance/<run id>.md``), so comparing the
same results twice writes the same files. Without ``run.json`` (outputs collected by
hand in this layout) the id is the newest file's modification time, in UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from generator.acceptance.manifest import Manifest, read_manifest
from generator.acceptance.parse import Issue
from generator.acceptance.parse.dcgm import DcgmReport, parse_dcgm
from generator.acceptance.parse.nccl import NcclReport, parse_nccl
from generator.acceptance.parse.nvsmi import Query, Topology, parse_query, parse_topo
from generator.acceptance.parse.perftest import WriteBw, parse_write_bw, sections
from generator.acceptance.parse.train import StepLog, parse_steps
from generator.errors import PodplanError

NCCL_FILE = re.compile(r"^(?P<op>[a-z_]+)\.(?P<nodes>\d+)n\.txt$")
TRAIN_FILE = re.compile(r"^(?P<nodes>\d+)n\.txt$")
MAX_FILE_BYTES = 64 * 2**20
"""A tool's output larger than this is not read (a runaway log, not a measurement)."""


@dataclass(frozen=True)
class IbTest:
    """One ``ib_write_bw`` between two nodes on one rail (client writes into server)."""

    device: str
    server: str
    client: str
    result: WriteBw


@dataclass(frozen=True)
class NcclRun:
    op: str
    nodes: int
    file: str
    report: NcclReport


@dataclass(frozen=True)
class TrainRun:
    nodes: int
    file: str
    log: StepLog


@dataclass
class Run:
    """Everything one ladder run measured, parsed, with the issues met while reading."""

    id: str
    cluster: str | None
    started: str | None
    nodes: list[str]
    rails: list[str]
    rungs: dict[str, dict[str, Any]]
    nccl_nodes: dict[int, list[str]] = field(default_factory=dict)
    """Nodes of each nccl-tests node count (from run.json; a run that died names none)."""
    queries: dict[str, Query] = field(default_factory=dict)
    topos: dict[str, Topology] = field(default_factory=dict)
    diags: dict[str, DcgmReport] = field(default_factory=dict)
    membw: dict[str, DcgmReport] = field(default_factory=dict)
    ib: list[IbTest] = field(default_factory=list)
    nccl: list[NcclRun] = field(default_factory=list)
    train: list[TrainRun] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


def _text(path: Path, root: Path) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PodplanError(f"{path.relative_to(root)} is larger than "
                           f"{MAX_FILE_BYTES // 2**20} MiB: not a tool's output", str(root))
    return path.read_text(encoding="utf-8", errors="replace")


def _run_id(doc: Manifest, files: list[Path]) -> str:
    if doc.run is not None:
        return doc.run
    newest = max(p.stat().st_mtime for p in files)
    return datetime.fromtimestamp(int(newest), UTC).strftime("%Y%m%dT%H%M%SZ")


def _node(path: Path, suffix: str) -> str:
    return path.name[: -len(suffix)]


def _read_gpu_and_dcgm(run: Run, root: Path) -> None:
    for p in sorted((root / "gpu").glob("*.query.csv")):
        run.queries[_node(p, ".query.csv")] = parse_query(_text(p, root), _rel(p, root))
    for p in sorted((root / "gpu").glob("*.topo.txt")):
        run.topos[_node(p, ".topo.txt")] = parse_topo(_text(p, root), _rel(p, root))
    for p in sorted((root / "dcgm").glob("*.diag.json")):
        run.diags[_node(p, ".diag.json")] = parse_dcgm(_text(p, root), _rel(p, root))
    for p in sorted((root / "dcgm").glob("*.membw.json")):
        run.membw[_node(p, ".membw.json")] = parse_dcgm(_text(p, root), _rel(p, root))


def _read_ib(run: Run, root: Path) -> None:
    for p in sorted((root / "ib").glob("*.txt")):
        rel = _rel(p, root)
        found = sections(_text(p, root))
        if not any(s.fields.get("role") == "client" for s in found):
            run.issues.append(Issue(rel, None, "no ib_write_bw client section marked by the "
                                               "ladder ('@@ podplan ib_write_bw ... @@')"))
        for s in found:
            if s.fields.get("role") != "client":
                continue
            f = s.fields
            if not {"device", "server", "client"} <= f.keys():
                run.issues.append(Issue(rel, s.line - 1, "ib_write_bw marker without "
                                                          "device, server and client"))
                continue
            res = parse_write_bw(s.text, rel, s.line)
            run.ib.append(IbTest(f["device"], f["server"], f["client"], res))


def _read_nccl_and_train(run: Run, root: Path) -> None:
    for p in sorted((root / "nccl").glob("*.txt")):
        if m := NCCL_FILE.match(p.name):
            rep = parse_nccl(_text(p, root), _rel(p, root))
            run.nccl.append(NcclRun(m["op"], int(m["nodes"]), _rel(p, root), rep))
    for p in sorted((root / "train").glob("*.txt")):
        if m := TRAIN_FILE.match(p.name):
            run.train.append(TrainRun(int(m["nodes"]), _rel(p, root),
                                      parse_steps(_text(p, root), _rel(p, root))))


def _rel(p: Path, root: Path) -> str:
    return p.relative_to(root).as_posix()


def _readable(run: Run) -> bool:
    """Whether any output holds a measurement (or a tool saying it failed)."""
    return (any(q.readable for q in run.queries.values())
            or any(t.gpus for t in run.topos.values())
            or any(d.results for d in (*run.diags.values(), *run.membw.values()))
            or any(t.result.gbps is not None for t in run.ib)
            or any(r.report.rows or r.report.ranks for r in run.nccl)
            or any(t.log.steps_s for t in run.train))


def _all_issues(run: Run) -> list[Issue]:
    return [*(i for q in run.queries.values() for i in q.issues),
            *(i for t in run.topos.values() for i in t.issues),
            *(i for d in (*run.diags.values(), *run.membw.values()) for i in d.issues),
            *run.issues, *(i for t in run.ib for i in t.result.issues),
            *(i for r in run.nccl for i in r.report.issues),
            *(i for t in run.train for i in t.log.issues)]


def read_run(results_dir: Path) -> Run:
    """Read a ladder run directory (``<inventory>/.acceptance/runs/<run id>``)."""
    root = results_dir
    if not root.is_dir():
        raise PodplanError(f"results directory not found: {root}")
    files = [p for p in root.rglob("*") if p.is_file()]
    if not files:
        raise PodplanError(f"results directory is empty: {root}")
    doc = read_manifest(root)
    run = Run(id=_run_id(doc, files), cluster=doc.cluster, started=doc.started,
              nodes=list(doc.gpu_nodes), rails=[r.device for r in doc.rails],
              rungs={r.name: r.model_dump() for r in doc.rungs},
              nccl_nodes={int(k): v for k, v in doc.nccl_nodes.items()})
    _read_gpu_and_dcgm(run, root)
    _read_ib(run, root)
    _read_nccl_and_train(run, root)
    if not (run.queries or run.topos or run.diags or run.membw or run.ib or run.nccl
            or run.train):
        raise PodplanError(f"no acceptance results under {root} (expected gpu/, dcgm/, ib/, "
                           "nccl/ or train/ as the ladder writes them)")
    if not _readable(run):
        issues = _all_issues(run)
        shown = "; ".join(i.text() for i in issues[:3])
        more = f" (and {len(issues) - 3} more)" if len(issues) > 3 else ""
        raise PodplanError(f"nothing under {root} is output of the ladder's tools: "
                           f"{shown}{more}")
    if not run.nodes:
        run.nodes = sorted({*run.queries, *run.diags, *(t.client for t in run.ib)})
    return run
