"""What BCM provisions: racks, the GPU image, categories and one physical node per host.

Kept apart from the networks and the WLM because these entities are the per-host part of the
model (the bulk of the output, and the part with site placeholders such as MAC addresses);
they only refer to networks and switches by name.
"""

from __future__ import annotations

from typing import Any

from generator.emit.bcm.common import (
    BASE_CATEGORY,
    BASE_IMAGE,
    BCM_NODE_ROLES,
    BMC_INTERFACE,
    BOOT_INTERFACE,
    FRONTEND_IFACE_VAR,
    FRONTEND_NETWORK,
    GPU_IMAGE,
    LOGIN_CATEGORY,
    MGMT_NETWORK,
    OOB_NETWORK,
    PLACEHOLDER_MAC,
    _ip,
    ib_interface,
    ib_network,
    rack_position,
    switch_port,
)
from generator.plan.models import ClusterPlan, Node


def category_of(plan: ClusterPlan) -> dict[str, str]:
    """BCM category of every node BCM provisions: its node set's, or ``login``.

    Compute or spare nodes outside every node set (a plan may keep spares out of Slurm)
    share the first node set's category: same hardware, same image.
    """
    cat: dict[str, str] = {}
    for ns in plan.scheduler.nodesets:
        for host in ns.hosts:
            cat.setdefault(host, ns.name)
    first = plan.scheduler.nodesets[0].name if plan.scheduler.nodesets else BASE_CATEGORY
    for node in plan.nodes_with_role("compute", "spare"):
        cat.setdefault(node.name, first)
    for node in plan.nodes_with_role("login"):
        cat[node.name] = LOGIN_CATEGORY
    return cat


def racks(plan: ClusterPlan) -> list[dict[str, Any]]:
    """BCM racks (``bcm110.rack``), so devices can be placed in them."""
    return [{"name": r.name, "height": r.units,
             "notes": f"{r.power_budget_kw:g} kW budget, {r.power_kw:g} kW planned"}
            for r in plan.racks]


def software_images() -> list[dict[str, Any]]:
    """The GPU software image (``bcm110.software_image``), cloned from ``default-image``."""
    return [{
        "name": GPU_IMAGE,
        "cloneFrom": BASE_IMAGE,
        "path": f"/cm/images/{GPU_IMAGE}",
        "notes": "GPU node image cloned from default-image: add the NVIDIA driver, DCGM, "
        "fabric manager and enroot as for any BCM GPU image.",
    }]


def categories(plan: ClusterPlan) -> list[dict[str, Any]]:
    """Categories (``bcm110.category``): one per scheduler node set, one for login nodes."""
    st = plan.storage
    shared = {
        "device": f"{st.nfs_server}:{st.nfs_export}",
        "mountpoint": st.mount_point,
        "filesystem": "nfs",
        "mountoptions": "defaults",
    }

    def category(name: str, image: str, notes: str) -> dict[str, Any]:
        return {
            "name": name,
            "cloneFrom": BASE_CATEGORY,
            "softwareImageProxy": {"parentSoftwareImage": image},
            "managementNetwork": MGMT_NETWORK,
            "fsmounts": [shared],
            "notes": notes,
        }

    out = [category(ns.name, GPU_IMAGE, f"GPU nodes: {ns.gpu_count}x {ns.gpu_type}, "
                    f"Slurm node set {ns.name}.") for ns in plan.scheduler.nodesets]
    if plan.nodes_with_role("login"):
        out.append(category(LOGIN_CATEGORY, BASE_IMAGE, "Login (Slurm submit) nodes."))
    return out


def _fabric_ports(plan: ClusterPlan) -> dict[tuple[str, int], dict[str, Any]]:
    """(node, rail) -> the leaf switch port that rail's HCA is cabled to (from the links).

    The node end of a compute link names the HCA (``mlx5_N``, the plan's fabric device);
    a leaf dedicated to one rail also says which rail it carries.
    """
    switches = {s.name: s for s in plan.switches}
    rail_of = {(n.name, fa.device): fa.rail for n in plan.nodes for fa in n.addresses.fabric}
    ports: dict[tuple[str, int], dict[str, Any]] = {}

    def visit(node: str, node_port: str, sw_name: str, sw_port: str) -> None:
        sw = switches.get(sw_name)
        if sw is None or node in switches:
            return
        rail = rail_of.get((node, node_port), sw.rail)
        port = switch_port(sw_port)
        if rail is not None and port is not None:
            ports[(node, rail)] = {"networkSwitch": sw_name, **port}

    for link in plan.links:
        if link.network == "compute":
            visit(link.a, link.a_port, link.b, link.b_port)
            visit(link.b, link.b_port, link.a, link.a_port)
    return ports


def _node_entry(plan: ClusterPlan, node: Node, category: str,
                fabric: dict[tuple[str, int], dict[str, Any]], frontend_name: str
                ) -> dict[str, Any]:
    """One ``bcm110.physical_node``: boot, front-end and per-rail IPoIB interfaces, BMC."""
    a = node.addresses
    phys: list[dict[str, Any]] = []
    if a.mgmt:
        phys.append({"name": BOOT_INTERFACE, "ip": _ip(a.mgmt), "network": MGMT_NETWORK})
    if a.frontend:
        phys.append({"name": frontend_name, "ip": _ip(a.frontend), "network": FRONTEND_NETWORK})
    for fa in sorted(a.fabric, key=lambda f: f.rail):
        iface: dict[str, Any] = {
            "name": ib_interface(fa.rail),
            "ip": _ip(fa.address),
            "network": ib_network(fa.rail),
        }
        if (node.name, fa.rail) in fabric:
            iface["switchPorts"] = [fabric[(node.name, fa.rail)]]
        phys.append(iface)
    entry: dict[str, Any] = {
        "hostname": node.name,
        "category": category,
        "mac": PLACEHOLDER_MAC,
        "managementNetwork": MGMT_NETWORK,
        "notes": f"{node.role}, {node.model}" + (f", SU {node.su}" if node.su else ""),
        "rackPosition": rack_position(plan, node.rack, node.u, node.height_u),
        "interfaces_NetworkPhysicalInterface": phys,
        "interfaces_NetworkBmcInterface": [],
        "powerControl": "none",
    }
    if a.mgmt:
        entry["provisioningInterface"] = BOOT_INTERFACE
    if a.bmc:
        entry["interfaces_NetworkBmcInterface"] = [
            {"name": BMC_INTERFACE, "ip": _ip(a.bmc), "network": OOB_NETWORK}]
        entry["powerControl"] = BMC_INTERFACE
    return entry


def bcm_nodes(plan: ClusterPlan, frontend_name: str = FRONTEND_IFACE_VAR) -> list[dict[str, Any]]:
    """One ``bcm110.physical_node`` per node BCM provisions (GPU compute, spares, login)."""
    cat = category_of(plan)
    fabric = _fabric_ports(plan)
    return [_node_entry(plan, n, cat[n.name], fabric, frontend_name)
            for n in plan.nodes_with_role(*BCM_NODE_ROLES)]
