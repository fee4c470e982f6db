"""New compute racks after a regrow (lock.reach): they stand near the built network rack
their nodes plug into, every cable back to it gets a medium that reaches (the shortest
stocked length that covers the run), and a rack out of reach is an error that says so."""

from __future__ import annotations

from functools import cache

import pytest

from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.plan.catalog_models import PlanCatalog
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan
from tests.unit.lockhelp import plan, relock


@cache
def _shrunk() -> ClusterPlan:
    return plan(32, relock(plan(64)))  # SU 2's compute racks go, its network rack r24 stays


def _floor(p: ClusterPlan) -> dict[str, tuple[int, int]]:
    return {r.name: (r.row, r.position) for r in p.racks}


def _metres(a: tuple[int, int], b: tuple[int, int]) -> float:
    return abs(a[0] - b[0]) * 3.0 + abs(a[1] - b[1]) * 0.6  # default row pitch, rack width


def test_regrown_racks_stand_near_their_built_network_rack_and_are_cabled_within_reach() -> None:
    shrunk = _shrunk()
    grown = plan(64, relock(shrunk))
    floor, built = _floor(grown), _floor(shrunk)
    new = sorted(set(floor) - set(built))
    assert new and built["r24"] == floor["r24"]
    free = [(r, p) for r in (1, 2, 3) for p in range(1, 17) if (r, p) not in built.values()]
    nearest = sorted(_metres(s, floor["r24"]) for s in free)[: len(new)]
    assert sorted(_metres(floor[r], floor["r24"]) for r in new) == nearest
    pc = PlanCatalog(default_catalog())
    rack_of = {d.name: d.rack for d in (*grown.nodes, *grown.switches)}
    back = [lk for lk in grown.links if {rack_of.get(lk.a), rack_of.get(lk.b)} & set(new)
            and "r24" in {rack_of.get(lk.a), rack_of.get(lk.b)}]
    assert back
    for lk in back:
        m = pc.media[lk.media]
        assert lk.length_m <= m.reach_m and m.lengths_m[lk.length_m] == lk.part_number
    note = next(c for c in grown.identity_changes if c.startswith("New compute racks"))
    assert "r[26-36] -> r24:" in note and "which reaches 30 m" in note
    assert lock_text(plan(64, relock(grown))) == lock_text(grown)  # a re-run writes the same


def test_a_new_rack_out_of_reach_of_its_built_network_rack_is_an_error() -> None:
    with pytest.raises(PodplanError) as exc:  # rows of 2 racks, 10 m apart: far from r24
        plan(64, relock(_shrunk()), facility={"racks_per_row": 2, "row_pitch_m": 10})
    err = exc.value
    assert err.summary == "a new rack stands out of cable reach of its built network rack"
    first = err.problems[0]
    assert first.message.startswith("new rack r30 (row 4, position 2) is 32.3 m of cable from "
                                    "r24 (row 2, position 9)")
    assert "reaches 30 m" in first.message and "--fresh" in (err.problems[-1].hint or "")
