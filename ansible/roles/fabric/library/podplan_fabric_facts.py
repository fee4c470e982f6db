#!/usr/bin/python3
"""Ansible module: what a host's fabric looks like right now (read-only).

For each planned HCA: whether it exists, its IPoIB network interface (the ``net/`` entry of
type 32, ARPHRD_INFINIBAND, under the HCA's PCI device) and port GUID; plus the network
interface that carries a given address (the plan's front-end address, for
NCCL_SOCKET_IFNAME). Pure functions take the sysfs root, so tests use a fixture tree.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

DOCUMENTATION = r"""
module: podplan_fabric_facts
short_description: Read HCAs, IPoIB interfaces, port GUIDs and the front-end interface.
options:
  devices:
    description: HCA names in rail order, e.g. mlx5_0.
    type: list
    elements: str
    default: []
  address:
    description: An address whose interface is wanted (the front-end address); empty skips.
    type: str
    default: ""
  sysfs:
    description: sysfs root (tests point it at a fixture tree).
    type: str
    default: /sys
author: podplan
"""

ARPHRD_INFINIBAND = "32"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def hca(sysfs: Path, device: str) -> dict[str, str | bool]:
    """Presence, IPoIB netdev and port-1 GUID of one HCA."""
    base = sysfs / "class" / "infiniband" / device
    if not base.exists():
        return {"present": False, "netdev": "", "port_guid": ""}
    netdev = ""
    net = base / "device" / "net"
    for entry in sorted(net.iterdir()) if net.is_dir() else []:
        if _read(entry / "type") == ARPHRD_INFINIBAND:
            netdev = entry.name
            break
    gid = _read(base / "ports" / "1" / "gids" / "0")
    guid = "0x" + gid.replace(":", "")[16:] if gid.count(":") == 7 else ""
    return {"present": True, "netdev": netdev, "port_guid": guid}


def interface_of(address: str, ip_json: str) -> str:
    """The interface holding ``address`` in ``ip -json addr`` output, or ''."""
    for link in json.loads(ip_json or "[]"):
        for info in link.get("addr_info", []):
            if info.get("local") == address:
                return str(link.get("ifname", ""))
    return ""


def main() -> None:
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(
        argument_spec={
            "devices": {"type": "list", "elements": "str", "default": []},
            "address": {"type": "str", "default": ""},
            "sysfs": {"type": "str", "default": "/sys"},
        },
        supports_check_mode=True,
    )
    p = module.params
    sysfs = Path(p["sysfs"])
    hcas = {d: hca(sysfs, d) for d in p["devices"]}
    ifname = ""
    if p["address"]:
        out = subprocess.run(["ip", "-json", "addr", "show"], capture_output=True, text=True, check=False)
        ifname = interface_of(p["address"], out.stdout)
    module.exit_json(changed=False, hcas=hcas, frontend_interface=ifname)


if __name__ == "__main__":
    main()
