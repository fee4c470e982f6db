"""The compute fabric's graph: switch names and every cable, from its shape.

``fabric_shape`` decides the counts (leaves, spines, cores, uplinks per leaf: the shape
rules, DGX SuperPOD RA and the collapsed small-cluster fabric); this module names the
switches (``ib-leaf-suNN-rR``, ``ib-leaf-NN``, ``ib-spine-NN``, ``ib-core-NN-NN``) and wires
every node NIC, leaf uplink, back-to-back link and spine-core link.

The subnet manager (UFM appliances or opensm on the head nodes; QM9790 has none on board)
attaches to free fabric ports: free leaf ports first, then free spine/core ports. When the
fabric is exactly full it takes one inter-switch link per two SM ports (the RA instead gives
up one node slot in SU1), which is stated in the design notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from generator.plan.network.fabric_shape import SU_NODES, FabricShape, shape_fabric

DEFAULT_SWITCH = "qm9790"

__all__ = [
    "DEFAULT_SWITCH",
    "SU_NODES",
    "FabricGraph",
    "FabricShape",
    "build_fabric",
    "cage_of",
    "plane_links",
    "reserved_ports",
    "shape_fabric",
    "switch_port",
]


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
    switch_model: str = DEFAULT_SWITCH
    """Catalog id of the fabric's switches (``fabric_parts``)."""

    @property
    def switch_names(self) -> list[str]:
        return [*self.leaf_names, *self.spine_names, *self.core_names]


def _w(n: int) -> int:
    return max(2, len(str(n)))


def _leaf_slot(shape: FabricShape, slot: int, rail: int) -> tuple[int, int]:
    """(leaf index, 1-based leaf port) of node slot ``slot``'s NIC on ``rail``."""
    if shape.su_layout:
        su, pos = divmod(slot, shape.su_nodes)
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
    node_su = {name: i // shape.su_nodes + 1 for i, name in enumerate(fabric_nodes) if name}
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
        half = radix // 2
        graph.notes.append(
            f"Every fabric port is taken by nodes and inter-switch links, so {graph.stolen} "
            "inter-switch link(s) give way to the subnet-manager ports: the two switches of "
            f"such a link have one uplink fewer than node ports ({half}:{half - 1}), which "
            "costs little bandwidth. The DGX SuperPOD RA does the opposite and gives up a "
            f"node slot in SU1 ({half - 1} nodes) for the UFM connection."
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
