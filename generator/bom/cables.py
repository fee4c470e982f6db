"""BOM lines counted from the plan's links and the spares policy.

* Transceivers by optic id and cables/fibres by exact, length-specific part number
  (``cabling.part_counts``: splitters and twin DACs once per cage, twin-port modules once
  per used cage).
* Spares: the spec's policy (``spares:``) -- a share of every optic and cable line, cold
  spare switches per model, a share of the servers' PSUs.
"""

from __future__ import annotations

import math

from generator.bom.lines import make_line
from generator.bom.models import BomLine
from generator.bom.prices import PriceBook
from generator.plan.models import ClusterPlan
from generator.plan.network.cabling import part_counts

PSU_ID = "psu-spare-2800w"


def cable_price(book: PriceBook, media: str, length_m: float) -> float | None:
    """Base + per-metre price of one cable of ``media`` at ``length_m`` (None = unpriced)."""
    item = book.get(media)
    if item is None:
        return None
    if item.usd_base is not None:
        return item.usd_base + (item.usd_per_m or 0.0) * length_m
    return item.usd


def optic_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    """Transceivers by optic id, cables and fibres by exact part number (length)."""
    per_cable = {k: m.per_cable for k, m in book.media.items()}
    optics, cables = part_counts(plan.links, book.shared_parts, per_cable)
    out = []
    for part, qty in sorted(optics.items()):
        optic = book.optics.get(part)
        name = f"{optic.name} ({optic.opn})" if optic else part
        out.append(make_line(book, "optics", part, qty, part=name, unit="module"))
    for (media, pn, length), qty in sorted(cables.items()):
        m = book.media.get(media)
        name = f"{pn}: {m.name if m else media}, {length:g} m"
        out.append(
            make_line(
                book,
                "cables",
                media,
                qty,
                part=name,
                unit="cable",
                unit_usd=cable_price(book, media, length),
            )
        )
    return out


def spare_lines(plan: ClusterPlan, book: PriceBook, lines: list[BomLine]) -> list[BomLine]:
    """The spares policy: % of optics and cables, switches per model, % of server PSUs."""
    pol = plan.spares_policy
    out = []
    for line in lines:
        pct = {"optics": pol.get("optics_percent", 0.0), "cables": pol.get("cables_percent", 0.0)}
        share = pct.get(line.category)
        if share:
            qty = math.ceil(line.quantity * share / 100.0 - 1e-9)
            if qty:
                out.append(
                    line.model_copy(
                        update={
                            "category": "spares",
                            "quantity": qty,
                            "extended_usd": None
                            if line.unit_usd is None
                            else round(line.unit_usd * qty, 2),
                            "note": f"{share:g} % spares of {line.quantity:,}",
                        }
                    )
                )
    per_model = int(pol.get("switches_per_model", 0))
    if per_model:
        for model in sorted({s.model for s in plan.switches}):
            out.append(
                make_line(
                    book, "spares", model, per_model, note="cold-spare switch (spares policy)"
                )
            )
    psus = sum(book.psus.get(n.model, 0) for n in plan.nodes)
    share = pol.get("psus_percent", 0.0)
    if psus and share:
        qty = math.ceil(psus * share / 100.0 - 1e-9)
        out.append(
            make_line(book, "spares", PSU_ID, qty, note=f"{share:g} % of {psus:,} server PSUs")
        )
    return out
