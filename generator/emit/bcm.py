"""ClusterPlan -> NVIDIA Base Command Manager (BCM 11) configuration as code.

For ``provisioning.scheduler: bcm`` podplan writes:

- ``inventories/<name>/``: ``hosts.yml`` (group ``bcm_headnodes`` = the HA pair, children
  ``bcm_primary`` / ``bcm_secondary``) and ``group_vars/`` split by concern, read by the static
  playbook ``ansible/bcm.yml`` (head-node install with ``brightcomputing.installer110``, cluster
  definition with the ``brightcomputing.bcm110`` entity modules). Entity data is already in the
  shape of the modules' documented options, so the playbook passes it through unchanged.
- ``reports/<name>/bcm/``: the same definitions for sites without the collections: two
  ``cmsh -f`` batch files (before and after the WLM exists), the exact ``cm-wlm-setup`` command
  line, the plan's Slurm tree, an example site-values file and a README.

Everything is computed here from the plan; ``templates/bcm/*.jinja`` only loop over prepared
data. Field names are the documented ones (``ansible/BCM-SOURCES.md``); what public
documentation does not settle is marked ``NOT PUBLICLY DOCUMENTED`` in the output.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from typing import Any

from generator.plan.models import ClusterPlan, Node, NodeRole, NodeSet, Switch
from generator.render.env import render
from generator.render.files import OutFile, commented_header, dump_yaml

GENERATED_BY = "podplan"

# Values the site must supply. They have the documented type (the modules accept them), a
# real CMDaemon rejects them, and ansible/bcm.yml refuses to run while any is left.
PLACEHOLDER = "FILL-IN"
PLACEHOLDER_MAC = "FILL-IN-MAC"
PLACEHOLDER_IFACE = "FILL-IN-IFACE"
FRONTEND_IFACE_VAR = "{{ bcm_site_frontend_interface }}"

# BCM object names podplan creates or reuses (default-image and default are BCM's own).
MGMT_NETWORK = "internalnet"
OOB_NETWORK = "ipminet"
FRONTEND_NETWORK = "frontendnet"
BASE_IMAGE = "default-image"
BASE_CATEGORY = "default"
GPU_IMAGE = "gpu-image"
LOGIN_CATEGORY = "login"
BOOT_INTERFACE = "BOOTIF"  # BCM's name for "the interface the node PXE-booted from"
BMC_INTERFACE = "ipmi0"
SWITCH_MGMT_INTERFACE = "mgmt0"  # NOT PUBLICLY DOCUMENTED: the name BCM gives a switch port
GPU_OVERLAY = "slurm-client-gpu"  # cm-wlm-setup's default GPU client overlay (Admin 7.3.2)
GPU_OVERLAY_PRIORITY = 450  # cm-wlm-setup's default GPU overlay priority (Admin 7.3.2)
CMD_PYTHON = "/cm/local/apps/python3/bin/python"  # the bcm110 modules' interpreter

VAULT_VARIABLES = (
    "vault_bcm_product_key",
    "vault_bcm_db_cmd_password",
    "vault_bcm_ldap_root_pass",
    "vault_bcm_ldap_readonly_pass",
    "vault_bcm_slurm_user_pass",
    "vault_bcm_mysql_login_password",
    "vault_bcm_bmc_username",
    "vault_bcm_bmc_password",
)

BCM_NODE_ROLES: tuple[NodeRole, ...] = ("compute", "spare", "login")
_TIER = {"leaf": 0, "spine": 1, "core": 2}


# ----------------------------------------------------------------------------- helpers


def _ip(address: str | None) -> str | None:
    """The address without its prefix length (``10.0.0.1/24`` -> ``10.0.0.1``)."""
    return address.split("/")[0] if address else None


def _net(cidr: str) -> tuple[str, int]:
    net = ipaddress.ip_network(cidr, strict=False)
    return str(net.network_address), net.prefixlen


def ib_network(rail: int) -> str:
    """The BCM network of one IPoIB rail."""
    return f"ibnet{rail}"


def ib_interface(rail: int) -> str:
    """The OS name podplan assumes for rail ``rail``'s IPoIB interface (verify on site)."""
    return f"ib{rail}"


