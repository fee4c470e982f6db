"""Tables as data: the template writes them out; sorting and filtering read ``data-v``.

A ``Cell`` carries its shown text and, for numbers, the raw value to sort and total on, so
the page's small script never parses formatted text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from generator.bom.writers import money


@dataclass(frozen=True)
class Cell:
    """One table cell: shown text, and a raw sort value for numeric columns."""

    text: str
    value: float | None = None


@dataclass(frozen=True)
class Column:
    """A column heading; numeric columns are right-aligned and sort by value; ``nowrap``
    columns keep each cell on one line (part numbers such as MFP7E10-N007 broke at their
    hyphen, and a wrapped part number is one purchasing retypes wrong)."""

    label: str
    numeric: bool = False
    nowrap: bool = False

    @property
    def css(self) -> str:
        """The cells' class attribute value ('' for none)."""
        return " ".join([*(["n"] if self.numeric else []), *(["nw"] if self.nowrap else [])])


@dataclass(frozen=True)
class Table:
    """A captioned table; ``sortable``/``filterable`` switch on the page's script for it."""

    kind: ClassVar[str] = "table"
    id: str
    caption: str
    columns: list[Column]
    rows: list[list[Cell]]
    foot: list[list[Cell]] = field(default_factory=list)
    sortable: bool = False
    filterable: bool = False


def usd(x: float | None) -> Cell:
    """Dollars, with cents below $10,000 when there are any (a $4.50 cable shown as '$4'
    made 24 x $4 = $108 in the BOM); ``n/a`` (sorting last) when unknown."""
    if x is None:
        return Cell("n/a", None)
    return Cell(f"${money(x)}", x)


def count(n: int) -> Cell:
    """An integer with thousands separators."""
    return Cell(f"{n:,}", n)


def number(x: float, digits: int = 1, unit: str = "") -> Cell:
    """A float with ``digits`` decimals and an optional unit."""
    suffix = f" {unit}" if unit else ""
    return Cell(f"{x:,.{digits}f}{suffix}", x)


def plain(text: str) -> Cell:
    """Text."""
    return Cell(text)


def sig3(x: float) -> str:
    """Three significant figures, trailing zeros kept (``2.00``, ``33.4``), no exponent."""
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:#.3g}".rstrip(".")


def hours(h: float) -> str:
    """A duration in the unit that reads best: minutes, hours or days (3 significant figures)."""
    if h < 1:
        return f"{sig3(h * 60)} min"
    if h < 72:
        return f"{sig3(h)} h"
    return f"{sig3(h / 24)} days ({h:,.0f} h)"
