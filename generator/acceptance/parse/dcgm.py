"""``dcgmi diag --json`` output, as NVIDIA DCGM's ``dcgmi/Diag.cpp`` writes it.

DCGM 4 (``nvvs/include/NvvsJsonStrings.h``: NVVS_NAME "DCGM Diagnostic")::

    {"DCGM Diagnostic": {"test_categories": [
        {"category": "Hardware", "tests": [
            {"name": "memory", "results": [
                {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0,
                 "status": "Pass", "warnings": [{"warning": "...", "error_id": 12}],
                 "info": ["..."]}],
             "test_summary": {"status": "Pass"}}]}]},
     "entity_groups": [...], "metadata": {"version": "4.x", ...}}

DCGM 3 uses "DCGM GPU Diagnostic", ``"gpu_id": "0"`` instead of the entity fields and a
string ``info``. Statuses are Pass, Skip, Warn, Fail and Not Run. A diagnostic that could
not start writes ``runtime_error`` under the top key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from generator.acceptance.parse import Issue

BANDWIDTH = re.compile(r"(\d+(?:\.\d+)?)\s*(MB/s|MiB/s|GB/s)")


@dataclass(frozen=True)
class Result:
    """One test's verdict for one GPU (``gpu`` None: the whole node)."""

    test: str
    category: str
    gpu: int | None
    status: str
    warnings: tuple[str, ...]
    info: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return self.status in ("Pass", "Skip")

    def bandwidth_gbps(self) -> float | None:
        """A bandwidth the plugin printed in its info or warnings, in GB/s (if any)."""
        for text in (*self.info, *self.warnings):
            if m := BANDWIDTH.search(text):
                value = float(m[1])
                return value / 1000 if m[2].startswith("M") else value
        return None


@dataclass
class DcgmReport:
    results: list[Result] = field(default_factory=list)
    version: str | None = None
    issues: list[Issue] = field(default_factory=list)

    @property
    def not_passed(self) -> list[Result]:
        return [r for r in self.results if not r.passed]


def _texts(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out += [str(v.get(key, ""))] if isinstance(v, dict) else [str(v)]
        return tuple(t for t in out if t)
    return ()


def _gpu(entry: dict[str, Any]) -> int | None:
    if entry.get("entity_group", "GPU") == "GPU" and "entity_id" in entry:
        return int(entry["entity_id"])
    if "gpu_id" in entry and str(entry["gpu_id"]).isdigit():
        return int(entry["gpu_id"])
    return None


def _results(test: dict[str, Any], category: str) -> list[Result]:
    name = str(test.get("name", "?"))
    entries = test.get("results") or []
    if not entries and isinstance(test.get("test_summary"), dict):
        entries = [test["test_summary"]]
    return [Result(name, category, _gpu(e), str(e.get("status", "?")),
                   _texts(e.get("warnings"), "warning"), _texts(e.get("info"), "info"))
            for e in entries if isinstance(e, dict)]


def parse_dcgm(text: str, file: str) -> DcgmReport:
    """Read one ``dcgmi diag -j`` output."""
    rep = DcgmReport()
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError as exc:
        rep.issues.append(Issue(file, exc.lineno, f"not dcgmi diag --json output ({exc.msg})"))
        return rep
    if not isinstance(doc, dict):
        rep.issues.append(Issue(file, None, "not dcgmi diag --json output (not an object)"))
        return rep
    top = next((v for v in doc.values() if isinstance(v, dict) and
                ("test_categories" in v or "runtime_error" in v)), None)
    if top is None:
        rep.issues.append(Issue(file, None, "not dcgmi diag --json output (no test_categories)"))
        return rep
    if top.get("runtime_error"):
        rep.issues.append(Issue(file, None, f"dcgmi diag did not run: {top['runtime_error']}"))
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else top
    rep.version = meta.get("version") if isinstance(meta, dict) else None
    for cat in top.get("test_categories") or []:
        for test in cat.get("tests") or []:
            rep.results += _results(test, str(cat.get("category", "?")))
    return rep
