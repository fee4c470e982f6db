"""Names, placeholders and small conversions every part of the BCM emitter shares.

They live apart so that the data modules (networks, nodes, WLM, inventory) and the report
renderer agree on one spelling of each BCM object name and site placeholder: a mismatch would
make the cmsh batches and the Ansible group_vars describe different clusters.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from generator.plan.models import ClusterPlan, NodeRole
from generator.render.files import commented_header, dump_yaml

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


def _ip(address: str | None) -> str | None:
    """The address without its prefix length (``10.0.0.1/24`` -> ``10.0.0.1``)."""
    return address.split("/")[0] if address else None


def _net(cidr: str) -> tuple[str, int]:
    """Base address and prefix length: BCM stores a network as ``baseAddress`` + ``netmaskBits``."""
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


def _yaml(data: Any, spec_file: str, notes: list[str]) -> str:
    """Sorted YAML under the provenance header and a commented explanation."""
    return commented_header(spec_file) + "".join(
        f"# {n}\n" if n else "#\n" for n in notes) + dump_yaml(data)
