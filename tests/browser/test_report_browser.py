"""Every example's report.html in a real browser (headless Debian chromium).

Loads the golden report of each example and checks: no console or page errors and no request
outside the file (self-contained); a screenshot of the first screen that is the right size and
not blank; the DOM holds the plan's counts (racks, rack devices, switches per network and tier,
compute nodes, BOM lines); every drawing has a title; the BOM table filters and sorts.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator import pipeline
from generator.emit.report.graph import network_title
from generator.emit.reports import plan_document
from tests.browser.chromium import browser_context, opened
from tests.conftest import EXAMPLES, REPO

GOLDEN = REPO / "tests" / "golden"


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with browser_context(tmp_path_factory.mktemp("chromium-profile")) as ctx:
        yield ctx


def _files(example: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """The golden report, the plan it shows and its BOM.

    The plan is plan.yaml's data (``plan_document``), built here rather than parsed: the
    2,048-node plan.yaml takes PyYAML seconds to read, and the golden test holds the file
    equal to this data.
    """
    loaded = pipeline.load_checked(example.relative_to(REPO).as_posix())
    plan = plan_document(pipeline.plan(loaded))
    base = GOLDEN / example.stem / "reports" / loaded.spec.name
    bom = json.loads((base / "bom.json").read_text(encoding="utf-8"))
    return base / "report.html", plan, bom


def _not_blank(png: bytes) -> None:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (1280, 900)
    small = image.resize((160, 112))
    raw = small.tobytes()
    pixels = [tuple(raw[i : i + 3]) for i in range(0, len(raw), 3)]
    ink = sum(1 for p in pixels if sum(p) < 720) / len(pixels)
    assert len(set(pixels)) > 20, "screenshot has almost no distinct colours"
    assert 0.02 < ink < 0.9, f"screenshot is blank or solid ({ink:.1%} ink)"


DOM_COUNTS = """() => ({
  racks: document.querySelectorAll('svg.rack').length,
  devices: document.querySelectorAll('svg.rack use.d').length,
  rackTexts: document.querySelectorAll('svg.rack text').length,
  bomRows: document.querySelectorAll('#bom-table tbody tr').length,
  nodes: Number(document.querySelector('.card[data-k=compute_nodes]').dataset.v),
  gpus: Number(document.querySelector('.card[data-k=gpus]').dataset.v),
  switches: [...document.querySelectorAll('#switch-table tbody tr')].map(
      tr => [tr.cells[0].textContent, tr.cells[1].textContent, Number(tr.cells[3].dataset.v)]),
  untitled: [...document.querySelectorAll('svg')].filter(
      s => !s.classList.contains('defs') && !s.querySelector(':scope > title')).length,
  drawings: document.querySelectorAll('svg.net, svg.chart').length,
})"""


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_report_loads_clean_and_holds_the_plan(context: Any, example: Path) -> None:
    report, plan, bom = _files(example)
    with opened(context, report) as (page, errors, outside):
        png = page.screenshot()
        dom = page.evaluate(DOM_COUNTS)
    assert errors == []
    assert outside == [], "the report must not fetch anything"
    assert len(png) > 20_000
    _not_blank(png)
    devices = sum(1 for r in plan["racks"] for s in r["slots"] if s["height_u"])
    assert dom["racks"] == len(plan["racks"])
    assert dom["devices"] == devices
    assert dom["rackTexts"] >= devices, "every device in a rack has a text label"
    assert dom["bomRows"] == len(bom["lines"])
    assert dom["nodes"] == sum(1 for n in plan["nodes"] if n["role"] == "compute")
    assert dom["gpus"] == sum(n["gpus"] for n in plan["nodes"] if n["role"] == "compute")
    want = Counter((network_title(s["network"]), s["tier"]) for s in plan["switches"])
    got: Counter[tuple[str, str]] = Counter()
    for network, tier, n in dom["switches"]:
        got[(network, tier)] += n
    assert got == want
    assert dom["untitled"] == 0, "every drawing and chart has a <title>"
    assert dom["drawings"] >= 4


def test_bom_table_filters_totals_and_sorts(context: Any) -> None:
    report, _, bom = _files(REPO / "examples" / "dell-8node-config1.yaml")
    optics = [x for x in bom["lines"] if "optic" in json.dumps(x).lower()]
    with opened(context, report) as (page, errors, _):
        page.fill("#bom-table-q", "optic")
        shown = page.eval_on_selector_all("#bom-table tbody tr:not([hidden])", "r => r.length")
        status = page.text_content("#bom-table-n")
        total = page.text_content("#bom-table tfoot tr:first-child td:nth-child(7)")
        page.fill("#bom-table-q", "")
        page.click("#bom-table thead th:nth-child(4) button")
        qty = page.eval_on_selector_all(
            "#bom-table tbody tr", "r => r.map(x => Number(x.cells[3].dataset.v))")
    assert errors == []
    assert 0 < shown == len(optics) < len(bom["lines"])
    assert status == f"{shown} of {len(bom['lines'])} lines shown"
    expected = sum(x["extended_usd"] or 0 for x in optics)
    assert total == f"${round(expected):,}"
    assert qty == sorted(qty)


def test_part_numbers_stay_on_one_line(context: Any) -> None:
    """On a narrow window 'MFP7E10-N007' broke at its hyphen in the BOM and cabling tables:
    each part-number cell now keeps one line (the table scrolls sideways instead)."""
    report, _, _ = _files(REPO / "examples" / "dell-8node-config1.yaml")
    lines = ("cells => cells.map(td => { const r = document.createRange(); "
             "r.selectNodeContents(td); return [td.textContent, r.getClientRects().length]; })")
    with opened(context, report) as (page, errors, _):
        page.set_viewport_size({"width": 700, "height": 900})
        bom = page.eval_on_selector_all("#bom-table tbody td:nth-child(3)", lines)
        cabling = page.eval_on_selector_all("#cabling-table tbody td:nth-child(1)", lines)
        part = page.eval_on_selector_all("#bom-table tbody td:nth-child(2)", lines)
    assert errors == []
    assert any(text == "MFP7E10-N007" for text, _ in bom)
    assert [cell for cell in bom + cabling if cell[1] != 1] == []
    assert any(n > 1 for _, n in part)  # the window is narrow enough to wrap the names
