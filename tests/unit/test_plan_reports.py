"""reports/<name>/: the files, their headers, round trips, determinism and speed."""

from __future__ import annotations

import csv
import io

import pytest
import yaml

from benchmarks.synthetic_plan import plan_for, time_plan
from generator.bom import build_bom, load_price_book
from generator.catalog.load import default_catalog
from generator.emit.reports import dump_plan_yaml, emit_reports, plan_document
from generator.render.files import OutFile


def _files(nodes: int, **sections: object) -> dict[str, OutFile]:
    _, plan = plan_for(nodes, default_catalog(), **sections)
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    return {f.path.rsplit("/", 1)[1]: f for f in emit_reports(plan, bom)}


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_report_files_and_headers() -> None:
    files = _files(8)
    assert sorted(files) == [
        "bench-8.topo",
        "bom.csv",
        "bom.json",
        "bom.md",
        "cabling.csv",
        "p2p.csv",
        "plan.lock.yaml",
        "plan.yaml",
        "racks.csv",
    ]
    assert all(f.path.startswith("reports/bench-8/") for f in files.values())
    for name, f in files.items():
        # bom, cabling and racks CSV are plain CSV: provenance rides in their last columns
        plain = name in ("bom.csv", "cabling.csv", "racks.csv")
        head = "\n".join(f.content.splitlines()[:2]) if plain else f.content[:300]
        assert "podplan" in head and "examples/bench-8.yaml" in head, name


def test_plan_yaml_loads_back_to_the_plan_data() -> None:
    _, plan = plan_for(40, default_catalog(), hardware={"hot_spares": 1})
    doc = plan_document(plan)
    text = dump_plan_yaml(doc, plan.spec_file)
    assert yaml.safe_load(text) == doc
    assert doc["cabling"]["links"] == len(plan.links)
    assert "links" not in doc


@pytest.mark.parametrize(
    "value",
    [
        "yes",
        "No",
        "null",
        "1e5",
        "10.0.0.1/24",
        "a: b",
        "#x",
        "",
        " lead",
        "é",
        "multi\nline",
        "-",
        "- x",
        "0x1F",
        "[x]",
        "{y}",
        "@z",
        "'q'",
        '"d"',
        "x #y",
        "2026-01-01",
        "~",
        "tab\tx",
        "line\u2028sep",
        "*star",
        "&amp",
        "%p",
        "!t",
    ],
)
def test_plan_yaml_strings_survive_the_round_trip(value: str) -> None:
    doc = {"k": value, "l": [value, {"m": value}], "f": [1e-05, 0.5, 3], "n": None, "b": True}
    assert yaml.safe_load(dump_plan_yaml(doc, "s.yaml")) == doc


def test_cabling_and_racks_csv_cover_every_link_and_slot() -> None:
    _, plan = plan_for(40, default_catalog())
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    files = {f.path.rsplit("/", 1)[1]: f.content for f in emit_reports(plan, bom)}
    cab = _rows(files["cabling.csv"])
    assert cab[0][:3] == ["network", "a", "a_port"] and len(cab) - 1 == len(plan.links)
    racks = _rows(files["racks.csv"])
    assert len(racks) - 1 == sum(len(r.slots) for r in plan.racks)
    for name in ("cabling.csv", "racks.csv"):  # plain CSV, bom.csv's provenance columns
        rows = list(csv.DictReader(io.StringIO(files[name])))
        assert list(rows[0])[-2:] == ["generated_by", "regenerate"]
        assert {(r["generated_by"], r["regenerate"]) for r in rows} == {
            (f"podplan from {plan.spec_file}", f"podplan plan {plan.spec_file}")}
    assert {row[3] for row in racks[1:]} >= {n.name for n in plan.nodes}


def test_reports_are_byte_identical_for_the_same_spec() -> None:
    a = _files(33, hardware={"hot_spares": "auto"})
    b = _files(33, hardware={"hot_spares": "auto"})
    assert {k: f.content for k, f in a.items()} == {k: f.content for k, f in b.items()}


@pytest.mark.slow
def test_2048_nodes_plan_bom_and_reports_are_fast_and_sound() -> None:
    from generator.plan.invariants import plan_problems

    t = time_plan(2048, repeat=2)
    assert t["cpu_s"] < 2.0, t  # CPU time: wall time on a shared CI machine is noise
    _, plan = plan_for(2048, default_catalog())
    assert (plan.fabric.leaf_switches, plan.fabric.spine_switches, plan.fabric.core_switches) == (
        512,
        512,
        256,
    )
    assert plan_problems(plan, default_catalog()) == []


def test_cost_grows_about_linearly() -> None:
    small = time_plan(64, repeat=3)["cpu_s"]
    big = time_plan(512, repeat=3)["cpu_s"]
    assert big < 8 * small * 3  # 8x the nodes, well under 24x the time


def test_rack_note_gives_what_a_rack_takes_not_what_a_small_plan_fills() -> None:
    """Two R760xa (3 kW each) in a 40 kW rack: the rack takes 13, and the note must not say
    '2 per compute rack' and call the racks power-bound at 2."""
    l40s = {"server": "r760xa", "gpu": "l40s-48gb"}
    _, small = plan_for(2, default_catalog(), hardware={**l40s, "gpus": 8})
    _, large = plan_for(16, default_catalog(), hardware={**l40s, "gpus": 64})
    tail = (": 3 kW planning maximum each, mounted at or below U41, plus one Dell PowerSwitch"
            " N3248TE-ON (0.55 kW).")
    assert (f"13 Dell PowerEdge R760xa per compute rack at 40 kW (this plan fills 2){tail}"
            in small.notes)
    assert f"13 Dell PowerEdge R760xa per compute rack at 40 kW{tail}" in large.notes
    assert max(sum(s.kind == "node" for s in r.slots) for r in large.racks) == 13
