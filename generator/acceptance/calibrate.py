"""``podplan calibrate --from <acceptance report>.json``: a site calibration file.

Factors, each the median over the collectives measured (so NVLink SHARP lifting one
all_reduce does not carry the NVLink factor alone):

* ``nvlink``: measured / expected nccl-tests bus bandwidth on one node, at the largest
  size each run reached;
* ``fabric``: the same across nodes (the runs on 2 or more nodes);
* ``compute``: expected / measured step time of the short training run, when it ran.

A report that failed is refused (calibrating on a bad cable bakes the bad cable into
every later estimate) unless the caller says otherwise. The file is YAML with a comment
header that says where it came from and how to use it; ``generator.sizing.site_calibration``
reads it.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from generator.errors import PodplanError
from generator.render import fastyaml
from generator.sizing.site_calibration import LIMITS, VERSION

SIZE = re.compile(r"busbw @ (\d+) (GiB|MiB|KiB|B)$")
SCALE = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "B": 1}


class _Loose(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class _Measured(_Loose):
    median: float


class _Result(_Loose):
    rung: str
    test: str
    scope: str
    metric: str
    unit: str
    expected: float
    measured: _Measured | None = None


class _Design(_Loose):
    server: str
    gpu: str


class _RunId(_Loose):
    id: str = Field(pattern=r"^\d{8}T\d{6}Z$")


class _Report(_Loose):
    """The fields of an acceptance report (``generator.acceptance.report``) read here."""

    version: Literal[1]
    cluster: str = Field(pattern=r"^[a-z0-9-]+$", max_length=40)
    verdict: Literal["pass", "fail"]
    design: _Design
    run: _RunId
    results: list[_Result]


def _read(path: Path) -> dict[str, Any]:
    what = "an acceptance report written by podplan accept (reports/<name>/acceptance/<run>.json)"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PodplanError(f"acceptance report not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PodplanError(f"not {what}: {exc}", str(path)) from None
    try:
        _Report.model_validate(doc)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = "should be a JSON object" if e["type"] == "model_type" else e["msg"].lower()
        raise PodplanError(f"not {what}: '{where}': {msg}", str(path)) from None
    return dict(doc)


def _largest(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per nccl-tests binary and scope, the result at the largest size measured."""
    best: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for r in results:
        m = SIZE.match(r["metric"])
        if r.get("rung") != "nccl_tests" or not m or not _comparable(r):
            continue
        size = int(m[1]) * SCALE[m[2]]
        key = (r["test"], r["scope"])
        if key not in best or size > best[key][0]:
            best[key] = (size, r)
    return [r for _, r in best.values()]


def _comparable(r: dict[str, Any]) -> bool:
    """A measured bandwidth or time: both figures positive (a ratio means something)."""
    return bool(r.get("measured")) and r["measured"]["median"] > 0 and r["expected"] > 0


def _ratio(r: dict[str, Any], inverse: bool = False) -> float:
    measured, expected = float(r["measured"]["median"]), float(r["expected"])
    return expected / measured if inverse else measured / expected


def factors(doc: dict[str, Any]) -> tuple[dict[str, float], dict[str, list[str]]]:
    """(factor -> value, factor -> the evidence lines it comes from)."""
    groups: dict[str, list[dict[str, Any]]] = {"nvlink": [], "fabric": []}
    for r in _largest(doc["results"]):
        groups["nvlink" if r["scope"].startswith("1 node ") else "fabric"].append(r)
    train = [r for r in doc["results"] if r.get("rung") == "train_step" and _comparable(r)]
    out: dict[str, float] = {}
    evidence: dict[str, list[str]] = {}
    for name, rows in groups.items():
        if rows:
            out[name] = round(statistics.median(_ratio(r) for r in rows), 4)
            evidence[name] = [f"{r['test']}, {r['scope']}, {r['metric']}: "
                              f"{r['measured']['median']} of {r['expected']} {r['unit']}"
                              for r in sorted(rows, key=lambda r: (r["scope"], r["test"]))]
    if train:
        out["compute"] = round(statistics.median(_ratio(r, inverse=True) for r in train), 4)
        evidence["compute"] = [f"{r['scope']}: step {r['measured']['median']} s, expected "
                               f"{r['expected']} s" for r in train]
    return out, evidence


def calibration_text(report: Path, allow_failed: bool = False,
                     ) -> tuple[str, str, dict[str, float]]:
    """(the site calibration file's text, the cluster, the factors) for one report."""
    doc = _read(report)
    if doc.get("verdict") != "pass" and not allow_failed:
        raise PodplanError("the acceptance run failed: calibrating on it would carry its "
                           "faults into every estimate; fix the shortfalls and run the "
                           "ladder again, or pass --allow-failed", str(report))
    found, evidence = factors(doc)
    if not found:
        raise PodplanError("nothing to calibrate: the report has no nccl-tests or training "
                           "step measurements", str(report))
    bad = {k: v for k, v in found.items() if not LIMITS[0] <= v <= LIMITS[1]}
    if bad:
        raise PodplanError(f"implausible factors {bad} (allowed {LIMITS}): check the "
                           "measurements before calibrating on them", str(report))
    design, run = doc["design"], doc["run"]
    data = {"version": VERSION, "cluster": doc["cluster"], "run": run["id"],
            "hardware": {"server": design["server"], "gpu": design["gpu"]},
            "factors": found, "evidence": evidence}
    head = (
        f"# Site calibration of cluster {doc['cluster']}, written by podplan calibrate from\n"
        f"# acceptance run {run['id']} ({report.name}). Factors scale the built-in\n"
        "# efficiencies: nvlink -> network.nvlink_efficiency, fabric ->\n"
        "# network.fabric_efficiency, compute -> compute.gemm_efficiency of this GPU.\n"
        "# Use it: add 'site_calibration: <path of this file, from the spec>' to the spec;\n"
        "# podplan size and plan then say it is in use. Remove that line to go back to the\n"
        "# built-in calibration.\n"
    )
    return head + fastyaml.dump(data), str(doc["cluster"]), found
