"""Which devices of a locked plan stay, which go, and the names of the new ones.

* A role numbered in sequence (``login01``, ``pscale01``, ``gpu001`` ...) keeps its locked
  names, lowest numbers first; when the plan wants fewer, the highest-numbered go. New
  devices are numbered after the highest number ever used, retired ones included, so a
  removed node's name (and with it a stale ``known_hosts`` or ``host_vars`` entry) never
  comes back on another machine. Names keep the lock's zero padding.
* Compute nodes and hot spares keep their role: new compute nodes get new names even when a
  spare has a lower number. ``hardware.remove_nodes`` names the nodes to take out first; with
  the cluster size unchanged, new nodes replace them.
* Fabric slots (``slots``): a GPU node's place in the scalable-unit layout, ``(su - 1) x 32 +
  slot - 1``, as the lock records it (``su``, ``slot``). New nodes fill the slots of removed
  nodes first (their leaf ports in the reference cabling and, usually, their rack
  positions), then follow the last one. The slot is recorded rather than read from the
  node's leaf port because a kept cable need not sit on the reference port (a small fabric
  sizes its leaves to the nodes, so its ports shift as it grows; ``ports`` keeps them).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.errors import PodplanError, Problem
from generator.plan.compute import COMPUTE_PREFIX, ComputeNodes
from generator.plan.lock.model import Lock
from generator.plan.lock.text import natural
from generator.plan.network.fabric import SU_NODES
from generator.spec.models import Spec


def _number(name: str, prefix: str) -> int | None:
    rest = name[len(prefix) :]
    return int(rest) if name.startswith(prefix) and rest.isdigit() else None


def used_numbers(lock: Lock, prefix: str) -> set[int]:
    """Numbers taken by a device or a retired device named ``<prefix><digits>``."""
    names: Iterable[str] = (*lock.devices, *lock.retired)
    return {n for name in names if (n := _number(name, prefix)) is not None}


def new_names(prefix: str, width: int, count: int, used: set[int]) -> list[str]:
    """``count`` names after the highest number in ``used``."""
    start = max(used, default=0) + 1
    return [f"{prefix}{i:0{width}d}" for i in range(start, start + count)]


def _keep(locked: list[str], count: int) -> list[str]:
    return sorted(locked, key=natural)[:count]


def sequential(lock: Lock, role: str, prefix: str, width: int, count: int) -> list[str]:
    """Names of ``count`` devices of ``role``: the locked ones first, then new ones."""
    locked = [d.name for d in lock.with_role(role) if _number(d.name, prefix) is not None]
    kept = _keep(locked, count)
    return kept + new_names(prefix, width, count - len(kept), used_numbers(lock, prefix))


def _removals(spec: Spec, lock: Lock) -> set[str]:
    """``hardware.remove_nodes``, checked against the lock (retired names are done)."""
    out = set()
    nodes = {d.name for d in lock.with_role("compute", "spare")}
    for i, name in enumerate(spec.hardware.remove_nodes):
        if name in lock.retired:
            continue
        if name not in nodes:
            role = lock.devices[name].role if name in lock.devices else None
            near = sorted(nodes, key=lambda n: (len(n) != len(name), n))[:3]
            raise PodplanError(
                "a node to remove is not a compute node of the plan lock",
                problems=[
                    Problem(
                        path=f"hardware.remove_nodes[{i}]",
                        message=(
                            f"{name} is a {role} (only compute and spare nodes are removed by name)"
                            if role
                            else f"{name} is not in {lock.path}"
                        ),
                        hint=f"compute nodes are named like {', '.join(near)}" if near else None,
                    )
                ],
            )
        out.add(name)
    return out


def compute(
    fresh: ComputeNodes, spec: Spec, lock: Lock, su_nodes: int = SU_NODES
) -> ComputeNodes:
    """``fresh``'s counts of compute nodes and spares, locked names kept (see module doc).

    ``su_nodes``: nodes per scalable unit of the fabric (32 NDR, 20 HDR): a locked
    ``(su, slot)`` is the slot ``(su - 1) x su_nodes + slot - 1``."""
    drop = _removals(spec, lock)
    n, s = len(fresh.compute), len(fresh.spares)
    locked_c = [d.name for d in lock.with_role("compute") if d.name not in drop]
    locked_s = [d.name for d in lock.with_role("spare") if d.name not in drop]
    keep_c, keep_s = _keep(locked_c, n), _keep(locked_s, s)
    width = _width(lock, [*locked_c, *locked_s]) or len(fresh.compute[0][len(COMPUTE_PREFIX) :])
    new = new_names(
        COMPUTE_PREFIX,
        width,
        (n - len(keep_c)) + (s - len(keep_s)),
        used_numbers(lock, COMPUTE_PREFIX),
    )
    add_c = n - len(keep_c)
    compute_names = keep_c + new[:add_c]
    spare_names = keep_s + new[add_c:]
    slots = fabric_slots(lock, [*keep_c, *keep_s], new, su_nodes)
    return ComputeNodes(compute_names, spare_names, fresh.spares_auto, slots)


def _width(lock: Lock, names: list[str]) -> int | None:
    for name in names:
        if _number(name, COMPUTE_PREFIX) is not None:
            return len(name) - len(COMPUTE_PREFIX)
    return None


def fabric_slots(
    lock: Lock, kept: list[str], new: list[str], su_nodes: int = SU_NODES
) -> list[str | None]:
    """Slot order of the GPU nodes: locked nodes at their slots, new ones in the gaps."""
    slots: dict[int, str] = {}
    loose = []
    for name in sorted(kept, key=natural):
        d = lock.devices[name]
        slot = ((d.su or 1) - 1) * su_nodes + d.slot - 1 if d.slot else None
        if slot is None or slot in slots:
            loose.append(name)
        else:
            slots[slot] = name
    order: list[str | None] = [slots.get(i) for i in range(max(slots, default=-1) + 1)]
    holes = iter([i for i, x in enumerate(order) if x is None])
    for name in [*loose, *new]:
        hole = next(holes, None)
        if hole is None:
            order.append(name)
        else:
            order[hole] = name
    while order and order[-1] is None:
        order.pop()
    return order
