"""Impossible combinations are located PodplanErrors, never tracebacks or silent nonsense."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.synthetic_plan import plan_for
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.plan.facility.racks import Device, servers_per_rack


def _error(nodes: int, **sections: Any) -> PodplanError:
    with pytest.raises(PodplanError) as exc:
        plan_for(nodes, default_catalog(), **sections)
    return exc.value


@pytest.mark.parametrize("budget", [5, 12.5, 12.9])
def test_rack_budget_below_one_server_names_the_field(budget: float) -> None:
    err = _error(8, facility={"rack_power_kw": budget})
    assert err.source == "examples/bench-8.yaml"  # the spec file the user gave
    assert [p.path for p in err.problems] == ["facility.rack_power_kw"]
    assert "XE9680" in err.problems[0].message
    assert err.problems[0].hint and "13.05" in err.problems[0].hint


def test_rack_just_big_enough_for_one_server_works() -> None:
    _, plan = plan_for(2, default_catalog(), facility={"rack_power_kw": 13.05})
    assert {n.rack for n in plan.nodes_with_role("compute")} == {"r01", "r02"}


def test_smallest_rack_still_takes_one_xe9680_per_rack() -> None:
    _, plan = plan_for(8, default_catalog(), facility={"rack_units": 10})
    assert all(r.units == 10 for r in plan.racks)
    assert len({n.rack for n in plan.nodes_with_role("compute")}) == 8


def test_too_few_rack_units_names_the_field() -> None:
    tall = Device("big", "node", 12, 5.0)
    with pytest.raises(PodplanError) as exc:
        servers_per_rack(tall, "12U server", 40, 10, 0.5, 1)
    assert exc.value.problems[0].path == "facility.rack_units"


@pytest.mark.parametrize(
    ("field", "cidr"),
    [
        ("mgmt_cidr", "10.129.0.0/28"),
        ("oob_cidr", "10.128.0.0/27"),
        ("frontend_cidr", "10.130.0.0/28"),
        ("fabric_cidr", "10.200.0.0/26"),
    ],
)
def test_too_small_cidr_names_the_field(field: str, cidr: str) -> None:
    err = _error(32, network={field: cidr})
    assert err.problems[0].path == f"network.{field}"
    assert "reserved" in err.problems[0].message or "split" in err.summary
    assert "too small" in err.summary


def test_default_cidrs_are_too_small_for_2048_nodes_and_say_what_fits() -> None:
    err = _error(2048, network={"oob_cidr": "10.128.0.0/20"})
    assert err.problems[0].path == "network.oob_cidr"
    assert err.problems[0].allowed == "a /19 or larger"


def test_storage_beyond_one_cluster_names_the_dataset() -> None:
    err = _error(8, storage={"dataset_tb": 80_000})
    assert err.problems[0].path == "storage.dataset_tb"