_PORT = re.compile(r"^\D*?(\d+)(?:[/:.](\d+))?$")


def switch_port(port: str) -> dict[str, int] | None:
    """A plan port label as a BCM ``switchPorts`` entry.

    ``"17"`` or ``"swp17"`` -> port 17; ``"3/2"`` -> port 3, breakout 2 (BCM's breakout
    numbering is NOT PUBLICLY DOCUMENTED). Labels without a number give ``None``: that cable
    then lives only in the plan's cabling report.
    """
    m = _PORT.match(port.strip())
    if not m:
        return None
    out = {"port": int(m.group(1))}
    if m.group(2):
        out["breakout"] = int(m.group(2))
    return out


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


def _switch_kind(sw: Switch) -> str:
    # The plan's compute fabric is InfiniBand (subnet manager, IPoIB rails); the front-end
    # and OOB networks are Ethernet.
    return "INFINIBAND" if sw.network == "compute" else "ETHERNET"


def rack_position(plan: ClusterPlan, rack: str, u: int, height: int) -> dict[str, Any]:
    """BCM ``rackPosition``: the device's top unit, counted from the top of the rack.

    The bcm110 module documents ``position`` as "Position of the device in the rack, top is
    1"; the plan counts the lowest unit from the bottom. That ``position`` names the device's
    topmost unit (for multi-U devices) is NOT PUBLICLY DOCUMENTED.
    """
    units = {r.name: r.units for r in plan.racks}.get(rack)
    top_from_bottom = u + height - 1
    position = units - top_from_bottom + 1 if units else u
    return {"rack": rack, "position": position, "height": height}


# ----------------------------------------------------------------------------- the model


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


def _gres(ns: NodeSet) -> dict[str, Any]:
    return {"name": "gpu", "type": ns.gpu_type, "count": str(ns.gpu_count),
            "file": ns.gpu_files}


def gpu_overlays(plan: ClusterPlan) -> list[dict[str, Any]]:
    """GPU WLM client overlays (``bcm110.configuration_overlay``): GRES gpu with the type.

    ``cm-wlm-setup --nvidia-gpus`` takes one type:count, so node sets whose GRES agree share
    the overlay it creates (``slurm-client-gpu``); any other GRES gets its own overlay.
    """
    groups: dict[tuple[str, int, str], list[NodeSet]] = {}
    for ns in plan.scheduler.nodesets:
        groups.setdefault((ns.gpu_type, ns.gpu_count, ns.gpu_files), []).append(ns)
    out: list[dict[str, Any]] = []
    for i, sets in enumerate(groups.values()):
        role: dict[str, Any] = {
            "name": "slurmclient",
            "wlmCluster": plan.scheduler.cluster_name,
            "genericResources": [_gres(sets[0])],
        }
        features = sorted({f for ns in sets for f in ns.features})
        if features:
            role["features"] = features
        out.append({
            "name": GPU_OVERLAY if i == 0 else f"{GPU_OVERLAY}-{sets[0].name}",
            "priority": GPU_OVERLAY_PRIORITY,
            "categories": [ns.name for ns in sets],
            "roles_SlurmClientRole": [role],
        })
    return out


def job_queues(plan: ClusterPlan) -> list[dict[str, Any]]:
    """One ``bcm110.slurm_job_queue`` per plan partition, with exactly its node sets' hosts."""
    hosts = {ns.name: ns.hosts for ns in plan.scheduler.nodesets}
    out: list[dict[str, Any]] = []
    for order, p in enumerate(plan.scheduler.partitions):
        out.append({
            "name": p.name,
            "wlmCluster": plan.scheduler.cluster_name,
            "computeNodes": sorted({h for ns in p.nodesets for h in hosts.get(ns, [])}),
            "defaultQueue": p.default,
            "maxTime": "UNLIMITED" if p.max_time == "INFINITE" else p.max_time,
            "ordering": order,
            "state": "UP",
        })
    return out


