"""``inventories/<name>/`` for BCM: ``hosts.yml`` and ``group_vars/`` split by concern.

The static playbook ``ansible/bcm.yml`` reads these files and passes entity data unchanged to
the bcm110 modules, so this module only decides which data goes into which file and which
comments explain it. The head-node installer variables and the site-values example live here
too: both are the installer110 side of the inventory (placeholders the site must fill).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from generator.emit.bcm.common import (
    BCM_NODE_ROLES,
    CMD_PYTHON,
    GENERATED_BY,
    PLACEHOLDER,
    PLACEHOLDER_IFACE,
    PLACEHOLDER_MAC,
    VAULT_VARIABLES,
    _ip,
    _net,
    _yaml,
)
from generator.emit.bcm.network import bcm_switches, networks
from generator.emit.bcm.nodes import bcm_nodes, categories, racks, software_images
from generator.plan.models import ClusterPlan
from generator.render.files import OutFile


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


def _vault_note(name: str) -> list[str]:
    """Comment lines naming every vault variable, so no secret is ever written to the tree."""
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


def _mac_note(name: str) -> list[str]:
    """Comment lines on the MAC and NIC-name placeholders the site must replace."""
    return [
        "",
        f"mac: {PLACEHOLDER_MAC} marks a MAC address the site must supply (podplan cannot",
        "know it). Put the real ones in bcm_site_node_macs of your site file, started from",
        f"reports/{name}/bcm/bcm-site.example.yml; ansible/bcm.yml refuses to run while one is",
        "missing. The front-end NIC's OS name comes from bcm_site_frontend_interface. ibN is",
        "assumed to be rail N (mlx5_N): check with ibdev2netdev on one node.",
    ]


def inventory_files(plan: ClusterPlan, w: dict[str, Any]) -> list[OutFile]:
    """``hosts.yml`` and every ``group_vars`` file, in the order ``emit_bcm`` lists them."""
    inv = f"inventories/{plan.name}"
    gv = f"{inv}/group_vars/bcm_headnodes"
    spec = plan.spec_file
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
    ]
