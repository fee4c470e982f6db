"""The user's workload spec: what to run, on what, by when.

Every model forbids unknown keys (a typo in the YAML is an error, not a silently ignored
field) and every field carries a description, which feeds ``podplan schema``. Catalog ids
(models, GPUs, servers) are plain strings here; ``spec.resolve`` checks them against the
catalog so the error can offer a did-you-mean from the real list.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from generator.spec.architecture import Attention, InlineArchitecture, Mlp
from generator.spec.base import SpecModel
from generator.spec.hardware import Hardware, NodeShape
from generator.spec.moe import MoeDispatcher
from generator.spec.site import (
    Cloud,
    EthernetSpec,
    FabricSpec,
    Facility,
    Network,
    Provisioning,
    Scheduler,
    Spares,
    Storage,
    SubnetManager,
)

__all__ = [
    "WORKLOAD_KINDS",
    "Attention",
    "Cloud",
    "Dataset",
    "EthernetSpec",
    "Evaluation",
    "FabricSpec",
    "Facility",
    "Framework",
    "Hardware",
    "InferenceParallelism",
    "InferenceWorkload",
    "InlineArchitecture",
    "Mlp",
    "MoeDispatcher",
    "Network",
    "NodeShape",
    "Parallelism",
    "Precision",
    "Provisioning",
    "Recompute",
    "Scheduler",
    "ServingEngine",
    "Spares",
    "Spec",
    "SpecModel",
    "Storage",
    "SubnetManager",
    "TrainingWorkload",
    "Workload",
]


class Precision(StrEnum):
    """Numeric format of the matrix math (weights and activations)."""

    bf16 = "bf16"
    fp8 = "fp8"


class Framework(StrEnum):
    """Efficiency profile: which software stack's published behaviour to assume."""

    nemo = "nemo"
    megatron = "megatron"
    fsdp = "fsdp"
    deepspeed = "deepspeed"
    hf = "hf"


class Recompute(StrEnum):
    """Activation recomputation level (Korthikanti et al. 2022)."""

    none = "none"
    selective = "selective"
    full = "full"


def _model_tag(value: Any) -> str:
    return "inline" if isinstance(value, dict | InlineArchitecture) else "id"


ModelRef = Annotated[
    Annotated[str, Tag("id")] | Annotated[InlineArchitecture, Tag("inline")],
    Discriminator(_model_tag),
]


class Parallelism(SpecModel):
    """Optional pins for the planner; anything left out is searched."""

    tp: int | None = Field(default=None, ge=1, description="Tensor-parallel size (within a node).")
    pp: int | None = Field(default=None, ge=1, description="Pipeline-parallel stages.")
    dp: int | None = Field(default=None, ge=1, description="Data-parallel replicas.")
    cp: int | None = Field(default=None, ge=1, description="Context-parallel size.")
    vp: int | None = Field(
        default=None, ge=1, description="Virtual pipeline stages (interleaving)."
    )
    recompute: Recompute | None = Field(
        default=None, description="Activation recomputation: none | selective | full."
    )
    ep: int | None = Field(
        default=None, ge=1,
        description="Expert-parallel size (MoE models): must divide the number of experts "
                    "and the ranks of a pipeline stage (tp x cp x dp).",
    )
    etp: int | None = Field(
        default=None, ge=1,
        description="Expert tensor-parallel size (MoE): ranks one expert is split over; "
                    "default 1 with ep > 1, else tp.",
    )
    moe_dispatcher: MoeDispatcher | None = Field(
        default=None,
        description="MoE token dispatcher: alltoall (one copy per selected expert) | deepep | "
                    "hybridep (Megatron-Core's flex backends, torchtitan's "
                    "expert_parallel_comm_backend: once per destination node). Default: the "
                    "framework's (alltoall).",
    )
    ep_comm_overlap: bool | None = Field(
        default=None,
        description="EP all-to-all overlapped with compute (Megatron-Core's "
                    "overlap_moe_expert_parallel_comm; nemo | megatron; not with full "
                    "recompute, and with vp when pp > 1). Default: false (exposed).",
    )