def topology(plan: ClusterPlan) -> list[dict[str, Any]]:
    """The plan's Slurm tree, unchanged (the design reference for BCM's topology.conf)."""
    return [t.model_dump(exclude_none=True) for t in plan.scheduler.topology]


def setup_args(plan: ClusterPlan) -> list[str]:
    """``cm-wlm-setup`` CLI arguments (options of the BCM 11 Administrator Manual, 7.3.1)."""
    s = plan.scheduler
    args = ["--setup", "--wlm", "slurm", "--wlm-cluster-name", s.cluster_name,
            "--server-nodes", ",".join(s.controllers), "--server-primary", s.controllers[0]]
    if plan.nodes_with_role("login"):
        args += ["--submit-categories", LOGIN_CATEGORY]
    overlays = gpu_overlays(plan)
    if overlays:
        gres = overlays[0]["roles_SlurmClientRole"][0]["genericResources"][0]
        args += ["--gpu-client-categories", ",".join(overlays[0]["categories"]),
                 "--nvidia-gpus", f"{gres['type']}:{gres['count']}"]
    return [*args, "--with-pyxis", "--on-error-action", "abort", "--json",
            "--yes-i-really-mean-it"]


def wlm(plan: ClusterPlan) -> dict[str, Any]:
    """The Slurm WLM: cm-wlm-setup arguments, slurm_wlm_cluster settings, overlays, queues."""
    s = plan.scheduler
    fabric = sorted(sw.name for sw in plan.switches if sw.network == "compute")
    return {
        "cluster_name": s.cluster_name,
        "server_nodes": list(s.controllers),
        "dbd_host": s.dbd_host,
        "pyxis": True,
        "setup_args": setup_args(plan),
        "cluster": {
            "name": s.cluster_name,
            "primaryServer": s.controllers[0],
            "gresTypes": ["gpu"],
            "selectType": "select/cons_tres",
            "accountingStorageTRES": ["gres/gpu"],
            "cgroups": {"constrainCores": True, "constrainDevices": True,
                        "constrainRAMSpace": True},
            "topologySettings": {
                "topologyPlugin": "TREE",
                "topologySource": "INTERNAL",
                "params": {"switchAsNodeRank": True},
                "treeSettings": {"topologySwitches": fabric},
            },
        },
        "gpu_overlays": gpu_overlays(plan),
        "queues": job_queues(plan),
        "topology": topology(plan),
    }


def installer(plan: ClusterPlan) -> dict[str, Any]:
    """Non-secret head_node role variables (site values ``FILL-IN``) and vault references."""
    head = plan.scheduler.controllers[0]
    node = next((n for n in plan.nodes if n.name == head), None)
    base, _ = _net(plan.network.mgmt_cidr)
    documented: dict[str, Any] = {
        "license": {
            "cluster_name": plan.name,
            "country": PLACEHOLDER,
            "state": PLACEHOLDER,
            "locality": PLACEHOLDER,
            "organization": PLACEHOLDER,
            "organizational_unit": PLACEHOLDER,
        },
        "install_medium": "dvd",
        "install_medium_dvd_path": PLACEHOLDER,
        "management_interface": PLACEHOLDER,
        "management_ip_address": (_ip(node.addresses.mgmt) if node else None) or PLACEHOLDER,
        "management_network_baseaddress": base,
        "external_interface": PLACEHOLDER,
        "external_ip_address": "DHCP",
        "external_name_servers": [],
        "timezone": "Etc/UTC",
        "mysql_login_user": "root",
    }
    seen = {"management_network_netmask": str(
        ipaddress.ip_network(plan.network.mgmt_cidr, strict=False).netmask)}
    return {
        "bcm_installer": documented,
        "bcm_installer_seen_in_use": seen,
        "bcm_product_key": "{{ vault_bcm_product_key }}",
        "bcm_db_cmd_password": "{{ vault_bcm_db_cmd_password }}",
        "bcm_ldap_root_pass": "{{ vault_bcm_ldap_root_pass }}",
        "bcm_ldap_readonly_pass": "{{ vault_bcm_ldap_readonly_pass }}",
        "bcm_slurm_user_pass": "{{ vault_bcm_slurm_user_pass }}",
        "bcm_mysql_login_password": "{{ vault_bcm_mysql_login_password }}",
        "bcm_bmc_username": "{{ vault_bcm_bmc_username }}",
        "bcm_bmc_password": "{{ vault_bcm_bmc_password }}",
        "bcm_vault_variables": list(VAULT_VARIABLES),
        "bcm_site_frontend_interface": PLACEHOLDER_IFACE,
        "bcm_placeholders": {"mac": PLACEHOLDER_MAC, "iface": PLACEHOLDER_IFACE,
                             "value": PLACEHOLDER},
        "bcm_cmd_python": CMD_PYTHON,
    }


