"""ClusterPlan -> Ansible inventory for the Slurm path (``inventories/<name>/``).

Functional groups (``slurm_controller``, ``slurm_dbd``, ``slurm_login``, ``slurm_compute`` with
a child group per node set, umbrella ``slurm_cluster``); ``group_vars`` split by concern;
``host_vars`` only for per-host facts. Everything is dumped from data with sorted keys: the
roles in ``ansible/`` consume it as is.

Every host receives every ``group_vars`` value, so no node list may sit there as a list of
names (the inventory would grow with nodes squared): node sets hold a Slurm hostlist
expression (``gpu[0001-2048]``, see ``generator.emit.hostlist``), leaf switches are groups
of ``hosts.yml``, and ``slurm_topology`` keeps only the upper tiers, as expressions.
"""

from __future__ import annotations

from typing import Any

from generator.emit.hostlist import fold
from generator.plan.models import ClusterPlan, Node, NodeSet, TopologySwitch
from generator.render.files import OutFile, dump_yaml

GENERATED_BY = "podplan"
# Inventory group of a leaf switch's nodes; the roles read leaf switches from these groups.
LEAF_GROUP_PREFIX = "slurm_switch_"


def _hosts(names: list[str]) -> dict[str, Any]:
    return {"hosts": {n: None for n in names}}


def hosts_document(plan: ClusterPlan) -> dict[str, Any]:
    """The ``hosts.yml`` group tree.

    Each leaf switch of the topology is a group ``slurm_switch_<switch>`` (under
    ``slurm_switches``) holding its nodes: membership is listed once per node here rather
    than in ``group_vars`` that every host receives, and ``--limit slurm_switch_su7``
    reaches one scalable unit.
    """
    sched = plan.scheduler
    nodesets = {f"slurm_nodeset_{ns.name}": _hosts(ns.hosts) for ns in sched.nodesets}
    cluster = {
        "slurm_controller": _hosts(sched.controllers),
        "slurm_dbd": _hosts([sched.dbd_host]),
        "slurm_login": _hosts(sched.login),
        "slurm_compute": {"children": nodesets},
    }
    leaves = {
        f"{LEAF_GROUP_PREFIX}{sw.switch}": _hosts(sw.nodes) for sw in sched.topology if sw.nodes
    }
    if leaves:
        cluster["slurm_switches"] = {"children": leaves}
    return {"all": {"children": {"slurm_cluster": {"children": cluster}}}}


def host_vars(node: Node) -> dict[str, Any]:
    """Per-host facts only: addresses, rack position, role."""
    out: dict[str, Any] = {
        "ansible_host": (node.addresses.mgmt or "").split("/")[0],
        "podplan_bmc_address": (node.addresses.bmc or "").split("/")[0] or None,
        "podplan_rack": node.rack,
        "podplan_rack_u": node.u,
        "podplan_role": node.role,
    }
    if node.addresses.frontend:
        # The roles find the front-end interface by this address (NCCL_SOCKET_IFNAME).
        out["podplan_frontend_address"] = node.addresses.frontend.split("/")[0]
    if node.addresses.fabric:
        out["podplan_fabric_addresses"] = [
            {"rail": f.rail, "device": f.device, "address": f.address}
            for f in node.addresses.fabric
        ]
    return out


def nodeset_vars(ns: NodeSet) -> dict[str, Any]:
    """A node set with its hosts as one hostlist expression."""
    return {**ns.model_dump(), "hosts": fold(ns.hosts)}


def topology_vars(sw: TopologySwitch) -> dict[str, Any]:
    """An upper-tier switch with the switches below it as an expression (``su[1-4]``)."""
    return {"switch": sw.switch, "switches": fold(sw.switches or [])}


def slurm_vars(plan: ClusterPlan) -> dict[str, Any]:
    """``group_vars/slurm_cluster/slurm.yml``: the scheduler layout from the plan."""
    s = plan.scheduler
    ha: dict[str, Any] = {}
    if len(s.controllers) > 1:
        # A backup controller can only take over from state both controllers can read.
        ha["slurm_state_save_location"] = f"{plan.storage.mount_point}/slurm/statesave"
    return {
        **ha,
        "slurm_cluster_name": s.cluster_name,
        "slurm_controller_hosts": list(s.controllers),
        "slurm_dbd_host": s.dbd_host,
        "slurm_accounting_enabled": True,
        "slurm_nodesets": [nodeset_vars(ns) for ns in s.nodesets],
        "slurm_partitions": [p.model_dump(exclude_none=True) for p in s.partitions],
        # Leaf switches are the inventory groups slurm_switch_<switch> (hosts_document).
        "slurm_topology": [topology_vars(t) for t in s.topology if not t.nodes],
    }