class ServingEngine(StrEnum):
    """Serving engines whose KV-cache sizing rule the model knows."""

    tensorrt_llm = "tensorrt-llm"
    vllm = "vllm"


class InferenceParallelism(SpecModel):
    """Optional pins for an inference deployment."""

    tp: int | None = Field(default=None, ge=1, description="Tensor-parallel size per replica.")
    pp: int | None = Field(
        default=None, ge=1,
        description="Pipeline stages per replica (across nodes when TP fills a node)."
    )
    ep: int | None = Field(
        default=None, ge=1,
        description="Expert-parallel size per replica (mixture-of-experts models; divides "
                    "the experts and tp x pp); chosen when absent.",
    )


class Dataset(SpecModel):
    """A fine-tuning or training dataset, described by its statistics."""

    samples: int = Field(gt=0, description="Samples in the training split.")
    avg_tokens_per_sample: float = Field(gt=0, description="Mean tokens per sample.")
    epochs: float = Field(default=1.0, gt=0, description="Passes over the dataset.")
    packed: bool = Field(
        default=False,
        description="Samples are packed into full sequences (no padding, no short micro-batches).",
    )


class Evaluation(SpecModel):
    """Periodic evaluation during training: forward-only passes over held-out samples."""

    every_samples: int = Field(gt=0, description="Evaluate after every this many training samples.")
    samples: int = Field(gt=0, description="Samples in each evaluation pass (forward only).")


class TrainingWorkload(SpecModel):
    """Pretraining or fine-tuning of one model; the work is steps, tokens or a dataset."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="Workload name.")
    kind: Literal["pretrain", "sft", "lora", "ptuning"] = Field(
        description="pretrain | sft | lora | ptuning."
    )
    model: ModelRef = Field(description="Catalog model id, or an inline architecture mapping.")
    precision: Precision = Field(default=Precision.bf16, description="bf16 | fp8.")
    framework: Framework = Field(
        default=Framework.nemo,
        description="Efficiency profile: nemo | megatron (Megatron-Core stacks), fsdp (PyTorch "
                    "FSDP: torchtitan, llm-foundry, ...), deepspeed, hf (Hugging Face "
                    "Trainer/Accelerate FSDP, PEFT).",
    )
    sequence_length: int = Field(default=4096, gt=0, description="Tokens per sequence.")
    global_batch_size: int = Field(default=128, gt=0, description="Sequences per optimizer step.")
    micro_batch_size: int | None = Field(
        default=None, gt=0, description="Sequences per GPU per micro-step; chosen when absent."
    )
    steps: int | None = Field(default=None, gt=0, description="Optimizer steps to run.")
    tokens: float | None = Field(default=None, gt=0, description="Training tokens to process.")
    dataset: Dataset | None = Field(default=None, description="Dataset statistics and epochs.")
    deadline_hours: float | None = Field(
        default=None, gt=0,
        description="Size the cluster to finish within this many hours of wall-clock "
                    "(compute, evaluation, checkpoints and failures).",
    )
    evaluation: Evaluation | None = Field(
        default=None, description="Periodic evaluation: {every_samples, samples}."
    )
    parallelism: Parallelism = Field(
        default_factory=Parallelism,
        description="Optional pins: tp, pp, dp, cp, vp, recompute, ep, etp; MoE: "
                    "moe_dispatcher, ep_comm_overlap."
    )

    @model_validator(mode="after")
    def _exactly_one_work(self) -> TrainingWorkload:
        given = [k for k in ("steps", "tokens", "dataset") if getattr(self, k) is not None]
        if len(given) != 1:
            what = ", ".join(given) if given else "none"
            raise ValueError(f"give exactly one of steps | tokens | dataset (got: {what})")
        if self.micro_batch_size and self.global_batch_size % self.micro_batch_size:
            raise ValueError("global_batch_size must be a multiple of micro_batch_size")
        return self


class InferenceWorkload(SpecModel):
    """Serving one model under an offered load and optional latency SLOs."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="Workload name.")
    kind: Literal["inference"] = Field(description="inference.")
    model: ModelRef = Field(description="Catalog model id, or an inline architecture mapping.")
    precision: Precision = Field(default=Precision.bf16, description="bf16 | fp8.")
    framework: Framework | None = Field(
        default=None, description="Accepted for symmetry; inference uses the serving profile."
    )
    engine: ServingEngine = Field(
        default=ServingEngine.tensorrt_llm,
        description="Serving engine, for its KV-cache rule: tensorrt-llm (0.9 of the memory "
                    "free after weights) | vllm (gpu_memory_utilization 0.9 of the total).",
    )
    input_tokens: int = Field(gt=0, description="Prompt tokens per request.")
    output_tokens: int = Field(gt=0, description="Generated tokens per request.")
    requests_per_minute: float | None = Field(
        default=None, gt=0, description="Offered load; absent = report saturated throughput."
    )
    ttft_ms: float | None = Field(default=None, gt=0, description="SLO: time to first token.")
    tpot_ms: float | None = Field(default=None, gt=0, description="SLO: time per output token.")
    parallelism: InferenceParallelism = Field(
        default_factory=InferenceParallelism, description="Optional pins: tp, pp, ep."
    )


