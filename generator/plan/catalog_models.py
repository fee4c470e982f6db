"""Typed views of the catalog families the plan and the BOM read.

Servers and GPUs use the shared models in ``generator.catalog.models``; the families below
(switches, optics, storage, cloud, prices, rack, reliability) are only read by the plan
stage, so their models live here and are loaded with ``Catalog.family``. Items ignore keys
they do not use (other stages may read more of a data file than the plan does); every field
the plan relies on is typed and required, so a missing figure fails at load time.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from generator.catalog.load import Catalog
from generator.catalog.models import CatalogItem, Gpu, Server


class PlanItem(CatalogItem):
    """A catalog item read by the plan: unknown keys are tolerated, used ones are typed."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class PortGroup(BaseModel):
    """A run of front-panel ports with one cage type and speed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    first: int
    count: int
    cage: str
    speed_gbps: int
    naming: Literal["twin", "os10"]
    use: str


class SwitchModel(PlanItem):
    """A switch: ``ports`` at ``port_speed_gbps`` as podplan uses it, plus optional uplinks."""

    vendor: str
    kind: Literal["infiniband", "ethernet"]
    ib_generation: Literal["HDR", "NDR"] | None = None
    """InfiniBand generation of the ports (HDR 200 Gb/s, NDR 400 Gb/s); None for Ethernet."""
    managed: bool
    rack_units: int
    ports: int
    port_speed_gbps: int
    cages: int
    cage_type: str
    power_max_w: float
    uplink_ports: int = 0
    uplink_port_speed_gbps: int = 0
    power_typical_w: float | None = None
    weight_kg: float | None = None
    airflow_cfm: float | None = None
    port_groups: list[PortGroup] = Field(default_factory=list)
    mgmt_cage: str = "RJ45"

    @property
    def power_kw(self) -> float:
        return self.power_max_w / 1000.0

    @property
    def typical_kw(self) -> float:
        """Planning typical draw; 60 % of maximum when the catalog has no figure (E)."""
        w = self.power_typical_w if self.power_typical_w is not None else 0.6 * self.power_max_w
        return w / 1000.0

    def cage_of_port(self, port: int) -> PortGroup:
        """The port group (cage type, speed) of 1-based front-panel port ``port``."""
        for g in self.port_groups:
            if g.first <= port < g.first + g.count:
                return g
        raise KeyError(f"{self.id} has no port {port}")

    @property
    def ports_per_cage(self) -> int:
        return max(1, self.ports // max(1, self.cages))


class OpticModel(PlanItem):
    """A transceiver or cable. ``where`` = node | switch | cable."""

    opn: str
    where: Literal["node", "switch", "cable"]
    ports_400g: int
    port_speed_gbps: int
    reach_m: float
    power_w: float
    top: str | None = None


class MediaModel(PlanItem):
    """A way to join two ports (``media.yaml``): plugs, optics, reach, part per length."""

    kind: Literal["dac", "acc", "aoc", "fiber", "copper"]
    a_plug: str
    b_plug: str
    a_optic: str | None = None
    b_optic: str | None = None
    speed_gbps: int
    per_cable: Literal[1, "cage", "cage-pair"]
    reach_m: float
    lengths_m: dict[float, str]


class NicModel(PlanItem):
    """A network adapter (``nics.yaml``)."""

    opn: str
    ports: int
    port_speed_gbps: int
    cage: str
    ib_generation: Literal["HDR", "NDR"] | None = None
    """InfiniBand generation the adapter runs at full rate; None for Ethernet-only NICs."""
    fabric_cage: str | None = None
    """The cage type the cabling sees when it differs from ``cage`` (a ConnectX-7 OSFP card
    has a riding heat sink: ``OSFP-RHS``, flat-top plugs only)."""

    @property
    def cable_cage(self) -> str:
        return self.fabric_cage or self.cage


class PduModel(BaseModel):
    """A rack PDU (``rack.yaml: pdus``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    id: str
    name: str
    phases: int
    voltage_v: float
    current_a: float
    continuous_derating: float
    outlets_c13: int
    outlets_c19: int
    weight_kg: float
    sources: list[str]
    status: str

    @property
    def capacity_kw(self) -> float:
        """Continuous capacity: sqrt(3) x V x A x derating for three-phase (kW)."""
        phase = 3**0.5 if self.phases == 3 else 1.0
        return phase * self.voltage_v * self.current_a * self.continuous_derating / 1000.0


class FloorRules(BaseModel):
    """Cooling figures (``rack.yaml: floor``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    air_cooling_limit_kw: float
    air_cooling_limit_sources: list[str]
    air_delta_t_f: float


class ManagementTier(PlanItem):
    """How the management plane is sized up to ``max_compute_nodes`` (``management.yaml``)."""

    max_compute_nodes: int
    head_model: str
    heads: int
    service_nodes: int
    service_per_4_su: int
    ufm_appliances: int
    ufm_external_sm_above_su: int


class StorageModel(PlanItem):
    """A scale-out storage node (PowerScale)."""

    vendor: str
    rack_units: int
    drives_per_node: int
    drive_tb_options: list[float]
    min_nodes: int
    max_nodes: int
    frontend_ports_per_node: int
    frontend_port_speed_gbps: int
    backend_ports_per_node: int = 0
    backend_port_speed_gbps: int = 0
    frontend_cage: str = "QSFP28"
    backend_cage: str = "QSFP28"
    power_typical_w: float | None = None
    weight_kg: float | None = None
    read_gbytes_per_s_per_node: float
    write_gbytes_per_s_per_node: float
    power_w: float
    protection_overhead_fraction: float
    protection_overhead_fraction_by_nodes: dict[int, float] = Field(default_factory=dict)
    filesystem_reserve_fraction: float = 0.0
    data_reduction_ratio_planning: float = 1.0

    def protection_fraction(self, nodes: int) -> float:
        """Protection overhead for a pool of ``nodes`` (largest listed count at or below)."""
        table = self.protection_overhead_fraction_by_nodes
        eligible = [n for n in table if n <= nodes]
        return table[max(eligible)] if eligible else self.protection_overhead_fraction


class CloudInstance(PlanItem):
    """A cloud instance type (GPU node or head-node equivalent)."""

    provider: Literal["aws", "gcp", "azure"]
    role: Literal["gpu-compute", "head"]
    instance_type: str
    gpu: str | None = None
    gpus: int = 0
    vcpus: int
    memory_gib: float
    fabric: str
    fabric_interfaces: int
    fabric_gbps: float
    usd_per_hour: float
    default_region: str
    default_zone: str | None = None


class FsTierLimits(BaseModel):
    """Capacity rules of one throughput tier (GiB)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    capacity_min_gib: float
    capacity_max_gib: float | None = None
    capacity_step_gib: float
    capacity_step_above_gib: float | None = None
    capacity_large_step_gib: float | None = None


class FsSku(BaseModel):
    """One SKU of a service sold per SKU (Azure Managed Lustre), capacity in TiB."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    mbytes_per_s_per_tib: int
    capacity_min_tib: float
    capacity_max_tib: float
    capacity_step_tib: float


class CloudFilesystemModel(BaseModel):
    """A managed parallel file system (``cloud.yaml: filesystems``).

    Exactly one of three capacity shapes is given: global min/small sizes/step (FSx),
    per-tier limits (GCP Managed Lustre) or SKUs (Azure Managed Lustre).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)
    id: str
    name: str
    provider: Literal["aws", "gcp", "azure"]
    throughput_tiers_mbytes_per_s_per_tib: list[int]
    capacity_min_gib: float | None = None
    capacity_allowed_small_gib: list[float] = Field(default_factory=list)
    capacity_step_gib: float | None = None
    tiers: dict[int, FsTierLimits] = Field(default_factory=dict)
    skus: dict[str, FsSku] = Field(default_factory=dict)
    usd_per_tib_month_by_tier: dict[int, float] | None = None
    sources: list[str] = Field(default_factory=list)
    status: str = "E"


