"""The management plane, sized with the cluster (``management.yaml``).

* Head nodes: a BCM / Slurm-controller HA pair. Up to one scalable unit (32 GPU nodes) they
  are R660s in Dell's validated-design configuration; above, 2-socket management servers
  as the DGX SuperPOD RA asks (S24, S55).
* Service nodes (role ``mgmt``: Slurm controllers and accounting, monitoring) above one SU:
  two, plus one per further 4 SU (anchored on the RA's 4-5 management servers at 4 SU).
* ``hardware.login_nodes`` R660 login nodes.
* Subnet manager (QM9790 has none on board): ``fabric.subnet_manager: ufm`` adds a UFM
  Enterprise HA pair, plus two SM-only UFM appliances as external standby subnet managers
  above 4 SU; ``opensm`` runs opensm on the two heads, which then get one ConnectX-7 port
  on the fabric each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.plan.catalog_models import ManagementTier
from generator.spec.models import Spec

HEAD_MODEL = "r660"
UFM_MODEL = "ufm-appliance"
SU_NODES = 32


@dataclass(frozen=True)
class Management:
    heads: list[str]
    login: list[str]
    ufm: list[str]
    service: list[str] = field(default_factory=list)
    head_model: str = HEAD_MODEL
    tier: str = "small"
    lock_note: str = ""
    """Against a plan lock: what was kept of the built plane, or what growth buys."""

    def subnet_manager_hosts(self, kind: str) -> list[str]:
        """Devices that carry a fabric port for the subnet manager."""
        return list(self.ufm) if kind == "ufm" else list(self.heads)


def pick_tier(tiers: dict[str, ManagementTier], compute_nodes: int) -> ManagementTier:
    """The smallest tier whose ``max_compute_nodes`` covers the cluster."""
    ordered = sorted(tiers.values(), key=lambda t: t.max_compute_nodes)
    return next((t for t in ordered if compute_nodes <= t.max_compute_nodes), ordered[-1])


def plan_management(
    spec: Spec,
    fabric: bool,
    compute_nodes: int,
    tiers: dict[str, ManagementTier],
    su_nodes: int = SU_NODES,
) -> Management:
    """Names and models of the heads, service nodes, login nodes and UFM appliances.

    ``su_nodes``: the fabric's scalable-unit size (half the switch radix: 32 NDR, 20 HDR),
    which the service-node and external-SM rules count in."""
    tier = pick_tier(tiers, compute_nodes)
    sus = math.ceil(compute_nodes / su_nodes) if compute_nodes else 0
    heads = [f"head{i:02d}" for i in range(1, tier.heads + 1)]
    n_service = 0
    if tier.service_nodes:
        n_service = tier.service_nodes + tier.service_per_4_su * max(0, math.ceil(sus / 4) - 1)
    service = [f"mgmt{i:02d}" for i in range(1, n_service + 1)]
    login = [f"login{i:02d}" for i in range(1, spec.hardware.login_nodes + 1)]
    n_ufm = 0
    if fabric and spec.fabric.subnet_manager.value == "ufm":
        n_ufm = tier.ufm_appliances
        if tier.ufm_external_sm_above_su and sus > tier.ufm_external_sm_above_su:
            n_ufm += 2
    ufm = [f"ufm{i:02d}" for i in range(1, n_ufm + 1)]
    return Management(heads, login, ufm, service, tier.head_model, tier.id)
