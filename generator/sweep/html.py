"""The sweep as one self-contained HTML page: time vs GPUs, $ per run vs time, and the table."""

from __future__ import annotations

from generator.catalog.names import model_label
from generator.emit.report.blocks import Figure, Para, Section
from generator.emit.report.charts import Series, lines, scatter
from generator.emit.report.tables import Cell, Column, Table, count, number, plain, usd
from generator.render.env import render
from generator.sweep.formats import best_text, deadline_text
from generator.sweep.run import SweepPoint, SweepResult


def _by_gpu(result: SweepResult) -> dict[str, list[SweepPoint]]:
    out: dict[str, list[SweepPoint]] = {}
    for p in result.points:
        if p.time_hours is not None:
            out.setdefault(p.gpu, []).append(p)
    return out


def time_chart(result: SweepResult) -> Figure:
    """Wall-clock hours against GPU count, one line per GPU type."""
    series = []
    for gpu, pts in _by_gpu(result).items():
        seen: dict[int, float] = {}
        for p in pts:
            seen.setdefault(p.gpus, p.time_hours or 0.0)
        series.append(Series(gpu, tuple(sorted((float(n), h) for n, h in seen.items()))))
    hline = result.deadline_hours
    svg = lines("sweep-time", "Time against GPUs", "GPUs", "wall-clock hours", series,
                log_x=True, hline=(hline, "deadline") if hline else None)
    note = f" The deadline is {hline:g} h." if hline else ""
    return Figure(svg, "Wall-clock time of the training run(s) at each GPU count." + note)


def cost_chart(result: SweepResult) -> Figure:
    """$ per run against time, one marker per GPU type; the cheapest point on time labelled."""
    costs = [p.usd_per_run for p in result.points if p.usd_per_run is not None]
    scale, unit = (1e6, "million USD per run") if max(costs, default=0) >= 1e6 else (
        1.0, "USD per run")
    series = [
        Series(gpu, tuple((p.time_hours or 0.0, p.usd_per_run / scale) for p in pts
                          if p.usd_per_run is not None))
        for gpu, pts in _by_gpu(result).items()
    ]
    best = result.best
    marks = []
    if best and best.time_hours is not None and best.usd_per_run is not None:
        marks.append((best.time_hours, best.usd_per_run / scale,
                      f"cheapest on time: {best.gpus:,} × {model_label(best.gpu)}"))
    vline = (result.deadline_hours, "deadline") if result.deadline_hours else None
    svg = scatter("sweep-cost", "$ per run against time", "wall-clock hours", unit,
                  [s for s in series if s.points], marks=marks, vline=vline)
    where = "; left of the dashed line meets the deadline" if vline else ""
    return Figure(svg, f"Cloud cost of one run against its time{where}.")


def _table(result: SweepResult) -> Table:
    rows = []
    for p in result.points:
        rows.append([
            plain("cheapest on time" if p.cheapest else ("yes" if p.meets_deadline else "no")),
            plain(p.gpu), count(p.gpus), count(p.nodes),
            number(p.time_hours, 2, "h") if p.time_hours is not None else Cell("n/a"),
            usd(p.usd_per_run), plain(f"{p.cloud} {p.instance}" if p.cloud else "n/a"),
            usd(p.capex_usd), number(p.it_kw, 1) if p.it_kw is not None else Cell("n/a"),
            plain(p.note),
        ])
    return Table("sweep-table", f"{len(rows)} points", [
        Column("Meets deadline"), Column("GPU"), Column("GPUs", True), Column("Nodes", True),
        Column("Time", True), Column("USD per run", True), Column("Cloud"),
        Column("Capex USD", True), Column("IT kW", True), Column("Note")], rows,
        sortable=True)


