"""Typed views of the catalog data files (``generator/catalog/data/<family>.yaml``).

Each data item carries ``sources`` (ids into ``sources.yaml``) and a ``status`` tag saying
how far the figure can be trusted; both are kept on the model so reports can cite them.
Families used only by one stage (switches, optics, storage, cloud, prices) may define their
models next to that stage and load them with ``Catalog.family``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from generator.spec.architecture import Attention, Mlp


class Status(StrEnum):
    """How a figure was established (see shared/reference/hardware-catalog.md)."""

    verified = "V"
    third_party = "V-3P"
    recalled = "R"
    estimate = "E"
    low = "LOW"


class FieldSource(BaseModel):
    """Source of one field whose provenance differs from its item's."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sources: list[str] = Field(default_factory=list)
    status: Status


class CatalogItem(BaseModel):
    """Common to every catalog item: where the figures come from and how sure we are."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str
    sources: list[str] = Field(min_length=1)
    status: Status
    field_sources: dict[str, FieldSource] = Field(default_factory=dict)
    notes: str | None = None

    def citation(self, field: str | None = None) -> str:
        """Sources and status tag for the item, or for one field if it has its own."""
        fs = self.field_sources.get(field or "")
        sources, status = (fs.sources, fs.status) if fs else (self.sources, self.status)
        return f"{', '.join(sources)} [{status.value}]"


class Gpu(CatalogItem):
    """An accelerator: dense peak math rates, memory and its bandwidth."""

    form_factor: Literal["sxm", "pcie"]
    architecture: Literal["ampere", "ada", "hopper", "blackwell"] = Field(
        description="GPU generation: which kernels (FlashAttention 2 or 3, cuDNN) run well."
    )
    memory_gb: float
    memory_total_mib: float | None = Field(
        default=None,
        description="Memory the CUDA driver reports (nvidia-smi memory.total, MiB): what a "
                    "serving engine sizes its KV cache from. None: not measured.",
    )
    memory_bandwidth_tbps: float
    nvlink_gbps: float = Field(description="Per-GPU NVLink bandwidth, both directions (GB/s).")
    pcie_gen: int
    pcie_gbps: float = Field(
        description="Per-GPU PCIe x16 bandwidth, both directions (GB/s): the peer-to-peer "
                    "path between GPUs that NVLink does not join."
    )
    tdp_w: float
    nvlink_links: int | None = Field(
        default=None,
        description="NVLink links per GPU (what nvidia-smi topo -m shows as NV<n> between two "
                    "GPUs behind NVSwitch); None where unknown or no NVLink.",
    )
    bf16_dense_tflops: float
    fp8_dense_tflops: float | None
    slurm_gres_type: str
    cloud_equivalent_family: str | None = None

    @property
    def memory_bytes(self) -> float:
        """Usable device memory in bytes (vendor GB are 10^9 bytes)."""
        return self.memory_gb * 1e9

    @property
    def supports_fp8(self) -> bool:
        """FP8 tensor cores (Hopper, Ada, Blackwell); ``fp8_dense_tflops: null`` means none."""
        return self.fp8_dense_tflops is not None


class Server(CatalogItem):
    """A server model: GPU slots, NIC options, CPUs, power and rack footprint."""

    vendor: str
    role: Literal["gpu-compute", "head"]
    rack_units: int
    gpu_slots: int
    gpu_options: list[str] = Field(default_factory=list)
    gpu_interconnect: Literal["nvswitch", "nvlink-bridge", "pcie", "none"]
    east_west_nic_options: list[int] = Field(
        default_factory=list,
        description="Supported GPU-fabric NIC counts; the first is the default.",
    )
    east_west_nic_gbps: float = Field(
        default=0.0, description="Line rate of one GPU-fabric NIC (Gb/s); 0 without a fabric."
    )
    north_south_nics: int
    cpu_sockets: int
    cpu_model: str
    cores_per_socket: int
    threads_per_core: int
    memory_gb: float
    max_power_kw: float
    typical_power_kw: float
    weight_kg: float | None = None
    mount_below_u: int | None = None
    psu_count: int | None = None
    psu_w: float | None = None
    east_west_nic: str = Field(default="cx7-osfp-1x400", description="GPU-fabric NIC id.")
    east_west_built_in: bool = Field(
        default=False, description="The fabric NICs are part of the system (DGX): not priced again."
    )
    east_west_cage: str = Field(default="OSFP-RHS", description="Cage type of a fabric port.")
    east_west_ports_per_cage: int = Field(default=1, ge=1, le=2)
    north_south_nic_default: str | None = Field(
        default=None, description="Front-end NIC id used unless the spec names another."
    )
    north_south_built_in: bool = False
    bmc_cage: str = "RJ45"
    airflow_cfm: float | None = None

    @property
    def default_east_west_nics(self) -> int:
        """The NIC count a spec gets when it does not choose one (0: no GPU fabric)."""
        return self.east_west_nic_options[0] if self.east_west_nic_options else 0


class ModelArchitecture(CatalogItem):
    """A published LLM architecture (from its config.json, paper or recipe)."""

    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    ffn_hidden_size: int
    mlp: Mlp
    vocab_size: int
    tied_embeddings: bool = False
    experts: int = 1
    top_k: int = 1
    head_dim: int | None = None
    """d_h where a x d_h != h (Qwen3, GPT-OSS); for MLA the non-rotary q/k head width."""
    shared_experts: int = 0
    shared_expert_ffn_hidden_size: int | None = None
    dense_ffn_hidden_size: int | None = None
    """Width of the dense layers of an MoE model (ffn_hidden_size is one routed expert's)."""
    first_k_dense_layers: int = 0
    moe_layer_frequency: int = 1
    attention: Attention = Attention.gqa
    q_lora_rank: int = 0
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None
    """Tokens a sliding-window attention layer attends (HF ``sliding_window``)."""
    sliding_window_layers: int = 0
    """Layers using it (HF ``layer_types`` entries ``sliding_attention``)."""
    max_sequence_length: int | None = None
    published_params_b: float | None = None
    published_active_params_b: float | None = None


class Source(BaseModel):
    """A document a figure comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    title: str
    url: str | None = None
