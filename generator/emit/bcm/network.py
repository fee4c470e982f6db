"""BCM networks and switches (``bcm110.network`` / ``bcm110.switch``) from the plan.

Networks and switches are the cluster's fabric description: BCM needs both before any node
interface can name a network or a ``switchPorts`` entry can name a switch, so they are kept
together and apart from the node definitions that refer to them.
"""

from __future__ import annotations

from typing import Any

from generator.emit.bcm.common import (
    FRONTEND_NETWORK,
    MGMT_NETWORK,
    OOB_NETWORK,
    SWITCH_MGMT_INTERFACE,
    _ip,
    _net,
    ib_network,
    rack_position,
    switch_port,
)
from generator.plan.models import ClusterPlan, Switch

_TIER = {"leaf": 0, "spine": 1, "core": 2}


def networks(plan: ClusterPlan) -> list[dict[str, Any]]:
    """BCM networks (``bcm110.network``): internal, OOB/IPMI, front-end, one per IB rail.

    One IPoIB network per rail, not one ``ibnet``: the plan gives each rail its own subnet,
    and eight HCAs of one host in one subnet would need policy routing against ARP flux,
    while per-rail subnets keep every rail's traffic on its own HCA and leaf.
    """
    out: list[dict[str, Any]] = []

    def add(name: str, cidr: str, domain: str, notes: str, gateway: str | None = None) -> None:
        base, bits = _net(cidr)
        item: dict[str, Any] = {
            "name": name,
            "type": "INTERNAL",
            "baseAddress": base,
            "netmaskBits": bits,
            "domainName": domain,
            "notes": notes,
        }
        if gateway:
            item["gateway"] = gateway
        out.append(item)

    n = plan.network
    add(MGMT_NETWORK, n.mgmt_cidr, "cm.cluster", "In-band management and provisioning (PXE).",
        _ip(n.mgmt_gateway))
    add(OOB_NETWORK, n.oob_cidr, "ipmi.cluster", "Out-of-band: iDRAC/BMC and switch management.")
    add(FRONTEND_NETWORK, n.frontend_cidr, "fe.cluster", "Front-end and storage Ethernet.")
    for rail, cidr in enumerate(n.rail_cidrs):
        add(ib_network(rail), cidr, f"ib{rail}.cluster",
            f"IPoIB, GPU-fabric rail {rail} (one subnet per rail, as in the plan).")
    return out


def _switch_kind(sw: Switch) -> str:
    """BCM switch ``kind``: InfiniBand for the compute fabric, else Ethernet."""
    # The plan's compute fabric is InfiniBand (subnet manager, IPoIB rails); the front-end
    # and OOB networks are Ethernet.
    return "INFINIBAND" if sw.network == "compute" else "ETHERNET"


def _uplinks(plan: ClusterPlan) -> dict[str, list[dict[str, Any]]]:
    """Switch -> its uplinks (port on the higher-tier switch), from switch-to-switch links."""
    by_name = {s.name: s for s in plan.switches}
    up: dict[str, list[dict[str, Any]]] = {s.name: [] for s in plan.switches}
    for link in plan.links:
        a, b = by_name.get(link.a), by_name.get(link.b)
        if a is None or b is None or _TIER[a.tier] == _TIER[b.tier]:
            continue
        low, high, high_port = (a, b, link.b_port) if _TIER[a.tier] < _TIER[b.tier] else (
            b, a, link.a_port)
        port = switch_port(high_port)
        if port is not None:
            up[low.name].append({"networkSwitch": high.name, **port})
    return up


def bcm_switches(plan: ClusterPlan) -> list[dict[str, Any]]:
    """Every switch of the plan (``bcm110.switch``); uplinks become ``switchPorts``."""
    up = _uplinks(plan)
    out: list[dict[str, Any]] = []
    for sw in plan.switches:
        notes = [f"{sw.network} {sw.tier}", sw.model]
        notes += [f"rail {sw.rail}"] if sw.rail is not None else []
        notes += [f"SU {sw.su}"] if sw.su is not None else []
        item: dict[str, Any] = {
            "hostname": sw.name,
            "kind": _switch_kind(sw),
            "ports": sw.ports,
            "notes": ", ".join(notes),
            "rackPosition": rack_position(plan, sw.rack, sw.u, sw.height_u),
            "interfaces_NetworkPhysicalInterface": [],
            "switchPorts": sorted(up[sw.name], key=lambda p: (p["networkSwitch"], p["port"])),
        }
        if sw.mgmt_address:
            item["managementNetwork"] = OOB_NETWORK
            item["interfaces_NetworkPhysicalInterface"] = [
                {"name": SWITCH_MGMT_INTERFACE, "ip": _ip(sw.mgmt_address),
                 "network": OOB_NETWORK}]
        out.append(item)
    return out
