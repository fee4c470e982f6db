"""Site sections of the spec: storage, facility, fabric, network and provisioning.

They describe where the cluster lives and how it is deployed, not what it runs; every field
has a default so a spec only states what differs from a typical site.
"""

from __future__ import annotations

import ipaddress
from enum import StrEnum

from pydantic import Field, field_validator, model_validator

from generator.spec.base import SpecModel


class StorageTier(StrEnum):
    """Read/write performance tier from NVIDIA's storage guidance."""

    good = "good"
    better = "better"
    best = "best"


class Storage(SpecModel):
    """Shared storage needs beyond what the sizing derives (checkpoint size comes from it)."""

    dataset_tb: float = Field(
        default=1.0, ge=0, description="Training data kept on shared storage (TB)."
    )
    checkpoint_keep: int = Field(default=3, ge=1, description="Checkpoints retained at once.")
    checkpoint_write_seconds: float = Field(
        default=120.0, gt=0, description="Target time to write one full checkpoint (s)."
    )
    performance_tier: StorageTier = Field(
        default=StorageTier.good,
        description=(
            "NVIDIA storage guidance tier (DGX SuperPOD RA table 6): good (text/LLM, data "
            "fits in local cache) | better (compressed images) | best (video, raw images)."
        ),
    )
    read_gbytes_per_s_per_gpu: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Data-loading read bandwidth per GPU (GB/s); unset = NVIDIA's guidance for "
            "performance_tier and the cluster size."
        ),
    )


class Facility(SpecModel):
    """Data-centre limits the rack layout must respect."""

    rack_power_kw: float = Field(default=40.0, gt=0, description="Power budget per rack (kW).")
    rack_units: int = Field(default=42, ge=10, le=58, description="Usable U per rack.")
    power_usd_per_kwh: float = Field(default=0.12, ge=0, description="Electricity price (USD/kWh).")
    pue: float = Field(default=1.3, ge=1.0, le=3.0, description="Power usage effectiveness.")
    racks_per_row: int = Field(default=16, ge=2, le=64, description="Racks in one row.")
    rack_width_m: float = Field(default=0.6, gt=0, le=1.2, description="Rack width (m).")
    row_pitch_m: float = Field(
        default=3.0, gt=0, le=10, description="Row centre-to-centre distance incl. aisle (m)."
    )
    tray_height_m: float = Field(
        default=0.5, ge=0, le=3, description="Overhead cable tray above the rack top (m)."
    )
    slack_m: float = Field(default=1.0, ge=0, le=10, description="Slack added to every cable (m).")
    slack_fraction: float = Field(
        default=0.1, ge=0, le=1, description="Slack added in proportion to the routed length."
    )
    reserve_u: int = Field(
        default=2, ge=0, le=20,
        description="U left free in every infrastructure rack (switches, management, storage).",
    )
    reserve_power_fraction: float = Field(
        default=0.1, ge=0, le=0.5,
        description="Share of the power budget left free in every infrastructure rack.",
    )
    utilization: float = Field(
        default=1.0, gt=0, le=1,
        description="Share of the month the cluster runs at typical draw (energy cost).",
    )


class Spares(SpecModel):
    """Spare parts bought with the cluster (hot-spare nodes are ``hardware.hot_spares``)."""

    optics_percent: float = Field(
        default=2.0, ge=0, le=50, description="Spare transceivers, % of each optic (rounded up)."
    )
    cables_percent: float = Field(
        default=2.0, ge=0, le=50, description="Spare cables and fibres, % of each part number."
    )
    switches_per_model: int = Field(
        default=1, ge=0, le=10, description="Cold-spare switches of every switch model used."
    )
    psus_percent: float = Field(
        default=2.0, ge=0, le=50, description="Spare server PSUs, % of all server PSUs."
    )


class EthernetSpec(SpecModel):
    """Front-end design choices: the north-south NIC, the site uplinks and the VLANs of the
    in-band management network, which rides the front-end leaves."""

    north_south_nic: str | None = Field(
        default=None,
        description=(
            "Catalog NIC id of the GPU nodes' front-end NIC; default per the server "
            "(XE9680: ConnectX-6 Dx 2x 100GbE, Dell design)."
        ),
    )
    site_uplinks_per_switch: int = Field(
        default=2, ge=1, le=8,
        description="Uplinks to the site network from each top-tier front-end and OOB switch.",
    )
    mgmt_vlan: int = Field(
        default=10, ge=1, le=4094,
        description=(
            "VLAN of in-band management and provisioning (network.mgmt_cidr) on the front-end "
            "leaves: untagged on host ports, so PXE works (LACP fallback)."
        ),
    )
    frontend_vlan: int = Field(
        default=20, ge=1, le=4094,
        description="VLAN of the front-end / storage network (network.frontend_cidr), tagged.",
    )

    @model_validator(mode="after")
    def _distinct_vlans(self) -> EthernetSpec:
        if self.mgmt_vlan == self.frontend_vlan:
            raise ValueError("mgmt_vlan and frontend_vlan must differ")
        return self


