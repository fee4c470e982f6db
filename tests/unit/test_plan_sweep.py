"""The invariant sweep of issue 15: every example and 1 ... 2,048 nodes.

For each plan: cages compatible and reach respected (``plan_problems`` checks every link's
medium against both cage types, its speed and its stocked lengths), every port used at most
once, racks within their limits and reserve, BOM quantities = plan counts (devices, NICs,
transceivers and cables by part number), and one hand-off row per InfiniBand link.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from benchmarks.synthetic_plan import plan_for
from generator import pipeline
from generator.bom import build_bom, load_price_book
from generator.catalog.load import default_catalog
from generator.emit.fabric import ib_links, p2p_csv, topology
from generator.plan.invariants import plan_problems
from generator.plan.models import ClusterPlan
from tests.conftest import EXAMPLES, REPO

SIZES = [1, 2, 4, 8, 16, 32, 64, 127, 128, 256, 1024, 2048]


@cache
def _sized(nodes: int) -> ClusterPlan:
    return plan_for(nodes, default_catalog())[1]


@cache
def _example(stem: str) -> ClusterPlan:
    path = (REPO / "examples" / f"{stem}.yaml").relative_to(REPO).as_posix()
    return pipeline.plan(pipeline.load_checked(path))


def _plans() -> list[tuple[str, object]]:
    return [*((f"{n}-nodes", n) for n in SIZES), *((e.stem, e.stem) for e in EXAMPLES)]


def _plan(key: object) -> ClusterPlan:
    return _sized(key) if isinstance(key, int) else _example(str(key))


@pytest.mark.parametrize("key", [k for _, k in _plans()], ids=[i for i, _ in _plans()])
def test_sweep_invariants(key: object) -> None:
    plan = _plan(key)
    assert plan_problems(plan, default_catalog()) == []
    # every port at most once (also inside plan_problems; asserted directly for the record)
    ends = Counter((lk.a, lk.a_port) for lk in plan.links)
    ends.update((lk.b, lk.b_port) for lk in plan.links)
    assert max(ends.values()) == 1
    # BOM = plan counts
    bom = build_bom(plan, load_price_book(default_catalog(), None))
    bought = [x for x in bom.lines if x.category != "spares"]
    qty: Counter[str] = Counter()
    for line in bought:
        qty[line.catalog_id] += line.quantity
    devices = Counter(n.model for n in plan.nodes) + Counter(s.model for s in plan.switches)
    for model, count in devices.items():
        ids = [i for i in qty if i == model or (i.startswith(f"{model}-") and i not in devices)]
        assert sum(qty[i] for i in ids) == count, model
    assert qty["rack-42u"] == len(plan.racks)
    fabric_nics = sum(
        1 for lk in plan.links if lk.network == "compute" and lk.a_port.startswith("mlx5_")
    )
    assert qty[plan.east_west_nic or "cx7-osfp-1x400"] >= fabric_nics
    per_part = Counter(lk.part_number for lk in plan.links)
    for line in bought:
        if line.category == "cables":
            pn = line.part_number
            assert 0 < line.quantity <= per_part[pn], pn
    assert sum(x.quantity for x in bought if x.category == "cables") <= len(plan.links)
    # hand-off: one P2P row per IB link; the topology lists each IB link once
    rows = [r for r in p2p_csv(plan).splitlines()[3:] if r]
    assert len(rows) == len(ib_links(plan))
    topo_lines = [line for line in topology(plan).splitlines() if " -4x-> " in line]
    assert len(topo_lines) == len(ib_links(plan))


def test_single_node_has_no_fabric_and_two_nodes_get_two_switches() -> None:
    one, two = _sized(1), _sized(2)
    assert one.fabric.leaf_switches == 0 and not ib_links(one)
    assert not one.nodes_with_role("ufm")
    assert any("Smallest fabric rule" in n for n in one.fabric.design_notes)
    assert two.fabric.leaf_switches == 2


def test_management_plane_grows_with_the_cluster() -> None:
    small, big = _sized(8), _sized(2048)
    assert len(small.nodes_with_role("mgmt")) == 0
    assert {n.model for n in small.nodes_with_role("head")} == {"r660"}
    assert len(big.nodes_with_role("mgmt")) > 2
    assert {n.model for n in big.nodes_with_role("head")} == {"r660-mgmt"}
    assert len(big.nodes_with_role("ufm")) > len(small.nodes_with_role("ufm"))


def test_lengths_pick_copper_in_rack_and_optics_across_the_floor() -> None:
    plan = _sized(2048)
    by_media = Counter(lk.media for lk in plan.links)
    assert by_media["ndr-sr4-node"] > 0 and by_media["cat6"] > 0
    assert by_media["ndr-dr4-switch"] > 0  # runs past SR4's 50 m; cages still hold one module
    assert all(lk.length_m <= 2000 for lk in plan.links)
    dell = _example("dell-8node-config2")
    isl = [lk for lk in dell.links if lk.a.startswith("ib-leaf") and lk.b.startswith("ib-leaf")]
    assert isl and all(lk.media == "ndr-dac-twin" for lk in isl)  # adjacent U: copper
