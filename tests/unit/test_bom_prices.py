"""The price book: built-in prices, the spec's override file, and its errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from benchmarks.synthetic_plan import plan_for
from generator.bom import build_bom, load_price_book
from generator.catalog.load import default_catalog
from generator.errors import PodplanError


def _line(bom: object, item: str):  # type: ignore[no-untyped-def]
    return next(x for x in bom.lines if x.catalog_id == item)  # type: ignore[attr-defined]


def test_builtin_prices_give_capex_and_sources() -> None:
    _, plan = plan_for(16, default_catalog())
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    xe = _line(bom, "xe9680-h100-sxm")
    assert (xe.quantity, xe.unit_usd, xe.extended_usd) == (16, 337200.0, 5_395_200.0)
    assert "prices.yaml: xe9680-h100-sxm" in xe.source and xe.estimate
    assert bom.capex_usd == pytest.approx(sum(x.extended_usd or 0 for x in bom.lines))
    assert bom.capex_usd > bom.hardware_usd  # the installation uplift comes on top
    uplift = _line(bom, "support-installation-uplift")
    assert uplift.extended_usd == pytest.approx(0.08 * bom.hardware_usd, abs=0.01)


def test_override_merges_by_item_id(tmp_path: Path) -> None:
    book = tmp_path / "my-prices.yaml"
    book.write_text(
        "items:\n"
        "  xe9680-h100-sxm: {usd: 300000, date: '2026-01'}\n"
        "  qsfp56-dd-400g-sr8:\n"
        "    name: 400G QSFP56-DD SR4 (quote)\n"
        "    unit: module\n"
        "    usd: 800\n"
        "    sources: [X1]\n"
        "    status: E\n",
        encoding="utf-8",
    )
    _, plan = plan_for(16, default_catalog())
    prices = load_price_book(default_catalog(), book)
    bom = build_bom(plan, prices)
    xe = _line(bom, "xe9680-h100-sxm")
    assert xe.unit_usd == 300000.0 and str(book) in xe.source
    assert xe.part.startswith("Dell PowerEdge XE9680")  # untouched fields are kept
    assert _line(bom, "qsfp56-dd-400g-sr8").unit_usd == 800.0
    assert _line(bom, "qm9790").source.startswith("prices.yaml")
    assert bom.unpriced_lines == 0
    assert str(book) in bom.price_book


def test_missing_override_is_an_error_on_prices(tmp_path: Path) -> None:
    with pytest.raises(PodplanError) as exc:
        load_price_book(default_catalog(), tmp_path / "nope.yaml")
    assert exc.value.problems[0].path == "prices"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("items: [1, 2]\n", "items"),
        ("items:\n  xe9680-h100-sxm: {usd: lots}\n", "items.xe9680-h100-sxm.usd"),
        ("items:\n  new-part: {usd: 5}\n", "items.new-part"),
        ("items: {a: [\n", "prices"),
    ],
)
def test_invalid_override_names_the_field(tmp_path: Path, text: str, path: str) -> None:
    book = tmp_path / "bad.yaml"
    book.write_text(text, encoding="utf-8")
    with pytest.raises(PodplanError) as exc:
        load_price_book(default_catalog(), book)
    assert path in [p.path for p in exc.value.problems]


def test_an_old_price_id_gets_a_did_you_mean_not_silence(tmp_path: Path) -> None:
    book = tmp_path / "old.yaml"
    book.write_text("items:\n  qm9790: {usd: 30000}\n  xe9680: {usd: 300000}\n", encoding="utf-8")
    with pytest.raises(PodplanError) as exc:
        load_price_book(default_catalog(), book)
    err = exc.value
    assert err.source == str(book)
    assert [(p.path, p.line) for p in err.problems] == [("items.xe9680", 3)]
    assert "'xe9680-h100-sxm'" in (err.problems[0].hint or "")


def test_unpriced_parts_are_listed_not_dropped() -> None:
    _, plan = plan_for(40, default_catalog())
    full = load_price_book(default_catalog(), None)
    items = {k: v for k, v in full.items.items() if k != "qsfp56-dd-400g-sr8"}
    bom = build_bom(plan, dataclasses.replace(full, items=items))
    gap = _line(bom, "qsfp56-dd-400g-sr8")
    assert gap.unit_usd is None and gap.quantity > 0 and "gap" in gap.source
    assert bom.unpriced_lines >= 1


def test_power_cost_and_break_even() -> None:
    _, plan = plan_for(16, default_catalog(), facility={"power_usd_per_kwh": 0.10, "pue": 1.5})
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    p = plan.power
    assert p.facility_kw == pytest.approx(p.it_kw * 1.5, abs=1e-3)
    # energy on the typical draw (facility.utilization 1.0), feeds sized on the maximum
    assert bom.power_usd_per_month == pytest.approx(p.it_typical_kw * 1.5 * 730 * 0.10, abs=0.01)
    assert p.it_typical_kw < p.it_kw
    assert bom.summary["unpriced"] == []
    aws = next(c for c in bom.cloud if c.provider == "aws")
    monthly = aws.usd_per_hour * 730 + (aws.filesystem_usd_per_month or 0)
    assert aws.break_even_months == pytest.approx(
        bom.capex_usd / (monthly - bom.power_usd_per_month), abs=0.05
    )


def test_bcm_adds_the_software_line() -> None:
    _, plan = plan_for(4, default_catalog(), provisioning={"scheduler": "bcm"})
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    assert _line(bom, "nvaie-per-gpu-year").quantity == 32


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ("usd_per_raw_tb: 1500",
         "sets only usd_per_raw_tb for powerscale-f710: the built-in usd_base of 30,000 USD "
         "per node is added to it; set usd_base too (0 if your usd_per_raw_tb already "
         "includes it)"),
        ("usd_base: 20000",
         "sets only usd_base for powerscale-f710: the built-in usd_per_raw_tb of 1,200 USD "
         "per raw TB is added to it; set usd_per_raw_tb too (0 if your usd_base already "
         "includes it)"),
        ("usd: 90000",
         "sets usd for powerscale-f710, which is not used: a storage node is priced as "
         "usd_base + usd_per_raw_tb x its raw TB (built-in 30,000 USD + 1,200 USD per raw "
         "TB); set those two instead"),
    ],
)
def test_a_half_set_storage_price_is_said_in_the_bom(
    tmp_path: Path, fields: str, said: str
) -> None:
    """An override written for the old all-in price per raw TB silently got the new
    per-node base on top: the BOM (notes, storage line) now says what was added."""
    book = tmp_path / "old.yaml"
    book.write_text(f"items:\n  powerscale-f710:\n    {fields}\n")
    _, plan = plan_for(16, default_catalog())
    bom = build_bom(plan, load_price_book(default_catalog(), book))
    assert bom.notes == [f"prices file {book} {said}"]
    assert _line(bom, "powerscale-f710").note.endswith(f"; the prices file {said}")


def test_a_whole_storage_price_override_warns_nothing(tmp_path: Path) -> None:
    book = tmp_path / "new.yaml"
    book.write_text("items:\n  powerscale-f710:\n    usd_base: 0\n    usd_per_raw_tb: 1500\n")
    _, plan = plan_for(16, default_catalog())
    bom = build_bom(plan, load_price_book(default_catalog(), book))
    assert bom.notes == [] and "prices file" not in _line(bom, "powerscale-f710").note


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ("powerscale-f710: {usd_per_tb: 1500}",
         ("items.powerscale-f710.usd_per_tb", 2, "unknown field 'usd_per_tb'",
          "did you mean 'usd_per_raw_tb'?")),
        ("xe9680-h200-sxm: {usd: -5}",
         ("items.xe9680-h200-sxm.usd", 2, "must not be negative, not -5", None)),
        ("cat6: {usd_per_m: 1, cost: 3}",
         ("items.cat6.cost", 2, "unknown field 'cost'", "did you mean 'usd'?")),
    ],
)
def test_an_override_field_that_prices_nothing_is_an_error(
    tmp_path: Path, fields: str, problem: tuple[object, ...]
) -> None:
    # the built-in book tolerates extra keys: 'usd_per_tb' was dropped without a word and
    # the built-in price used; a negative usd priced a server at minus $5
    book = tmp_path / "bad.yaml"
    book.write_text(f"items:\n  {fields}\n")
    with pytest.raises(PodplanError) as exc:
        load_price_book(default_catalog(), book)
    (p,) = exc.value.problems
    assert (p.path, p.line, p.message, p.hint) == problem
