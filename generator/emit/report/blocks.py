"""The page as data: sections made of blocks that the template writes out one by one.

Python decides every word, number and drawing; ``templates/report/page.html.jinja`` only
serializes these blocks (one macro per ``kind``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from generator.emit.report.labels import field_label, model_label
from generator.emit.report.tables import Cell, Column, Table, plain


@dataclass(frozen=True)
class Heading:
    kind: ClassVar[str] = "heading"
    text: str
    id: str = ""


@dataclass(frozen=True)
class Para:
    kind: ClassVar[str] = "para"
    text: str


@dataclass(frozen=True)
class Card:
    """A headline figure: ``key``/``value`` are for machines (tests, scripts) reading the page."""

    label: str
    shown: str
    detail: str
    key: str
    value: float | str


@dataclass(frozen=True)
class Cards:
    kind: ClassVar[str] = "cards"
    cards: list[Card]


@dataclass(frozen=True)
class Figure:
    kind: ClassVar[str] = "figure"
    svg: str
    caption: str


@dataclass(frozen=True)
class Gallery:
    """Many small drawings in a wrapping grid, in a disclosure that may start closed."""

    kind: ClassVar[str] = "gallery"
    id: str
    summary: str
    open: bool
    items: list[str]
    defs: str = ""


@dataclass(frozen=True)
class Notes:
    kind: ClassVar[str] = "notes"
    items: list[str]


@dataclass(frozen=True)
class Code:
    kind: ClassVar[str] = "code"
    caption: str
    lines: list[str]


@dataclass(frozen=True)
class Legend:
    """Colour swatches with words (class, label): the key to a drawing's fills."""

    kind: ClassVar[str] = "legend"
    items: list[tuple[str, str]]


Block = Heading | Para | Cards | Figure | Gallery | Notes | Code | Legend | Table


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)


def _figure(value: float) -> str:
    """Integers with separators, large floats without decimals, small ones to 4 digits."""
    if isinstance(value, int) or abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def facts_table(table_id: str, caption: str, model: BaseModel, skip: tuple[str, ...] = ()) -> Table:
    """Every scalar field of a plan model as a row, labelled in words (``labels``).

    Fields a later plan adds appear here without code changes.
    """
    rows = []
    for name, info in type(model).model_fields.items():
        value: Any = getattr(model, name)
        if name in skip or isinstance(value, list | dict | BaseModel) or value is None:
            continue
        label = field_label(type(model), name) or name.replace("_", " ")
        if field_label(type(model), name) is None and info.description:
            label = f"{label}: {info.description.rstrip('.')}"
        if isinstance(value, bool):
            cell = plain("yes" if value else "no")
        elif isinstance(value, int | float):
            cell = Cell(_figure(value), value)
        elif name == "model":  # a catalog id: shown as the product ('PowerScale F710')
            cell = plain(model_label(str(value)))
        else:
            cell = plain(str(value))
        rows.append([plain(label), cell])
    return Table(table_id, caption, [Column("Figure"), Column("Value", True)], rows)
