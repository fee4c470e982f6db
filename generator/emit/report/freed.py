"""The report's "Freed hardware" section: what the last change against the plan lock took
out of service, one row per box, so decommissioning can be ticketed (``lock.freed``).

Shown only after a re-plan that freed something; the same list is plan.yaml's ``freed``
and the lock's ``freed:`` section.
"""

from __future__ import annotations

from collections import Counter

from generator.emit.report.blocks import Block, Para, Section
from generator.emit.report.labels import model_label
from generator.emit.report.tables import Cell, Column, Table, plain
from generator.plan.models import ClusterPlan, FreedDevice

_WHY = {"removed": "removed", "replaced": "replaced by"}


def _row(f: FreedDevice) -> list[Cell]:
    """One freed box, its model and GPU named as on the quote (plan.yaml keeps the ids)."""
    model = model_label(f.model)
    what = f"{model} rack, {f.pdus} PDU(s)" if f.role == "rack" else model
    why = f"{_WHY[f.why]} {model_label(f.by) if f.by else ''}".strip()
    gpu = model_label(f.gpu) if f.gpu else ""
    return [plain(f.name), plain(f.role), plain(what), plain(gpu), plain(f.rack),
            Cell(str(f.u) if f.u else "", f.u), plain(why)]


def freed_section(plan: ClusterPlan) -> Section | None:
    """The freed-hardware table; None when the last change freed nothing."""
    if not plan.freed:
        return None
    kinds = Counter("racks" if f.role == "rack" else f.why for f in plan.freed)
    counts = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))
    blocks: list[Block] = [
        Para(f"The last change against the plan lock frees {len(plan.freed):,} item(s) "
             f"({counts}): take them out of service and decommission them (wipe, "
             "inventory, return or resell). Built where the lock had them; the same list is "
             "plan.yaml's freed and plan.lock.yaml's freed, kept until the next change."),
        Table("freed-hardware", f"Freed hardware: {len(plan.freed):,} item(s)",
              [Column("Name", nowrap=True), Column("Role"), Column("Model"), Column("GPU"),
               Column("Rack"), Column("U", numeric=True), Column("Why")],
              [_row(f) for f in plan.freed], sortable=True, filterable=True),
    ]
    return Section("freed", "Freed hardware", blocks)
