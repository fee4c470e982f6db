"""Every link of the plan as a ``RawLink``: its two ends, their cage types and its speed.

Ports are named as the hardware names them: a node's fabric HCA ``mlx5_<rail>``, a QM9790
port ``<cage>/<port>`` (32 twin-port OSFP cages), a Dell OS10 port ``1/1/<n>``, the
front-end bond members ``fe0``/``fe1``, the back-end ports ``be0``/``be1``, the BMC
``idrac``, a switch's management port ``mgmt`` and a PDU's ``net``. ``media`` then picks the
cable or optics for each link from the cages and the routed length (``devices``).

Links that must share hardware carry a group key: the ports of one twin-port OSFP switch
cage (``("cage", switch, cage)``) take one splitter or one twin-port transceiver; the two
links between the same two twin-port cages (back-to-back leaves) may share one twin DAC.

Counting (``part_counts``): a cable per link, except splitters (one per switch cage) and
twin DACs (one per cage pair); a transceiver per link end, except twin-port modules (one per
used cage: a half-used cage still needs a whole module).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import cache

from generator.plan.models import Link
from generator.plan.network.ethernet import FrontendGraph, eth_port
from generator.plan.network.fabric import FabricGraph, cage_of, switch_port
from generator.plan.network.media import RawLink
from generator.plan.network.side_networks import SideNet

HOST_FE_PORTS = ("fe0", "fe1")
BMC_PORT = "idrac"
SWITCH_MGMT_PORT = "mgmt"
PDU_PORT = "net"
SITE = "site-network"

# cage type of a port: (device, 1-based port or None) -> cage
CageOf = Callable[[str, int], str]


def _twin_group(sw: str, port_name: str, far_cage: str) -> tuple[str, ...]:
    """The twin-port cage a link shares with its neighbour port (same far-end cage type)."""
    return ("cage", sw, port_name.split("/", 1)[0], far_cage)


def fabric_raw(
    g: FabricGraph, node_cage: Callable[[str], str], ports_per_cage: int,
    speed: int = 400, cage: str = "OSFP",
) -> list[RawLink]:
    """Node NICs, subnet-manager ports and inter-switch links of the compute fabric, at the
    switch's port ``speed`` (400 NDR, 200 HDR) and in its cage type."""
    leaves = g.leaf_names
    names = ["", *(switch_port(p, ports_per_cage) for p in range(1, g.shape.radix + 1))]
    out = []
    for node, rail, li, port in g.node_links:
        sw, pn = leaves[li], names[port]
        nc = node_cage(node)
        out.append(
            RawLink(
                "compute",
                node,
                f"mlx5_{rail}",
                nc,
                sw,
                pn,
                cage,
                speed,
                0.0,
                _twin_group(sw, pn, nc),
            )
        )
    for dev, sw, port in g.sm_links:
        pn = names[port]
        nc = node_cage(dev)
        out.append(
            RawLink("compute", dev, "ib0", nc, sw, pn, cage, speed, 0.0, _twin_group(sw, pn, nc))
        )
    for a, ap, b, bp in g.isl_links:  # back to back: port p to port p, cage pairs line up
        pa, pb = names[ap], names[bp]
        grp = ("pair", a, pa.split("/")[0], b, pb.split("/")[0])
        out.append(RawLink("compute", a, pa, cage, b, pb, cage, speed, 0.0, grp))
    uplinks = [
        RawLink("compute", a, names[ap], cage, b, names[bp], cage, speed, 0.0)
        for a, ap, b, bp in [*g.up_links, *g.core_links]
    ]
    group_uplinks(uplinks)
    return out + uplinks


def group_uplinks(uplinks: list[RawLink]) -> None:
    """Group keys of inter-tier fabric links: both ports of a lower cage to one upper cage
    may share a twin copper cable, else each lower cage holds a twin-port module."""
    far: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for lk in uplinks:
        far.setdefault((lk.a, cage_of(lk.a_port)), set()).add((lk.b, cage_of(lk.b_port)))
    for lk in uplinks:
        ca, cb = cage_of(lk.a_port), cage_of(lk.b_port)
        pair = far[(lk.a, ca)] == {(lk.b, cb)}
        lk.group = ("pair", lk.a, ca, lk.b, cb) if pair else _twin_group(lk.a, lk.a_port, "OSFP")


def regroup_fabric(links: list[RawLink], switches: set[str], isl: set[tuple[str, str]]) -> None:
    """Recompute the group keys of the compute-fabric links after their ports changed
    (a locked plan): node and subnet-manager ports by switch cage, back-to-back links by
    cage pair, inter-tier links as ``group_uplinks``."""
    uplinks = []
    for lk in links:
        if lk.network != "compute":
            continue
        if lk.a not in switches:
            lk.group = _twin_group(lk.b, lk.b_port, lk.a_cage)
        elif (lk.a, lk.b) in isl:
            lk.group = ("pair", lk.a, cage_of(lk.a_port), lk.b, cage_of(lk.b_port))
        else:
            uplinks.append(lk)
    group_uplinks(uplinks)


