"""What a re-plan changed against the lock: notes for what may change, errors for what may not.

The rule:

* **Names, addresses and rack slots never move.** A locked device that is still in the plan
  must keep its rack, U and every address; if the new spec cannot keep one (the planner
  asked for it and could not), ``podplan plan`` stops with an error naming each device, its
  lock line and what would move, and suggests ``--fresh``. (CIDR and rack-size changes are
  caught earlier with errors on the spec field: ``lock.addresses``, ``lock.racks``.)
* **Cables and switch ports may move when the design must change** (more spines for another
  scalable unit, a third fabric tier, OOB aggregation past four racks, a bigger back-end
  switch): every cable between two devices that stay and is no longer where the lock has it
  is listed, by device and port, in a plan note. So are devices added, devices removed (now
  retired), devices replaced by another model in the same slot, ranges that changed and
  racks that went.

The notes describe the last change and are stored in the lock (``changes:``); a re-plan that
changes nothing keeps them, so running ``podplan plan`` twice writes the same files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from generator.errors import PodplanError, Problem
from generator.plan.lock.freed import freed_hardware
from generator.plan.lock.model import Lock
from generator.plan.lock.text import natural
from generator.plan.models import (
    FreedDevice,
    Link,
    NetworkPlan,
    Node,
    Rack,
    RetiredDevice,
    Switch,
)

_NUMBERED = re.compile(r"^(.*?)(\d+)$")
SITE = "site-network"


@dataclass(frozen=True)
class Now:
    """A device in the new plan, as the lock would record it."""

    role: str
    model: str
    rack: str
    u: int
    addresses: dict[str, str]


@dataclass
class Outcome:
    """The notes to keep, the retired devices, and what this run changed (to print)."""

    notes: list[str]
    retired: list[RetiredDevice]
    changed: list[str] = field(default_factory=list)
    freed: list[FreedDevice] = field(default_factory=list)
    """The hardware the last change freed (``lock.freed``): kept while nothing changes."""


def _bare(a: str | None) -> str | None:
    return a.split("/", 1)[0] if a else None


def devices_now(nodes: list[Node], switches: list[Switch]) -> dict[str, Now]:
    out = {}
    for n in nodes:
        a = n.addresses
        addrs = {"oob": _bare(a.bmc), "mgmt": _bare(a.mgmt), "frontend": _bare(a.frontend)}
        addrs["fabric"] = _bare(a.fabric[0].address) if a.fabric else None
        out[n.name] = Now(n.role, n.model, n.rack, n.u, {k: v for k, v in addrs.items() if v})
    for s in switches:
        oob = _bare(s.mgmt_address)
        out[s.name] = Now(
            f"{s.network}-{s.tier}", s.model, s.rack, s.u, {"oob": oob} if oob else {}
        )
    return out


def hostlist(names: Iterable[str]) -> str:
    """``gpu[033-040],login02``: consecutive numbers of one prefix and width as a range."""
    runs: list[tuple[str, int, int, int]] = []  # prefix, width, first, last
    plain: list[str] = []
    for name in sorted(set(names), key=natural):
        m = _NUMBERED.match(name)
        if not m:
            plain.append(name)
            continue
        prefix, digits = m.group(1), m.group(2)
        num, width = int(digits), len(digits)
        last = runs[-1] if runs else None
        grown = last is not None and width == len(str(num)) > last[1]  # gpu999 -> gpu1000
        if last and last[0] == prefix and (last[1] == width or grown) and last[3] == num - 1:
            runs[-1] = (prefix, last[1], last[2], num)
        else:
            runs.append((prefix, width, num, num))
    parts = [f"{p}{a:0{w}d}" if a == b else f"{p}[{a:0{w}d}-{b:0{w}d}]" for p, w, a, b in runs]
    return ",".join([*parts, *plain])


def _port_runs(ports: list[str], order: dict[str, int]) -> str:
    """``1/1-4/2, 9/1``: ports consecutive on the front panel as one range."""
    idx = sorted(ports, key=lambda p: (order.get(p, 10**6), natural(p)))
    runs: list[list[str]] = []
    for p in idx:
        if runs and p in order and runs[-1][-1] in order and order[runs[-1][-1]] == order[p] - 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def compare(
    lock: Lock,
    now: dict[str, Now],
    links: list[Link],
    racks: list[Rack],
    network: NetworkPlan,
    port_order: Callable[[str], dict[str, int]],
    gpu: GpuChange | None = None,
    kept: Sequence[str] = (),
) -> Outcome:
    """Check ``lock`` against the new plan; raise on moved identities, note the rest;
    ``kept``: how the built compute fabric (``lock.fabric``) and management plane
    (``lock.heads``) were kept or grown, said with a change."""
    _check_identities(lock, now)
    removed = [n for n in lock.devices if n not in now]
    retired = {n: a for n, a in lock.retired.items() if n not in now}  # back in use: revived
    for name in removed:
        retired[name] = dict(lock.devices[name].addresses)
    out = Outcome(
        list(lock.changes),
        [
            RetiredDevice(name=n, addresses=a)
            for n, a in sorted(retired.items(), key=lambda x: natural(x[0]))
        ],
        freed=list(lock.freed),
    )
    notes = _device_notes(lock, now, removed) + (_gpu_note(lock, now, gpu) if gpu else [])
    notes += _cable_notes(lock, now, links, racks, port_order)
    notes += _network_notes(lock, network)
    standing = {x.name for x in racks}
    gone = sorted((r for r in lock.racks if r not in standing), key=natural)
    if gone:
        notes.append(f"Racks emptied and removed: {hostlist(gone)}.")
    pdus = [
        f"{r.name} {lock.racks[r.name].pdus} -> {n}"
        for r in racks
        if r.name in lock.racks
        and (n := sum(1 for x in r.slots if x.kind == "pdu")) != lock.racks[r.name].pdus
    ]
    if pdus:
        notes.append(f"PDUs added where the rack's load grew: {'; '.join(pdus)}.")
    if notes:  # the fabric kept: said with a change, not as one (a re-run keeps the notes)
        notes += [k for k in kept if k]
        out.notes = out.changed = [f"Changes against the plan lock: {notes[0]}", *notes[1:]]
        swap = (gpu.locked, gpu.planned) if gpu and gpu.locked and gpu.locked != gpu.planned \
            else None
        out.freed = freed_hardware(lock, now, standing, swap)
    return out


def _check_identities(lock: Lock, now: dict[str, Now]) -> None:
    problems = []
    for name, d in lock.devices.items():
        cur = now.get(name)
        if cur is None:
            continue
        moved = []
        if (cur.rack, cur.u) != (d.rack, d.u) and cur.model == d.model:
            moved.append(f"rack slot {d.rack} U{d.u} -> {cur.rack} U{cur.u}")
        for key, addr in d.addresses.items():
            if key in cur.addresses and cur.addresses[key] != addr:
                moved.append(f"{key} address {addr} -> {cur.addresses[key]}")
        if moved:
            problems.append(Problem(path=f"devices.{name}", message="; ".join(moved), line=d.line))
    if problems:
        problems[-1] = Problem(
            path=problems[-1].path,
            message=problems[-1].message,
            line=problems[-1].line,
            hint=(
                "the spec change cannot keep these devices where they are built; undo it, "
                "or plan with --fresh to renumber and re-rack every device"
            ),
        )
        raise PodplanError("the plan would move devices already built", lock.path, problems)


def _device_notes(lock: Lock, now: dict[str, Now], removed: list[str]) -> list[str]:
    notes = []
    added = [n for n in now if n not in lock.devices]
    if added:
        notes.append(f"{len(added)} device(s) added: {hostlist(added)}.")
    if removed:
        notes.append(
            f"{len(removed)} device(s) removed, their names and addresses retired in the lock "
            f"(not given out again): {hostlist(removed)}."
        )
    swaps: dict[tuple[str, str], list[str]] = {}
    racked: list[str] = []
    for name, d in lock.devices.items():
        cur = now.get(name)
        if cur is not None and cur.model != d.model:
            swaps.setdefault((d.model, cur.model), []).append(name)
            if (cur.rack, cur.u) != (d.rack, d.u):
                racked.append(f"{name} {d.rack} U{d.u} -> {cur.rack} U{cur.u}")
    for (old, new), names in sorted(swaps.items()):
        notes.append(
            f"Replaced by another model (same name and addresses): {hostlist(names)} "
            f"{old} -> {new}."
        )
    if racked:
        where = "; ".join(racked)
        notes.append(f"No room for the new models in their old slot (space or power): {where}.")
    return notes + _fabric_note(lock, now)


@dataclass(frozen=True)
class GpuChange:
    """The locked and the planned GPU (catalog ids, Slurm GRES types) and the GPU nodes."""

    locked: str
    planned: str
    nodes: int
    locked_gres: str
    planned_gres: str


def _gpu_note(lock: Lock, now: dict[str, Now], g: GpuChange) -> list[str]:
    """hardware.gpu changed on a built cluster: the nodes keep their names and addresses, so
    nothing else said that every GPU server is bought again and Slurm's GPU type moves."""
    if not g.locked or g.locked == g.planned:
        return []
    kept = [n for n, d in lock.devices.items() if d.role in ("compute", "spare") and n in now]
    gres = (f"Slurm's GPU type changes (--gres=gpu:{g.locked_gres}:N becomes "
            f"--gres=gpu:{g.planned_gres}:N)" if g.locked_gres != g.planned_gres
            else "Slurm's GPU type stays")
    return [
        f"hardware.gpu {g.locked} -> {g.planned}: {hostlist(kept) or 'no built node'} keep "
        f"their names, addresses, slots and cables but are {g.planned} servers now; the BOM "
        f"buys {g.nodes} and reuses none of the {g.locked} ones; {gres}."
    ]


