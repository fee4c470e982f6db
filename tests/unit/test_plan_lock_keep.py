"""A re-plan never replaces built hardware it does not have to (lock.heads, lock.frontend,
side_networks.storage_backend): a shrink keeps the head model, the service nodes, a
scalable unit's front-end leaf pair and the storage back end; growth says what it buys."""

from __future__ import annotations

from collections import Counter

import pytest

from generator.catalog.load import default_catalog
from generator.plan.invariants import plan_problems
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan
from generator.plan.network.side_networks import storage_backend
from tests.unit.lockhelp import cables, plan, relock


def _models(p: ClusterPlan, role: str) -> dict[str, str]:
    return {n.name: n.model for n in p.nodes if n.role == role}


def _changes(p: ClusterPlan) -> str:
    return " ".join(p.identity_changes)


def _switches(p: ClusterPlan, prefix: str) -> dict[str, str]:
    return {s.name: s.model for s in p.switches if s.name.startswith(prefix)}


def _ok(p: ClusterPlan, nodes: int, **sections: object) -> None:
    """No invariant broken, and planning again with the written lock changes nothing."""
    assert plan_problems(p, default_catalog()) == []
    assert lock_text(plan(nodes, relock(p), **sections)) == lock_text(p)


def test_a_shrink_below_one_su_keeps_the_built_heads_and_service_nodes() -> None:
    built = plan(40)
    assert set(_models(built, "head").values()) == {"r660-mgmt"}
    shrunk = plan(20, relock(built))
    assert _models(shrunk, "head") == _models(built, "head")  # was r660: bought again
    assert _models(shrunk, "mgmt") == _models(built, "mgmt") == {
        "mgmt01": "r660-mgmt", "mgmt02": "r660-mgmt"}
    assert shrunk.management_tier == "superpod"
    text = _changes(shrunk)
    assert "Replaced by another model" not in text
    assert "The built management plane is kept" in text
    assert "would plan 2 r660 heads and no service nodes" in text
    fresh = plan(20)  # --fresh: the tier's own plan
    assert set(_models(fresh, "head").values()) == {"r660"} and not _models(fresh, "mgmt")
    _ok(shrunk, 20)


def test_growth_past_the_built_head_model_says_the_heads_are_bought() -> None:
    built = plan(20)
    grown = plan(40, relock(built))
    assert set(_models(grown, "head").values()) == {"r660-mgmt"}
    text = _changes(grown)
    assert "head[01-02] r660 -> r660-mgmt" in text
    assert "2 r660-mgmt servers are bought (in the BOM)" in text
    assert "the Slurm controllers move to the new servers" in text
    _ok(grown, 40)


def test_a_shrink_keeps_service_nodes_and_external_subnet_managers() -> None:
    built = plan(160)  # 5 SU: 3 service nodes, UFM pair + 2 external SMs (above 4 SU)
    shrunk = plan(100, relock(built))  # 4 SU: the tier would have 2 and 2
    assert len(_models(built, "mgmt")) == len(_models(shrunk, "mgmt")) == 3
    assert len(_models(built, "ufm")) == len(_models(shrunk, "ufm")) == 4
    assert len(_models(plan(100), "ufm")) == 2
    assert "would plan 2 service nodes and 2 UFM appliances" in _changes(shrunk)
    _ok(shrunk, 100)


def test_an_emptied_su_keeps_its_front_end_pair_and_regrowth_reuses_it() -> None:
    built = plan(40)
    shrunk = plan(20, relock(built))
    assert _switches(shrunk, "fe-") == _switches(built, "fe-")
    assert "Front-end leaf pairs kept without hosts (plan lock): fe-leaf-05/fe-leaf-06 " \
        "(scalable unit 2)" in _changes(shrunk)
    again = plan(40, relock(shrunk))
    assert _switches(again, "fe-") == _switches(built, "fe-")  # no new pair bought
    fe_hosts = {c for c in cables(again) if c[2].startswith("fe-leaf-0")}
    assert {c[2] for c in fe_hosts if c[0] in {f"gpu{i:03d}" for i in range(41, 61)}} >= {
        "fe-leaf-05", "fe-leaf-06"}
    _ok(again, 40)


def test_a_storage_shrink_keeps_the_storage_cluster_and_its_front_end_pairs() -> None:
    big = plan(16, storage={"dataset_tb": 30000})  # 122 storage nodes: a second infra pair
    small = plan(16, relock(big), storage={"dataset_tb": 4000})  # 17 would do
    assert _storage(small) == _storage(big) and small.storage.nodes == 122
    assert _switches(small, "fe-") == _switches(big, "fe-")  # nothing left without hosts
    assert small.identity_changes == []  # nothing of the built cluster moves or goes
    note = " ".join(small.storage.notes)
    assert "The built storage cluster keeps its 122 nodes (plan lock)" in note
    assert "needs only 17" in note and "--fresh) would buy 17 nodes of 30.72 TB" in note
    assert small.storage.sized_by == "the built cluster (plan lock)"
    assert small.storage.usable_tb == big.storage.usable_tb  # capacity stays with the nodes
    _ok(small, 16, storage={"dataset_tb": 4000})


