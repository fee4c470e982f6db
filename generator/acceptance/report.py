"""The acceptance report: ``reports/<name>/acceptance/<run id>.json`` and ``.md``.

Both are rendered from the comparison alone (no clock, no paths), so the same results give
the same bytes. Checks are summarised per test, scope and metric (count, min, median,
max, passes) and listed one by one only where they fail, which keeps a 2,048-node report
readable; the JSON carries what ``podplan calibrate`` needs (measured vs expected per
nccl-tests scope and size, and the training step).
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from typing import Any

from generator.acceptance.compare import Comparison
from generator.acceptance.compare.base import Check
from generator.catalog.load import Catalog
from generator.sizing.acceptance.expected import size_text
from generator.sizing.result import json_number

VERSION = 1
FAILED_ROWS_MAX = 200
"""Failed checks listed in the Markdown (all of them are in the JSON)."""


def _groups(cmp: Comparison) -> list[tuple[tuple[str, str, str, str], list[Check]]]:
    groups: dict[tuple[str, str, str, str], list[Check]] = defaultdict(list)
    for c in cmp.checks:
        groups[(c.rung, c.exp.test, c.exp.scope, c.exp.metric)].append(c)
    return list(groups.items())


def _result(checks: list[Check]) -> dict[str, Any]:
    exp = checks[0].exp
    values = [c.measured for c in checks if c.measured is not None]
    bad = [c for c in checks if c.status != "pass"]
    return {
        "rung": checks[0].rung, **exp.to_json(), "pass_if": exp.pass_if,
        "limit": json_number(exp.limit),
        "measured": None if not values else {
            "count": len(values), "min": json_number(min(values)),
            "median": json_number(statistics.median(values)), "max": json_number(max(values))},
        "checks": len(checks), "passed": len(checks) - len(bad),
        "failed": [{"subject": c.subject, "status": c.status,
                    "measured": None if c.measured is None else json_number(c.measured),
                    "nodes": list(c.nodes), "detail": c.detail} for c in bad],
    }


def report_json(cmp: Comparison) -> dict[str, Any]:
    """The machine-readable report (``podplan calibrate --from`` reads it)."""
    run = cmp.run
    failed = cmp.failed
    return {
        "version": VERSION,
        "cluster": cmp.model.cluster,
        "run": {"id": run.id, "started": run.started, "nodes": run.nodes, "rails": run.rails},
        "design": {"server": cmp.model.server.id, "gpu": cmp.model.gpu.id,
                   "gpus_per_node": cmp.model.node.gpus, "nics_per_node": cmp.model.node.nics,
                   "nic_gbps": cmp.model.node.nic_gbps, "planned_nodes": cmp.model.nodes,
                   "nccl_compared_from": size_text(cmp.model.data.compare_from_bytes),
                   "nccl_listed_sizes": [size_text(b) for b in
                                         cmp.model.data.listed_sizes_bytes]},
        "verdict": cmp.verdict,
        "summary": {"checks": len(cmp.checks), "passed": len(cmp.checks) - len(failed),
                    "failed": sum(c.status == "fail" for c in failed),
                    "errors": sum(c.status == "error" for c in failed),
                    "not_measured": cmp.not_measured},
        "shortfalls": [{"rung": s.rung, "subject": s.subject, "what": s.what,
                        "drain": list(s.drain)} for s in cmp.shortfalls],
        "drain": cmp.drain(),
        "results": [_result(checks) for _, checks in _groups(cmp)],
    }


def _num(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:,.4g}" if isinstance(x, float) else str(x)


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _shown(r: dict[str, Any], sizes: list[str]) -> bool:
    """nccl-tests rows at the listed sizes, and every row with a failure (the JSON has all)."""
    if r["rung"] != "nccl_tests" or r["failed"]:
        return True
    return any(r["metric"].endswith(f"@ {s}") for s in sizes)


def _results_table(doc: dict[str, Any]) -> list[str]:
    rows = ["| rung | test | scope | metric | expected | pass if | measured min / median / max "
            "| passed |", "|---|---|---|---|---|---|---|---|"]
    sizes = doc["design"]["nccl_listed_sizes"]
    for r in (r for r in doc["results"] if _shown(r, sizes)):
        m = r["measured"] or {}
        rule = {"at_least": ">=", "at_most": "<=", "equal": "="}[r["pass_if"]]
        measured = (" / ".join(_num(m.get(k)) for k in ("min", "median", "max")) if m
                    else "verdict only, no figure" if r["checks"] else "-")
        rows.append(f"| {r['rung']} | {_esc(r['test'])} | {_esc(r['scope'])} | "
                    f"{_esc(r['metric'])} | {_num(r['expected'])} {r['unit']} | {rule} "
                    f"{_num(r['limit'])} ({r['tolerance_pct']:g} %) | {measured} | "
                    f"{r['passed']}/{r['checks']} |")
    return rows


def _failed_table(doc: dict[str, Any]) -> list[str]:
    fails = [(r, f) for r in doc["results"] for f in r["failed"]]
    if not fails:
        return ["None."]
    rows = ["| subject | test | metric | measured | limit | detail |", "|---|---|---|---|---|---|"]
    for r, f in fails[:FAILED_ROWS_MAX]:
        rows.append(f"| {_esc(f['subject'])} | {_esc(r['test'])} | {_esc(r['metric'])} | "
                    f"{_num(f['measured'])} {r['unit'] if f['measured'] is not None else ''} | "
                    f"{_num(r['limit'])} | {_esc(f['detail'])} |")
    if len(fails) > FAILED_ROWS_MAX:
        rows.append(f"\n{len(fails) - FAILED_ROWS_MAX} more failed checks are in the JSON.")
    return rows


def _sources(doc: dict[str, Any], catalog: Catalog) -> list[str]:
    text = " ".join(r["source"] for r in doc["results"])
    ids = sorted(set(re.findall(r"\b([A-Z]\d+)\b", text)), key=lambda s: (s[0], int(s[1:])))
    known = catalog.sources
    return [f"- {i}: {known[i].title}" + (f" <{known[i].url}>" if known[i].url else "")
            for i in ids if i in known]


def report_markdown(doc: dict[str, Any], catalog: Catalog) -> str:
    """The human report, from the JSON document."""
    run, s, design = doc["run"], doc["summary"], doc["design"]
    head = [
        f"# Acceptance: {doc['cluster']}, run {run['id']}", "",
        f"**Verdict: {doc['verdict'].upper()}** - {len(doc['shortfalls'])} shortfall"
        f"{'s' if len(doc['shortfalls']) != 1 else ''}; {s['passed']} of {s['checks']} checks "
        f"passed, {s['failed']} failed, {s['errors']} without a measurement.", "",
        f"Run started {run['started'] or 'at an unknown time'} on {len(run['nodes'])} GPU "
        f"node{'s' if len(run['nodes']) != 1 else ''} ({', '.join(run['nodes']) or 'none'}), "
        f"rails {', '.join(run['rails']) or 'not listed'}. Expected values are podplan's model "
        f"of this plan ({doc['design']['gpu']} in {doc['design']['server']}, "
        f"{doc['design']['nics_per_node']} x {doc['design']['nic_gbps']:g} Gb/s rails, built-in "
        "calibration): a bandwidth passes at or above expected minus its tolerance, a step "
        "time at or below expected plus its tolerance, a count must be equal.", "",
        "## Shortfalls", "",
    ]
    shorts = ["None: everything measured is as designed."] if not doc["shortfalls"] else [
        "| rung | where | what | drain |", "|---|---|---|---|",
        *(f"| {x['rung']} | {_esc(x['subject'])} | {_esc(x['what'])} | "
          f"{', '.join(x['drain']) or '-'} |" for x in doc["shortfalls"])]
    drain = [f"- `{n}`: {r}" for n, r in doc["drain"].items()] or ["No node to drain."]
    missing = [f"- {k}: {v}" for k, v in s["not_measured"].items()] or ["Every rung measured."]
    body = [
        *shorts, "", "## Nodes to drain", "",
        "`podplan accept SPEC RESULTS --drain` sets each to DRAIN with this reason:", "",
        *drain, "", "## Results", "",
        f"nccl-tests rows from {design['nccl_compared_from']} up are all compared; shown "
        f"here at {', '.join(design['nccl_listed_sizes'])} and wherever one failed (the "
        "JSON has every size).", "", *_results_table(doc), "", "## Failed checks", "",
        *_failed_table(doc), "", "## Not measured", "", *missing, "", "## Sources", "",
        *(_sources(doc, catalog) or ["None cited."]), "",
    ]
    return "\n".join(head + body)


def render(cmp: Comparison, catalog: Catalog) -> tuple[str, str]:
    """(JSON text, Markdown text) of one comparison."""
    doc = report_json(cmp)
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n",
            report_markdown(doc, catalog))
