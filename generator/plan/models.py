"""The ClusterPlan: the one resolved model every emitter reads.

Everything a person buys, racks, cables, addresses and configures is decided here, once:
nodes with names, roles, addresses and rack slots; the fabric graph; storage; the scheduler
layout; the cloud equivalent. Emitters (reports, Ansible inventory, BCM, Pulumi config) are
pure functions of this model, so the artifacts always agree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Re-exported: emitters and other branches import the scheduler models from here.
from generator.plan.scheduler_models import (
    NodeSet as NodeSet,
)
from generator.plan.scheduler_models import (
    Partition as Partition,
)
from generator.plan.scheduler_models import (
    SchedulerPlan as SchedulerPlan,
)
from generator.plan.scheduler_models import (
    TopologySwitch as TopologySwitch,
)
from generator.sizing.result import SizingResult


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FabricAddress(Frozen):
    """One GPU-fabric port's address (IPoIB), one per rail."""

    rail: int
    device: str = Field(description="HCA name as the OS sees it, e.g. mlx5_0.")
    address: str = Field(description="Interface address with prefix, e.g. 10.200.0.11/22.")


class Addresses(Frozen):
    """A device's addresses on each network it joins (None = not on that network)."""

    mgmt: str | None = Field(default=None, description="In-band management (ansible_host).")
    bmc: str | None = Field(default=None, description="iDRAC / BMC / switch management (OOB).")
    frontend: str | None = Field(default=None, description="Front-end / storage Ethernet.")
    fabric: list[FabricAddress] = Field(default_factory=list)


NodeRole = Literal["compute", "spare", "head", "mgmt", "login", "storage", "ufm"]


class Node(Frozen):
    """A server in the plan (GPU node, head, login, storage node, UFM appliance)."""

    name: str
    role: NodeRole
    model: str = Field(description="Catalog id of the server or appliance.")
    rack: str
    u: int = Field(description="Lowest rack unit occupied (1-based).")
    height_u: int
    power_kw: float = Field(description="Planning (maximum) power draw.")
    typical_kw: float = Field(default=0.0, description="Planning typical draw under load.")
    gpus: int = 0
    gpu: str | None = None
    su: int | None = Field(default=None, description="Scalable unit, for compute nodes.")
    slot: int | None = Field(
        default=None,
        description="Position in the scalable unit (1-32), for compute nodes: its leaf port "
        "in the reference cabling, kept by the plan lock.",
    )
    addresses: Addresses = Field(default_factory=Addresses)


SwitchNetwork = Literal["compute", "frontend", "storage", "oob"]


class Switch(Frozen):
    """A switch in one of the plan's networks."""

    name: str
    network: SwitchNetwork
    tier: Literal["leaf", "spine", "core"]
    model: str = Field(description="Catalog switch id.")
    ports: int
    rail: int | None = None
    su: int | None = None
    rack: str
    u: int
    height_u: int
    power_kw: float
    typical_kw: float = 0.0
    mgmt_address: str | None = Field(default=None, description="OOB management address.")
    ports_per_cage: int = Field(
        default=2, exclude=True,
        description="Front-panel ports per cage (2: twin-port OSFP, QM9790; 1: QSFP56, "
                    "QM8790), for front-panel port numbers; implied by the model, so not "
                    "written to plan.yaml.",
    )


LinkNetwork = Literal["compute", "frontend", "storage", "oob", "site"]


class Link(Frozen):
    """One link: device/port to device/port, the medium joining them and its exact part.

    Identity: a link is keyed by its two ends (``a``, ``a_port``) and (``b``, ``b_port``),
    ports named as the hardware names them (``mlx5_3``, QM9790 ``17/2``, OS10 ``1/1/49``).
    ``a`` is the lower end: a host before a switch, a lower tier before a higher one.
    """

    network: LinkNetwork
    a: str
    a_port: str
    b: str
    b_port: str
    speed_gbps: int
    a_cage: str = Field(default="", description="Cage type of port a (OSFP, SFP56-DD, RJ45 ...).")
    b_cage: str = Field(default="", description="Cage type of port b.")
    media: str = Field(default="", description="Medium (catalog media id): DAC, optics+fibre ...")
    length_m: float = Field(default=0.0, description="Stocked length ordered (m).")
    part_number: str = Field(default="", description="Length-specific cable or fibre part number.")
    a_part: str | None = Field(default=None, description="Transceiver at a (catalog id).")
    b_part: str | None = Field(default=None, description="Transceiver at b (catalog id).")
    cable: str = Field(default="", description="Medium id the cable is counted under.")