def hosts_document(plan: ClusterPlan) -> dict[str, Any]:
    """``hosts.yml``: the HA head-node pair, primary first (``ansible_host`` = mgmt address)."""
    by_name = {n.name: n for n in plan.nodes}

    def host(name: str) -> dict[str, Any]:
        node = by_name.get(name)
        return {"ansible_host": (_ip(node.addresses.mgmt) if node else None) or name}

    ctl = plan.scheduler.controllers
    groups: dict[str, Any] = {"bcm_primary": {"hosts": {ctl[0]: host(ctl[0])}}}
    if len(ctl) > 1:
        groups["bcm_secondary"] = {"hosts": {h: host(h) for h in ctl[1:]}}
    return {"all": {"children": {"bcm_headnodes": {"children": groups}}}}


def site_example(plan: ClusterPlan) -> dict[str, Any]:
    """Every value podplan cannot know, as a file the site copies, fills and passes with -e."""
    license_fields = ("country", "state", "locality", "organization", "organizational_unit")
    return {
        "bcm_site_installer": {
            "license": dict.fromkeys(license_fields, PLACEHOLDER),
            "install_medium": "dvd",
            "install_medium_dvd_path": PLACEHOLDER,
            "management_interface": PLACEHOLDER,
            "external_interface": PLACEHOLDER,
            "external_ip_address": "DHCP",
            "external_name_servers": [],
        },
        "bcm_site_frontend_interface": PLACEHOLDER_IFACE,
        "bcm_site_node_macs": {n.name: PLACEHOLDER_MAC
                               for n in plan.nodes_with_role(*BCM_NODE_ROLES)},
    }


# ----------------------------------------------------------------------------- rendering


_BARE = re.compile(r"^[\w@%+=:,./\[\]-]+$")


