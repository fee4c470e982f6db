"""The compute fabric: a rail-optimized fat tree of 64-port NDR switches (QM9790).

Shape rules (``shape_fabric``), k = switch radix (64), SU = 32 nodes, R = rails = ConnectX-7
NICs per node, D = designed nodes (compute + spares + ``fabric.growth_nodes``):

* **Scalable units** (D > 32): ``ceil(D / 32)`` SUs, one leaf per rail per SU (32 node ports
  down, 32 up). The last SU is built in full, leaves and leaf-spine cables, even when it is
  only partly populated (DGX SuperPOD RA build rule). Two tiers while the leaves' uplinks fit
  on at most k/2 spines (``L x 32 <= 2,048`` endpoints): the spine count is the smallest
  divisor of the 32 leaf uplinks with ``spines x 64 >= leaves x 32``, so every leaf reaches
  every spine with the same number of cables. Beyond that, three tiers: pods of 32 leaves,
  32 spines per pod (one link from each leaf to each pod spine), and one core plane per spine
  position with ``ceil(pods x 32 / 64)`` cores, the spine uplinks spread round-robin.
  In two tiers the two ports of a leaf cage go to one spine cage (when the port counts
  allow), so a leaf and a spine in the same or the next rack can share one twin-port copper
  cable instead of two transceivers and fibres.
  For full SUs this reproduces the SuperPOD table (1, 2, 4, 8, 16, 32, 64 SU -> 8/4/0,
  16/8/0, 32/16/0, 64/32/0, 128/128/64, 256/256/128, 512/512/256).
* **Small clusters** (D <= 32, one partial SU): building a full SU (8 leaves + 4 spines for
  8 rails) would idle most of it, so podplan collapses rails onto fewer leaves while keeping
  every path non-blocking: G leaves (G the smallest power of two, at least 2, dividing R
  with at most 32 node ports per leaf) -- two leaves are joined back to back by as many
  inter-switch links as they have node ports (this is the Dell 8-node validated design's
  2x QM9790, for both of its NIC configurations), four or more leaves get spines.
  ``fabric.growth_nodes`` sizes the fabric for later nodes.
* **Smallest fabric rule**: no InfiniBand fabric for a single node (its GPUs talk over
  NVLink/NVSwitch; the build step gives it zero rails), and never fewer than two switches
  for two or more nodes, so a switch failure or firmware upgrade leaves every node on half
  its rails instead of cutting the cluster off (Dell's validated design, seed 004).

The subnet manager (UFM appliances or opensm on the head nodes; QM9790 has none on board)
attaches to free fabric ports: free leaf ports first, then free spine/core ports. When the
fabric is exactly full it takes one inter-switch link per two SM ports (the RA instead gives
up one node slot in SU1), which is stated in the design notes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from generator.errors import PodplanError, Problem

SU_NODES = 32


@dataclass(frozen=True)
class FabricShape:
    """Switch counts and wiring pattern of the compute fabric (no names yet)."""

    style: str  # none | single | pair | clos2 | clos3
    tiers: int
    rails: int
    radix: int
    designed_nodes: int
    scalable_units: int
    leaves: int
    rails_per_leaf: int
    leaf_up: int
    spines_per_pod: int = 0
    pods: int = 0
    pod_leaves: int = 0
    cores_per_plane: int = 0
    lock_note: str = ""
    """Why the shape is not the rules' own: kept or grown from the plan lock (``lock.fabric``)."""
    rail_leaf: tuple[int, ...] = ()
    """Collapsed leaves (``ib-leaf-NN``) of a plan lock: the leaf of each rail, when it is
    not ``rail // rails_per_leaf`` (a regrouped fabric keeps each leaf's first rails); in
    the SU layout, the leaves of SU 1 (grown from such a fabric, they keep their names)."""

    @property
    def su_layout(self) -> bool:
        """Built from full scalable units (one leaf per rail per SU); a locked fabric kept
        on a shrink may have more of them than its designed nodes need."""
        return self.designed_nodes > SU_NODES or self.scalable_units > 1

    @property
    def leaf_down(self) -> int:
        """Node ports per leaf (designed, incl. growth slots)."""
        return SU_NODES if self.su_layout else self.designed_nodes * self.rails_per_leaf

    @property
    def spines(self) -> int:
        return self.spines_per_pod * self.pods

    @property
    def cores(self) -> int:
        return self.cores_per_plane * self.spines_per_pod if self.style == "clos3" else 0

    @property
    def spine_up(self) -> int:
        return self.radix // 2 if self.style == "clos3" else 0


