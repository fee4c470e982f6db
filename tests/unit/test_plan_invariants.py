"""Invariants on every generated plan, and proof that each check can fail."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import pytest

from benchmarks.synthetic_plan import plan_for
from generator.catalog.load import default_catalog
from generator.plan.invariants import plan_problems
from generator.plan.models import ClusterPlan, Link

CASES: dict[str, tuple[int, dict[str, Any]]] = {
    "dell8-config1": (8, {}),
    "dell8-config2": (8, {"hardware": {"east_west_nics_per_node": 4}}),
    "8-opensm": (8, {"fabric": {"subnet_manager": "opensm"}}),
    "12-collapsed": (12, {}),
    "20-4nic": (20, {"hardware": {"east_west_nics_per_node": 4}}),
    "32-full-su": (32, {}),
    "33-two-su": (33, {"hardware": {"login_nodes": 2}}),
    "128-growth": (128, {"fabric": {"growth_nodes": 10, "subnet_manager": "opensm"}}),
    "256-auto-spares": (256, {"hardware": {"hot_spares": "auto"}}),
    "300-20kw": (300, {"facility": {"rack_power_kw": 20}}),
    "600-58u": (600, {"facility": {"rack_units": 58, "rack_power_kw": 60}}),
}


@cache
def _plan(case: str) -> ClusterPlan:
    nodes, sections = CASES[case]
    return plan_for(nodes, default_catalog(), **sections)[1]


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_has_no_problems(case: str) -> None:
    assert plan_problems(_plan(case), default_catalog()) == []


def test_storage_has_at_least_three_nodes_everywhere() -> None:
    for case in CASES:
        plan = _plan(case)
        assert plan.storage.nodes >= 3
        assert len(plan.nodes_with_role("storage")) == plan.storage.nodes


def test_every_compute_rack_holds_at_most_four_xe9680_below_u24() -> None:
    plan = _plan("600-58u")  # 60 kW would allow 4 by power; the 24U rule caps it
    per_rack = Counter(n.rack for n in plan.nodes_with_role("compute"))
    assert max(per_rack.values()) == 4
    assert all(n.u + n.height_u - 1 <= 24 for n in plan.nodes_with_role("compute"))


def test_mgmt_dot_two_and_gateway_stay_free() -> None:
    plan = _plan("dell8-config1")
    used = {n.addresses.mgmt.split("/")[0] for n in plan.nodes if n.addresses.mgmt}
    assert "10.129.0.2" not in used and "10.129.0.1" not in used
    assert plan.network.mgmt_gateway == "10.129.0.1"


# ----------------------------------------------------------- each check can fail


def _mutate(plan: ClusterPlan, **changes: Any) -> ClusterPlan:
    return plan.model_copy(update=changes)


def test_check_catches_a_missing_nic_link() -> None:
    plan = _plan("12-collapsed")
    links = [x for x in plan.links if not (x.a == "gpu001" and x.a_port == "mlx5_3")]
    assert any("gpu001" in p for p in plan_problems(_mutate(plan, links=links), default_catalog()))


def test_check_catches_a_port_used_twice_and_an_overfull_switch() -> None:
    plan = _plan("12-collapsed")
    first = plan.links[0]
    extra = [first.model_copy(update={"a": "gpu002"}) for _ in range(70)]
    problems = plan_problems(_mutate(plan, links=[*plan.links, *extra]), default_catalog())
    assert any("carries" in p for p in problems)
    assert any("cables on 64 ports" in p for p in problems)


def test_check_catches_an_oversubscribed_leaf() -> None:
    plan = _plan("32-full-su")
    leaf = "ib-leaf-su01-r0"
    links = [x for x in plan.links if not (x.a == leaf and x.b.startswith("ib-spine"))][:]
    kept = [x for x in plan.links if x.a == leaf and x.b.startswith("ib-spine")][:20]
    problems = plan_problems(_mutate(plan, links=[*links, *kept]), default_catalog())
    assert any(p.startswith(f"{leaf}:") and "up <" in p for p in problems)


def test_check_catches_rack_overload_overlap_and_mounting() -> None:
    plan = _plan("dell8-config1")
    rack = plan.racks[0]
    hot = rack.model_copy(update={"power_kw": rack.power_budget_kw + 1})
    problems = plan_problems(_mutate(plan, racks=[hot, *plan.racks[1:]]), default_catalog())
    assert any("kW over" in p for p in problems)
    high = [n.model_copy(update={"u": 30}) if n.name == "gpu001" else n for n in plan.nodes]
    problems = plan_problems(_mutate(plan, nodes=high), default_catalog())
    assert any("above U24" in p for p in problems)


def test_check_catches_duplicate_and_reserved_addresses() -> None:
    plan = _plan("dell8-config1")
    a = plan.nodes[0].addresses
    clash = [n.model_copy(update={"addresses": a}) if n.name == "head02" else n for n in plan.nodes]
    assert any("twice" in p for p in plan_problems(_mutate(plan, nodes=clash), default_catalog()))
    dot2 = a.model_copy(update={"mgmt": "10.129.0.2/20"})
    bad = [
        n.model_copy(update={"addresses": dot2}) if n.name == "head01" else n for n in plan.nodes
    ]
    assert any("reserved" in p for p in plan_problems(_mutate(plan, nodes=bad), default_catalog()))


def test_check_catches_too_few_storage_nodes() -> None:
    plan = _plan("dell8-config1")
    small = plan.storage.model_copy(update={"nodes": 2})
    problems = plan_problems(_mutate(plan, storage=small), default_catalog())
    assert any("minimum 3" in p for p in problems)


def test_links_are_link_models() -> None:
    assert all(isinstance(x, Link) for x in _plan("dell8-config1").links)
