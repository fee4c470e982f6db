"""The lock side of a finished plan: its notes, the identity changes to store, the retired.

``build.build_plan`` calls ``identity_notes`` once every object exists: with a lock it
checks and describes what changed (``changes.compare``); without one it only says when a
lock was set aside by ``--fresh`` or when ``hardware.remove_nodes`` has nothing to act on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from generator.plan.devices import switch_models
from generator.plan.lock.changes import GpuChange, compare, devices_now
from generator.plan.lock.ports import PortSpace
from generator.plan.lock.reach import anchors, host_leaves, reach_note
from generator.plan.models import (
    FreedDevice,
    Link,
    NetworkPlan,
    Node,
    Rack,
    RetiredDevice,
    Switch,
)
from generator.plan.parts import Parts
from generator.plan.storage import growth_note


@dataclass
class LockState:
    """Plan notes to add, the identity changes the new lock stores, its retired devices."""

    notes: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    retired: list[RetiredDevice] = field(default_factory=list)
    freed: list[FreedDevice] = field(default_factory=list)


def identity_notes(
    p: Parts,
    nodes: list[Node],
    switches: list[Switch],
    links: list[Link],
    racks: list[Rack],
    network: NetworkPlan,
    ignored_lock: str | None,
) -> LockState:
    """What the plan lock (or its absence) adds to the plan."""
    if p.lock is None:
        out = LockState()
        if ignored_lock:
            out.changes = [
                f"Planned with --fresh: the plan lock {ignored_lock} was set aside, so names, "
                "addresses, rack slots and cables are numbered afresh and a new lock replaces "
                "it (compare with the previous plan before applying it to a running cluster)."
            ]
            out.notes = list(out.changes)
        if p.spec.hardware.remove_nodes:
            out.notes.append(
                "hardware.remove_nodes has no effect: there is no plan lock (a first plan, or "
                "--fresh), so nodes are numbered from 1 up to the cluster's size."
            )
        return out
    models = {name: m for name, (m, _, _) in switch_models(p).items()}
    space = PortSpace(models)

    @cache
    def order(device: str) -> dict[str, int]:
        got = space.ports(device)
        return {name: i for i, name in enumerate(got[0])} if got else {}

    old = p.pc.gpus.get(p.lock.gpu)
    gpu = GpuChange(p.lock.gpu, p.spec.hardware.gpu, len(p.nodes.compute) + len(p.nodes.spares),
                    old.slurm_gres_type if old else p.lock.gpu, p.gpu.slurm_gres_type)
    done = compare(p.lock, devices_now(nodes, switches), links, racks, network, order, gpu,
                   [p.shape.lock_note, p.mgmt.lock_note, *p.frontend.notes,
                    *p.backend.notes, growth_note(len(p.lock.with_role("storage")),
                                                  p.storage.nodes, p.storage.sized_by),
                    reach_note(p.pc, links, _racks_of(nodes, switches),
                               anchors(p.lock, p.racks, host_leaves(p)))])
    return LockState(list(done.notes), list(done.notes), done.retired, done.freed)


def _racks_of(nodes: list[Node], switches: list[Switch]) -> dict[str, str]:
    out = {n.name: n.rack for n in nodes}
    out.update((s.name, s.rack) for s in switches)
    return out
