"""Management servers: two R660 head nodes (HA), login nodes, and the UFM appliances.

* Two heads: BCM head pair or slurmctld primary/backup (slurmdbd on the first).
* ``hardware.login_nodes`` R660 login nodes.
* Subnet manager (QM9790 has none on board): ``fabric.subnet_manager: ufm`` adds two UFM
  Enterprise appliances (an HA pair, each with one fabric port); ``opensm`` runs opensm on
  the two heads, which then get one ConnectX-7 port on the fabric each (R660 option).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.spec.models import Spec

HEAD_MODEL = "r660"
UFM_MODEL = "ufm-appliance"
HEADS = 2
UFM_APPLIANCES = 2


@dataclass(frozen=True)
class Management:
    heads: list[str]
    login: list[str]
    ufm: list[str]

    def subnet_manager_hosts(self, kind: str) -> list[str]:
        """Devices that carry a fabric port for the subnet manager."""
        return list(self.ufm) if kind == "ufm" else list(self.heads)


def plan_management(spec: Spec, fabric: bool) -> Management:
    """Names of the heads, login nodes and UFM appliances."""
    heads = [f"head{i:02d}" for i in range(1, HEADS + 1)]
    login = [f"login{i:02d}" for i in range(1, spec.hardware.login_nodes + 1)]
    ufm = (
        [f"ufm{i:02d}" for i in range(1, UFM_APPLIANCES + 1)]
        if fabric and spec.fabric.subnet_manager.value == "ufm"
        else []
    )
    return Management(heads, login, ufm)