def serving_chart(result: SweepResult) -> Figure:
    """Cost against TPOT, one marker per GPU type: $ per million output tokens where a
    cloud is priced, else capex; the cheapest point that meets the SLOs labelled."""
    key = result.ranked_by
    unit = {"usd_per_mtok": "USD per million output tokens"}.get(key, "capex, million USD")
    scale = 1.0 if key == "usd_per_mtok" else 1e6
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for p in result.points:
        cost = getattr(p, key)
        if p.tpot_ms is not None and cost is not None:
            by_gpu.setdefault(p.gpu, []).append((p.tpot_ms, cost / scale))
    best = result.best
    marks = [] if best is None or best.tpot_ms is None or getattr(best, key) is None else [
        (best.tpot_ms, getattr(best, key) / scale,
         f"cheapest meeting the SLOs: {best.gpus:,} × {model_label(best.gpu)}")]
    svg = scatter("sweep-serving", "Cost against TPOT", "TPOT at the sized batch, ms", unit,
                  [Series(g, tuple(pts)) for g, pts in by_gpu.items()], marks=marks)
    return Figure(svg, "Each GPU type sized by the spec's SLOs: what serving its load costs "
                  "against the TPOT it gets (the worst workload's).")


def _serving_table(result: SweepResult) -> Table:
    rows = []
    for p in result.points:
        slo = "n/a" if not p.layout else {None: "none", True: "met", False: "missed"}[
            p.meets_slo]
        rows.append([
            plain("cheapest" if p.cheapest else ("yes" if p.meets_deadline else "no")),
            plain(p.gpu), count(p.gpus), count(p.nodes), plain(p.layout or "n/a"),
            number(p.tpot_ms, 1) if p.tpot_ms is not None else Cell("n/a"),
            number(p.ttft_ms, 0) if p.ttft_ms is not None else Cell("n/a"), plain(slo),
            number(p.usd_per_mtok, 2) if p.usd_per_mtok is not None else Cell("n/a"),
            usd(p.usd_per_month), plain(f"{p.cloud} {p.instance}" if p.cloud else "n/a"),
            usd(p.capex_usd), number(p.it_kw, 1) if p.it_kw is not None else Cell("n/a"),
            plain(p.note),
        ])
    return Table("sweep-table", f"{len(rows)} points", [
        Column("Meets SLOs"), Column("GPU"), Column("GPUs", True), Column("Nodes", True),
        Column("Layout"), Column("TPOT ms", True), Column("TTFT ms", True), Column("SLO"),
        Column("USD per M output tokens", True), Column("USD per month", True),
        Column("Cloud"), Column("Capex USD", True), Column("IT kW", True), Column("Note")],
        rows, sortable=True)


def _serving_section(result: SweepResult) -> Section:
    return Section("sweep", "Sweep", [
        Para(best_text(result)),
        Para("Each point is the spec planned as podplan plan would, with the GPU type "
             "replaced: the replicas are sized by the latency SLOs (batch 1 on the nearest "
             "layout where they are out of reach). USD per million output tokens is the cloud "
             "equivalent's on-demand month (instances 24x7 and file system) over the output "
             "tokens of the spec's load in a month."),
        serving_chart(result), _serving_table(result)])


def to_html(result: SweepResult, cmd: str) -> str:
    """The page (same stylesheet and script as report.html)."""
    section = _serving_section(result) if result.serving else Section("sweep", "Sweep", [
        Para(best_text(result)),
        Para(f"Each point is the spec planned as podplan plan would, with the GPU type and "
             f"count replaced; deadline: {deadline_text(result)}. Time includes failures, "
             "restarts and "
             "checkpoints; $ per run is the cloud equivalent on demand."),
        time_chart(result), cost_chart(result), _table(result)])
    return render("report/page.html.jinja", title=f"podplan sweep: {result.name}",
                  name=result.name, spec_file=result.spec_file, command=cmd,
                  header=[f"Generated by podplan sweep from {result.spec_file}.",
                          f"Regenerate with: {cmd}"],
                  sections=[section])
