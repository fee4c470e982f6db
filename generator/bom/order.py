"""The order list: one row per orderable part with the total quantity, spares included.

The BOM's lines are a budget (by category, spares apart, so the spares policy shows); a buyer
orders by part number and added the spares line of MFP7E10-N007 to its cables line by hand.
Rows are keyed by part number, or, for a part sold by quote (no number), by its price-book
id and name. Software and services are not parts and stay on the BOM only.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.bom.models import BillOfMaterials, BomLine

NOT_PARTS = ("software", "services")


@dataclass(frozen=True)
class OrderRow:
    """One part to order: how many in all, how many of them are spares, and the price."""

    part_number: str
    part: str
    quantity: int
    spares: int
    unit_usd: float | None
    extended_usd: float | None


def _key(line: BomLine) -> tuple[str, str]:
    return (line.part_number, "") if line.part_number else ("", f"{line.catalog_id} {line.part}")


def order_rows(bom: BillOfMaterials) -> list[OrderRow]:
    """Every part line of the BOM folded by part, in the BOM's order of first appearance."""
    groups: dict[tuple[str, str], list[BomLine]] = {}
    for line in bom.lines:
        if line.category not in NOT_PARTS:
            groups.setdefault(_key(line), []).append(line)
    rows = []
    for lines in groups.values():
        first = lines[0]
        units = {x.unit_usd for x in lines}
        unit = units.pop() if len(units) == 1 else None
        priced = all(x.extended_usd is not None for x in lines)
        rows.append(OrderRow(
            part_number=first.part_number, part=first.part,
            quantity=sum(x.quantity for x in lines),
            spares=sum(x.quantity for x in lines if x.category == "spares"),
            unit_usd=unit,
            extended_usd=round(sum(x.extended_usd or 0.0 for x in lines), 2) if priced else None,
        ))
    return rows
