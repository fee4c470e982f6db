"""BOM lines counted from the plan's links and the spares policy.

* Transceivers by optic id and cables/fibres by exact, length-specific part number
  (``cabling.part_counts``: splitters and twin DACs once per cage, twin-port modules once
  per used cage). One part number is one line even where several media use it (the same
  MPO fibre for node and switch links): purchasing orders by part number; the per-use
  split is the line's note and ``uses``.
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
    """Transceivers by optic id; cables and fibres one line per orderable part number."""
    per_cable = {k: m.per_cable for k, m in book.media.items()}
    optics, cables = part_counts(plan.links, book.shared_parts, per_cable)
    out = []
    for part, qty in sorted(optics.items()):
        optic = book.optics.get(part)
        out.append(make_line(book, "optics", part, qty, part=optic.name if optic else part,
                             unit="module"))
    by_pn: dict[tuple[str, float], dict[str, int]] = {}
    for (media, pn, length), qty in sorted(cables.items()):
        by_pn.setdefault((pn or media, length), {})[media] = qty
    stocked = _media_of_part_numbers(book)
    for (pn, length), uses in sorted(
        by_pn.items(), key=lambda kv: (min(stocked.get(kv[0][0], kv[1])), kv[0][1], kv[0][0])
    ):
        out.append(_cable_line(book, pn, length, uses, len(stocked.get(pn, ())) > 1))
    return out


def _media_of_part_numbers(book: PriceBook) -> dict[str, list[str]]:
    """Part number -> the media the catalog stocks it under: more than one for a part that
    serves several uses (one MPO fibre for node-to-switch and switch-to-switch links). The
    BOM lists such a part under its first medium, so its lengths stay together."""
    out: dict[str, list[str]] = {}
    for media_id, m in sorted(book.media.items()):
        for pn in m.lengths_m.values():
            out.setdefault(pn, []).append(media_id)
    return out


def _use_words(book: PriceBook, media: str, qty: int) -> str:
    m = book.media.get(media)
    what = "switch-to-switch" if m is not None and m.a_plug == m.b_plug else "node-to-switch"
    return f"{qty:,} {what} link{'s' if qty != 1 else ''}"


def _cable_line(
    book: PriceBook, pn: str, length: float, uses: dict[str, int], shared: bool
) -> BomLine:
    """One cable/fibre part number at one length. A part the catalog stocks under several
    media is described by the part (its price item's name), not by one use of it, and its
    per-use split is the note; purchasing orders the total."""
    media = min(uses)
    qty = sum(uses.values())
    m, item = book.media.get(media), book.get(media)
    name = m.name if m else media
    if shared and item is not None:
        name = item.name.removesuffix(", per cable")
    prices = {cable_price(book, k, length) for k in uses}
    unit_usd = next(iter(prices)) if len(prices) == 1 else None
    note = ", ".join(_use_words(book, k, q) for k, q in sorted(uses.items())) if shared else ""
    if len(prices) > 1:
        note += "; its uses are priced differently in the price book: quote it"
    return make_line(book, "cables", media, qty, part=f"{name}, {length:g} m", unit="cable",
                     unit_usd=unit_usd, note=note, part_number=pn,
                     ).model_copy(update={"uses": uses if len(uses) > 1 else {}})


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
                            "uses": {},
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
