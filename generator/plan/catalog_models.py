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


class SwitchModel(PlanItem):
    """A switch: ``ports`` at ``port_speed_gbps`` as podplan uses it, plus optional uplinks."""

    vendor: str
    kind: Literal["infiniband", "ethernet"]
    managed: bool
    rack_units: int
    ports: int
    port_speed_gbps: int
    cages: int
    cage_type: str
    power_max_w: float
    uplink_ports: int = 0
    uplink_port_speed_gbps: int = 0

    @property
    def power_kw(self) -> float:
        return self.power_max_w / 1000.0

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


class CountingRules(BaseModel):
    """The optics counting rule for an NDR fat tree (``optics.yaml: counting_rules``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    node_optic: str
    switch_optic: str
    fiber: str
    sources: list[str] = Field(default_factory=list)


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
    usd_per_raw_tb: float | None = None
    fraction_of_hardware: float | None = None
    date: str | None = None
    basis: str | None = None
    estimate: bool = True


class RackModel(PlanItem):
    """The rack envelope (``rack.yaml``)."""

    rack_units: int
    pdus_per_rack_up_to_20kw: int
    pdus_per_rack_above_20kw: int
    reserved_top_u_for_switches: int = 0


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
        raw_optics = catalog.raw("optics")
        self.counting = CountingRules.model_validate(raw_optics["counting_rules"])
        raw_rack = catalog.raw("rack")
        self.rack_overheads: dict[str, Any] = dict(raw_rack.get("overheads") or {})

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