def _q(value: object) -> str:
    """A cmsh word: bare when safe, else double-quoted with backslash escapes."""
    text = str(value)
    if _BARE.match(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yn(value: object) -> str:
    return "yes" if value else "no"


def _cmsh_view(plan: ClusterPlan, w: dict[str, Any]) -> dict[str, Any]:
    """The template context of the cmsh batches: the model plus the verb for each object
    (``use`` where BCM or cm-wlm-setup already created it, else ``add``)."""
    nets = [{**n, "verb": "use" if n["name"] == MGMT_NETWORK else "add"}
            for n in networks(plan)]
    overlays = []
    for i, o in enumerate(w["gpu_overlays"]):
        role = o["roles_SlurmClientRole"][0]
        overlays.append({
            "verb": "use" if i == 0 else "add",
            "role_verb": "use" if i == 0 else "assign",
            "name": o["name"],
            "priority": o["priority"],
            "categories": o["categories"],
            "features": role.get("features", []),
            "gres": role["genericResources"],
        })
    queues = [{**jq, "verb": "use" if jq["name"] == "defq" else "add"} for jq in w["queues"]]
    return {
        "spec_file": plan.spec_file,
        "name": plan.name,
        "networks": nets,
        "racks": racks(plan),
        "images": software_images(),
        "categories": categories(plan),
        "nodes": bcm_nodes(plan, PLACEHOLDER_IFACE),
        "switches": bcm_switches(plan),
        "wlm": w,
        "overlays": overlays,
        "queues": queues,
        "q": _q,
        "yn": _yn,
    }


def _topology_lines(plan: ClusterPlan) -> list[str]:
    lines = []
    for t in plan.scheduler.topology:
        if t.nodes is not None:
            lines.append(f"SwitchName={t.switch} Nodes={','.join(t.nodes)}")
        else:
            lines.append(f"SwitchName={t.switch} Switches={','.join(t.switches or [])}")
    return lines


def _yaml(data: Any, spec_file: str, notes: list[str]) -> str:
    """Sorted YAML under the provenance header and a commented explanation."""
    return commented_header(spec_file) + "".join(
        f"# {n}\n" if n else "#\n" for n in notes) + dump_yaml(data)


def _vault_note(name: str) -> list[str]:
    names = [", ".join(VAULT_VARIABLES[i:i + 3]) for i in range(0, len(VAULT_VARIABLES), 3)]
    return [
        "",
        "Secrets come from Ansible Vault variables only (vault_bcm_*); none is written here.",
        "Create the vault OUTSIDE the generated tree (regeneration replaces this directory):",
        f"  ansible-vault create ansible/.secrets/{name}/bcm-vault.yml",
        "defining:",
        *[f"  {line}" for line in names],
        f"and run with -e @ansible/.secrets/{name}/bcm-vault.yml --ask-vault-pass",
        "(ansible/BCM.md).",
    ]


def _arg_lines(args: list[str]) -> list[str]:
    """cm-wlm-setup arguments one option per line, each with its value, shell-quoted."""
    lines: list[str] = []
    for arg in args:
        if arg.startswith("--") or not lines:
            lines.append(shlex.quote(arg))
        else:
            lines[-1] += " " + shlex.quote(arg)
    return lines


def _mac_note(name: str) -> list[str]:
    return [
        "",
        f"mac: {PLACEHOLDER_MAC} marks a MAC address the site must supply (podplan cannot",
        "know it). Put the real ones in bcm_site_node_macs of your site file, started from",
        f"reports/{name}/bcm/bcm-site.example.yml; ansible/bcm.yml refuses to run while one is",
        "missing. The front-end NIC's OS name comes from bcm_site_frontend_interface. ibN is",
        "assumed to be rail N (mlx5_N): check with ibdev2netdev on one node.",
    ]


def emit_bcm(plan: ClusterPlan) -> list[OutFile]:
    """Every BCM file: ``inventories/<name>/`` and ``reports/<name>/bcm/``."""
    inv = f"inventories/{plan.name}"
    gv = f"{inv}/group_vars/bcm_headnodes"
    rep = f"reports/{plan.name}/bcm"
    spec = plan.spec_file
    w = wlm(plan)
    cmsh = _cmsh_view(plan, w)
    return [
        OutFile(f"{inv}/hosts.yml", _yaml(hosts_document(plan), spec, [
            "", "BCM head nodes for ansible/bcm.yml. bcm_primary is installed with the",
            "brightcomputing.installer110 head_node role; bcm_secondary becomes the passive",
            "head with cmha-setup (BCM 11 Administrator Manual, 15.2), run by hand."])),
        OutFile(f"{inv}/group_vars/all/podplan.yml", _yaml(
            {"podplan_cluster_name": plan.name, "podplan_spec_file": spec,
             "podplan_generated_by": GENERATED_BY, "podplan_scheduler": "bcm"}, spec, [])),
        OutFile(f"{gv}/installer.yml", _yaml(installer(plan), spec, [
            "", "brightcomputing.installer110 head_node role variables. bcm_installer: those its",
            "public README documents. bcm_installer_seen_in_use: only seen in public installer110",
            "playbooks, NOT PUBLICLY DOCUMENTED (verify against your collection). FILL-IN values",
            "come from your site file (bcm_site_installer).", *_vault_note(plan.name)])),
        OutFile(f"{gv}/networks.yml", _yaml({"bcm_networks": networks(plan)}, spec, [
            "", "brightcomputing.bcm110.network. One IPoIB network per rail: the plan gives each",
            "rail its own subnet (no ARP flux between a host's eight HCAs)."])),
        OutFile(f"{gv}/categories.yml", _yaml(
            {"bcm_racks": racks(plan), "bcm_software_images": software_images(),
             "bcm_categories": categories(plan)}, spec, [
                "", "Racks, the GPU software image and the node categories (bcm110.rack,",
                ".software_image, .category): one category per Slurm node set, one for login."])),
        OutFile(f"{gv}/nodes.yml", _yaml({"bcm_nodes": bcm_nodes(plan)}, spec, [
            "", "One brightcomputing.bcm110.physical_node per node BCM provisions.",
            *_mac_note(plan.name)])),
        OutFile(f"{gv}/switches.yml", _yaml({"bcm_switches": bcm_switches(plan)}, spec, [
            "", "Fabric, front-end and OOB switches (brightcomputing.bcm110.switch). switchPorts:",
            "each switch's uplinks from the plan's cabling. The management port name (mgmt0) is",
            "NOT PUBLICLY DOCUMENTED: check what BCM shows for an added switch."])),
        OutFile(f"{gv}/slurm.yml", _yaml({"bcm_slurm": w}, spec, [
            "", "The Slurm WLM. cm-wlm-setup creates it (BCM lets neither cmsh nor Base View",
            "create a WLM: Administrator Manual 7.3); slurm_wlm_cluster, configuration_overlay",
            "and slurm_job_queue then set GRES, topology and queues. topology is the plan's",
            "tree, the reference for the topology.conf BCM writes from its switch data."])),
        OutFile(f"{rep}/cluster.cmsh", render("bcm/cluster.cmsh.jinja", **cmsh)),
        OutFile(f"{rep}/wlm.cmsh", render("bcm/wlm.cmsh.jinja", **cmsh)),
        OutFile(f"{rep}/cm-wlm-setup.sh", render(
            "bcm/cm-wlm-setup.sh.jinja", spec_file=spec, name=plan.name,
            args=_arg_lines(w["setup_args"]))),
        OutFile(f"{rep}/cm-wlm-setup.yaml", _yaml(wlm_answers(w), spec, [
            "", "NOT the file 'cm-wlm-setup -c' reads: that YAML format is NOT PUBLICLY",
            "DOCUMENTED (the TUI's summary screen saves one). These are the same answers as",
            "data, keyed by the documented CLI options: run cm-wlm-setup.sh, or enter them in",
            "the TUI (Setup (Step by Step)) and save its config for reuse with -c."])),
        OutFile(f"{rep}/topology.conf", render(
            "bcm/topology.conf.jinja", spec_file=spec, lines=_topology_lines(plan))),
        OutFile(f"{rep}/bcm-site.example.yml", _yaml(site_example(plan), spec, [
            "", "Site values podplan cannot know. Copy this file OUTSIDE the generated tree",
            f"(e.g. ansible/.secrets/{plan.name}/bcm-site.yml), replace every FILL-IN and pass",
            "it with -e @<file> (ansible/BCM.md). Optional: bcm_site_license_mac, the MAC for",
            "the licence request (default: the head node's default-route interface), and for",
            "install_medium network or local the role's install_medium_network_packages or",
            "install_medium_local_repo_path."])),
        OutFile(f"{rep}/README.md", render(
            "bcm/README.md.jinja", header=commented_header(spec, ">"), name=plan.name,
            wlm=w, nodes=len(cmsh["nodes"]), switches=len(cmsh["switches"]),
            vault_list=", ".join(f"`{v}`" for v in VAULT_VARIABLES),
            placeholder_mac=PLACEHOLDER_MAC)),
    ]


def wlm_answers(w: dict[str, Any]) -> dict[str, Any]:
    """The cm-wlm-setup answers keyed by the documented CLI option names."""
    answers: dict[str, Any] = {}
    args = list(w["setup_args"])
    i = 0
    while i < len(args):
        key = args[i].removeprefix("--")
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            answers[key] = args[i + 1]
            i += 2
        else:
            answers[key] = True
            i += 1
    return {"cm_wlm_setup": answers, "gpu_overlays": w["gpu_overlays"], "queues": w["queues"]}

