"""Bill of materials: quantities from the ClusterPlan, prices from an editable price book.

``build_bom(plan, load_price_book(catalog, override))`` -> ``BillOfMaterials``;
``format_bom(bom, fmt)`` renders it as ``table`` (for ``podplan bom``), ``csv``, ``json`` or
``md``.
"""

from __future__ import annotations

from generator.bom.build import build_bom
from generator.bom.models import BillOfMaterials, BomLine, CloudCost
from generator.bom.prices import PriceBook, load_price_book
from generator.bom.writers import bom_document, format_bom

__all__ = [
    "BillOfMaterials",
    "BomLine",
    "CloudCost",
    "PriceBook",
    "bom_document",
    "build_bom",
    "format_bom",
    "load_price_book",
]
