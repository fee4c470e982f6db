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
from typing import NamedTuple

from generator.plan.models import ClusterPlan, Link

MAX_BOXES = 16
TIER_ROW = {"leaf": 1, "spine": 2, "core": 3}
ROLE_TITLE = {
    "compute": "GPU nodes",
    "spare": "spare GPU nodes",
    "head": "head nodes",
    "mgmt": "service nodes",
    "login": "login nodes",
    "storage": "storage nodes",
    "ufm": "UFM appliances",
}
NETWORK_TITLE = {
    "compute": "compute fabric",
    "frontend": "front-end",
    "oob": "out-of-band",
    "storage": "storage back-end",
    "site": "site uplink",
}


NODE_KINDS = frozenset(ROLE_TITLE.values())
NETWORK_SHORT = {
    "compute": "fabric", "frontend": "front-end", "oob": "OOB", "storage": "back-end",
}  # fmt: skip


def network_title(network: str) -> str:
    """Human name of a network id (unknown ids are shown as they are)."""
    return NETWORK_TITLE.get(network, network.replace("_", " "))


@dataclass
class Group:
    """Devices drawn together before merging; ``span`` = the SUs they serve, when known."""

    row: int
    kind: str
    span: tuple[int, int] | None
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


class _Device(NamedTuple):
    row: int
    kind: str
    su: int | None
    model: str


def endpoint_devices(plan: ClusterPlan) -> dict[str, _Device]:
    """Every device as an endpoint (row 0); ``network_view`` lifts its own switches."""
    out: dict[str, _Device] = {}
    for n in plan.nodes:
        out[n.name] = _Device(0, ROLE_TITLE.get(n.role, n.role), n.su, n.model)
    for s in plan.switches:
        out[s.name] = _Device(0, f"{NETWORK_SHORT.get(s.network, s.network)} switches", None,
                              s.model)
    for rack in plan.racks:
        for slot in rack.slots:
            if slot.device not in out:
                kind = "PDUs" if slot.kind == "pdu" else f"{slot.kind}s"
                out[slot.device] = _Device(0, kind, None, slot.kind)
    return out


def _devices(plan: ClusterPlan, network: str, base: dict[str, _Device]) -> dict[str, _Device]:
    out = dict(base)
    for s in plan.switches:
        if s.network == network:
            out[s.name] = _Device(TIER_ROW.get(s.tier, 1), s.tier, s.su, s.model)
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


def _signature(name: str, row: int, devices: dict[str, _Device], adj: dict[str, list[str]],
               group_of: dict[str, int]) -> tuple[int, ...]:
    """Groups of the neighbours in the nearest lower row that has any (a spine's leaves, not
    the one UFM port on it), so one odd link does not split a pod or a core plane."""
    below = [n for n in adj[name] if devices[n].row < row and n in group_of]
    if not below:
        return ()
    top = max(devices[n].row for n in below)
    return tuple(sorted({group_of[n] for n in below if devices[n].row == top}))


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
            span: tuple[int, int] | None = (dev.su, dev.su) if dev.su is not None else None
            if row == 0 or dev.su is not None:
                key: tuple[object, ...] = (row, dev.kind, dev.su)
            else:
                sig = _signature(name, row, devices, adj, group_of)
                key = (row, dev.kind, sig)
                spans = [sp for g in sig if (sp := groups[g].span) is not None]
                # A switch that also serves head, login or storage nodes belongs to no SU.
                mixed = any(groups[g].span is None and groups[g].kind in NODE_KINDS for g in sig)
                if spans and not mixed:
                    span = (min(a for a, _ in spans), max(b for _, b in spans))
                else:
                    span = None
            if key not in index:
                index[key] = len(groups)
                groups.append(Group(row, dev.kind, span))
            gid = index[key]
            group_of[name] = gid
            groups[gid].members.append(name)
            groups[gid].models[dev.model] += 1
    return group_of, groups


def su_chunk(groups: list[Group]) -> int:
    """Scalable units per drawn box: the smallest power of two that keeps a row readable.

    The same for every row, so a column of boxes (nodes, leaves, spines) covers the same SUs.
    """
    last = max((g.span[1] for g in groups if g.span), default=1)
    size = 1
    while math.ceil(last / size) > MAX_BOXES:
        size *= 2
    return size


