"""The compute fabric follows the GPU node's NIC generation (HDR vs NDR), from catalog data.

A DGX A100 (8x ConnectX-6 HDR 200 Gb/s) gets 40-port HDR QM8790 switches in scalable units
of 20 nodes (DGX A100 SuperPOD RA, S65) and HDR QSFP56 cables; an H100 node keeps the
64-port NDR QM9790, SUs of 32 and NDR optics. A switch pinned against the nodes' generation
is a located spec error.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.synthetic_plan import plan_for
from generator.bom import build_bom, load_price_book
from generator.bom.models import BillOfMaterials
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.plan.catalog_models import PlanCatalog
from generator.plan.invariants import plan_problems
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan
from generator.plan.network.fabric import FabricGraph, build_fabric, shape_fabric
from generator.plan.network.fabric_parts import fabric_parts
from generator.sizing.model.hardware import node_from_server
from tests.unit.fabrichelp import port_use
from tests.unit.lockhelp import relock

DGX_A100 = {"server": "dgx-a100", "gpu": "a100-sxm-80gb", "hot_spares": 0}
HDR_RADIX = 40
# Parts that exist only in one generation: switch OPNs, cable / optic part-number stems.
NDR_MARKS = ("MQM97", "MMA4Z00", "MMS4X", "MCP7Y00", "MCA7J60", "MCP4Y10", "MCA4J80",
             "MFP7E", "MCX75310")
HDR_MARKS = ("MQM87", "MCP1650-H", "MFS1S00-H", "MCX653105A")


def _graph(nodes: int, rails: int = 8, sm: int = 0) -> FabricGraph:
    shape = shape_fabric(nodes, rails, HDR_RADIX, sm)
    return build_fabric(shape, [f"gpu{i:03d}" for i in range(nodes)], [f"sm{i}" for i in range(sm)])




# nodes -> (SUs, leaves, spines, cores, tiers) on 40-port switches, 8 rails. 20 and 40 are
# one and two DGX A100 SuperPOD SUs (S65); 140 is its 7-SU system, beyond two tiers of
# 40-port switches (8 x 140 = 1,120 endpoints > 40 x 40 / 2 = 800), so three tiers. The
# spine and core counts are podplan's rules (fabric_shape) at radix 40, not the RA's table.
HDR_SHAPES = {
    20: (1, 8, 4, 0, 2),
    21: (2, 16, 10, 0, 2),
    40: (2, 16, 10, 0, 2),
    41: (3, 24, 20, 0, 2),
    140: (7, 56, 60, 40, 3),
}


@pytest.mark.parametrize("nodes", sorted(HDR_SHAPES))
def test_hdr_fabric_counts_at_scalable_unit_boundaries(nodes: int) -> None:
    g = _graph(nodes)
    s = g.shape
    sus, leaves, spines, cores, tiers = HDR_SHAPES[nodes]
    assert s.su_nodes == 20 and s.scalable_units == sus
    assert (len(g.leaf_names), len(g.spine_names), len(g.core_names), s.tiers) == (
        leaves, spines, cores, tiers)
    assert len(g.node_links) == nodes * 8
    use = port_use(g)
    assert max(use.values()) == 1  # no port used twice
    assert max(port for _, port in use) <= HDR_RADIX  # nothing beyond a 40-port panel
    for leaf in g.leaf_names:  # non-blocking: a leaf has as many uplinks as node ports
        down = sum(1 for _, _, li, _ in g.node_links if g.leaf_names[li] == leaf)
        up = sum(1 for a, *_ in g.up_links if a == leaf)
        assert up == (s.leaf_up if tiers > 1 else 0) and down <= s.leaf_down


def test_the_21st_hdr_node_opens_scalable_unit_two() -> None:
    g = _graph(21)
    assert g.node_su["gpu019"] == 1 and g.node_su["gpu020"] == 2
    assert [n for n, r, li, _ in g.node_links if g.leaf_names[li] == "ib-leaf-su02-r0"] == [
        "gpu020"]


def test_ndr_keeps_scalable_units_of_32() -> None:
    s = shape_fabric(40, 8, 64, 0)
    assert (s.su_nodes, s.scalable_units, s.leaves, s.spines) == (32, 2, 16, 8)


def test_the_switch_follows_the_node_nic_generation_from_the_catalog() -> None:
    pc = PlanCatalog(default_catalog())
    hdr = fabric_parts(pc, pc.servers["dgx-a100"], None)
    assert (hdr.switch.id, hdr.node_nic.id, hdr.host_hca.id, hdr.generation) == (
        "qm8790", "cx6-hdr-1x200", "cx6-hdr-1x200", "HDR")
    for server in ("xe9680", "xe8640", "dgx-h100", "r760xa"):
        ndr = fabric_parts(pc, pc.servers[server], None)
        assert (ndr.switch.id, ndr.generation) == ("qm9790", "NDR")
    # a pinned switch of the same generation is used (the managed one here)
    assert fabric_parts(pc, pc.servers["dgx-a100"], "qm8700").switch.id == "qm8700"


def test_every_server_nic_runs_at_the_servers_fabric_rate() -> None:
    """Sizing reads ``east_west_nic_gbps``; the fabric reads the NIC: they must agree."""
    pc = PlanCatalog(default_catalog())
    for server in pc.servers.values():
        if server.east_west_nic_options and max(server.east_west_nic_options):
            nic = pc.nics[server.east_west_nic]
            assert nic.port_speed_gbps == server.east_west_nic_gbps, server.id
    node = node_from_server(pc.servers["dgx-a100"], pc.gpus["a100-sxm-80gb"], None)
    assert node.nic_gbps == 200 and node.fabric_bytes_per_s_per_gpu == 25e9


@pytest.mark.parametrize(
    ("server", "gpu", "switch", "words"),
    [
        ("dgx-a100", "a100-sxm-80gb", "qm9790", "MCP7Y60-H"),
        ("dgx-a100", "a100-sxm-80gb", "qm9700", "MCP7Y60-H"),
        ("xe9680", "h100-sxm-80gb", "qm8790", "cannot carry NDR"),
        ("xe9680", "h100-sxm-80gb", "sn5600", "an Ethernet switch"),
        ("xe9680", "h100-sxm-80gb", "qm9999", "not a catalog switch"),
    ],
)
def test_a_switch_of_the_other_generation_is_a_located_spec_error(
    server: str, gpu: str, switch: str, words: str
) -> None:
    with pytest.raises(PodplanError) as exc:
        plan_for(4, default_catalog(), hardware={"server": server, "gpu": gpu},
                 fabric={"switch": switch})
    (problem,) = exc.value.problems
    assert problem.path == "fabric.switch"
    assert words in problem.message
    assert problem.hint and "allowed:" in problem.hint


def _plan(nodes: int, hardware: dict[str, Any], **sections: Any) -> ClusterPlan:
    return plan_for(nodes, default_catalog(), hardware=hardware, **sections)[1]


def _bom(plan: ClusterPlan) -> BillOfMaterials:
    return build_bom(plan, load_price_book(default_catalog(), None))


def _bom_text(bom: BillOfMaterials) -> str:
    return "\n".join(f"{ln.catalog_id} {ln.part} {ln.part_number}" for ln in bom.lines)


def test_a_dgx_a100_plan_is_hdr_end_to_end_and_buys_no_ndr_part() -> None:
    plan = _plan(40, DGX_A100)
    assert plan_problems(plan, default_catalog()) == []
    f = plan.fabric
    assert (f.switch_model, f.su_nodes, f.scalable_units, f.leaf_switches, f.spine_switches) == (
        "QM8790", 20, 2, 16, 10)
    ib = [lk for lk in plan.links if lk.network == "compute"]
    assert ib and {lk.speed_gbps for lk in ib} == {200}
    assert {lk.a_cage for lk in ib} | {lk.b_cage for lk in ib} == {"QSFP56"}
    assert {lk.media for lk in ib} <= {"hdr-dac", "hdr-aoc"}
    assert {s.model for s in plan.switches if s.network == "compute"} == {"qm8790"}
    text = _bom_text(_bom(plan))
    assert not [m for m in NDR_MARKS if m in text]
    assert "MQM8790-HS2F" in text and "MFS1S00-H" in text
    assert any("HDR" in note and "S65" in note for note in f.design_notes)


def test_an_h100_plan_buys_no_hdr_part() -> None:
    for hw in ({"server": "xe9680", "gpu": "h100-sxm-80gb"},
               {"server": "dgx-h100", "gpu": "h100-sxm-80gb"}):
        plan = _plan(40, {**hw, "hot_spares": 0})
        assert plan.fabric.switch_model == "QM9790" and plan.fabric.su_nodes == 32
        text = _bom_text(_bom(plan))
        assert not [m for m in HDR_MARKS if m in text], hw
        assert "MQM9790" in text


def test_an_hdr_plan_with_opensm_gives_the_heads_an_hdr_hca() -> None:
    plan = _plan(8, DGX_A100, fabric={"subnet_manager": "opensm"})
    heads = [lk for lk in plan.links if lk.network == "compute" and lk.a.startswith("head")]
    assert len(heads) == 2 and {lk.a_cage for lk in heads} == {"QSFP56"}
    (line,) = [ln for ln in _bom(plan).lines if ln.part.endswith("(head, opensm)")]
    assert line.catalog_id == "cx6-hdr-1x200" and line.quantity == 2


def test_re_planning_an_hdr_cluster_with_its_lock_changes_nothing() -> None:
    """The lock records (su, slot) per node; with SUs of 20 a slot must not be read as if
    SUs held 32 (that grew a 40-node HDR fabric to 3 SUs on the second run)."""
    for nodes in (20, 40, 45):
        first = _plan(nodes, DGX_A100)
        again = plan_for(nodes, default_catalog(), relock(first), hardware=DGX_A100)[1]
        assert lock_text(again) == lock_text(first), nodes
        assert again.fabric.scalable_units == first.fabric.scalable_units


def test_every_servers_fabric_nic_names_its_infiniband_generation() -> None:
    """The switch is chosen by the NIC's ``ib_generation``: no server may leave it to a
    default guess."""
    pc = PlanCatalog(default_catalog())
    for server in pc.servers.values():
        assert pc.nics[server.east_west_nic].ib_generation in ("HDR", "NDR"), server.id
    for sw in pc.switches.values():
        assert (sw.ib_generation is not None) == (sw.kind == "infiniband"), sw.id


def test_a_nic_at_another_rate_than_the_switch_is_refused() -> None:
    """An NDR200 adapter (200G on a 400G NDR port) would need splitters: a located error."""
    pc = PlanCatalog(default_catalog())
    server = pc.servers["xe9680"].model_copy(update={"east_west_nic": "cx7-qsfp112-2x200"})
    nics = dict(pc.nics)
    nics["cx7-qsfp112-2x200"] = nics["cx7-qsfp112-2x200"].model_copy(
        update={"ib_generation": "NDR"})
    pc.nics = nics
    with pytest.raises(PodplanError) as exc:
        fabric_parts(pc, server, None)
    (problem,) = exc.value.problems
    assert problem.path == "hardware.server" and "200 Gb/s per port" in problem.message


def test_a_full_hdr_su_notes_the_20_to_19_uplink_trade() -> None:
    g = _graph(20, sm=2)
    assert g.stolen == 1  # one leaf-spine link frees a port on each end
    assert any("(20:19)" in n and "(19 nodes)" in n for n in g.notes)


def test_an_unknown_fabric_switch_is_refused_at_the_spec_with_a_did_you_mean(
    tmp_path: Any,
) -> None:
    from generator import pipeline

    spec = tmp_path / "a100.yaml"
    spec.write_text(
        "name: a100\nworkloads:\n  - {name: ft, kind: lora, model: llama2-7b, steps: 10}\n"
        "hardware: {server: dgx-a100, gpu: a100-sxm-80gb, gpus: 16}\n"
        "fabric:\n  switch: qm879\n", encoding="utf-8")
    with pytest.raises(PodplanError) as exc:
        pipeline.load_checked(str(spec))
    (problem,) = exc.value.problems
    assert (problem.path, problem.line) == ("fabric.switch", 6)
    assert problem.hint and "qm8790" in problem.hint


def test_a_pinned_managed_hdr_switch_is_used_and_said() -> None:
    plan = _plan(40, DGX_A100, fabric={"switch": "qm8700"})
    assert {s.model for s in plan.switches if s.network == "compute"} == {"qm8700"}
    assert any("QM8700 has an on-board subnet manager" in n for n in plan.fabric.design_notes)