class FabricSummary(Frozen):
    """The compute fabric's shape and the reasoning behind it."""

    switch_model: str
    tiers: int
    rails: int
    su_nodes: int
    scalable_units: int
    designed_nodes: int = Field(description="Compute nodes the fabric is built for (incl. growth).")
    leaf_switches: int
    spine_switches: int
    core_switches: int
    node_to_leaf_links: int
    leaf_to_spine_links: int
    spine_to_core_links: int
    leaf_to_leaf_links: int = Field(
        default=0, description="Back-to-back links between a leaf pair (small fabrics)."
    )
    subnet_manager: Literal["ufm", "opensm"]
    design_notes: list[str] = Field(default_factory=list)
    absent_because: str = Field(
        default="", description="Why no compute fabric is bought (empty when one is)."
    )


class InbandPlan(Frozen):
    """How in-band management and provisioning are carried (``plan.network.inband``)."""

    design: Literal["frontend-vlan"] = Field(
        default="frontend-vlan",
        description="A VLAN on the front-end leaves; no switches or cables of its own.",
    )
    mgmt_vlan: int = 10
    frontend_vlan: int = 20
    bonded_hosts: int = Field(default=0, description="Hosts on an LACP bond (fallback for PXE).")
    host_links: int = Field(default=0, description="Front-end host cables that carry both VLANs.")
    switches: int = Field(default=0, description="Switches of its own (none in this design).")
    notes: list[str] = Field(default_factory=list)


class NetworkPlan(Frozen):
    """The address plan the addresses were drawn from."""

    oob_cidr: str
    mgmt_cidr: str
    frontend_cidr: str
    fabric_cidr: str
    rail_cidrs: list[str] = Field(description="One IPoIB subnet per rail, in rail order.")
    mgmt_gateway: str | None = None
    inband: InbandPlan = Field(default_factory=InbandPlan)


class StoragePlan(Frozen):
    """Shared storage (PowerScale) sized from the dataset and the checkpoints."""

    model: str
    nodes: int
    drive_tb: float
    raw_tb: float
    usable_tb: float
    required_tb: float
    read_gbps: float = Field(description="Aggregate read, GB/s (planning estimate).")
    write_gbps: float = Field(description="Aggregate write, GB/s (planning estimate).")
    checkpoint_gb: float
    checkpoint_write_s: float
    nfs_server: str = Field(description="Name or address clients mount from.")
    nfs_export: str
    mount_point: str = "/shared"
    notes: list[str] = Field(default_factory=list)
    required_read_gbps: float = Field(default=0.0, description="Data-loading read needed, GB/s.")
    required_write_gbps: float = Field(
        default=0.0, description="Write needed (checkpoint target or NVIDIA guidance), GB/s."
    )
    sized_by: str = Field(default="", description="What set the node count.")


class Reliability(Frozen):
    """Interruptions and checkpointing over the training run (Young/Daly)."""

    failures_per_gpu_hour: float
    expected_interruptions: float
    checkpoint_write_s: float
    checkpoint_interval_hours: float
    restart_hours: float
    goodput: float
    compute_hours: float
    wallclock_hours: float
    spares: int
    checkpoint_hours: float = Field(
        default=0.0, description="Writing checkpoints over the run(s), as the wall-clock has it."
    )
    final_checkpoint_only: bool = Field(
        default=False,
        description="The longest run is shorter than one interval: it writes only its final "
        "checkpoint.",
    )


class RackSlot(Frozen):
    """One device's position in a rack elevation."""

    u: int
    height_u: int
    device: str
    kind: Literal["node", "switch", "pdu", "blank"]


class Rack(Frozen):
    """A rack with its devices, its place on the floor and its facility figures."""

    name: str
    units: int
    power_budget_kw: float
    power_kw: float
    slots: list[RackSlot]
    kind: Literal["compute", "network", "infrastructure"] = "compute"
    row: int = Field(default=1, description="Floor row (1-based).")
    position: int = Field(default=1, description="Position in the row (1-based).")
    power_typical_kw: float = 0.0
    reserve_u: int = Field(default=0, description="U kept free by the reserve policy.")
    reserve_kw: float = Field(default=0.0, description="Power kept free by the reserve policy.")
    btu_per_hour: float = 0.0
    airflow_cfm: float = 0.0
    weight_kg: float = 0.0
    floor_kg_per_m2: float = 0.0
    pdu_model: str = ""
    pdu_capacity_kw: float = 0.0
    notes: list[str] = Field(default_factory=list)