class SubnetManager(StrEnum):
    """Where the InfiniBand subnet manager runs (QM9790 has none on board)."""

    ufm = "ufm"
    opensm = "opensm"


class FabricSpec(SpecModel):
    """Compute-fabric choices."""

    growth_nodes: int = Field(
        default=0, ge=0, description="Extra compute nodes the fabric must accept later."
    )
    subnet_manager: SubnetManager = Field(
        default=SubnetManager.ufm, description="ufm (UFM appliance) | opensm (on the head nodes)."
    )
    switch: str | None = Field(
        default=None,
        description=(
            "Catalog id of the InfiniBand fabric switch (qm9790, qm9700, qm8790, qm8700); "
            "default: the externally managed switch of the GPU node's NIC generation (NDR "
            "ConnectX-7: QM9790; HDR ConnectX-6, DGX A100: QM8790). A switch of another "
            "generation than the nodes' NICs is refused."
        ),
    )


def _cidr(value: str) -> str:
    """An IPv4 network in CIDR form. IPv6 is refused here, at validation, rather than half
    supported: the address plan, the inventory and the cloud stacks are IPv4 throughout."""
    try:
        net = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not a valid network in CIDR form ({exc})") from None
    if net.version != 4:
        raise ValueError(f"{value} is an IPv6 network; podplan plans IPv4 networks only")
    if "/" not in value:
        raise ValueError(f"{value} has no prefix length; write it as {value}/{net.prefixlen}")
    return str(net)


class Network(SpecModel):
    """Address plans; every address in the plan is derived from these."""

    oob_cidr: str = Field(
        default="10.128.0.0/20", description="Out-of-band (iDRAC/BMC, switch mgmt)."
    )
    mgmt_cidr: str = Field(
        default="10.129.0.0/20", description="In-band management / provisioning."
    )
    frontend_cidr: str = Field(
        default="10.130.0.0/20", description="Front-end and storage Ethernet."
    )
    fabric_cidr: str = Field(
        default="10.200.0.0/16", description="GPU fabric (IPoIB), split per rail."
    )

    @field_validator("oob_cidr", "mgmt_cidr", "frontend_cidr", "fabric_cidr")
    @classmethod
    def _valid_cidr(cls, v: str) -> str:
        return _cidr(v)

    @model_validator(mode="after")
    def _no_overlap(self) -> Network:
        nets = {k: ipaddress.ip_network(getattr(self, k)) for k in type(self).model_fields}
        names = list(nets)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if nets[a].overlaps(nets[b]):
                    raise ValueError(f"{a} and {b} overlap")
        return self


class Scheduler(StrEnum):
    """How the cluster is managed."""

    slurm = "slurm"
    bcm = "bcm"


class Cloud(StrEnum):
    """Clouds with an equivalent of the on-prem cluster."""

    aws = "aws"
    gcp = "gcp"
    azure = "azure"


class Provisioning(SpecModel):
    """What to generate for deployment."""

    scheduler: Scheduler = Field(
        default=Scheduler.slurm, description="slurm (Ansible) | bcm (Base Command Manager)."
    )
    clouds: list[Cloud] = Field(
        default_factory=lambda: [Cloud.aws, Cloud.gcp, Cloud.azure],
        description="Clouds to price and generate Pulumi stacks for.",
    )
    admin_cidr: str = Field(
        default="203.0.113.0/24",
        description="Only source allowed to SSH into cloud head nodes (set it to your network).",
    )

    @field_validator("clouds")
    @classmethod
    def _unique(cls, v: list[Cloud]) -> list[Cloud]:
        if len(set(v)) != len(v):
            raise ValueError("clouds are listed more than once")
        return v

    @field_validator("admin_cidr")
    @classmethod
    def _not_world(cls, v: str) -> str:
        v = _cidr(v)
        if ipaddress.ip_network(v).prefixlen == 0:
            raise ValueError("admin_cidr must not be the whole internet")
        return v
