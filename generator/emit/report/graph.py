"""A network of the plan, grouped so it can be drawn at any size (1 node to 2,048 and beyond).

For one network (compute fabric, front end, out of band, or any network a later plan adds),
every device on it is put in a *group*:

* devices that are not switches of this network are endpoints (row 0): nodes by role and
  scalable unit, other networks' switches by network and tier, PDUs by kind;
* the network's own switches sit in rows by tier (leaf 1, spine 2, core 3); a leaf group is
  its scalable unit when it has one, any other switch's group is the set of lower groups it
  links to (so spines of one pod, or one core plane, fall together by their wiring alone).

Rows with more than ``MAX_BOXES`` groups are merged into ranges (``SU 1-4``), and links are
counted per pair of drawn boxes: a *bundle*. Everything is derived from ``plan.links`` and the
device lists, so new networks and tiers show up without code here.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from generator.plan.models import ClusterPlan, Link

MAX_BOXES = 16
TIER_ROW = {"leaf": 1, "spine": 2, "core": 3}
ROLE_TITLE = {
    "compute": "GPU nodes",
    "spare": "spare GPU nodes",
    "head": "head nodes",
    "login": "login nodes",
    "storage": "storage nodes",
    "ufm": "UFM appliances",
}
NETWORK_TITLE = {
    "compute": "compute fabric",
    "frontend": "front-end",
    "oob": "out-of-band",
}


NETWORK_SHORT = {"compute": "fabric", "frontend": "front-end", "oob": "OOB"}


def network_title(network: str) -> str:
    """Human name of a network id (unknown ids are shown as they are)."""
    return NETWORK_TITLE.get(network, network.replace("_", " "))


@dataclass
class Group:
    """Devices drawn together before merging."""

    row: int
    kind: str
    su: int | None
    members: list[str] = field(default_factory=list)
    models: Counter[str] = field(default_factory=Counter)


@dataclass
class Box:
    """One drawn box: a merged run of groups of one kind in one row."""

    row: int
    kind: str
    label: str
    members: int
    models: Counter[str]


@dataclass(frozen=True)
class TierPair:
    """All links between two kinds of device, with their speeds and parts (for the table)."""

    lower: str
    upper: str
    links: int
    speeds: tuple[int, ...]
    parts: tuple[str, ...]


@dataclass
class NetworkView:
    """A grouped network ready to draw."""

    network: str
    boxes: list[Box]
    bundles: dict[tuple[int, int], int]
    inner: dict[int, int]
    pairs: list[TierPair]
    links: int
    switches: Counter[str]


@dataclass(frozen=True)
class _Device:
    row: int
    kind: str
    su: int | None
    model: str


def _devices(plan: ClusterPlan, network: str) -> dict[str, _Device]:
    out: dict[str, _Device] = {}
    for n in plan.nodes:
        out[n.name] = _Device(0, ROLE_TITLE.get(n.role, n.role), n.su, n.model)
    for s in plan.switches:
        if s.network == network:
            out[s.name] = _Device(TIER_ROW.get(s.tier, 1), s.tier, s.su, s.model)
        else:
            short = NETWORK_SHORT.get(s.network, s.network)
            out[s.name] = _Device(0, f"{short} switches", None, s.model)
    for rack in plan.racks:
        for slot in rack.slots:
            if slot.device not in out:
                out[slot.device] = _Device(0, f"{slot.kind}s", None, slot.kind)
    return out


def _neighbours(links: list[Link], needed: set[str]) -> dict[str, list[str]]:
    """Neighbours of the switches whose group is their wiring (only those: links are many)."""
    adj: dict[str, list[str]] = defaultdict(list)
    for link in links:
        if link.a in needed:
            adj[link.a].append(link.b)
        if link.b in needed:
            adj[link.b].append(link.a)
    return adj


def _group_of_devices(
    on_net: list[str], devices: dict[str, _Device], adj: dict[str, list[str]]
) -> tuple[dict[str, int], list[Group]]:
    """Group ids per device, lower rows first so upper groups can use them as signatures."""
    group_of: dict[str, int] = {}
    groups: list[Group] = []
    index: dict[tuple[object, ...], int] = {}
    for row in sorted({devices[d].row for d in on_net}):
        for name in on_net:
            dev = devices[name]
            if dev.row != row:
                continue
            if row == 0 or dev.su is not None:
                key: tuple[object, ...] = (row, dev.kind, dev.su)
            else:
                below = {group_of[n] for n in adj[name] if devices[n].row < row}
                key = (row, dev.kind, tuple(sorted(below)))
            if key not in index:
                index[key] = len(groups)
                groups.append(Group(row, dev.kind, dev.su if row == 0 or dev.su else None))
            gid = index[key]
            group_of[name] = gid
            groups[gid].members.append(name)
            groups[gid].models[dev.model] += 1
    return group_of, groups


def _merge_row(groups: list[tuple[int, Group]], limit: int) -> list[list[tuple[int, Group]]]:
    """Consecutive groups of one kind merged into at most ``limit`` chunks per row."""
    by_kind: dict[str, list[tuple[int, Group]]] = defaultdict(list)
    for item in groups:
        by_kind[item[1].kind].append(item)
    chunks: list[list[tuple[int, Group]]] = []
    for items in by_kind.values():
        quota = max(1, math.floor(limit * len(items) / len(groups)))
        size = math.ceil(len(items) / quota)
        chunks += [items[i : i + size] for i in range(0, len(items), size)]
    return chunks


def _label(chunk: list[tuple[int, Group]], ordinal: tuple[int, int], many: bool) -> str:
    first, last = chunk[0][1], chunk[-1][1]
    if first.su is not None and last.su is not None:
        return f"SU {first.su}" if first.su == last.su else f"SU {first.su}–{last.su}"
    kind = first.kind
    if not many:
        return kind
    lo, hi = ordinal
    return f"{kind} {lo}" if lo == hi else f"{kind} {lo}–{hi}"


def _boxes(groups: list[Group]) -> tuple[list[Box], dict[int, int]]:
    box_of: dict[int, int] = {}
    boxes: list[Box] = []
    for row in sorted({g.row for g in groups}):
        in_row = [(i, g) for i, g in enumerate(groups) if g.row == row]
        kinds = Counter(g.kind for _, g in in_row)
        seen: Counter[str] = Counter()
        for chunk in _merge_row(in_row, MAX_BOXES):
            kind = chunk[0][1].kind
            lo = seen[kind] + 1
            seen[kind] += len(chunk)
            models: Counter[str] = Counter()
            for _, g in chunk:
                models.update(g.models)
            box = Box(row, kind, _label(chunk, (lo, seen[kind]), kinds[kind] > 1),
                      sum(len(g.members) for _, g in chunk), models)
            for gid, _ in chunk:
                box_of[gid] = len(boxes)
            boxes.append(box)
    return boxes, box_of


def _pairs(links: list[Link], devices: dict[str, _Device]) -> list[TierPair]:
    kind = {name: (d.row, d.kind) for name, d in devices.items()}
    raw = Counter(
        (kind[x.a], kind[x.b], x.speed_gbps, x.a_part, x.cable, x.b_part) for x in links
    )
    count: Counter[tuple[tuple[int, str], tuple[int, str]]] = Counter()
    speeds: dict[tuple[tuple[int, str], tuple[int, str]], set[int]] = defaultdict(set)
    parts: dict[tuple[tuple[int, str], tuple[int, str]], set[str]] = defaultdict(set)
    for (a, b, speed, a_part, cable, b_part), n in raw.items():
        key = (a, b) if a <= b else (b, a)
        count[key] += n
        speeds[key].add(speed)
        parts[key].update(p for p in (a_part, cable, b_part) if p)
    return [
        TierPair(lo[1], hi[1], count[(lo, hi)], tuple(sorted(speeds[(lo, hi)])),
                 tuple(sorted(parts[(lo, hi)])))
        for lo, hi in sorted(count)
    ]


def network_view(plan: ClusterPlan, network: str, links: list[Link]) -> NetworkView:
    """Group one network's devices and count its links per drawn box pair."""
    devices = _devices(plan, network)
    ends = {n for link in links for n in (link.a, link.b)}
    for name in ends - devices.keys():  # a device only the cabling knows about is still drawn
        devices[name] = _Device(0, "other devices", None, "device")
    own = [s.name for s in plan.switches if s.network == network]
    adj = _neighbours(links, {s.name for s in plan.switches
                              if s.network == network and s.su is None})
    on_net = own + sorted(ends - set(own),
                          key=lambda n: (devices[n].kind, devices[n].su or 0, n))
    group_of, groups = _group_of_devices(on_net, devices, adj)
    boxes, box_of = _boxes(groups)
    box = {name: box_of[gid] for name, gid in group_of.items()}
    bundles: Counter[tuple[int, int]] = Counter()
    inner: Counter[int] = Counter()
    for (a, b), n in Counter((box[x.a], box[x.b]) for x in links).items():
        if a == b:
            inner[a] += n
        else:
            bundles[(min(a, b), max(a, b))] += n
    switches: Counter[str] = Counter(s.tier for s in plan.switches if s.network == network)
    return NetworkView(network, boxes, dict(bundles), dict(inner), _pairs(links, devices),
                       len(links), switches)


def links_by_network(plan: ClusterPlan) -> dict[str, list[Link]]:
    """The plan's links per network, networks in first-seen order."""
    out: dict[str, list[Link]] = {}
    for s in plan.switches:
        out.setdefault(s.network, [])
    for link in plan.links:
        out.setdefault(link.network, []).append(link)
    return out