class CloudFilesystem(Frozen):
    """The managed parallel file system that stands in for PowerScale."""

    service: str = Field(description="Catalog id, e.g. aws-fsx-lustre-persistent2.")
    capacity_tib: float
    capacity_gib: int | None = Field(
        default=None, description="The same capacity in GiB (exact; what the cloud APIs take)."
    )
    throughput_mb_s_per_tib: int
    sku: str | None = None
    usd_per_month: float | None = None


class CloudEquivalent(Frozen):
    """The same cluster shape on one cloud, and what it costs."""

    provider: Literal["aws", "gcp", "azure"]
    instance_type: str
    count: int
    gpus_per_instance: int
    fabric: str
    fabric_interfaces: int
    region: str
    zone: str | None = None
    head_instance_type: str
    login_count: int
    usd_per_hour: float = Field(description="GPU instances only, on demand.")
    usd_per_run: float = Field(description="usd_per_hour x the run's wall-clock hours.")
    filesystem: CloudFilesystem


class PowerSummary(Frozen):
    it_kw: float = Field(description="Sum of planning maximum power of all devices.")
    btu_per_hour: float = Field(description="Heat at maximum draw.")
    facility_kw: float = Field(description="it_kw x PUE.")
    pue: float = Field(default=1.0, description="Power usage effectiveness used for facility_kw.")
    usd_per_kwh: float = Field(
        default=0.0, description="Electricity price (facility.power_usd_per_kwh)."
    )
    usd_per_month: float = Field(
        default=0.0,
        description="it_typical_kw x PUE x 730 h x utilization x usd_per_kwh (energy cost).",
    )
    it_typical_kw: float = Field(default=0.0, description="Sum of planning typical draw.")
    btu_per_hour_typical: float = 0.0
    airflow_cfm: float = Field(default=0.0, description="Sum of rack airflow at maximum load.")
    weight_kg: float = Field(default=0.0, description="All racks, loaded.")
    energy_assumption: str = ""
    notes: list[str] = Field(default_factory=list)


class RetiredDevice(Frozen):
    """A device removed from a locked plan: its name and addresses are not given out again."""

    name: str
    addresses: dict[str, str] = Field(
        default_factory=dict, description="Address per network (oob, mgmt, frontend, fabric)."
    )


class FreedDevice(Frozen):
    """Hardware a re-plan against the plan lock frees, for decommissioning tickets: a device
    removed, a device replaced by another model (or its GPU servers by another GPU), or a
    rack emptied and removed (with its PDUs)."""

    name: str
    role: str = Field(description="Node role, <network>-<tier> for a switch, or rack.")
    model: str = Field(description="Catalog id of the freed box (rack: the rack's kind).")
    rack: str
    u: int = Field(default=0, description="Lowest U it took (0 for a rack).")
    why: Literal["removed", "replaced"]
    by: str = Field(default="", description="What replaces it: a model, or a GPU id.")
    gpu: str = Field(default="", description="A GPU server's GPU (catalog id).")
    pdus: int = Field(default=0, description="A rack's PDUs, freed with it.")


class ClusterPlan(Frozen):
    """Everything decided for one spec."""

    name: str
    spec_file: str = Field(description="Spec path as given on the command line (for headers).")
    scheduler_kind: Literal["slurm", "bcm"]
    sizing: SizingResult
    nodes: list[Node]
    switches: list[Switch]
    links: list[Link]
    fabric: FabricSummary
    network: NetworkPlan
    storage: StoragePlan
    reliability: Reliability
    racks: list[Rack]
    power: PowerSummary
    scheduler: SchedulerPlan
    cloud: list[CloudEquivalent]
    admin_cidr: str
    notes: list[str] = Field(default_factory=list)
    east_west_nic: str = Field(default="", description="GPU-fabric NIC (catalog id).")
    east_west_built_in: bool = Field(default=False, description="Fabric NICs are in the system.")
    north_south_nic: str = Field(default="", description="GPU nodes' front-end NIC (catalog id).")
    north_south_built_in: bool = False
    spares_policy: dict[str, float] = Field(
        default_factory=dict, description="The spec's spares policy (spares.*) the BOM applies."
    )
    management_tier: str = Field(default="", description="management.yaml tier used.")
    retired: list[RetiredDevice] = Field(
        default_factory=list, description="Devices removed so far (from the plan lock)."
    )
    identity_changes: list[str] = Field(
        default_factory=list,
        description="The last change to identities against the plan lock (also in notes).",
    )
    freed: list[FreedDevice] = Field(
        default_factory=list,
        description="Hardware the last change against the plan lock freed (kept with it).",
    )

    def nodes_with_role(self, *roles: NodeRole) -> list[Node]:
        """Nodes of the given roles, in plan order."""
        return [n for n in self.nodes if n.role in roles]