class PriceItem(PlanItem):
    """One price-book entry. ``usd`` None = no price known (a gap, shown as such)."""

    unit: str
    usd: float | None = None
    usd_base: float | None = None
    usd_per_m: float | None = None
    usd_per_raw_tb: float | None = None
    fraction_of_hardware: float | None = None
    date: str | None = None
    basis: str | None = None
    estimate: bool = True

    def usd_for_raw_tb(self, raw_tb: float) -> float | None:
        """A storage node's price: ``usd_base`` (chassis, licence share) + ``usd_per_raw_tb``
        x its raw TB; ``usd`` where the item has no per-TB price. The one formula the
        storage planner (cheapest node count and drive) and the BOM line both use."""
        if self.usd_per_raw_tb is None:
            return self.usd
        return (self.usd_base or 0.0) + self.usd_per_raw_tb * raw_tb


class RackModel(PlanItem):
    """The rack envelope (``rack.yaml``)."""

    rack_units: int
    pdus_per_rack_up_to_20kw: int
    pdus_per_rack_above_20kw: int
    reserved_top_u_for_switches: int = 0
    static_load_kg: float
    empty_weight_kg: float
    width_m: float
    depth_m: float


class FailureStats(PlanItem):
    """Published failure statistics of a large training run (``reliability.yaml``)."""

    gpus: int
    period_days: float
    interruptions_total: int
    gpu_or_hbm_interruptions_per_gpu_hour: float | None = None

    @property
    def gpu_hours(self) -> float:
        return self.gpus * self.period_days * 24.0

    @property
    def interruptions_per_gpu_hour(self) -> float:
        return self.interruptions_total / self.gpu_hours


