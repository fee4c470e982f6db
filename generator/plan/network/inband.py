"""The in-band management and provisioning network: a VLAN design on the front end.

podplan carries in-band management (``network.mgmt_cidr``: ``ansible_host``, BCM's internal
network, PXE/DHCP/TFTP provisioning, Slurm and monitoring traffic) on the front-end leaves
rather than on switches of its own, as NVIDIA's SuperPOD does with its converged in-band
network (S24: provisioning, home file system, BCM/Slurm and NGC share one bonded Ethernet):

* VLAN ``ethernet.mgmt_vlan`` is the untagged (native) VLAN of every host port-channel, so a
  host's firmware can DHCP and PXE-boot without VLAN tagging; the front-end / storage network
  (``network.frontend_cidr``) is VLAN ``ethernet.frontend_vlan``, tagged on the same bond.
* Hosts are dual-homed to a VLT leaf pair with an LACP (802.3ad) bond. PXE firmware does not
  form the bond (S62), so every host port-channel gets LACP fallback (OS10 ``lacp fallback
  enable``, the same ``lacp fallback timeout`` on both VLT peers, fallback on the untagged VLAN
  only, S61): one member comes up alone for PXE, and the bond forms once the OS sends LACPDUs.
* Out-of-band management (iDRAC/BMC, switch management ports, PDUs) stays on its own
  switches; the in-band network adds no switch and no cable to the plan.
"""

from __future__ import annotations

from collections import Counter

from generator.plan.models import InbandPlan
from generator.plan.network.ethernet import FrontendGraph
from generator.spec.models import Spec


def plan_inband(
    spec: Spec, fe: FrontendGraph, mgmt_cidr: str, frontend_cidr: str, storage: list[str]
) -> InbandPlan:
    """The in-band design, with the counts and the wording reports and the BOM show.

    ``storage``: front-end hosts that are not provisioned (PowerScale nodes): their ports are
    access ports in the front-end VLAN."""
    eth = spec.ethernet
    skip = set(storage)
    ports = Counter(host for host, *_ in fe.host_links if host not in skip)
    bonded = sum(1 for n in ports.values() if n > 1)
    single = len(ports) - bonded
    notes = [
        f"In-band management and provisioning ({mgmt_cidr}) is VLAN {eth.mgmt_vlan} on the "
        f"front-end leaves, untagged on the ports of the {len(ports):,} servers podplan "
        f"provisions; the front-end / storage network ({frontend_cidr}) is VLAN "
        f"{eth.frontend_vlan}, tagged on those ports and untagged on the storage nodes'. No "
        f"switches or cables of its own: the {len(fe.host_links):,} front-end host cables "
        "carry both (NVIDIA's converged in-band network, S24).",
        f"{bonded:,} hosts are LACP-bonded across a VLT leaf pair; PXE firmware does not form "
        "the bond (S62), so every host port-channel has LACP fallback enabled on both VLT "
        "peers with the same timeout (OS10 'lacp fallback enable', S61): one member comes up "
        "alone for PXE/DHCP on the untagged VLAN, the bond forms when the OS sends LACPDUs.",
    ]
    if single:
        notes.append(
            f"{single:,} single-homed hosts: their port is an access port in VLAN "
            f"{eth.mgmt_vlan} with VLAN {eth.frontend_vlan} tagged."
        )
    return InbandPlan(
        design="frontend-vlan",
        mgmt_vlan=eth.mgmt_vlan,
        frontend_vlan=eth.frontend_vlan,
        bonded_hosts=bonded,
        host_links=len(fe.host_links),
        switches=0,
        notes=notes,
    )
