"""The plan lock (issue 9, point 2): growth keeps every identity, shrinking retires, the
file round-trips, and what cannot be kept is said (a note) or refused (a located error)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.synthetic_plan import plan_for
from generator.catalog.load import default_catalog
from generator.plan.invariants import plan_problems
from generator.plan.lock.model import Lock
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan
from tests.unit.lockhelp import addresses, cables, identities, moved, plan, racks, relock
from tests.unit.test_plan_sweep import _sized

SWITCH_ROLES = ("leaf", "spine", "core")


def _switches(p: ClusterPlan) -> set[str]:
    return {s.name for s in p.switches}


def _check_growth(old: ClusterPlan, new: ClusterPlan, lock: Lock) -> None:
    """Everything a grown (or shrunk) plan must keep, and say."""
    assert plan_problems(new, default_catalog()) == []
    before, after = identities(old), identities(new)
    changed = {n: moved(before[n], after[n]) for n in before if n in after}
    assert not {n: what for n, what in changed.items() if what}
    assert {k: v for k, v in racks(old).items() if k in racks(new)}.items() <= racks(new).items()
    # retired names and addresses are not given out again (a switch the design brings back
    # under its old name gets its old addresses back)
    retired = {r.name: r.addresses for r in new.retired}
    assert set(lock.retired) - set(after) <= set(retired)
    assert not set(retired) & set(after)
    used = {a for n, ident in after.items() if n not in lock.retired for a in addresses(ident)}
    assert not {a for addrs in lock.retired.values() for a in addrs.values()} & used
    # cables: host ports on the front end and out of band never move; any other cable
    # between devices that stay and is gone is named in the re-cabling note
    pdus = {s.device for r in new.racks for s in r.slots if s.kind == "pdu"}
    here = set(after) | pdus | {"site-network"}
    switches = _switches(new)
    gone = [c for c in cables(old) - cables(new) if c[0] in here and c[2] in here]
    nets = {(lk.a, lk.a_port, lk.b, lk.b_port): lk.network for lk in old.links}
    text = " ".join(new.identity_changes)
    swapped = {n for n in before if n in after and before[n]["model"] != after[n]["model"]}
    for c in gone:
        host_end = (c[0] not in switches or c[1] == "mgmt") and c[0] not in swapped
        assert not (host_end and nets[c] in ("frontend", "oob") and c[1] != "ib0"), c
        assert f"{c[2]} " in text, (c, text)
    # running plan again with the lock it wrote changes nothing
    assert lock_text(_replan(new)) == lock_text(new)


_STATE: dict[str, Any] = {}


def _replan(p: ClusterPlan) -> ClusterPlan:
    return plan(_STATE["nodes"], relock(p), **_sections(_STATE))


def _sections(state: dict[str, Any]) -> dict[str, Any]:
    hw = {"login_nodes": state["login"], "hot_spares": state["spares"]}
    return {
        "hardware": {**hw, "remove_nodes": state["remove"]},
        "storage": {"dataset_tb": state["dataset_tb"]},
        "fabric": {"growth_nodes": state["growth"]},
    }


GROW = st.sampled_from(["compute", "login", "su", "storage", "spare", "growth", "shrink", "swap"])


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    base=st.sampled_from([3, 8, 20, 32, 40, 70]),
    steps=st.lists(st.tuples(GROW, st.integers(1, 12)), min_size=1, max_size=3),
)
def test_growth_keeps_every_identity(base: int, steps: list[tuple[str, int]]) -> None:
    state: dict[str, Any] = {
        "nodes": base, "login": 1, "spares": 0, "dataset_tb": 1.0, "growth": 0, "remove": []
    }  # fmt: skip
    _STATE.clear()
    _STATE.update(state)
    old = plan(base, **_sections(state))
    for kind, k in steps:
        if kind == "compute":
            state["nodes"] += k
        elif kind == "login":
            state["login"] = min(8, state["login"] + 1)
        elif kind == "su":
            state["nodes"] += 32
        elif kind == "storage":
            state["dataset_tb"] = max(state["dataset_tb"], 60.0 * k)
        elif kind == "spare":
            state["spares"] += 1
        elif kind == "shrink":  # the highest-numbered go
            state["nodes"] = max(1, state["nodes"] - k)
        elif kind == "swap":  # a node out by name, a new one in its place
            names = [n.name for n in old.nodes_with_role("compute")]
            state["remove"] = [*state["remove"], names[k % len(names)]]
        else:
            state["growth"] += 4 * k
        lock = relock(old)
        new = plan(state["nodes"], lock, **_sections(state))
        _STATE.update(state)
        _check_growth(old, new, lock)
        old = new


def test_a_new_login_node_leaves_the_compute_addresses_alone() -> None:
    two = plan(16, hardware={"login_nodes": 2})
    fresh = plan(16, hardware={"login_nodes": 3})
    gpu = {n.name: n for n in two.nodes}["gpu001"]
    assert {n.name: n for n in fresh.nodes}["gpu001"].addresses.mgmt != gpu.addresses.mgmt
    grown = plan(16, relock(two), hardware={"login_nodes": 3})
    by = {n.name: n for n in grown.nodes}
    assert by["gpu001"].addresses == gpu.addresses  # the lock wins over the numbering
    taken = {n.addresses.mgmt for n in two.nodes}
    assert by["login03"].addresses.mgmt not in taken
    assert grown.identity_changes == ["Changes against the plan lock: 1 device(s) added: login03."]


def test_a_second_scalable_unit_keeps_the_first_su_cabled() -> None:
    one = plan(32)
    two = plan(64, relock(one))
    _STATE.update(
        {"nodes": 64, "login": 1, "spares": 0, "dataset_tb": 1.0, "growth": 0, "remove": []}
    )
    _check_growth(one, two, relock(one))
    su1 = {c for c in cables(one) if c[1].startswith("mlx5_")}
    assert su1 <= cables(two)  # every SU1 NIC on its leaf port
    leaves = {s.name: (s.rack, s.u) for s in one.switches if s.name.startswith("ib-leaf-su01")}
    assert leaves.items() <= {s.name: (s.rack, s.u) for s in two.switches}.items()
    # 4 spines become 8: half of each SU1 leaf's 32 uplinks go to the new spines, said so
    note = next(n for n in two.notes if "re-cabled" in n)
    assert "ib-leaf-su01-r0 25/1-32/2" in note
    # planned ahead with fabric.growth_nodes, the fabric does not change at all
    ahead = plan(32, fabric={"growth_nodes": 32})
    grown = plan(64, relock(ahead))
    compute = {c for c in cables(ahead) if c[2].startswith("ib-")}
    assert compute <= cables(grown)


def test_shrinking_retires_the_highest_numbered_or_the_named_nodes() -> None:
    base = plan(40)
    smaller = plan(38, relock(base))
    gone = {n.name for n in base.nodes} - {n.name for n in smaller.nodes}
    assert gone == {"gpu039", "gpu040"}
    assert "gpu[039-040]" in smaller.identity_changes[0]
    named = plan(38, relock(base), hardware={"remove_nodes": ["gpu007", "gpu012"]})
    assert {n.name for n in base.nodes} - {n.name for n in named.nodes} == {"gpu007", "gpu012"}
    # a replacement: same size, gpu007 out; the new node takes its slot, not its name or IPs
    swap = plan(40, relock(base), hardware={"remove_nodes": ["gpu007"]})
    old7 = {n.name: n for n in base.nodes}["gpu007"]
    new = {n.name: n for n in swap.nodes}["gpu041"]
    assert (new.rack, new.u) == (old7.rack, old7.u)
    assert new.addresses.mgmt != old7.addresses.mgmt
    leaf = {(lk.a, lk.a_port): (lk.b, lk.b_port) for lk in swap.links}
    was = {(lk.a, lk.a_port): (lk.b, lk.b_port) for lk in base.links}
    assert leaf[("gpu041", "mlx5_3")] == was[("gpu007", "mlx5_3")]
    # growing again later: retired names and addresses stay out of use
    again = plan(42, relock(smaller))
    names = {n.name for n in again.nodes}
    assert not names & {"gpu039", "gpu040"} and {"gpu041", "gpu042", "gpu043", "gpu044"} <= names
    retired = {a for r in again.retired for a in r.addresses.values()}
    assert not retired & {n.addresses.mgmt.split("/")[0] for n in again.nodes if n.addresses.mgmt}


def test_the_lock_is_deterministic_sorted_and_plain_yaml() -> None:
    p = plan(40, hardware={"hot_spares": 1})
    text = lock_text(p)
    assert text == lock_text(plan(40, hardware={"hot_spares": 1}))
    assert text.startswith("# Generated by podplan from examples/bench-40.yaml.")
    doc = yaml.safe_load(text)
    lock = relock(p)
    assert list(doc["devices"]) == list(lock.devices)
    assert lock.devices["gpu010"].addresses["mgmt"] == doc["devices"]["gpu010"]["mgmt"]
    assert sum(len(v) for v in doc["cables"].values()) == len(p.links) == len(lock.cables)
    assert list(doc["devices"])[:3] == ["be-a-01", "be-b-01", "fe-leaf-01"]
    names = [n for n in doc["devices"] if n.startswith("gpu")]
    assert names == sorted(names)
    assert lock_text(plan(40, lock, hardware={"hot_spares": 1})) == text


def test_a_2048_node_plan_keeps_its_own_lock() -> None:
    p = _sized(2048)  # the sweep's plan: built once per test run
    again = plan_for(2048, default_catalog(), relock(p))[1]
    assert lock_text(again) == lock_text(p)
    assert not again.identity_changes


def test_new_storage_racked_far_from_the_leaves_gets_leaves_of_its_own() -> None:
    floor = {"racks_per_row": 3, "row_pitch_m": 5.0}
    base = plan(64, facility=floor)
    grown = plan(64, relock(base), facility=floor, storage={"dataset_tb": 3000})
    assert plan_problems(grown, default_catalog()) == []
    rack_of = {n.name: n.rack for n in grown.nodes} | {s.name: s.rack for s in grown.switches}
    old = {n.name for n in base.nodes}
    new_storage = [n.name for n in grown.nodes_with_role("storage") if n.name not in old]
    far = [n for n in new_storage if rack_of[n] not in {r.name for r in base.racks}]
    assert far  # the infrastructure racks were full: a new rack, rows away
    new_leaves = {s.name for s in grown.switches if s.tier == "leaf"} - _switches(base)
    host_cables = [lk for lk in grown.links if lk.a in far and lk.network == "frontend"]
    assert host_cables
    for lk in host_cables:  # to a new leaf pair in the same rack, not the far old one
        assert lk.b in new_leaves and rack_of[lk.b] == rack_of[lk.a], lk
    assert lock_text(plan(64, relock(grown), facility=floor, storage={"dataset_tb": 3000})) == (
        lock_text(grown)
    )


def test_new_storage_racks_hold_room_for_their_leaf_pair() -> None:
    """Storage for 30 PB fills new racks by power: each keeps room for the leaf pair its
    hosts join when it stands too far from the old leaves (without it the pair found no
    room, went to another rack, and the layout never converged)."""
    floor = {"racks_per_row": 10, "row_pitch_m": 3.0}
    base = plan(320, facility=floor)
    grown = plan(320, relock(base), facility=floor, storage={"dataset_tb": 30000})
    assert plan_problems(grown, default_catalog()) == []
    rack_of = {n.name: n.rack for n in grown.nodes} | {s.name: s.rack for s in grown.switches}
    new_racks = {r.name for r in grown.racks} - {r.name for r in base.racks}
    zoned = [
        lk
        for lk in grown.links
        if lk.network == "frontend" and rack_of.get(lk.a) in new_racks and lk.a.startswith("ps")
    ]
    assert any(rack_of[lk.b] == rack_of[lk.a] for lk in zoned)  # a pair in the new rack
    assert max(lk.length_m for lk in grown.links if lk.network == "frontend") <= 30
    again = plan(320, relock(grown), facility=floor, storage={"dataset_tb": 30000})
    assert lock_text(again) == lock_text(grown)


def test_a_fabric_that_changes_shape_names_every_device_re_cabled() -> None:
    # 16 -> 20 nodes on 4 rails: two collapsed leaves of 2 rails become 4 leaves of 1 and
    # spines. The built leaves stay (they were replaced by rail leaves, moving every node
    # cable) and keep their first rail; the other rail's cables move, each one named
    hw = {"east_west_nics_per_node": 4}
    one = plan(16, hardware=hw)
    two = plan(20, relock(one), hardware=hw)
    assert {"ib-leaf-01", "ib-leaf-02"} <= {s.name for s in two.switches}
    note = next(n for n in two.notes if "re-cabled for the new design" in n)
    assert "ib-leaf-01 9/1-32/1; ib-leaf-02 9/1-32/1" in note
    lost = cables(one) - cables(two)
    assert len({c for c in lost if c[1].startswith("mlx5_")}) == 16 * 4 // 2
    assert {c[1] for c in lost if c[1].startswith("mlx5_")} == {"mlx5_1", "mlx5_3"}


def test_a_new_gpu_on_a_built_cluster_is_said_and_an_old_lock_still_reads() -> None:
    # hardware.gpu h100 -> h200 kept every identity and so said nothing at all, while the
    # BOM bought every GPU server again and Slurm's GRES type changed
    from generator.plan.lock.read import parse_lock

    one = plan(2)
    text = lock_text(one)
    assert "\ngpu: h100-sxm-80gb\n" in text
    two = plan(2, relock(one), hardware={"gpu": "h200-sxm-141gb"})
    note = next(n for n in two.notes if "hardware.gpu" in n)
    assert note.endswith("hardware.gpu h100-sxm-80gb -> h200-sxm-141gb: gpu[001-002] keep their "
                         "names, addresses, slots and cables but are h200-sxm-141gb servers now; "
                         "the BOM buys 2 and reuses none of the h100-sxm-80gb ones; Slurm's GPU "
                         "type changes (--gres=gpu:h100:N becomes --gres=gpu:h200:N).")
    old = parse_lock(text.replace("\ngpu: h100-sxm-80gb\n", "\n"), "reports/grow/plan.lock.yaml")
    assert old.gpu == "" and old.devices.keys() == relock(one).devices.keys()
    h200 = plan(2, old, hardware={"gpu": "h200-sxm-141gb"})
    assert not any("hardware.gpu" in n for n in h200.notes)


def test_more_data_on_built_storage_adds_nodes_with_the_built_drives() -> None:
    # 10 -> 200 TB priced the 3 built PowerScale nodes again with 15.36 TB drives (every
    # drive replaced; a node pool takes one drive size) and said nothing
    one = plan(8, storage={"dataset_tb": 10})
    assert one.storage.drive_tb == 3.84 and "\nstorage_drive_tb: 3.84\n" in lock_text(one)
    two = plan(8, relock(one), storage={"dataset_tb": 200})
    assert two.storage.drive_tb == 3.84 and two.storage.nodes > one.storage.nodes
    assert two.storage.usable_tb >= 200
    assert any(n.startswith("Drives kept at 3.84 TB") for n in two.storage.notes)
    fresh = plan(8, storage={"dataset_tb": 200})
    assert fresh.storage.drive_tb > 3.84  # a first plan still chooses the drive size
