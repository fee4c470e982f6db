"""A re-plan against a lock keeps the built compute fabric while it serves (lock.fabric):
same size -> the same files; a fabric built by another rule -> kept, no cable moves; growth
-> additions, re-cabling only what the even spread over new spines needs; shrink -> kept,
said in a note; --fresh (no lock) -> the rules' fabric."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from generator.catalog.load import default_catalog
from generator.plan.invariants import plan_problems
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan
from generator.plan.network.fabric import FabricShape, shape_fabric
from tests.unit.lockhelp import cables, plan, relock

Cable = tuple[str, str, str, str]


def _counts(p: ClusterPlan) -> tuple[int, int, int]:
    f = p.fabric
    return f.leaf_switches, f.spine_switches, f.core_switches


def _fabric(p: ClusterPlan) -> set[Cable]:
    return {c for c in cables(p) if c[2].startswith("ib-")}


def _moved(old: ClusterPlan, new: ClusterPlan) -> set[Cable]:
    """Fabric cables of the old plan, between devices that are still there, now gone."""
    here = {n.name for n in new.nodes} | {s.name for s in new.switches}
    return {c for c in _fabric(old) - _fabric(new) if c[0] in here and c[2] in here}


def _notes(p: ClusterPlan) -> str:
    return " ".join([*p.fabric.design_notes, *p.identity_changes])


@contextmanager
def _older_rule(spines: int, uplinks: int | None = None) -> Iterator[None]:
    """Plan with an older podplan's fabric rule: ``spines`` spines (and ``uplinks`` per leaf)."""

    def older(*args: int) -> FabricShape:
        s = shape_fabric(*args)
        return replace(s, spines_per_pod=spines, leaf_up=uplinks or s.leaf_up)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("generator.plan.build.shape_fabric", older)
        yield


@pytest.mark.parametrize("nodes", [8, 20, 29, 40, 96])
def test_the_same_size_re_planned_is_byte_identical(nodes: int) -> None:
    first = plan(nodes)
    again = plan(nodes, relock(first))
    assert lock_text(again) == lock_text(first)
    assert again.model_dump(exclude={"identity_changes"}) == first.model_dump(
        exclude={"identity_changes"})
    assert again.identity_changes == []


@pytest.mark.parametrize(
    ("nodes", "spines", "uplinks", "rules"),
    [
        (64, 16, None, (16, 8, 0)),  # 2 SU on 16 spines (RA's 3-4 SU count): 2 per spine
        (29, 29, 29, (8, 4, 0)),  # the old rule: 29 spines for 29 nodes (29 is prime)
    ],
)
def test_a_fabric_built_by_another_rule_is_kept_without_moving_a_cable(
    nodes: int, spines: int, uplinks: int | None, rules: tuple[int, int, int]
) -> None:
    with _older_rule(spines, uplinks):
        built = plan(nodes)
    assert _counts(built)[1] == spines
    assert _counts(plan(nodes)) == rules  # what podplan's rule builds today
    again = plan(nodes, relock(built))
    assert _counts(again) == _counts(built)
    assert _fabric(again) == _fabric(built)  # every fabric cable on its ports
    assert lock_text(again) == lock_text(built)
    assert plan_problems(again, default_catalog()) == []
    note = next(n for n in again.fabric.design_notes if "is kept" in n)
    assert f"A fresh plan (--fresh) would build {rules[0]} leaves, {rules[1]} spines" in note
    assert again.identity_changes == []


def test_growth_in_a_partial_su_keeps_the_built_spines_and_only_adds() -> None:
    # 20 -> 24 nodes: the rule now picks 3 spines (24 uplinks divide by 3), the 4 built
    # spines still take 8 x 24 uplinks: no cable moves, 4 nodes and 32 uplinks are added
    built = plan(20)
    grown = plan(24, relock(built))
    assert _counts(plan(24)) == (8, 3, 0)
    assert _counts(grown) == (8, 4, 0)
    assert not _moved(built, grown)
    assert len(_fabric(grown) - _fabric(built)) == 4 * 8 + 8 * 4
    assert "re-cabled" not in _notes(grown)
    assert plan_problems(grown, default_catalog()) == []


def test_a_third_su_adds_spines_and_moves_only_the_spread_a_fourth_only_adds() -> None:
    two = plan(64)
    three = plan(96, relock(two))
    assert _counts(three) == (24, 16, 0)
    moved = _moved(two, three)
    # 8 -> 16 spines: each of the 16 built leaves moves 32 x (1 - 8/16) = 16 uplinks (one
    # leaf 15: at 64 nodes a UFM port had taken its 32nd uplink, and moves to a spine port
    # now free); no node cable moves
    up = Counter(c[0] for c in moved if c[2].startswith("ib-spine-"))
    assert sorted(up.values()) == [15] + [16] * 15
    assert set(up) == {s.name for s in two.switches if s.name.startswith("ib-leaf-")}
    assert {c[0] for c in moved} - set(up) == {"ufm01"}
    assert "grows by 8 leaves, 8 spines" in _notes(three)
    four = plan(128, relock(three))
    assert _counts(four) == (32, 16, 0)
    # 16 spines serve 4 SU (RA Table 4): only additions, but for the two UFM ports, which
    # sat on spine ports the fourth SU's uplinks fill
    assert {c[0] for c in _moved(three, four)} <= {"ufm01", "ufm02"}
    assert plan_problems(four, default_catalog()) == []


