"""The front-end leaf pairs of a locked plan: hosts stay on their ports, new hosts fit in.

A locked host keeps its leaf pair and ports. A new host goes to the first pair (in name
order) that already serves its group (0: infrastructure hosts; n: the GPU nodes of scalable
unit n) and has a free host port on each leaf it needs, lowest port first; only when none
has room does a new pair start, numbered after the last.

A shrink keeps built capacity, as the compute fabric does (``lock.fabric``): the leaf pair of
a scalable unit whose GPU nodes all go stays, with its uplinks, in the SU's network rack
beside the SU's kept fabric leaves, and takes the SU's nodes again when they come back. A
pair that served only infrastructure hosts (storage, login, management) and has none left
is retired: nothing else of the design stands on it, and the note names it and its freed
spine ports. ``--fresh`` plans the front end anew.
"""

from __future__ import annotations

from generator.plan.lock.model import Lock
from generator.plan.lock.text import natural
from generator.plan.network.ethernet import Endpoint, FrontendGraph, LockedFrontend
from generator.plan.network.side_networks import BuiltBackend

HOST_PORTS = {"fe0": 0, "fe1": 1}


def locked_frontend(lock: Lock) -> LockedFrontend:
    """The lock's front-end leaves and host cables."""
    leaves = sorted((d.name for d in lock.with_role("frontend-leaf")), key=natural)
    names = set(leaves)
    hosts: dict[str, list[tuple[int, str, int]]] = {}
    for c in lock.cables:
        if c.b in names and c.a_port in HOST_PORTS and c.b_port.startswith("1/1/"):
            port = c.b_port[4:]
            if port.isdigit():
                hosts.setdefault(c.a, []).append((HOST_PORTS[c.a_port], c.b, int(port)))
    spines = [d for d in lock.with_role("frontend-spine") if _leaf_number(d.name) is not None
              and d.name.count("-") == 2]  # fe-spine-NN: two tiers (fe-spine-pNN-NN: three)
    return LockedFrontend(leaves, hosts, len(spines), _su_of(lock, hosts))


def _su_of(lock: Lock, hosts: dict[str, list[tuple[int, str, int]]]) -> dict[str, int]:
    """Leaf -> scalable unit, for the leaves that served only GPU nodes of one SU; a leaf
    without hosts (kept by an earlier shrink) is the SU's whose fabric leaves share its rack."""
    seen: dict[str, set[int]] = {}
    for host, ports in hosts.items():
        d = lock.devices.get(host)
        su = (d.su or 1) if d is not None and d.role in ("compute", "spare") else 0
        for _, leaf, _ in ports:
            seen.setdefault(leaf, set()).add(su)
    su_racks: dict[str, set[int]] = {}
    for d in lock.with_role("compute-leaf"):
        su_racks.setdefault(d.rack, set()).add(d.su or 1)
    for d in lock.with_role("frontend-leaf"):
        seen.setdefault(d.name, su_racks.get(d.rack, {0}))
    return {leaf: next(iter(s)) for leaf, s in seen.items() if len(s) == 1 and 0 not in s}


def locked_oob_pairs(lock: Lock) -> dict[str, int] | None:
    """Rack OOB switch -> its aggregation pair (``oob-agg-01/02`` is pair 0) in the lock;
    None when the lock has no OOB aggregation."""
    aggs = {d.name for d in lock.with_role("oob-spine")}
    if not aggs:
        return None
    out = {}
    for c in lock.cables:
        if c.b in aggs and (n := _leaf_number(c.b)) is not None:
            out[c.a] = (n - 1) // 2
    return out


def built_backend(lock: Lock) -> BuiltBackend | None:
    """The lock's storage back end per OneFS network (``be-a-*``, ``be-b-*``); None: none."""
    leaves: dict[str, list[str]] = {}
    spines: dict[str, list[str]] = {}
    model = ""
    for d in sorted(lock.with_role("storage-leaf", "storage-spine"), key=lambda d: natural(d.name)):
        net = d.name[3:4] if d.name.startswith("be-") else ""
        if net not in ("a", "b"):
            continue
        (spines if d.role == "storage-spine" else leaves).setdefault(net, []).append(d.name)
        model = model or d.model
    return BuiltBackend(leaves, spines, model) if leaves else None


def _leaf_number(name: str) -> int | None:
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