def fabric_vars(plan: ClusterPlan) -> dict[str, Any]:
    """``group_vars/slurm_cluster/fabric.yml``: the GPU fabric the fabric role configures.

    Rails in rail order (``NCCL_IB_HCA`` and the IPoIB subnets follow it), each with the HCA
    the plan cables to that rail's leaf and the link rate the health and pre-flight checks
    expect; where the subnet manager runs (opensm on the heads, or the UFM appliances).
    """
    compute = {n.name for n in plan.nodes_with_role("compute", "spare")}
    rates: dict[str, int] = {}
    for link in plan.links:
        if link.network == "compute" and link.a in compute:
            rates.setdefault(link.a_port, link.speed_gbps)
    sample = next((n for n in plan.nodes_with_role("compute") if n.addresses.fabric), None)
    rails = [
        {
            "rail": f.rail,
            "device": f.device,
            "cidr": plan.network.rail_cidrs[f.rail],
            "rate_gbps": rates.get(f.device, 0),
        }
        for f in (sample.addresses.fabric if sample else [])
    ]
    manager = plan.fabric.subnet_manager
    return {
        "fabric_enabled": bool(rails),
        "fabric_rails": rails,
        "fabric_subnet_manager": manager,
        "fabric_opensm_hosts": list(plan.scheduler.controllers)
        if manager == "opensm" and rails
        else [],
        "fabric_ufm_hosts": [n.name for n in plan.nodes_with_role("ufm")],
    }


def storage_vars(plan: ClusterPlan) -> dict[str, Any]:
    """``group_vars/slurm_cluster/storage.yml``: the PowerScale NFS export to mount."""
    st = plan.storage
    return {
        "nfs_client_enabled": True,
        "nfs_client_server": st.nfs_server,
        "nfs_client_export": st.nfs_export,
        "nfs_client_mount_point": st.mount_point,
    }


def nvidia_vars() -> dict[str, Any]:
    """``group_vars/slurm_cluster/nvidia.yml``: production turns the NVIDIA stack on."""
    return {
        "nvidia_driver_enabled": True,
        "nvidia_fabricmanager_enabled": True,
        "nvidia_dcgm_enabled": True,
        "enroot_pyxis_enabled": True,
    }


def emit_slurm_inventory(plan: ClusterPlan) -> list[OutFile]:
    """Every file of ``inventories/<name>/`` for the Slurm path."""
    base = f"inventories/{plan.name}"
    spec = plan.spec_file
    members = {h for ns in plan.scheduler.nodesets for h in ns.hosts}
    members |= {*plan.scheduler.controllers, *plan.scheduler.login}
    files = [
        OutFile(f"{base}/hosts.yml", dump_yaml(hosts_document(plan), spec)),
        OutFile(
            f"{base}/group_vars/all/podplan.yml",
            dump_yaml(
                {
                    "podplan_cluster_name": plan.name,
                    "podplan_spec_file": spec,
                    "podplan_generated_by": GENERATED_BY,
                    # Fixed once planned (the lock keeps it): time and access rules that
                    # name the network, not each host, stay put when the cluster grows.
                    "podplan_management_cidr": plan.network.mgmt_cidr,
                },
                spec,
            ),
        ),
        OutFile(f"{base}/group_vars/slurm_cluster/slurm.yml", dump_yaml(slurm_vars(plan), spec)),
        OutFile(
            f"{base}/group_vars/slurm_cluster/storage.yml", dump_yaml(storage_vars(plan), spec)
        ),
        OutFile(f"{base}/group_vars/slurm_cluster/nvidia.yml", dump_yaml(nvidia_vars(), spec)),
        OutFile(f"{base}/group_vars/slurm_cluster/fabric.yml", dump_yaml(fabric_vars(plan), spec)),
    ]
    for node in plan.nodes:
        if node.name in members:
            files.append(
                OutFile(f"{base}/host_vars/{node.name}.yml", dump_yaml(host_vars(node), spec))
            )
    return files
