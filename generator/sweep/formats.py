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
from generator.sweep.serving import SERVING_COLUMNS

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


def _ms(x: float | None, digits: int) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _per_mtok(x: float | None) -> str:
    return "n/a" if x is None else f"${x:,.2f}"


def serving_best_text(result: SweepResult) -> str:
    """One sentence naming the cheapest point that meets the SLOs, or saying none does."""
    best = result.best
    if best is None:
        return "No GPU type fits and meets the latency SLOs."
    by = ("per million output tokens" if result.ranked_by == "usd_per_mtok"
          else "by capex: no cloud is priced")
    cloud = (f"{_per_mtok(best.usd_per_mtok)} per million output tokens on {best.cloud} "
             f"({best.instance}, {_money(best.usd_per_month)} a month); " if best.cloud else "")
    return (f"Cheapest point ({by}) that fits and meets the latency SLOs: {best.gpus:,} × "
            f"{model_label(best.gpu)} ({best.nodes:,} node{'' if best.nodes == 1 else 's'}; "
            f"{best.layout}), TPOT {_ms(best.tpot_ms, 1)} ms, TTFT {_ms(best.ttft_ms, 0)} ms, "
            f"{cloud}capex {_money(best.capex_usd)}.")


def best_text(result: SweepResult) -> str:
    """One sentence naming the cheapest point that meets the deadline, or saying none does."""
    if result.serving:
        return serving_best_text(result)
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


def _serving_row(p: SweepPoint) -> list[str]:
    mark = "*" if p.cheapest else ("" if p.meets_deadline else "-")
    slo = "n/a" if not p.layout else {None: "none", True: "met", False: "MISSED"}[p.meets_slo]
    cloud = f"{p.cloud} {p.instance}" if p.cloud else "n/a"
    return [mark, p.gpu, f"{p.gpus:,}", f"{p.nodes:,}", p.layout, _ms(p.tpot_ms, 1),
            _ms(p.ttft_ms, 0), slo, _per_mtok(p.usd_per_mtok), _money(p.usd_per_month), cloud,
            _money(p.capex_usd), "n/a" if p.it_kw is None else f"{p.it_kw:,.1f}", p.note]


def to_table(result: SweepResult) -> str:
    """Fixed-width columns; ``*`` marks the cheapest point on time (or meeting the SLOs),
    ``-`` a point that misses."""
    if result.serving:
        head = ["", "GPU", "GPUs", "nodes", "layout", "TPOT ms", "TTFT ms", "SLO",
                "$ per Mtok", "$ per month", "cloud", "capex", "IT kW", "note"]
        return _columns(head, [_serving_row(p) for p in result.points], {2, 3, 5, 6, 8, 9, 11, 12},
                        "Marks: * the cheapest point that meets the latency SLOs; - misses "
                        "them or does not fit. $ per Mtok: cloud $ per million output tokens "
                        "at the spec's load", best_text(result))
    head = ["", "GPU", "GPUs", "nodes", "time", "$ per run", "cloud", "capex", "IT kW", "note"]
    return _columns(head, [_row(p) for p in result.points], {2, 3, 4, 5, 7, 8},
                    "Marks: * the cheapest point that meets the deadline; - misses it or does "
                    "not fit", best_text(result))


def _columns(head: list[str], body: list[list[str]], right: set[int], legend: str,
             best: str) -> str:
    rows = [head, *body]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join([*lines, "", legend, best]) + "\n"


def columns(result: SweepResult) -> tuple[str, ...]:
    """The CSV/JSON fields: a serving sweep's have no time or deadline."""
    return SERVING_COLUMNS if result.serving else COLUMNS


def _record(p: SweepPoint, keys: tuple[str, ...] = COLUMNS) -> dict[str, Any]:
    return {k: v for k, v in asdict(p).items() if k in keys}


def to_csv(result: SweepResult, cmd: str) -> str:
    """One row per point; the header lines say how it was made."""
    buf = io.StringIO()
    buf.write("".join(f"# {line}\n" for line in header_lines(result.spec_file)[:1]))
    buf.write(f"# Regenerate with: {cmd}\n")
    w = csv.writer(buf, lineterminator="\n")
    keys = columns(result)
    w.writerow(keys)
    for p in result.points:
        rec = _record(p, keys)
        w.writerow(["" if rec[c] is None else rec[c] for c in keys])
    return buf.getvalue()


def to_json(result: SweepResult, cmd: str) -> str:
    """The points, the deadline and the cheapest point, keys sorted."""
    best = result.best
    keys = columns(result)
    doc: dict[str, Any] = {
        "generated_by": f"podplan sweep from {result.spec_file}",
        "regenerate": cmd,
        "name": result.name,
        "points": [_record(p, keys) for p in result.points],
        "cheapest": _record(best, keys) if best else None,
        "cheapest_by": result.ranked_by,
    }
    if not result.serving:
        doc["deadline_hours"] = result.deadline_hours
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
