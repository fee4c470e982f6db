"""Every cable of the plan, with the part at each end (catalog ids).

Compute fabric, per the catalog's counting rule (``optics.yaml: counting_rules``):

* node to leaf: a single-port 400G flat-top OSFP in the node's ConnectX-7
  (MMA4Z00-NS400), one multimode MPO fiber (MFP7E10), and one port of a twin-port 800G
  finned OSFP in the switch cage (MMA4Z00-NS): the two ports of a cage share one module;
* switch to switch: one port of a twin-port module at each end and one fiber.

So for N node links on a two-tier non-blocking fabric: N node optics, 2N fibers and 1.5N
switch modules. Switch modules are counted per used cage (a half-used cage still needs a
whole module). Runs over 50 m (likely spine-core at three tiers) need the single-mode DR4
parts (MMS4X00-NS + MFP7E30) instead; the plan assumes multimode throughout.

Ethernet: active optical cables (100G / 25G) for hosts and OOB uplinks, 400G QSFP56-DD SR4
optics on MPO fiber between Ethernet switches, Cat6 for the 1G out-of-band network.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.plan._construct import builder
from generator.plan.catalog_models import CountingRules
from generator.plan.models import Link
from generator.plan.network.ethernet import FrontendGraph, eth_port
from generator.plan.network.fabric import FabricGraph, switch_port

AOC_BY_SPEED = {100: "aoc-100g-qsfp28", 25: "aoc-25g-sfp28"}
ETH_400G_OPTIC = "qsfp56-dd-400g-sr4"
ETH_400G_FIBER = "mfp7e10"
OOB_CABLE = "cat6-patch"
HOST_FE_PORTS = ("fe0", "fe1")
BMC_PORT = "idrac"
SWITCH_MGMT_PORT = "mgmt"
PDU_PORT = "net"
OOB_UPLINK_PORT = 53  # first 100G QSFP28 port of the N3248TE-ON


# Internally built from validated inputs: skip per-object validation (hot loop).
_link = builder(Link)


def fabric_links(g: FabricGraph, rules: CountingRules, ports_per_cage: int) -> list[Link]:
    """Node NICs, subnet-manager ports and inter-switch links of the compute fabric."""
    leaves = g.leaf_names
    node_part, sw_part, fiber = rules.node_optic, rules.switch_optic, rules.fiber
    names = ["", *(switch_port(p, ports_per_cage) for p in range(1, g.shape.radix + 1))]
    out = [
        _link(
            network="compute",
            a=node,
            a_port=f"mlx5_{rail}",
            b=leaves[li],
            b_port=names[port],
            speed_gbps=400,
            a_part=node_part,
            b_part=sw_part,
            cable=fiber,
        )
        for node, rail, li, port in g.node_links
    ]
    out += [
        _link(
            network="compute",
            a=dev,
            a_port="ib0",
            b=sw,
            b_port=names[port],
            speed_gbps=400,
            a_part=node_part,
            b_part=sw_part,
            cable=fiber,
        )
        for dev, sw, port in g.sm_links
    ]
    for links in (g.isl_links, g.up_links, g.core_links):
        out += [
            _link(
                network="compute",
                a=a,
                a_port=names[ap],
                b=b,
                b_port=names[bp],
                speed_gbps=400,
                a_part=sw_part,
                b_part=sw_part,
                cable=fiber,
            )
            for a, ap, b, bp in links
        ]
    return out


def frontend_links(g: FrontendGraph, oob_names: set[str]) -> list[Link]:
    """Host and OOB-uplink cables, VLT interconnects and spine/core uplinks."""
    out = []
    for host, idx, leaf, port, speed in g.host_links:
        host_port = eth_port(OOB_UPLINK_PORT) if host in oob_names else HOST_FE_PORTS[idx]
        out.append(
            _link(
                network="frontend",
                a=host,
                a_port=host_port,
                b=leaf,
                b_port=eth_port(port),
                speed_gbps=speed,
                a_part=None,
                b_part=None,
                cable=AOC_BY_SPEED[speed],
            )
        )
    for links in (g.vlt_links, g.up_links, g.core_links):
        out += [
            _link(
                network="frontend",
                a=a,
                a_port=eth_port(ap),
                b=b,
                b_port=eth_port(bp),
                speed_gbps=400,
                a_part=ETH_400G_OPTIC,
                b_part=ETH_400G_OPTIC,
                cable=ETH_400G_FIBER,
            )
            for a, ap, b, bp in links
        ]
    return out


def oob_links(rack_members: Iterable[tuple[str, list[tuple[str, str]]]]) -> list[Link]:
    """Each rack's devices (name, port) to its OOB switch, ports in rack order."""
    out = []
    for oob, members in rack_members:
        for i, (dev, port) in enumerate(members, start=1):
            out.append(
                _link(
                    network="oob",
                    a=dev,
                    a_port=port,
                    b=oob,
                    b_port=eth_port(i),
                    speed_gbps=1,
                    a_part=None,
                    b_part=None,
                    cable=OOB_CABLE,
                )
            )
    return out


def part_counts(links: Iterable[Link], shared_parts: set[str]) -> dict[str, int]:
    """Units of every optic and cable: shared (twin-port) parts count once per used cage."""
    counts: dict[str, int] = {}
    cages: set[tuple[str, str, str]] = set()
    for link in links:
        counts[link.cable] = counts.get(link.cable, 0) + 1
        for dev, port, part in (
            (link.a, link.a_port, link.a_part),
            (link.b, link.b_port, link.b_part),
        ):
            if part is None:
                continue
            if part in shared_parts:
                cages.add((part, dev, port.split("/", 1)[0]))
            else:
                counts[part] = counts.get(part, 0) + 1
    for part, _, _ in cages:
        counts[part] = counts.get(part, 0) + 1
    return counts