_TIER = {"compute-leaf": 1, "compute-spine": 2, "compute-core": 3}


def _fabric_note(lock: Lock, now: dict[str, Now]) -> list[str]:
    """A compute fabric whose switches change (another tier, leaves folded differently)."""
    gone = [n for n, d in lock.devices.items() if d.role in _TIER and n not in now]
    new = max((_TIER.get(d.role, 0) for d in now.values()), default=0)
    if not gone or not new:
        return []
    old = max(_TIER.get(d.role, 0) for d in lock.devices.values())
    tiers = f"{old} -> {new} tiers" if old != new else f"{new} tier{'s' if new > 1 else ''}"
    return [
        f"The compute fabric changes shape ({tiers}; {hostlist(gone)} go): the cables of the "
        "switches that go move to the new ones (cabling.csv). fabric.growth_nodes sizes the "
        "fabric ahead for growth without this."
    ]


def _cable_notes(
    lock: Lock,
    now: dict[str, Now],
    links: list[Link],
    racks: list[Rack],
    port_order: Callable[[str], dict[str, int]],
) -> list[str]:
    pdus = {s.device for r in racks for s in r.slots if s.kind == "pdu"}
    here = set(now) | pdus | {SITE}
    lost = lock.cable_keys.difference(map(attrgetter("a", "a_port", "b", "b_port"), links))
    by_device: dict[str, list[str]] = {}
    count = 0
    for a, a_port, b, b_port in lost:  # the order does not matter: ports are sorted below
        if a in here and b in here:
            count += 1
            by_device.setdefault(b, []).append(b_port)
            if a in now and now[a].role not in ("compute", "spare", "head", "mgmt", "login"):
                by_device.setdefault(a, []).append(a_port)
    out = _moved_off_removed(lost, here, lock, links)
    if not count:
        return out
    parts = [
        f"{dev} {_port_runs(ports, port_order(dev))}"
        for dev, ports in sorted(by_device.items(), key=lambda x: natural(x[0]))
    ]
    return [
        f"{count} cable(s) between devices that stay are re-cabled for the new design; the "
        f"ports they leave (cabling.csv has their new ends): {'; '.join(parts)}.",
        *out,
    ]


