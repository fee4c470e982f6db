"""The compute fabric's shape: the DGX SuperPOD tables, small clusters, growth, port use."""

from __future__ import annotations

from collections import Counter

import pytest

from generator.errors import PodplanError
from generator.plan.network.fabric import FabricGraph, build_fabric, shape_fabric
from tests.unit.fabrichelp import port_use

# DGX SuperPOD RA (H100 Table 3 / B200 table): SU -> (leaf, spine, core) for 8 rails.
SUPERPOD = {
    1: (8, 4, 0),
    2: (16, 8, 0),
    4: (32, 16, 0),
    8: (64, 32, 0),
    16: (128, 128, 64),
    32: (256, 256, 128),
    64: (512, 512, 256),
}


def _graph(nodes: int, rails: int = 8, sm: int = 0, growth: int = 0) -> FabricGraph:
    shape = shape_fabric(nodes + growth, rails, 64, sm)
    return build_fabric(shape, [f"gpu{i:04d}" for i in range(nodes)], [f"sm{i}" for i in range(sm)])




@pytest.mark.parametrize("su", sorted(SUPERPOD))
def test_full_scalable_units_reproduce_the_superpod_table(su: int) -> None:
    g = _graph(32 * su)
    leaf, spine, core = SUPERPOD[su]
    assert (len(g.leaf_names), len(g.spine_names), len(g.core_names)) == (leaf, spine, core)
    n = 32 * su * 8
    assert len(g.node_links) == n
    assert len(g.up_links) == n
    assert len(g.core_links) == (n if core else 0)
    assert g.shape.tiers == (3 if core else 2)


def test_three_su_uses_sixteen_spines_like_the_ra() -> None:
    # RA Table 4: 3 SU -> 24 leaves, 16 spines (each leaf spreads its 32 uplinks evenly).
    g = _graph(95, sm=1)
    assert (len(g.leaf_names), len(g.spine_names)) == (24, 16)
    assert len(g.up_links) == 768
    assert len(g.node_links) == 760  # the RA adds 4 UFM cables; podplan's UFM has one port
    assert g.stolen == 0 and len(g.sm_links) == 1


@pytest.mark.parametrize("su", [1, 2, 4, 8, 16])
def test_four_rails_double_the_nodes_per_two_tiers(su: int) -> None:
    g = _graph(32 * su, rails=4)
    assert len(g.leaf_names) == 4 * su
    assert g.shape.tiers == 2
    assert len(g.spine_names) == 2 * su


@pytest.mark.parametrize("nodes", [1, 5, 8, 12, 16, 20, 31, 32, 33, 95, 200, 257, 600])
@pytest.mark.parametrize("rails", [8, 4])
def test_no_port_is_used_twice_and_no_switch_exceeds_64(nodes: int, rails: int) -> None:
    g = _graph(nodes, rails, sm=2)
    use = port_use(g)
    assert max(use.values()) == 1
    per_switch = Counter(sw for sw, _ in use)
    assert max(per_switch.values()) <= 64
    assert all(1 <= port <= 64 for _, port in use)
    nics = Counter((n, r) for n, r, _, _ in g.node_links)
    assert len(nics) == nodes * rails and set(nics.values()) == {1}


@pytest.mark.parametrize("nodes", [12, 16, 32, 100, 256])
def test_every_leaf_reaches_every_spine_evenly_in_two_tiers(nodes: int) -> None:
    g = _graph(nodes)
    assert g.shape.style == "clos2"
    pairs = Counter((a, b) for a, _, b, _ in g.up_links)
    assert len(pairs) == len(g.leaf_names) * len(g.spine_names)
    assert len(set(pairs.values())) == 1


def test_dell_config1_is_two_qm9790_back_to_back() -> None:
    g = _graph(8, rails=8, sm=2)
    assert g.shape.style == "pair"
    assert len(g.leaf_names) == 2 and not g.spine_names
    # 32 node ports per leaf; one of the 32 inter-switch links gives way to the two SM ports
    assert len(g.isl_links) == 31 and g.stolen == 1
    assert {sw for _, sw, _ in g.sm_links} == set(g.leaf_names)


