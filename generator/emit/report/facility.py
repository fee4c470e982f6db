"""The racks section: layouts that repeat, every rack's elevation, and where the kilowatts go."""

from __future__ import annotations

from collections import defaultdict

from generator.emit.report.blocks import (
    Block,
    Figure,
    Gallery,
    Legend,
    Para,
    Section,
    facts_table,
)
from generator.emit.report.charts import labelled_bars
from generator.emit.report.graph import ROLE_TITLE, network_title
from generator.emit.report.racks import (
    LEGEND,
    device_info,
    draw_rack,
    frames,
    rack_contents,
    rack_signature,
    used_units,
)
from generator.emit.report.tables import Column, Table, count, number, plain
from generator.plan.models import ClusterPlan, Rack

#: Up to this many racks the elevations are shown open; beyond, behind a disclosure.
OPEN_RACKS = 48


def _names(racks: list[Rack]) -> str:
    if len(racks) <= 3:
        return ", ".join(r.name for r in racks)
    return f"{racks[0].name} … {racks[-1].name}"


def layouts_table(plan: ClusterPlan) -> Table:
    """Racks grouped by identical layout, so a 550-rack plan reads as a few kinds of rack."""
    info = device_info(plan)
    groups: dict[tuple[object, ...], list[Rack]] = defaultdict(list)
    for rack in plan.racks:
        groups[rack_signature(rack, info)].append(rack)
    rows = []
    for racks in groups.values():
        kw = [r.power_kw for r in racks]
        rows.append([
            count(len(racks)), plain(_names(racks)), plain(rack_contents(racks[0], info)),
            plain(f"{min(kw):g}–{max(kw):g}" if min(kw) != max(kw) else f"{kw[0]:g}"),
            number(racks[0].power_budget_kw, 1), count(used_units(racks[0])),
            count(racks[0].units),
        ])
    return Table("rack-layouts", f"Rack layouts: {len(plan.racks):,} racks, {len(rows)} layouts",
                 [Column("Racks", True), Column("Which"), Column("Holds"), Column("kW"),
                  Column("kW budget", True), Column("U used", True), Column("U", True)], rows)


def power_chart(plan: ClusterPlan) -> Figure:
    """Planning power by device group."""
    kw: dict[str, float] = defaultdict(float)
    for n in plan.nodes:
        kw[ROLE_TITLE.get(n.role, n.role)] += n.power_kw
    for s in plan.switches:
        kw[f"{network_title(s.network)} switches"] += s.power_kw
    items = [(k, round(v, 2)) for k, v in kw.items() if v > 0]
    svg = labelled_bars("chart-power", "IT power by device group", "kW", items, "{:,.1f}")
    return Figure(svg, f"Where the {plan.power.it_kw:,.1f} kW of IT power go "
                       "(planning maximum per device).")


def racks_section(plan: ClusterPlan) -> Section:
    """Layouts table, legend and one elevation per rack."""
    info = device_info(plan)
    over = [r.name for r in plan.racks if r.power_kw > r.power_budget_kw + 1e-9]
    full = [r.name for r in plan.racks if used_units(r) > r.units]
    status = "Every rack is within its power and space limits."
    if over or full:
        status = (f"Over the power limit: {', '.join(over) or 'none'}; over the space limit: "
                  f"{', '.join(full) or 'none'}.")
    drawings = [draw_rack(r, info) for r in plan.racks]
    blocks: list[Block] = [
        Para(f"{len(plan.racks):,} racks. {status} Each elevation shows U 1 at the bottom, "
             "the rack's power against its budget and the U used."),
        layouts_table(plan),
        power_chart(plan),
        facts_table("power-facts", "Power and cooling", plan.power),
        Legend(list(LEGEND)),
        Gallery("racks-all", f"All {len(plan.racks):,} rack elevations",
                len(plan.racks) <= OPEN_RACKS, drawings, frames(plan)),
    ]
    return Section("racks", "Racks", blocks)