def test_storage_growth_is_said_as_a_purchase_with_the_change() -> None:
    built = plan(16, storage={"dataset_tb": 4000})
    grown = plan(16, relock(built), storage={"dataset_tb": 8000})
    assert _storage(built).items() <= _storage(grown).items()
    text = _changes(grown)
    assert "The storage cluster grows from the built 17 PowerScale nodes to 33" in text
    assert "16 nodes are bought (in the BOM)" in text
    again = plan(16, relock(grown), storage={"dataset_tb": 8000})
    assert again.identity_changes == grown.identity_changes  # kept with the lock: a re-run
    _ok(grown, 16, storage={"dataset_tb": 8000})


def _storage(p: ClusterPlan) -> dict[str, str]:
    return {n.name: n.rack for n in p.nodes if n.role == "storage"}


def _back_end(p: ClusterPlan) -> set[tuple[str, str, str, str]]:
    return {c for c in cables(p) if c[2].startswith("be-")}


def test_a_full_s5232f_on_is_replaced_and_the_note_says_it_is_bought() -> None:
    built = plan(16, storage={"dataset_tb": 4000})
    assert set(_switches(built, "be-").values()) == {"s5232f-on"}
    grown = plan(16, relock(built), storage={"dataset_tb": 8000})
    assert _switches(grown, "be-") == {"be-a-01": "z9264f-on", "be-b-01": "z9264f-on"}
    assert "2 switches bought (in the BOM)" in _changes(grown)
    assert _back_end(built) <= _back_end(grown)  # same ports on the new switch
    _ok(grown, 16, storage={"dataset_tb": 8000})


def test_a_built_z9264f_on_becomes_the_first_leaf_of_a_leaf_spine() -> None:
    built = plan(16, storage={"dataset_tb": 8000})  # 33 nodes on one Z9264F-ON
    grown = plan(16, relock(built), storage={"dataset_tb": 16000})
    assert "be-a-01" in _switches(grown, "be-a-") and "be-a-spine-01" in _switches(grown, "be-")
    moved = _back_end(built) - _back_end(grown)
    assert {c[0] for c in moved} == {"pscale33"}  # only node 33 leaves be-a-01/be-b-01
    assert "stay as the first leaves of a leaf-spine" in _changes(grown)
    _ok(grown, 16, storage={"dataset_tb": 16000})
    shrunk = plan(16, relock(grown), storage={"dataset_tb": 4000})  # 17 nodes would do
    assert _switches(shrunk, "be-") == _switches(grown, "be-")  # the leaf-spine stays
    assert _back_end(grown) == _back_end(shrunk)  # and so do the storage nodes on it
    assert shrunk.storage.nodes == 66 and shrunk.identity_changes == grown.identity_changes
    _ok(shrunk, 16, storage={"dataset_tb": 4000})


@pytest.mark.parametrize("n", [65, 129, 160, 257, 300])
def test_back_end_spines_take_each_leaf_s_uplinks_evenly_on_distinct_ports(n: int) -> None:
    net = storage_backend([f"pscale{i:03d}" for i in range(1, n + 1)])
    spine_ports = Counter((b, bp) for _, _, b, bp in net.isl)
    assert max(spine_ports.values()) == 1  # 3 spines put two cables on one port
    assert max(bp for *_, bp in net.isl) <= 64
    per_pair = Counter((a, b) for a, _, b, _ in net.isl)
    assert len(set(per_pair.values())) == 1


@pytest.mark.parametrize("before", [4000, 8000])  # one S5232F-ON, one Z9264F-ON per network
def test_a_grown_back_end_is_named_as_a_fresh_one_and_keeps_its_ports(before: int) -> None:
    built = plan(16, storage={"dataset_tb": before})
    grown = plan(16, relock(built), storage={"dataset_tb": 16000})  # 66: a leaf-spine
    fresh = plan(16, storage={"dataset_tb": 16000})
    assert set(_switches(grown, "be-")) == set(_switches(fresh, "be-")) == {
        f"be-{n}-{x}" for n in "ab" for x in ("01", "02", "03", "spine-01", "spine-02")}
    kept = {c for c in _back_end(built) if c[0] != "pscale33"}  # 33 is a leaf's 33rd port
    assert kept <= _back_end(grown)  # built storage nodes stay on their port of be-a-01
    if before == 4000:
        assert "whose first leaves take the names be-a-01/be-b-01" in _changes(grown)
    _ok(grown, 16, storage={"dataset_tb": 16000})