def test_dell_config2_gets_dells_two_switches_with_or_without_growth() -> None:
    two = _graph(8, rails=4, sm=2)  # smallest fabric rule: never one switch for 2+ nodes
    assert two.shape.style == "pair" and len(two.leaf_names) == 2
    assert two.shape.leaf_down == 16  # 8 nodes x 2 rails per leaf
    grown = _graph(8, rails=4, sm=2, growth=8)
    assert grown.shape.style == "pair" and len(grown.leaf_names) == 2
    assert grown.shape.leaf_down == 32  # 16 designed nodes x 2 rails per leaf


def test_growth_slots_stay_free_for_later_nodes() -> None:
    g = _graph(8, rails=4, sm=2, growth=4)  # 12 nodes x 2 rails per leaf, two leaves
    assert g.shape.style == "pair"
    growth_ports = {r * 12 + s + 1 for r in range(2) for s in range(8, 12)}
    assert not growth_ports & {port for _, _, port in g.sm_links}


def test_growth_nodes_are_wired_for_but_not_cabled() -> None:
    g = _graph(20, growth=40)
    assert g.shape.designed_nodes == 60 and g.shape.scalable_units == 2
    assert len(g.node_links) == 20 * 8
    assert len(g.up_links) == 16 * 32  # full SU cabling per the RA build rule


def test_partial_pods_spread_core_links_evenly() -> None:
    g = _graph(32 * 17)  # 17 SU -> 5 pods (the last one partial)
    assert g.shape.tiers == 3
    per_core = Counter(b for _, _, b, _ in g.core_links)
    assert max(per_core.values()) <= 64
    assert max(per_core.values()) - min(per_core.values()) <= 1


def test_subnet_manager_prefers_free_leaf_ports() -> None:
    g = _graph(30, sm=2)  # two free slots per leaf
    assert g.stolen == 0
    assert all(sw.startswith("ib-leaf") for _, sw, _ in g.sm_links)
    assert len({sw for _, sw, _ in g.sm_links}) == 2


def test_full_fabric_gives_one_uplink_to_the_subnet_manager() -> None:
    g = _graph(32, sm=2)
    assert g.stolen == 1 and len(g.up_links) == 255
    assert any("give way" in n for n in g.notes)


def test_beyond_three_tiers_is_an_error_naming_the_gpu_count() -> None:
    with pytest.raises(PodplanError) as exc:
        shape_fabric(32 * 1100, 8, 64, 0)
    assert exc.value.problems[0].path == "hardware.gpus"


def test_no_east_west_nics_means_no_fabric() -> None:
    shape = shape_fabric(8, 0, 64, 0)
    assert shape.style == "none" and shape.leaves == 0


@pytest.mark.parametrize("rails", [8, 4])
@pytest.mark.parametrize("nodes", range(2, 33))
def test_a_partial_su_never_needs_more_spines_than_the_full_one(nodes: int, rails: int) -> None:
    """29 nodes x 8 rails got 29 spines (the smallest divisor of a prime number of uplinks):
    a collapsed SU is non-blocking, evenly wired, and no bigger than the SU it collapses."""
    g = _graph(nodes, rails)  # (a full fabric gives the subnet manager an uplink: below)
    s = g.shape
    assert s.spines <= rails // 2
    assert s.leaf_up >= s.leaf_down
    if s.style == "clos2":
        pairs = Counter((a, b) for a, _, b, _ in g.up_links)
        assert len(pairs) == len(g.leaf_names) * len(g.spine_names)
        assert len(set(pairs.values())) == 1
    assert max(port_use(_graph(nodes, rails, sm=2)).values()) == 1


def test_twenty_nine_nodes_get_the_full_su_spines() -> None:
    s = shape_fabric(29, 8, 64, 2)
    assert (s.leaves, s.leaf_down, s.leaf_up, s.spines) == (8, 29, 32, 4)
    s = shape_fabric(20, 8, 64, 2)  # a divisor that the full SU's spines allow is kept
    assert (s.leaves, s.leaf_down, s.leaf_up, s.spines) == (8, 20, 20, 4)
