"""Catalog ids as people name the products: 'PowerScale F710', not 'powerscale-f710'.

Human-facing text (the report, ``podplan size``) names models and parts through these;
machine-facing files (plan.yaml, bom.json, the lock) keep the ids.
"""

from __future__ import annotations

from functools import cache

from generator.catalog.load import default_catalog

_VENDORS = ("Dell ", "NVIDIA ")
_FAMILIES = ("servers", "switches", "storage", "gpus", "prices")


@cache
def _catalog_names() -> dict[str, str]:
    """Catalog id -> product name, first family wins (a server before its price entry)."""
    catalog = default_catalog()
    names: dict[str, str] = {}
    for family in _FAMILIES:
        for item_id, item in catalog.raw(family)["items"].items():
            if isinstance(item, dict) and item.get("name"):
                names.setdefault(item_id, str(item["name"]))
    return names


def model_label(model_id: str) -> str:
    """A model as people name it ('PowerScale F710', 'PowerEdge XE9680', 'H100 SXM5 80GB'),
    not its catalog id ('POWERSCALE-F710', 'UFM-APPLIANCE'): the catalog's name without the
    vendor and the parenthesised detail. An id the catalog does not name shows as is."""
    name = _catalog_names().get(model_id)
    if name is None:
        return model_id.upper()
    name = name.split(" (", 1)[0].split(",", 1)[0].strip()
    for vendor in _VENDORS:
        name = name.removeprefix(vendor)
    return name


@cache
def _optic_numbers() -> dict[str, str]:
    """Optic id -> its orderable part number, or its name where it has none (Dell optics
    are quoted per order: their OPN field is a placeholder in parentheses)."""
    out = {}
    for item_id, item in default_catalog().raw("optics")["items"].items():
        opn = str(item.get("opn") or "")
        out[item_id] = opn if opn and not opn.startswith("(") else str(item.get("name", item_id))
    return out


def part_label(part: str) -> str:
    """A link's part as purchasing names it: an optic id becomes its OPN (MMA4Z00-NS); a
    cable part number is already one."""
    return _optic_numbers().get(part, part)