def _bucket(group: Group, size: int, full: tuple[int, int]) -> tuple[object, ...]:
    """Which box a group falls in: its SU chunk when it stays inside one, else its kind."""
    if group.span is None:
        return (2, group.kind)
    lo, hi = group.span
    if ((lo - 1) // size == (hi - 1) // size and group.span != full) or (size == 1 and lo == hi):
        return (0, (lo - 1) // size, group.kind)
    return (2, group.kind)


def _label(chunk: list[Group], by_su: bool, ordinal: str) -> str:
    """``SU 1–4`` for a box of SU-local groups, else the kind (numbered when repeated)."""
    spans = [g.span for g in chunk if g.span]
    if by_su and spans:
        lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
        return f"SU {lo}" if lo == hi else f"SU {lo}–{hi}"
    return f"{chunk[0].kind} {ordinal}".strip()


def _chunks(in_row: list[tuple[int, Group]], size: int, full: tuple[int, int]
            ) -> list[list[tuple[int, Group]]]:
    buckets: dict[tuple[object, ...], list[tuple[int, Group]]] = {}
    for item in in_row:
        buckets.setdefault(_bucket(item[1], size, full), []).append(item)
    out: list[list[tuple[int, Group]]] = []
    for key in sorted(buckets, key=lambda k: (k[0], str(k[1:]) if k[0] else k[1])):
        items = buckets[key]
        if key[0] == 2 and len(items) > MAX_BOXES:  # many wiring groups without an SU
            step = math.ceil(len(items) / MAX_BOXES)
            out += [items[i : i + step] for i in range(0, len(items), step)]
        else:
            out.append(items)
    return out


def _boxes(groups: list[Group]) -> tuple[list[Box], dict[int, int]]:
    size = su_chunk(groups)
    spans = [g.span for g in groups if g.span]
    full = (min(a for a, _ in spans), max(b for _, b in spans)) if spans else (0, 0)
    box_of: dict[int, int] = {}
    boxes: list[Box] = []
    for row in sorted({g.row for g in groups}):
        in_row = [(i, g) for i, g in enumerate(groups) if g.row == row]
        chunks = _chunks(in_row, size, full)
        per_kind = Counter(c[0][1].kind for c in chunks if _bucket(c[0][1], size, full)[0] == 2)
        seen: Counter[str] = Counter()
        for chunk in chunks:
            members = [g for _, g in chunk]
            kind = members[0].kind
            ordinal = ""
            if per_kind[kind] > 1:
                seen[kind] += 1
                ordinal = str(seen[kind])
            models: Counter[str] = Counter()
            for g in members:
                models.update(g.models)
            by_su = _bucket(members[0], size, full)[0] == 0
            box = Box(row, kind, _label(members, by_su, ordinal),
                      sum(len(g.members) for g in members), models)
            for gid, _ in chunk:
                box_of[gid] = len(boxes)
            boxes.append(box)
    return boxes, box_of


def _pairs(links: list[Link], devices: dict[str, _Device]) -> list[TierPair]:
    kind = {name: (d.row, d.kind) for name, d in devices.items()}
    raw = Counter(
        (kind[x.a], kind[x.b], x.speed_gbps, x.a_part, x.part_number or x.cable, x.b_part)
        for x in links
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


def _outside_device(name: str) -> _Device:
    """A cable end that is not in this plan's BOM, e.g. the site's own network ("site-network"):
    drawn above the switches that uplink to it, under its own name, as supplied by the site."""
    return _Device(1, name.replace("-", " "), None, "site-supplied")


def network_view(plan: ClusterPlan, network: str, links: list[Link],
                 base: dict[str, _Device] | None = None) -> NetworkView:
    """Group one network's devices and count its links per drawn box pair.

    ``base`` (from ``endpoint_devices``) can be shared by the views of one plan.
    """
    devices = _devices(plan, network, base if base is not None else endpoint_devices(plan))
    ends = {n for link in links for n in (link.a, link.b)}
    for name in ends - devices.keys():  # a device only the cabling knows about is still drawn
        devices[name] = _outside_device(name)
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