def frontend_raw(
    g: FrontendGraph,
    host_cage: Callable[[str], str],
    switch_cage: CageOf,
    field_of: Callable[[str], str] = lambda _: "",
) -> list[RawLink]:
    """Host bond members, VLT interconnects and spine/core uplinks of the front end.

    ``field_of(host)``: the spec field that chose the host's NIC (for errors)."""
    out = []
    for host, idx, leaf, port, speed in g.host_links:
        out.append(
            RawLink(
                "frontend",
                host,
                HOST_FE_PORTS[idx],
                host_cage(host),
                leaf,
                eth_port(port),
                switch_cage(leaf, port),
                speed,
                0.0,
                field=field_of(host),
            )
        )
    for links in (g.vlt_links, g.up_links, g.core_links):
        for a, ap, b, bp in links:
            out.append(
                RawLink(
                    "frontend",
                    a,
                    eth_port(ap),
                    switch_cage(a, ap),
                    b,
                    eth_port(bp),
                    switch_cage(b, bp),
                    400,
                    0.0,
                )
            )
    return out


def side_raw(
    net: SideNet, network: str, host_cage: Callable[[str], str], switch_cage: CageOf, speed: int
) -> list[RawLink]:
    """Host-to-switch and switch-to-switch links of a side network (storage back end, OOB)."""
    out = [
        RawLink(network, host, hp, host_cage(host), sw, eth_port(p), switch_cage(sw, p), speed, 0.0)
        for host, hp, sw, p in net.links
    ]
    for a, ap, b, bp in net.isl:
        sa, sb = switch_cage(a, ap), switch_cage(b, bp)
        link_speed = 10 if network == "oob" else speed
        out.append(RawLink(network, a, eth_port(ap), sa, b, eth_port(bp), sb, link_speed, 0.0))
    return out


def oob_raw(rack_members: Iterable[tuple[str, list[tuple[str, str]]]]) -> list[RawLink]:
    """Each rack's devices (name, port) to its OOB switch, ports in rack order."""
    return [
        RawLink("oob", dev, port, "RJ45", oob, eth_port(i), "RJ45", 1, 0.0)
        for oob, members in rack_members
        for i, (dev, port) in enumerate(members, start=1)
    ]


def site_raw(
    uplinks: list[tuple[str, int]],
    switch_cage: CageOf,
    speed_of: Callable[[str, int], int],
    network: str,
) -> list[RawLink]:
    """Uplinks to the site network; the site's patch point takes the same plug."""
    out = []
    for i, (sw, port) in enumerate(uplinks, start=1):
        cage = switch_cage(sw, port)
        speed = speed_of(sw, port)
        out.append(
            RawLink(network, sw, eth_port(port), cage, SITE, f"{network}-{i}", cage, speed, 0.0)
        )
    return out


def cage_key(device: str, port: str, twin_ports: int) -> str:
    """The physical cage a port sits in: ``<cage>/<n>`` names share cage ``<cage>``; a
    node HCA ``mlx5_<r>`` shares one with its neighbour when ``twin_ports`` is 2 (DGX)."""
    return _cage_of_port(port, twin_ports)


@cache
def _cage_of_port(port: str, twin_ports: int) -> str:
    if "/" in port and not port.startswith("1/1/"):
        return port.split("/", 1)[0]
    if twin_ports == 2 and port.startswith("mlx5_"):
        return f"osfp{int(port[5:]) // 2}"
    return port


def part_counts(
    links: Iterable[Link], twin_optics: set[str], per_cable: Mapping[str, object]
) -> tuple[dict[str, int], dict[tuple[str, str, float], int]]:
    """(transceivers by optic id, cables by (medium, part number, length))."""
    optics: Counter[str] = Counter()
    cables: Counter[tuple[str, str, float]] = Counter()
    cages: set[tuple[str, str, str]] = set()
    shared: set[tuple[object, ...]] = set()
    for lk in links:
        media = lk.media
        mode = per_cable.get(media, 1)
        if mode == 1:
            cables[(media, lk.part_number, lk.length_m)] += 1
        else:
            sw, port = (lk.b, lk.b_port) if mode == "cage" else (lk.a, lk.a_port)
            tag = (media, sw, _cage_of_port(port, 2))
            if tag not in shared:
                shared.add(tag)
                cables[(media, lk.part_number, lk.length_m)] += 1
        a_part, b_part = lk.a_part, lk.b_part
        if a_part is not None:
            if a_part in twin_optics:
                cages.add((a_part, lk.a, _cage_of_port(lk.a_port, 2)))
            else:
                optics[a_part] += 1
        if b_part is not None:
            if b_part in twin_optics:
                cages.add((b_part, lk.b, _cage_of_port(lk.b_port, 2)))
            else:
                optics[b_part] += 1
    for part, _, _ in cages:
        optics[part] += 1
    return dict(optics), dict(cables)
