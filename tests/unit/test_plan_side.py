"""In-band management, site uplinks, out-of-band aggregation and PDU sizing (issue 15,
points 3 and 6)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.synthetic_plan import plan_for, synthetic_spec
from generator import pipeline
from generator.bom import build_bom, load_price_book
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.plan.catalog_models import PlanCatalog


def test_inband_is_a_documented_front_end_vlan_with_lacp_fallback() -> None:
    plan = plan_for(8, default_catalog(), ethernet={"mgmt_vlan": 110, "frontend_vlan": 120})[1]
    ib = plan.network.inband
    assert (ib.design, ib.mgmt_vlan, ib.frontend_vlan, ib.switches) == (
        "frontend-vlan",
        110,
        120,
        0,
    )
    host_links = [
        lk for lk in plan.links if lk.network == "frontend" and lk.a_port in ("fe0", "fe1")
    ]
    assert ib.host_links == len(host_links)
    on_mgmt = {lk.a for lk in host_links} & {n.name for n in plan.nodes if n.addresses.mgmt}
    assert ib.bonded_hosts == len(on_mgmt)  # every server on the mgmt VLAN is dual-homed
    text = " ".join(ib.notes)
    assert "VLAN 110" in text and "untagged" in text and "lacp fallback" in text
    summary = build_bom(plan, load_price_book(default_catalog(), None)).summary
    assert summary["inband_management"]["switches"] == 0
    assert summary["inband_management"]["shared_front_end_cables"] == len(host_links)


def test_vlans_must_differ() -> None:
    with pytest.raises(ValueError, match="must differ"):
        synthetic_spec("v", 2, ethernet={"mgmt_vlan": 7, "frontend_vlan": 7})


def test_site_uplinks_are_counted_with_their_speed() -> None:
    plan = plan_for(8, default_catalog(), ethernet={"site_uplinks_per_switch": 3})[1]
    ups = build_bom(plan, load_price_book(default_catalog(), None)).summary["site_uplinks"]
    racks = len(plan.racks)
    assert ups["frontend"] == {"count": 6, "speed_gbps": 400, "switches": 2}
    assert ups["oob"]["count"] == 2 * racks and ups["oob"]["speed_gbps"] == 10  # 2 SFP+ max
    assert any(n.startswith("Site uplinks, 3 per switch") for n in plan.notes)


def test_oob_aggregates_only_beyond_a_few_racks() -> None:
    small = plan_for(8, default_catalog())[1]
    assert len(small.racks) <= 4
    assert not [s for s in small.switches if s.name.startswith("oob-agg")]
    big = plan_for(64, default_catalog())[1]
    agg = [s for s in big.switches if s.name.startswith("oob-agg")]
    assert len(agg) == 2 * math.ceil(len(big.racks) / 48)
    oob_up = [lk for lk in big.links if lk.network == "oob" and lk.b.startswith("oob-agg")]
    assert len(oob_up) == 2 * len(big.racks)  # every rack's OOB switch to both of its pair


def test_pdus_follow_the_rack_load_and_outlets() -> None:
    plan = plan_for(9, default_catalog(), facility={"rack_power_kw": 52})[1]
    pdu = PlanCatalog(default_catalog()).pdus["pdu-3ph-415v-32a"]
    for rack in plan.racks:
        pdus = sum(1 for s in rack.slots if s.kind == "pdu")
        need_kw = rack.power_kw + (rack.reserve_kw if rack.kind != "compute" else 0.0)
        assert pdus % 2 == 0 and pdus // 2 >= math.ceil(need_kw / pdu.capacity_kw - 1e-9)
        assert pdus // 2 * pdu.capacity_kw < need_kw + pdu.capacity_kw  # no feed over-bought
    by_load = {
        sum(1 for s in r.slots if s.kind == "pdu") for r in plan.racks if r.kind == "compute"
    }
    assert by_load == {6, 2}  # four XE9680 (50.6 kW) vs the ninth node alone (13.1 kW)


def test_old_spec_fields_are_checked(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nworkloads:\n  - {name: t, kind: pretrain, model: llama2-70b, steps: 10}\n"
        "hardware: {gpus: 16}\nethernet: {frontend_vlan: 5000}\n",
        encoding="utf-8",
    )
    with pytest.raises(PodplanError) as exc:
        pipeline.load_checked(str(spec))
    assert exc.value.problems[0].path == "ethernet.frontend_vlan"