def _moved_off_removed(
    lost: set[tuple[str, str, str, str]], here: set[str], lock: Lock, links: list[Link]
) -> list[str]:
    """Cables from a device that stays to one the new design removes (a 1-tier fabric's
    leaves when it grows into rail leaves and spines): the note listed the removed switches
    but not that every node's fabric cable moves, which is a maintenance window."""
    used = {(lk.a, lk.a_port) for lk in links} | {(lk.b, lk.b_port) for lk in links}
    removed: set[str] = set()
    moved: set[str] = set()
    count = 0
    for a, a_port, b, b_port in lost:
        for mine, port, other in ((a, a_port, b), (b, b_port, a)):
            gone = other in lock.devices and other not in here
            if gone and mine in here and (mine, port) in used:
                removed.add(other)
                moved.add(mine)
                count += 1
    if not count:
        return []
    return [
        f"{count} port(s) cabled to the removed {hostlist(removed)} take other cables now, "
        f"on {hostlist(moved)} (cabling.csv has the new ends)."
    ]


def _network_notes(lock: Lock, net: NetworkPlan) -> list[str]:
    now = {"oob": net.oob_cidr, "mgmt": net.mgmt_cidr, "frontend": net.frontend_cidr}
    now["fabric"] = net.fabric_cidr
    out = []
    for key in ("oob", "mgmt", "frontend", "fabric"):
        old = lock.networks.get(key)
        if old and old != now[key]:
            out.append(
                f"network.{key}_cidr {old} -> {now[key]}: every locked address is kept (the "
                "hosts' prefix length follows the range)."
            )
    return out
