"""New hosts racked far from the front-end leaves they would join get leaves of their own.

A fresh plan keeps the infrastructure racks together in the middle of the floor, so every
infrastructure host is near its leaf pair. A locked plan cannot move racks: when it grows
past the room left in its infrastructure racks (storage nodes for twice the cluster, say),
the new rack may stand rows away from the leaf pair the new hosts would join, beyond the
30 m a 100G host cable reaches. So after a layout, every new host whose front-end cable
would be longer than ``FAR_M`` is put in a zone: its rack. Hosts of a zone join only leaf
pairs of that zone (a new pair, named after the last), and the pair's leaves go into the
zone's rack (``racks.LockedPlacer``). Every new infrastructure rack of a locked plan holds
room for one leaf pair until a zone's pair takes it, whether or not it becomes a zone, so
hosts are racked the same way in every round and ``layout.solve_layout``, which repeats the
layout until no new zone appears, converges (in two or three rounds). GPU nodes are never
zoned: a new scalable unit gets its network rack as in a fresh plan.
"""

from __future__ import annotations

import dataclasses

from generator.plan.facility.floor import FLOOR_TO_U1_M, U_M, Floor
from generator.plan.facility.racks import RackLayout
from generator.plan.lock.model import Lock
from generator.plan.lock.racks import floor_positions
from generator.plan.network.ethernet import Endpoint, FrontendGraph
from generator.spec.site import Facility

FAR_M = 25.0
"""Longest routed front-end host cable, slack included, before a host gets its own leaves
(the longest 100G host cable catalogued, an AOC, is 30 m)."""
ZONE_GROUP = 100_000
"""Endpoint groups from here on are zones (below: 0 infrastructure, n scalable unit n)."""


@dataclasses.dataclass
class Zones:
    """Hosts put in a zone (host -> group) and each zone's rack (group -> rack)."""

    group: dict[str, int] = dataclasses.field(default_factory=dict)
    rack: dict[int, str] = dataclasses.field(default_factory=dict)

    def apply(self, endpoints: list[Endpoint]) -> list[Endpoint]:
        """``endpoints`` with the zoned hosts in their zone's group."""
        g = self.group
        return [dataclasses.replace(e, group=g[e.name]) if e.name in g else e for e in endpoints]

    def leaf_racks(self, fe: FrontendGraph) -> dict[str, str]:
        """Leaf -> the rack of its zone, for the leaves of zone pairs."""
        return {leaf: self.rack[g] for leaf, g in fe.leaf_group.items() if g in self.rack}

    def grow(self, far: dict[str, str]) -> bool:
        """Add hosts found far from their leaves (host -> rack); False if none is new."""
        fresh = {h: r for h, r in far.items() if h not in self.group}
        for host, rack in sorted(fresh.items()):
            number = int("".join(c for c in rack if c.isdigit()) or 0)
            self.group[host] = ZONE_GROUP + number
            self.rack[ZONE_GROUP + number] = rack
        return bool(fresh)


def far_hosts(
    lock: Lock,
    fe: FrontendGraph,
    racks: list[RackLayout],
    facility: Facility,
    hosts: set[str],
) -> dict[str, str]:
    """New ``hosts`` (the infrastructure hosts: GPU nodes join their scalable unit's
    network rack, as in a fresh plan) whose front-end cable would run longer than
    ``FAR_M`` (host -> its rack)."""
    where = {d.name: (r.name, d.u, d.height_u) for r in racks for d in r.devices}
    pitch = (facility.rack_width_m, facility.row_pitch_m)
    kinds = [(r.name, r.kind) for r in racks]
    positions = floor_positions(lock, kinds, facility.racks_per_row, pitch)
    floor = Floor(positions, facility, FLOOR_TO_U1_M + facility.rack_units * U_M)
    out = {}
    for host, _, leaf, _, _ in fe.host_links:
        if host not in hosts or host in lock.devices or host not in where or leaf not in where:
            continue
        a, b = where[host], where[leaf]
        if a[0] != b[0] and floor.length(floor.spot(*a), floor.spot(*b)) > FAR_M:
            out[host] = a[0]
    return out
