"""Front-end / storage / in-band Ethernet and the out-of-band network.

Front end (PowerSwitch, sized by port count from ``switches.yaml``):

* Leaves come in VLT pairs (S5448F-ON: 48 host ports + 8 x 400G uplinks). Every server is
  dual-homed, one port on each leaf of its pair (bonded); each rack's OOB switch has one
  uplink. Pairs are filled in plan order until a leaf's host ports run out.
* Two uplinks of each leaf form the VLT interconnect; the other six go to spines (Z9664F-ON,
  64 x 400G) once there is more than one pair: two tiers while the leaves' uplinks fit (the
  spine count divides the six uplinks), pods of 32 leaves with a core layer beyond. A leaf
  is 2:1 oversubscribed toward the spines (48 x 100G down, 6 x 400G up), which suits
  front-end and NFS traffic; the GPU traffic is on the InfiniBand fabric.

Out of band: one N3248TE-ON per rack (placed by ``racks``) with every iDRAC/BMC, switch
management port and PDU of the rack on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.plan.catalog_models import SwitchModel
from generator.plan.network.fabric import plane_links

LEAF_MODEL = "s5448f-on"
SPINE_MODEL = "z9664f-on"
OOB_MODEL = "n3248te-on"
VLT_LINKS = 2


@dataclass(frozen=True)
class Endpoint:
    """A device on the front-end network: 2 ports = dual-homed to a leaf pair.

    ``group``: hosts of one group share leaf pairs (0 = infrastructure hosts, n = the GPU
    nodes of scalable unit n), so each SU's leaf pair can stand in that SU's network rack.
    """

    name: str
    ports: int
    speed_gbps: int
    group: int = 0


def eth_port(port: int) -> str:
    """Dell OS10 interface name of 1-based front-panel port ``port``."""
    return f"1/1/{port}"


@dataclass
class FrontendGraph:
    tiers: int
    leaf_names: list[str] = field(default_factory=list)
    spine_names: list[str] = field(default_factory=list)
    core_names: list[str] = field(default_factory=list)
    # (host, host port index 0/1, leaf, leaf port, speed)
    host_links: list[tuple[str, int, str, int, int]] = field(default_factory=list)
    # (lower, lower port, upper, upper port)
    vlt_links: list[tuple[str, int, str, int]] = field(default_factory=list)
    up_links: list[tuple[str, int, str, int]] = field(default_factory=list)
    core_links: list[tuple[str, int, str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    leaf_group: dict[str, int] = field(default_factory=dict)


def _pack_pairs(endpoints: list[Endpoint], ports: int) -> list[list[tuple[Endpoint, int, int]]]:
    """Assign endpoints to leaf pairs; returns per pair (endpoint, side, port) entries."""
    pairs: list[list[tuple[Endpoint, int, int]]] = []
    used = [ports, ports]
    group = None
    for ep in endpoints:
        need_a = 1 if ep.ports == 2 else (1 if used[0] <= used[1] else 0)
        need_b = 1 if ep.ports == 2 else 1 - need_a
        new_group = ep.group != group
        group = ep.group
        if new_group or used[0] + need_a > ports or used[1] + need_b > ports:
            pairs.append([])
            used = [0, 0]
            need_a = 1
            need_b = 1 if ep.ports == 2 else 0
        for side, need in ((0, need_a), (1, need_b)):
            if need:
                used[side] += 1
                pairs[-1].append((ep, side, used[side]))
    return pairs


@dataclass(frozen=True)
class LockedFrontend:
    """A plan lock's front end: leaf names, and each host's (host port, leaf, leaf port)."""

    leaves: list[str]
    hosts: dict[str, list[tuple[int, str, int]]]
    spines: int = 0
    """Built two-tier spines: kept while they serve (a shrink never takes them away)."""
    su_of: dict[str, int] = field(default_factory=dict)
    """Leaf -> the scalable unit whose GPU nodes it served (its pair stays when they go)."""


def design_frontend(
    endpoints: list[Endpoint],
    leaf: SwitchModel,
    spine: SwitchModel,
    locked: LockedFrontend | None = None,
) -> FrontendGraph:
    """Leaves, spines and every front-end cable (``locked``: hosts keep their ports)."""
    if locked is None:
        pairs = _pack_pairs(endpoints, leaf.ports)
        w = max(2, len(str(2 * len(pairs))))
        names = [f"fe-leaf-{i + 1:0{w}d}" for i in range(2 * len(pairs))]
        g = FrontendGraph(tiers=1 if len(pairs) <= 1 else 2, leaf_names=names)
        for p, entries in enumerate(pairs):
            g.leaf_group[names[2 * p]] = g.leaf_group[names[2 * p + 1]] = entries[0][0].group
            for ep, side, port in entries:
                host_port = side if ep.ports == 2 else 0
                g.host_links.append((ep.name, host_port, names[2 * p + side], port, ep.speed_gbps))
    else:
        from generator.plan.lock.frontend import pack_locked

        g = pack_locked(endpoints, leaf.ports, locked)
    n = len(g.leaf_names) // 2
    for p in range(n):
        for k in range(VLT_LINKS):
            port = leaf.ports + k + 1
            g.vlt_links.append((g.leaf_names[2 * p], port, g.leaf_names[2 * p + 1], port))
    built = locked.spines if locked else 0
    if n > 1 or built:
        _spines(g, leaf, spine, built)
    return g


def _spines(g: FrontendGraph, leaf: SwitchModel, spine: SwitchModel, built: int = 0) -> None:
    """Spines for the leaves' uplinks: the fewest (at least the ``built`` ones of a plan
    lock) that divide each leaf's uplinks evenly and take them all."""
    up = leaf.uplink_ports - VLT_LINKS
    first_up = leaf.ports + VLT_LINKS + 1
    radix = spine.ports
    leaves = len(g.leaf_names)
    s = next((s for s in range(max(2, built), up + 1)
              if up % s == 0 and s * radix >= leaves * up), None)
    if s is not None:
        g.spine_names = [f"fe-spine-{j + 1:02d}" for j in range(s)]
        per = up // s
        for li, name in enumerate(g.leaf_names):
            for k in range(up):
                g.up_links.append((name, first_up + k, g.spine_names[k % s], li * per + k // s + 1))
        return
    g.tiers = 3
    half = radix // 2
    pods = math.ceil(leaves / half)
    cores = math.ceil(pods * half / radix)
    g.spine_names = [f"fe-spine-p{p + 1:02d}-{j + 1:02d}" for p in range(pods) for j in range(up)]
    g.core_names = [f"fe-core-{j + 1:02d}-{c + 1:02d}" for j in range(up) for c in range(cores)]
    for li, name in enumerate(g.leaf_names):
        p, lp = divmod(li, half)
        for k in range(up):
            g.up_links.append((name, first_up + k, g.spine_names[p * up + k], lp + 1))
    g.core_links = plane_links(g.spine_names, g.core_names, pods, up, cores, half)