@pytest.mark.parametrize(("before", "after"), [(96, 64), (40, 20), (20, 8), (9, 8)])
def test_a_shrink_keeps_the_built_fabric_and_says_so(before: int, after: int) -> None:
    built = plan(before)
    shrunk = plan(after, relock(built))
    assert _counts(shrunk) == _counts(built)
    assert not _moved(built, shrunk)
    assert f"The capacity beyond {after} nodes stays" in " ".join(shrunk.identity_changes)
    assert plan_problems(shrunk, default_catalog()) == []
    assert _counts(plan(after)) != _counts(built)  # --fresh: the rules' smaller fabric
    assert lock_text(plan(after, relock(shrunk))) == lock_text(shrunk)


@pytest.mark.parametrize(("before", "after", "leaves", "moves"),
                         [(8, 9, 4, 8 * 4), (9, 17, 8, 9 * 4), (8, 17, 8, 8 * 6)])
def test_a_new_rail_grouping_keeps_each_built_leaf_s_first_rails(
    before: int, after: int, leaves: int, moves: int
) -> None:
    # two leaves back to back (8 nodes x 8 rails) cannot take a ninth node: four leaves of
    # two rails and spines. The rules would give leaf 2 rails 2-3 (every cable of it moves);
    # the built leaves keep their first rails instead, new leaves take the rest: only the
    # node cables that must move do (half for 4 -> 2 rails per leaf, 3/4 for 4 -> 1)
    built = plan(before)
    grown = plan(after, relock(built))
    assert _counts(grown)[0] == leaves
    assert {s.name for s in built.switches} <= {s.name for s in grown.switches}
    node_moves = {c for c in _moved(built, grown) if c[1].startswith("mlx5_")}
    assert len(node_moves) == moves
    assert "each built leaf keeps its first" in _notes(grown)
    assert plan_problems(grown, default_catalog()) == []
    assert lock_text(plan(after, relock(grown))) == lock_text(grown)


def _all_moved(old: ClusterPlan, new: ClusterPlan) -> set[Cable]:
    """Cables of any network between devices (or PDUs, the site) still there, now gone."""
    pdus = {s.device for r in new.racks for s in r.slots if s.kind == "pdu"}
    here = {n.name for n in new.nodes} | {s.name for s in new.switches} | pdus
    here.add("site-network")
    return {c for c in cables(old) - cables(new) if c[0] in here and c[2] in here}


def _switches(p: ClusterPlan, prefix: str) -> dict[str, str]:
    return {s.name: s.model for s in p.switches if s.name.startswith(prefix)}


@pytest.mark.parametrize(("before", "after"), [(20, 3), (200, 150), (300, 100)])
def test_a_shrink_moves_no_cable_on_any_network(before: int, after: int) -> None:
    # OOB aggregation stays down to three racks (it went, moving every OOB uplink to the
    # site); a rack switch stays on its aggregation pair; front-end spines stay
    built = plan(before)
    shrunk = plan(after, relock(built))
    assert not _all_moved(built, shrunk)
    assert _switches(shrunk, "oob-agg-") == _switches(built, "oob-agg-")
    assert _switches(shrunk, "fe-spine-") == _switches(built, "fe-spine-")
    assert plan_problems(shrunk, default_catalog()) == []


def test_fewer_storage_nodes_keep_the_built_back_end_switches() -> None:
    big = plan(16, storage={"dataset_tb": 8000})  # 33 F710: Z9264F-ON back end
    assert set(_switches(big, "be-").values()) == {"z9264f-on"}
    small = plan(16, relock(big), storage={"dataset_tb": 4000})
    assert len(small.nodes_with_role("storage")) == 33  # the built cluster stays whole
    assert _switches(small, "be-") == _switches(big, "be-")  # not swapped for S5232F-ON
    assert "Replaced by another model" not in _notes(small)
    assert set(_switches(plan(16, storage={"dataset_tb": 4000}), "be-").values()) == {
        "s5232f-on"}


def test_a_regrouped_fabric_keeps_its_leaf_names_into_more_sus_and_tiers() -> None:
    # 8 nodes (two leaves of 4 rails) -> 17 (8 one-rail leaves) -> 40 (2 SU) -> 300 (three
    # tiers): SU 1's leaves keep the names and rails they got at 17 nodes; after that no
    # node cable moves (a fresh plan names them ib-leaf-su01-rN)
    old = plan(17, relock(plan(8)))
    rails = {s.name: s.rail for s in old.switches if s.name.startswith("ib-leaf-")}
    assert rails == {"ib-leaf-01": 0, "ib-leaf-02": 4, "ib-leaf-03": 1, "ib-leaf-04": 5,
                     "ib-leaf-05": 2, "ib-leaf-06": 6, "ib-leaf-07": 3, "ib-leaf-08": 7}
    for nodes in (40, 300):
        new = plan(nodes, relock(old))
        assert rails.items() <= {s.name: s.rail for s in new.switches}.items()
        assert not {c for c in _moved(old, new) if c[1].startswith("mlx5_")}
        assert plan_problems(new, default_catalog()) == []
        assert lock_text(plan(nodes, relock(new))) == lock_text(new)
        old = new
    assert _counts(old) == _counts(plan(300))