class _Pairs:
    """Leaf pairs by index: names, used host ports and the groups they serve."""

    def __init__(self, locked: LockedFrontend, ports: int) -> None:
        self.ports = ports
        self.width = 2
        self.names: dict[int, list[str]] = {}
        for name in locked.leaves:
            num = _leaf_number(name)
            if num is None:
                continue
            self.width = len(name.rsplit("-", 1)[-1])
            self.names.setdefault((num - 1) // 2, ["", ""])[(num - 1) % 2] = name
        for p, pair in self.names.items():
            for side in (0, 1):
                pair[side] = pair[side] or self.name(2 * p + side + 1)
        self.used: dict[str, set[int]] = {n: set() for pair in self.names.values() for n in pair}
        self.groups: dict[int, set[int]] = {p: set() for p in self.names}
        self.index = {n: p for p, pair in self.names.items() for n in pair}
        self.su_pairs = {self.index[n]: su for n, su in locked.su_of.items() if n in self.index}
        for p, su in self.su_pairs.items():  # a kept SU pair takes that SU's nodes again
            self.groups[p].add(su)

    def name(self, number: int) -> str:
        return f"fe-leaf-{number:0{self.width}d}"

    def pair_of(self, leaf: str) -> int | None:
        return self.index.get(leaf)

    def new_pair(self, group: int) -> int:
        p = max(self.names, default=-1) + 1
        self.names[p] = [self.name(2 * p + 1), self.name(2 * p + 2)]
        for n in self.names[p]:
            self.used[n] = set()
            self.index[n] = p
        self.groups[p] = {group}
        return p

    def free(self, leaf: str) -> int | None:
        used = self.used[leaf]
        return next((q for q in range(1, self.ports + 1) if q not in used), None)


def _keep(ep: Endpoint, got: list[tuple[int, str, int]], pairs: _Pairs) -> bool:
    """Can ``ep`` stay on its locked ports (same pair, valid, free ports)?"""
    want = min(ep.ports, 2)
    if len(got) != want or len({pairs.pair_of(leaf) for _, leaf, _ in got}) != 1:
        return False
    return all(
        leaf in pairs.used and 1 <= port <= pairs.ports and port not in pairs.used[leaf]
        for _, leaf, port in got
    )


def pack_locked(endpoints: list[Endpoint], ports: int, locked: LockedFrontend) -> FrontendGraph:
    """Leaf pairs and host links: locked hosts kept, new ones packed into free ports."""
    pairs = _Pairs(locked, ports)
    links: dict[str, list[tuple[str, int, str, int, int]]] = {}
    new: list[Endpoint] = []
    for ep in endpoints:
        got = locked.hosts.get(ep.name, [])
        if got and _keep(ep, got, pairs):
            for host_port, leaf, port in sorted(got):
                pairs.used[leaf].add(port)
                links.setdefault(ep.name, []).append(
                    (ep.name, host_port, leaf, port, ep.speed_gbps)
                )
            pair = pairs.pair_of(got[0][1])
            assert pair is not None
            pairs.groups[pair].add(ep.group)
        else:
            new.append(ep)
    for ep in new:
        links[ep.name] = _place(ep, pairs)
    order = sorted(pairs.names)
    hosted = [p for p in order if any(pairs.used[n] for n in pairs.names[p])]
    live = sorted({*hosted, *pairs.su_pairs})
    g = FrontendGraph(tiers=1 if len(live) <= 1 else 2)
    g.notes = _notes(pairs, hosted, locked)
    for p in live:
        g.leaf_names += pairs.names[p]
        for n in pairs.names[p]:
            g.leaf_group[n] = min(pairs.groups[p], default=0)
    g.host_links = [lk for ep in endpoints for lk in links[ep.name]]
    return g


def _notes(pairs: _Pairs, hosted: list[int], locked: LockedFrontend) -> list[str]:
    """The built pairs kept without hosts, and those retired (module doc)."""
    built = {pairs.index[n] for n in locked.leaves if n in pairs.index}
    empty = sorted(p for p in built if p not in hosted)
    kept = [p for p in empty if p in pairs.su_pairs]
    gone = [p for p in empty if p not in pairs.su_pairs]
    out = []
    if kept:
        which = "; ".join(
            f"{'/'.join(pairs.names[p])} (scalable unit {pairs.su_pairs[p]})" for p in kept)
        out.append(
            f"Front-end leaf pairs kept without hosts (plan lock): {which}. Their GPU nodes "
            "are removed; the pairs stay cabled to the spines, as the SU's compute fabric "
            "leaves do, and take the SU's nodes again when they come back (a shrink keeps "
            "built capacity; --fresh would remove them)."
        )
    if gone:
        which = "; ".join("/".join(pairs.names[p]) for p in gone)
        out.append(
            f"Front-end leaf pairs retired: {which} served only infrastructure hosts that are "
            "removed, so they go with their uplinks (the spine ports they used are free); "
            "hosts added later take free ports on the remaining pairs first, then a new pair."
        )
    return out


def _place(ep: Endpoint, pairs: _Pairs) -> list[tuple[str, int, str, int, int]]:
    """Lowest free ports on the first pair serving ``ep``'s group; a new pair if none."""
    for p in sorted(pairs.names):
        if ep.group not in pairs.groups[p]:
            continue
        got = _ports(ep, pairs, p)
        if got is not None:
            return got
    got = _ports(ep, pairs, pairs.new_pair(ep.group))
    assert got is not None
    return got


def _ports(ep: Endpoint, pairs: _Pairs, p: int) -> list[tuple[str, int, str, int, int]] | None:
    a, b = pairs.names[p]
    if ep.ports >= 2:
        qa, qb = pairs.free(a), pairs.free(b)
        if qa is None or qb is None:
            return None
        chosen = [(0, a, qa), (1, b, qb)]
    else:
        side = 0 if len(pairs.used[a]) <= len(pairs.used[b]) else 1
        leaf = (a, b)[side]
        q = pairs.free(leaf)
        if q is None:
            return None
        chosen = [(0, leaf, q)]
    pairs.groups[p].add(ep.group)
    out = []
    for host_port, leaf, q in chosen:
        pairs.used[leaf].add(q)
        out.append((ep.name, host_port, leaf, q, ep.speed_gbps))
    return out
