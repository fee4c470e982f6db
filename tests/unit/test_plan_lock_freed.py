"""Freed hardware (lock.freed): what the last change against the plan lock took out of
service, as data in the plan, plan.yaml, the lock and the report, kept until the next change."""

from __future__ import annotations

import pytest

from generator.emit.report.freed import freed_section
from generator.emit.reports import plan_document
from generator.errors import PodplanError
from generator.plan.lock.read import parse_lock
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan, FreedDevice
from tests.unit.lockhelp import cables, plan, relock


def _by_name(p: ClusterPlan) -> dict[str, FreedDevice]:
    return {f.name: f for f in p.freed}


def test_a_shrink_lists_every_removed_box_as_built() -> None:
    built = plan(64)
    shrunk = plan(32, relock(built))
    freed = _by_name(shrunk)
    gone = {n.name: n for n in built.nodes if n.name not in {x.name for x in shrunk.nodes}}
    assert {n for n in freed if n.startswith("gpu")} == set(gone) and len(gone) == 32
    g = freed["gpu064"]
    assert (g.model, g.gpu, g.rack, g.u, g.why) == (
        gone["gpu064"].model, "h100-sxm-80gb", gone["gpu064"].rack, gone["gpu064"].u, "removed")
    racks = {f.name: f for f in shrunk.freed if f.role == "rack"}
    left = {r.name for r in shrunk.racks}
    assert set(racks) == {r.name for r in built.racks} - left
    assert all(f.pdus > 0 and f.u == 0 for f in racks.values())
    oob = {f.name for f in shrunk.freed if f.role == "oob-leaf"}
    assert oob == {f"oob-{r}" for r in racks}  # each emptied rack's OOB switch goes with it
    assert not {f.name for f in shrunk.freed if f.role == "storage"}  # the data stays


def test_a_replaced_model_and_a_gpu_change_are_freed_as_replaced() -> None:
    small = plan(20)
    grown = plan(40, relock(small))  # heads r660 -> r660-mgmt
    heads = {f.name: (f.model, f.why, f.by) for f in grown.freed if f.role == "head"}
    assert heads == {"head01": ("r660", "replaced", "r660-mgmt"),
                     "head02": ("r660", "replaced", "r660-mgmt")}
    h200 = plan(20, relock(small), hardware={"gpus": 160, "gpu": "h200-sxm-141gb"})
    gpus = [f for f in h200.freed if f.role in ("compute", "spare")]
    assert len(gpus) == 20 and {(f.gpu, f.by, f.why) for f in gpus} == {
        ("h100-sxm-80gb", "h200-sxm-141gb", "replaced")}


def test_the_list_is_kept_until_the_next_change_and_round_trips() -> None:
    shrunk = plan(32, relock(plan(64)))
    again = plan(32, relock(shrunk))
    assert again.freed == shrunk.freed and lock_text(again) == lock_text(shrunk)
    assert relock(shrunk).freed == shrunk.freed
    regrown = plan(48, relock(shrunk))  # adds only: the last change freed nothing
    assert regrown.freed == [] and "freed:" not in lock_text(regrown)


def test_plan_yaml_has_freed_only_after_a_change_that_freed_hardware() -> None:
    built = plan(64)
    assert "freed" not in plan_document(built)  # a first plan: no key (golden trees)
    doc = plan_document(plan(32, relock(built)))
    assert {"name": "gpu064", "why": "removed", "role": "compute"}.items() <= \
        next(f for f in doc["freed"] if f["name"] == "gpu064").items()


def test_a_hand_edited_freed_entry_is_located() -> None:
    text = lock_text(plan(32, relock(plan(64))))
    bad = text.replace("why: removed}", "why: sold}", 1)
    with pytest.raises(PodplanError) as exc:
        parse_lock(bad, "reports/grow/plan.lock.yaml")
    [p] = exc.value.problems
    assert p.path.startswith("freed.") and p.path.endswith(".why") and p.allowed
    assert p.line == next(i for i, x in enumerate(bad.splitlines(), 1) if "why: sold" in x)


def test_the_report_has_a_freed_hardware_table() -> None:
    shrunk = plan(32, relock(plan(64)))
    section = freed_section(shrunk)
    assert section is not None and section.id == "freed"
    table = section.blocks[1]
    assert getattr(table, "id", "") == "freed-hardware"
    assert len(getattr(table, "rows", [])) == len(shrunk.freed)
    assert freed_section(plan(8)) is None
    # products named as on the quote (the report's rule since the part-number work), not ids
    text = " ".join(str(c.text) for row in getattr(table, "rows", []) for c in row)
    assert "PowerEdge XE9680" in text and "H100 SXM5 80GB" in text
    assert "xe9680" not in text and "h100-sxm-80gb" not in text


def test_a_third_tier_says_what_moves_and_frees_the_built_spines() -> None:
    built = plan(256)  # the most two tiers of QM9790 take with 8 rails
    grown = plan(300, relock(built))
    note = next(c for c in grown.identity_changes if "with a third tier" in c)
    assert "Two tiers of 64-port switches end at 256 nodes with 8 rails" in note
    assert "2,048 leaf-to-spine cables (64 leaves x 32)" in note
    assert "the 32 built spines are retired" in note and "node cables stay" in note
    spines = {f.name for f in grown.freed if f.role == "compute-spine"}
    assert spines == {s.name for s in built.switches if s.network == "compute"
                      and s.tier == "spine"} and len(spines) == 32
    node_cables = {c for c in cables(built) if c[0].startswith("gpu")}
    assert node_cables <= cables(grown)  # no GPU node cable moves