class PlanCatalog:
    """Everything the plan reads from the catalog, loaded once per build."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.servers: dict[str, Server] = catalog.servers
        self.gpus: dict[str, Gpu] = catalog.gpus
        self.switches = catalog.family("switches", SwitchModel)
        self.optics = catalog.family("optics", OpticModel)
        self.storage = catalog.family("storage", StorageModel)
        self.reliability = catalog.family("reliability", FailureStats)
        self.racks = catalog.family("rack", _RackOrProfile)
        self.nics = catalog.family("nics", NicModel)
        self.media = catalog.family("media", MediaModel)
        self.management = catalog.family("management", ManagementTier)
        raw_media = catalog.raw("media")
        self.media_preference: list[str] = list(raw_media["preference"])
        self.cage_accepts: dict[str, list[str]] = dict(raw_media["cage_accepts"]["cages"])
        raw_rack = catalog.raw("rack")
        self.rack_overheads: dict[str, Any] = dict(raw_rack.get("overheads") or {})
        self.pdus = {
            k: PduModel.model_validate({"id": k, **v}) for k, v in raw_rack["pdus"].items()
        }
        self.floor = FloorRules.model_validate(raw_rack["floor"])

    @property
    def rack(self) -> RackModel:
        item = self.racks["rack-42u"]
        return RackModel.model_validate(item.model_dump())

    def cloud_instances(self) -> dict[str, CloudInstance]:
        return self.catalog.family("cloud", CloudInstance)

    def cloud_filesystems(self) -> dict[str, CloudFilesystemModel]:
        raw = self.catalog.raw("cloud").get("filesystems") or {}
        return {k: CloudFilesystemModel.model_validate({"id": k, **v}) for k, v in raw.items()}


class _RackOrProfile(PlanItem):
    """``rack.yaml`` mixes the rack item with power profiles; keep every key for later use."""

    model_config = ConfigDict(extra="allow", frozen=True)
