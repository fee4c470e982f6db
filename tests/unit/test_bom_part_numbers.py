"""The BOM purchasing reads: product names and orderable part numbers, one line per part."""

from __future__ import annotations

import csv
import io
from collections import Counter
from functools import cache

import pytest

from generator import pipeline
from generator.bom import BillOfMaterials, format_bom
from generator.plan.models import ClusterPlan
from generator.render.diff import bom_changes


@cache
def _plan(example: str) -> tuple[ClusterPlan, BillOfMaterials]:
    loaded = pipeline.load_checked(f"examples/{example}.yaml")
    plan = pipeline.plan(loaded)
    return plan, pipeline.bill_of_materials(loaded, plan)


def test_every_bought_part_number_is_on_one_line() -> None:
    """MFP7E10-N003 was on two lines (node-to-switch and switch-to-switch fibre): a buyer
    ordering by part number added them up by hand."""
    _, bom = _plan("dell-8node-config1")
    bought = [x for x in bom.lines if x.category != "spares" and x.part_number]
    per_pn = Counter(x.part_number for x in bought)
    assert [pn for pn, n in per_pn.items() if n > 1] == []
    (n003,) = [x for x in bought if x.part_number == "MFP7E10-N003"]
    assert (n003.quantity, n003.uses) == (3, {"ndr-sr4-node": 2, "ndr-sr4-switch": 1})
    assert n003.part == "NVIDIA MFP7E10 MPO-12/APC OM4 fibre, 3 m"
    assert n003.note == "2 node-to-switch links, 1 switch-to-switch link"
    assert n003.extended_usd == 3 * 69.0


def test_lines_carry_the_orderable_part_number_not_in_the_name() -> None:
    _, bom = _plan("dell-8node-config1")
    pn = {x.catalog_id: x.part_number for x in bom.lines if x.category != "spares"}
    assert pn["mma4z00-ns"] == "MMA4Z00-NS" and pn["mma4z00-ns400"] == "MMA4Z00-NS400"
    assert pn["cx7-osfp-1x400"] == "MCX75310AAS-NEAT" and pn["qm9790"] == "MQM9790-NS2F"
    assert pn["xe9680-h100-sxm"] == "" and pn["sfpp-10g-sr"] == ""  # Dell: by proposal
    optic = next(x for x in bom.lines if x.catalog_id == "mma4z00-ns")
    assert optic.part == "NVIDIA 800G twin-port OSFP 2x SR4 multimode, finned top (switch side)"


def test_markdown_and_csv_show_the_part_number_column() -> None:
    _, bom = _plan("dell-8node-config1")
    md = format_bom(bom, "md")
    assert ("| Category | Part | Part number | Qty | Unit USD | Extended USD | Source | Note |"
            in md)
    assert ("| cables | NVIDIA MFP7E10 MPO-12/APC OM4 fibre, 3 m | MFP7E10-N003 | 3 | 69 | 207 "
            "| prices.yaml: ndr-sr4-node; X1, X2 [E] | 2 node-to-switch links, "
            "1 switch-to-switch link |") in md
    assert "| per quote |" in md  # a Dell server has no orderable number
    rows = list(csv.DictReader(io.StringIO(format_bom(bom, "csv"))))
    assert {r["part_number"] for r in rows} >= {"MFP7E10-N007", "MQM9790-NS2F", ""}


def test_diff_keys_survive_the_merge_of_one_part_on_two_lines() -> None:
    """bom.json written before the merge (two lines, one per medium) and after it (one line
    with ``uses``) compare equal: the diff splits a merged line back per catalog id."""
    old = {"lines": [
        {"category": "cables", "catalog_id": "ndr-sr4-node", "quantity": 2,
         "unit_usd": 69.0, "extended_usd": 138.0},
        {"category": "cables", "catalog_id": "ndr-sr4-node", "quantity": 64,
         "unit_usd": 81.0, "extended_usd": 5184.0},
        {"category": "cables", "catalog_id": "ndr-sr4-switch", "quantity": 1,
         "unit_usd": 69.0, "extended_usd": 69.0},
    ]}  # fmt: skip
    new = {"lines": [
        {"category": "cables", "catalog_id": "ndr-sr4-node", "quantity": 3, "unit_usd": 69.0,
         "extended_usd": 207.0, "uses": {"ndr-sr4-node": 2, "ndr-sr4-switch": 1}},
        {"category": "cables", "catalog_id": "ndr-sr4-node", "quantity": 64,
         "unit_usd": 81.0, "extended_usd": 5184.0, "uses": {}},
    ]}  # fmt: skip
    assert bom_changes(old, new) == []
    new["lines"][0]["uses"] = {"ndr-sr4-node": 2, "ndr-sr4-switch": 2}
    assert bom_changes(old, new) == [
        "cables ndr-sr4-switch: quantity 1 -> 2, extended 69.00 -> 138.00 USD (+69.00)"]


def test_the_terminal_table_has_the_part_number_column() -> None:
    _, bom = _plan("dell-8node-config1")
    lines = format_bom(bom, "table").splitlines()
    assert lines[0].split()[:4] == ["CATEGORY", "PART", "PART", "NUMBER"]
    (n003,) = [x for x in lines if "MFP7E10-N003" in x and x.startswith("cables")]
    assert n003.split()[-3:] == ["3", "69", "207"]


def test_the_order_list_folds_spares_into_one_row_per_part() -> None:
    """A buyer added the spares line of MFP7E10-N007 to its cables line by hand."""
    from generator.bom.order import order_rows

    _, bom = _plan("dell-8node-config1")
    rows = order_rows(bom)
    numbered = [r.part_number for r in rows if r.part_number]
    assert len(numbered) == len(set(numbered))
    n007 = next(r for r in rows if r.part_number == "MFP7E10-N007")
    assert (n007.quantity, n007.spares, n007.unit_usd, n007.extended_usd) == (66, 2, 81, 5346)
    qm = next(r for r in rows if r.part_number == "MQM9790-NS2F")
    assert (qm.quantity, qm.spares) == (3, 1)  # 2 leaves + 1 cold spare
    parts = sum(x.extended_usd or 0 for x in bom.lines
                if x.category not in ("software", "services"))
    assert sum(r.extended_usd or 0 for r in rows) == pytest.approx(parts)
    md = format_bom(bom, "md")
    assert ("| MFP7E10-N007 | NVIDIA MFP7E10 MPO-12/APC OM4 fibre, 7 m | 66 | 2 | 81 | 5,346 |"
            in md)