TRAINING_KINDS = ("pretrain", "sft", "lora", "ptuning")
WORKLOAD_KINDS = (*TRAINING_KINDS, "inference")


def _workload_tag(value: Any) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    if kind == "inference":
        return "inference"
    return "training" if kind in TRAINING_KINDS else None


Workload = Annotated[
    Annotated[TrainingWorkload, Tag("training")] | Annotated[InferenceWorkload, Tag("inference")],
    Discriminator(_workload_tag),
]


class Spec(SpecModel):
    """A podplan spec: named workloads, the hardware to use, and site settings."""

    name: str = Field(
        pattern=r"^[a-z0-9-]+$", max_length=40, description="Cluster name; names all outputs."
    )
    workloads: list[Workload] = Field(min_length=1, description="What the cluster must run.")
    hardware: Hardware = Field(default_factory=Hardware, description="Server, GPU, NIC choice.")
    storage: Storage = Field(default_factory=Storage, description="Shared-storage needs.")
    facility: Facility = Field(default_factory=Facility, description="Rack power and space.")
    fabric: FabricSpec = Field(default_factory=FabricSpec, description="Compute-fabric options.")
    ethernet: EthernetSpec = Field(
        default_factory=EthernetSpec, description="Front-end NIC and site uplinks."
    )
    spares: Spares = Field(default_factory=Spares, description="Spare parts policy.")
    network: Network = Field(default_factory=Network, description="Address plans.")
    provisioning: Provisioning = Field(
        default_factory=Provisioning, description="Scheduler and clouds to generate."
    )
    prices: str | None = Field(
        default=None,
        description="Price-book YAML overriding the built-in one (path from the spec).",
    )
    site_calibration: str | None = Field(
        default=None,
        description="Site calibration YAML written by `podplan calibrate` from an acceptance "
                    "run of this cluster (path from the spec): sizing scales its built-in "
                    "efficiencies by the measured ones.",
    )

    @field_validator("workloads")
    @classmethod
    def _unique_names(cls, v: list[TrainingWorkload | InferenceWorkload]) -> list[Any]:
        names = [w.name for w in v]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"workload names must be unique (repeated: {', '.join(dup)})")
        return v

    @property
    def training(self) -> list[TrainingWorkload]:
        """The training workloads, in spec order."""
        return [w for w in self.workloads if isinstance(w, TrainingWorkload)]

    @property
    def inference(self) -> list[InferenceWorkload]:
        """The inference workloads, in spec order."""
        return [w for w in self.workloads if isinstance(w, InferenceWorkload)]
