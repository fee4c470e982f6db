"""Media choices beyond the sweep: the DGX twin-port path against NVIDIA's RA counts, one
plug per twin-port cage, and the north-south NIC reference and cage checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.synthetic_plan import plan_for
from generator import pipeline
from generator.bom import build_bom, load_price_book
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.plan.invariants import plan_problems

DGX = {"server": "dgx-h100", "gpu": "h100-sxm-80gb", "hot_spares": 0}


def test_dgx_h100_4su_matches_the_ra_transceiver_counts() -> None:
    # DGX SuperPOD H100 RA (S24) tables 7/8, 127 DGX H100 over 4 SU: 508 twin-port flat-top
    # modules in the DGX cages (4 per system) and 1,536 twin-port finned modules in the
    # QM9700/QM9790 cages (1,020 node/UFM ports + 2,048 leaf-spine ends, two per module).
    plan = plan_for(127, default_catalog(), hardware=DGX)[1]
    assert plan_problems(plan, default_catalog()) == []
    node_links = [lk for lk in plan.links if lk.network == "compute" and lk.a.startswith("gpu")]
    assert {lk.media for lk in node_links} == {"ndr-sr4-dgx"}
    assert {lk.a_cage for lk in node_links} == {"OSFP-RHS-TWIN"}
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    optics = {x.catalog_id: x.quantity for x in bom.lines if x.category == "optics"}
    assert optics["mma4z00-ns-flt"] == 4 * 127
    assert optics["mma4z00-ns"] == 1536
    nic = next(x for x in bom.lines if x.catalog_id == plan.east_west_nic)
    assert nic.unit_usd == 0.0 and "built into the system" in nic.note  # not charged twice


def test_subnet_manager_port_shares_its_cage_with_an_uplink_on_one_module() -> None:
    plan = plan_for(8, default_catalog())[1]
    ib = [lk for lk in plan.links if lk.network == "compute"]
    sm = [lk for lk in ib if lk.a.startswith("ufm")]
    assert sm
    for lk in sm:
        cage = lk.b_port.split("/")[0]
        mates = [x for x in ib if x.b == lk.b and x.b_port.split("/")[0] == cage and x is not lk]
        mates += [x for x in ib if x.a == lk.b and x.a_port.split("/")[0] == cage]
        assert mates
        for mate in mates:  # the cage's other port: same transceiver at this switch
            here = mate.b_part if mate.b == lk.b else mate.a_part
            assert here == lk.b_part is not None, (lk, mate)


def _spec(tmp_path: Path, nic: str) -> str:
    text = (Path("examples") / "dell-8node-config1.yaml").read_text(encoding="utf-8")
    text = text.replace("hardware:", f"ethernet:\n  north_south_nic: {nic}\nhardware:", 1)
    path = tmp_path / "ns.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_unknown_north_south_nic_gets_a_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(PodplanError) as exc:
        pipeline.load_checked(_spec(tmp_path, "cx6-dx-2x10"))
    p = exc.value.problems[0]
    assert p.path == "ethernet.north_south_nic" and p.line is not None
    assert p.hint == "did you mean 'cx6-dx-2x100'?"


def test_a_north_south_nic_that_cannot_be_cabled_names_the_field(tmp_path: Path) -> None:
    path = _spec(tmp_path, "cx7-osfp-1x400")  # OSFP: no 100G cable to an SFP56-DD leaf port
    with pytest.raises(PodplanError) as exc:
        pipeline.plan(pipeline.load_checked(path))
    p = exc.value.problems[0]
    assert p.path == "ethernet.north_south_nic" and p.line is not None
    assert "OSFP" in p.message and "SFP56-DD" in p.message


def test_a_25g_north_south_nic_is_cabled_at_25g(tmp_path: Path) -> None:
    plan = pipeline.plan(pipeline.load_checked(_spec(tmp_path, "cx6-lx-2x25")))
    fe = [lk for lk in plan.links if lk.network == "frontend" and lk.a.startswith("gpu")]
    assert fe and {lk.speed_gbps for lk in fe} == {25}
    assert plan_problems(plan, default_catalog()) == []