def _smallest_divisor(n: int, at_least: float, of_radix: int, need: int) -> int | None:
    """Smallest divisor s of n with s >= at_least and s * of_radix >= need."""
    for s in range(1, n + 1):
        if n % s == 0 and s >= at_least and s * of_radix >= need:
            return s
    return None


def _collapsed_spines(per_leaf: int, leaves: int, rails: int, radix: int) -> tuple[int, int]:
    """(uplinks per leaf, spines) of a collapsed partial SU: as many uplinks as node ports
    over the smallest divisor of them that takes them all, unless that needs more spines than
    the full SU it collapses (then the fewest spines that do, each leaf's uplinks rounded up
    to a multiple of them). The divisor alone gave 29 nodes x 8 rails 29 spines (29 is
    prime) where the full SU's 4 take them."""
    half = radix // 2
    full_su = _smallest_divisor(half, 1, radix, rails * half) or half
    s = _smallest_divisor(per_leaf, 1, radix, leaves * per_leaf)
    if s is not None and s <= full_su:
        return per_leaf, s
    s = max(1, math.ceil(leaves * per_leaf / radix))
    while True:
        up = -(-per_leaf // s) * s
        if per_leaf + up <= radix and s * radix >= leaves * up:
            return up, s
        s += 1


def _powers_of_two_dividing(n: int) -> list[int]:
    return [g for g in (1, 2, 4, 8, 16, 32, 64) if g <= n and n % g == 0]


def shape_fabric(designed_nodes: int, rails: int, radix: int, sm_ports: int) -> FabricShape:
    """Choose the fabric shape for ``designed_nodes`` nodes with ``rails`` NICs each."""
    half = radix // 2
    d, r = designed_nodes, rails
    if r == 0 or d == 0:
        return FabricShape("none", 0, r, radix, d, 0, 0, 0, 0)
    if d <= SU_NODES:
        g = next(g for g in _powers_of_two_dividing(r) if g >= 2 and d * r // g <= half)
        per_leaf = d * (r // g)
        if g == 2:
            return FabricShape("pair", 1, r, radix, d, 1, 2, r // g, per_leaf, 0, 1, 2)
        up, spines = _collapsed_spines(per_leaf, g, r, radix)
        return FabricShape("clos2", 2, r, radix, d, 1, g, r // g, up, spines, 1, g)
    sus = math.ceil(d / SU_NODES)
    leaves = sus * r
    s = _smallest_divisor(half, 1, radix, leaves * half)
    if s is not None and s <= half:
        return FabricShape("clos2", 2, r, radix, d, sus, leaves, 1, half, s, 1, leaves)
    pods = math.ceil(leaves / half)
    if pods > radix:
        raise PodplanError(
            "the compute fabric would exceed a three-tier fat tree",
            problems=[
                Problem(
                    path="hardware.gpus",
                    message=(
                        f"{d} nodes x {r} rails = {d * r} endpoints; three tiers of {radix}-port"
                        f" switches reach at most {radix**3 // 4}"
                    ),
                )
            ],
        )
    cores = math.ceil(pods * half / radix)
    return FabricShape("clos3", 3, r, radix, d, sus, leaves, 1, half, half, pods, half, cores)


def switch_port(port: int, ports_per_cage: int) -> str:
    """Front-panel name of 1-based port ``port``: ``<cage>/<port in cage>``."""
    cage, sub = divmod(port - 1, ports_per_cage)
    return f"{cage + 1}/{sub + 1}"


def cage_of(port_name: str) -> str:
    return port_name.split("/", 1)[0]


@dataclass
class FabricGraph:
    """Named switches and wiring of the compute fabric."""

    shape: FabricShape
    leaf_names: list[str]
    leaf_rails: list[int | None]
    leaf_su: list[int]
    spine_names: list[str]
    core_names: list[str]
    node_su: dict[str, int]
    # (node, rail, leaf index, leaf port) for every real node NIC
    node_links: list[tuple[str, int, int, int]]
    # (lower switch, lower port, upper switch, upper port)
    up_links: list[tuple[str, int, str, int]]
    isl_links: list[tuple[str, int, str, int]]
    core_links: list[tuple[str, int, str, int]]
    # (sm device, switch, port)
    sm_links: list[tuple[str, str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stolen: int = 0

    @property
    def switch_names(self) -> list[str]:
        return [*self.leaf_names, *self.spine_names, *self.core_names]


def _w(n: int) -> int:
    return max(2, len(str(n)))


def _leaf_slot(shape: FabricShape, slot: int, rail: int) -> tuple[int, int]:
    """(leaf index, 1-based leaf port) of node slot ``slot``'s NIC on ``rail``."""
    if shape.su_layout:
        su, pos = divmod(slot, SU_NODES)
        li = shape.rail_leaf[rail] if shape.rail_leaf and su == 0 else su * shape.rails + rail
        return li, pos + 1
    q = shape.rails_per_leaf
    if shape.rail_leaf:
        li = shape.rail_leaf[rail]
        pos = sum(1 for x in shape.rail_leaf[:rail] if x == li)
        return li, pos * shape.designed_nodes + slot + 1
    return rail // q, (rail % q) * shape.designed_nodes + slot + 1


def _leaf_names(shape: FabricShape) -> tuple[list[str], list[int | None], list[int]]:
    if not shape.su_layout and (shape.rails_per_leaf > 1 or shape.rail_leaf):
        collapsed = [f"ib-leaf-{i + 1:02d}" for i in range(shape.leaves)]
        one: list[int | None] = [None] * shape.leaves
        if shape.rails_per_leaf == 1:  # one rail per leaf: say which
            for rail, li in enumerate(shape.rail_leaf):
                one[li] = rail
        return collapsed, one, [1] * shape.leaves
    w = _w(shape.scalable_units)
    names: list[str] = []
    rails: list[int | None] = []
    sus: list[int] = []
    first = 0
    if shape.rail_leaf:  # SU 1 grown from a collapsed fabric: its leaves keep their names
        names = [f"ib-leaf-{i + 1:02d}" for i in range(shape.rails)]
        rails = [shape.rail_leaf.index(i) for i in range(shape.rails)]
        sus, first = [1] * shape.rails, 1
    for su in range(first, shape.scalable_units):
        for r in range(shape.rails):
            names.append(f"ib-leaf-su{su + 1:0{w}d}-r{r}")
            rails.append(r)
            sus.append(su + 1)
    return names, rails, sus


def build_fabric(
    shape: FabricShape, fabric_nodes: Sequence[str | None], sm_devices: list[str]
) -> FabricGraph:
    """Name the switches and wire every NIC, uplink and subnet-manager port.

    ``fabric_nodes`` are the GPU nodes in slot order; ``None`` is a slot left free by a
    removed node (a locked plan), whose ports stay reserved like growth slots."""
    leaf_names, leaf_rails, leaf_su = _leaf_names(shape)
    r = shape.rails
    node_su = {name: i // SU_NODES + 1 for i, name in enumerate(fabric_nodes) if name}
    node_links = [
        (name, rail, *_leaf_slot(shape, i, rail))
        for i, name in enumerate(fabric_nodes)
        if name
        for rail in range(r)
    ]

    spine_names: list[str] = []
    core_names: list[str] = []
    up_links: list[tuple[str, int, str, int]] = []
    isl_links: list[tuple[str, int, str, int]] = []
    core_links: list[tuple[str, int, str, int]] = []
    down = shape.leaf_down
    if shape.style == "pair":
        a, b = leaf_names
        isl_links = [(a, down + k + 1, b, down + k + 1) for k in range(shape.leaf_up)]
    elif shape.style == "clos2":
        s = shape.spines_per_pod
        spine_names = [f"ib-spine-{j + 1:02d}" for j in range(s)]
        per = shape.leaf_up // s
        paired = down % 2 == 0 and per % 2 == 0  # both ports of a leaf cage to one spine cage
        for li, leaf in enumerate(leaf_names):
            for k in range(shape.leaf_up):
                if paired:
                    j, half = divmod(k, 2)
                    spine, port = j % s, li * per + 2 * (j // s) + half + 1
                else:
                    spine, port = k % s, li * per + k // s + 1
                up_links.append((leaf, down + k + 1, spine_names[spine], port))
    elif shape.style == "clos3":
        half = shape.radix // 2
        wp = _w(shape.pods)
        spine_names = [
            f"ib-spine-p{p + 1:0{wp}d}-{j + 1:02d}"
            for p in range(shape.pods)
            for j in range(shape.spines_per_pod)
        ]
        c = shape.cores_per_plane
        core_names = [
            f"ib-core-{j + 1:02d}-{k + 1:02d}"
            for j in range(shape.spines_per_pod)
            for k in range(c)
        ]
        for li, leaf in enumerate(leaf_names):
            p, lp = divmod(li, half)
            base = p * shape.spines_per_pod
            for k in range(shape.leaf_up):
                up_links.append((leaf, down + k + 1, spine_names[base + k], lp + 1))
        core_links = plane_links(spine_names, core_names, shape.pods, shape.spines_per_pod, c, half)
    graph = FabricGraph(
        shape,
        leaf_names,
        leaf_rails,
        leaf_su,
        spine_names,
        core_names,
        node_su,
        node_links,
        up_links,
        isl_links,
        core_links,
    )
    if sm_devices:
        _attach_subnet_manager(graph, fabric_nodes, sm_devices)
    return graph


def plane_links(
    spines: list[str], cores: list[str], pods: int, per_pod: int, per_plane: int, up: int
) -> list[tuple[str, int, str, int]]:
    """Spine-to-core cables: spine j of every pod feeds core plane j.

    Each spine's ``up`` uplinks (ports up+1..2*up) go round-robin over the plane's cores,
    continuing the rotation from spine to spine, so every core gets an equal share (within
    one cable) even when the core count does not divide the uplinks; with full pods
    (4, 8, 16 per plane) this is one, two or four cables from each spine to each core.
    """
    out = []
    for j in range(per_pod):
        plane = cores[j * per_plane : (j + 1) * per_plane]
        next_port = [1] * per_plane
        g = 0
        for p in range(pods):
            spine = spines[p * per_pod + j]
            for m in range(up):
                c = g % per_plane
                out.append((spine, up + m + 1, plane[c], next_port[c]))
                next_port[c] += 1
                g += 1
    return out


def reserved_ports(graph: FabricGraph, nodes: Sequence[str | None]) -> list[tuple[str, int]]:
    """(leaf, port) of every node slot without a node (growth slots, slots of removed
    nodes): they stay free for the nodes to come."""
    shape, leaves = graph.shape, graph.leaf_names
    free = [i for i in range(shape.designed_nodes) if i >= len(nodes) or nodes[i] is None]
    out = []
    for slot in free:
        for rail in range(shape.rails):
            li, port = _leaf_slot(shape, slot, rail)
            out.append((leaves[li], port))
    return out


def _used_ports(graph: FabricGraph, nodes: Sequence[str | None]) -> dict[str, set[int]]:
    used: dict[str, set[int]] = {n: set() for n in graph.switch_names}
    leaves = graph.leaf_names
    for _, _, li, port in graph.node_links:
        used[leaves[li]].add(port)
    for leaf, port in reserved_ports(graph, nodes):
        used[leaf].add(port)
    for a, ap, b, bp in (*graph.up_links, *graph.isl_links, *graph.core_links):
        used[a].add(ap)
        used[b].add(bp)
    return used


def _attach_subnet_manager(
    graph: FabricGraph, nodes: Sequence[str | None], sm_devices: list[str]
) -> None:
    radix = graph.shape.radix
    used = _used_ports(graph, nodes)
    order = [*reversed(graph.leaf_names), *graph.spine_names, *graph.core_names]
    pending = list(sm_devices)
    taken: set[str] = set()
    while pending:
        spot = _free_port(order, used, radix, taken)
        if spot is None:
            spot = _free_port(order, used, radix, set())
        if spot is None:
            _steal_link(graph, used)
            continue
        sw, port = spot
        used[sw].add(port)
        taken.add(sw)
        graph.sm_links.append((pending.pop(0), sw, port))
    if graph.stolen:
        graph.notes.append(
            f"Every fabric port is taken by nodes and inter-switch links, so {graph.stolen} "
            "inter-switch link(s) give way to the subnet-manager ports: the two switches of "
            "such a link have one uplink fewer than node ports (32:31), which costs little "
            "bandwidth. The DGX SuperPOD RA does the opposite and gives up a node slot in SU1 "
            "(31 nodes) for the UFM connection."
        )


def _free_port(
    order: list[str], used: dict[str, set[int]], radix: int, avoid: set[str]
) -> tuple[str, int] | None:
    for sw in order:
        if sw in avoid or len(used[sw]) >= radix:
            continue
        for port in range(radix, 0, -1):
            if port not in used[sw]:
                return sw, port
    return None


def _steal_link(graph: FabricGraph, used: dict[str, set[int]]) -> None:
    """Give the last inter-switch link of the top-most layer to the subnet manager."""
    for links in (graph.core_links, graph.up_links, graph.isl_links):
        if links:
            a, ap, b, bp = links.pop()
            used[a].discard(ap)
            used[b].discard(bp)
            graph.stolen += 1
            return
    raise AssertionError("a full fabric without inter-switch links")
