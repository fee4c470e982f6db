"""A sweep as a table (the default), CSV, JSON, or an HTML page with two charts."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from typing import Any

from generator.catalog.names import model_label
from generator.emit.report.tables import hours
from generator.render.files import header_lines
from generator.sweep.run import SweepPoint, SweepResult

COLUMNS = ("gpu", "gpus", "nodes", "cloud", "instance", "time_hours", "usd_per_run",
           "usd_per_hour", "capex_usd", "it_kw", "fits", "meets_deadline", "cheapest", "note")


def command(result: SweepResult, argv: str) -> str:
    """The command line that rebuilds this output (for headers)."""
    return f"podplan sweep {result.spec_file}{argv}"


def _money(x: float | None) -> str:
    return "n/a" if x is None else f"${x:,.0f}"


def _hours(x: float | None) -> str:
    return "n/a" if x is None else hours(x)


def deadline_text(result: SweepResult) -> str:
    """What the cheapest point had to meet."""
    if result.deadline_hours is None:
        return "none given: the spec has none and --deadline-hours was not set"
    return _hours(result.deadline_hours)


def best_text(result: SweepResult) -> str:
    """One sentence naming the cheapest point that meets the deadline, or saying none does."""
    best = result.best
    if best is None:
        return f"No point fits and meets the deadline ({deadline_text(result)})."
    by = "" if result.ranked_by == "usd_per_run" else " (by capex: no cloud is priced)"
    return (f"Cheapest point{by} that fits and meets the deadline ({deadline_text(result)}): "
            f"{best.gpus:,} × {model_label(best.gpu)} "
            f"({best.nodes:,} node{'' if best.nodes == 1 else 's'}), "
            f"{_hours(best.time_hours)}, " + (
                f"{_money(best.usd_per_run)} per run on {best.cloud} ({best.instance}); "
                if best.cloud else "") + f"capex {_money(best.capex_usd)}.")


def _row(p: SweepPoint) -> list[str]:
    mark = "*" if p.cheapest else ("" if p.meets_deadline else "-")
    cloud = f"{p.cloud} {p.instance}" if p.cloud else "n/a"
    return [mark, p.gpu, f"{p.gpus:,}", f"{p.nodes:,}", _hours(p.time_hours),
            _money(p.usd_per_run), cloud, _money(p.capex_usd),
            "n/a" if p.it_kw is None else f"{p.it_kw:,.1f}", p.note]


def to_table(result: SweepResult) -> str:
    """Fixed-width columns; ``*`` marks the cheapest point on time, ``-`` a point that misses."""
    head = ["", "GPU", "GPUs", "nodes", "time", "$ per run", "cloud", "capex", "IT kW", "note"]
    rows = [head, *[_row(p) for p in result.points]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    right = {2, 3, 4, 5, 7, 8}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    legend = "Marks: * the cheapest point that meets the deadline; - misses it or does not fit"
    return "\n".join([*lines, "", legend, best_text(result)]) + "\n"


def _record(p: SweepPoint) -> dict[str, Any]:
    return {k: v for k, v in asdict(p).items() if k in COLUMNS}


def to_csv(result: SweepResult, cmd: str) -> str:
    """One row per point; the header lines say how it was made."""
    buf = io.StringIO()
    buf.write("".join(f"# {line}\n" for line in header_lines(result.spec_file)[:1]))
    buf.write(f"# Regenerate with: {cmd}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for p in result.points:
        rec = _record(p)
        w.writerow(["" if rec[c] is None else rec[c] for c in COLUMNS])
    return buf.getvalue()


def to_json(result: SweepResult, cmd: str) -> str:
    """The points, the deadline and the cheapest point, keys sorted."""
    best = result.best
    doc = {
        "generated_by": f"podplan sweep from {result.spec_file}",
        "regenerate": cmd,
        "name": result.name,
        "deadline_hours": result.deadline_hours,
        "points": [_record(p) for p in result.points],
        "cheapest": _record(best) if best else None,
        "cheapest_by": result.ranked_by,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
