"""One BOM line from a price-book id: the shared constructor of every line builder.

A part the price book does not price is kept with ``unit_usd`` None (a gap the summary
names), never dropped or priced at zero.
"""

from __future__ import annotations

from generator.bom.models import BomLine
from generator.bom.prices import PriceBook


def make_line(
    book: PriceBook,
    category: str,
    item_id: str,
    qty: int,
    part: str = "",
    unit: str = "",
    unit_usd: float | None = None,
    note: str = "",
    source: str | None = None,
    part_number: str | None = None,
) -> BomLine:
    item = book.get(item_id)
    if unit_usd is None and item is not None:
        unit_usd = item.usd
    if source is None:
        source = book.source(item_id) if item is not None else "not in the price book (gap)"
    return BomLine(
        category=category,
        part=part or (item.name if item else item_id),
        part_number=book.part_numbers.get(item_id, "") if part_number is None else part_number,
        catalog_id=item_id,
        quantity=qty,
        unit=unit or (item.unit if item else "unit"),
        unit_usd=round(unit_usd, 2) if unit_usd is not None else None,
        extended_usd=round(unit_usd * qty, 2) if unit_usd is not None else None,
        source=source,
        estimate=item.estimate if item else True,
        note=note,
    )
