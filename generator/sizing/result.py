"""What sizing decides: the layout, memory and time of every workload, and the cluster size.

``SizingResult.to_json()`` is the ``podplan size --json`` contract that other tools read;
keys there must not change without a version bump (new keys may be added). It carries every
field of every estimate (notes included: why a workload does not fit and what would), so it
says all the table says; floats keep at least four significant figures (``json_number``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def json_number(x: float, figures: int = 4) -> float | None:
    """``x`` rounded to ``figures`` significant figures, never fewer than one decimal: a
    13-second run is 0.003611 h, not 0.0; 26,837,693.1 GPU-h keep their digits. Infinity and
    NaN have no JSON spelling and become null."""
    if not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    return round(x, max(1, figures - 1 - math.floor(math.log10(abs(x)))))


def json_data(value: Any) -> Any:
    """A ``model_dump`` with every float passed through ``json_number``."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, dict):
        return {k: json_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_data(v) for v in value]
    return value


class TrainingLayout(Frozen):
    """A parallel layout for one training job."""

    tp: int
    pp: int
    dp: int
    cp: int = 1
    vp: int = 1
    micro_batch_size: int
    recompute: Literal["none", "selective", "full"]
    recompute_layers: int | None = Field(
        default=None,
        description="With recompute=full: layers per pipeline stage recomputed, when not all "
                    "(Megatron recompute_num_layers); None = every layer.",
    )
    shard: int | None = Field(
        default=None,
        description="ZeRO-3/FSDP: ranks one copy of the states is sharded over when fewer "
                    "than dp (HSDP; the rest replicate); None = FULL_SHARD or no ZeRO-3.",
    )
    ep: int = Field(
        default=1, description="Expert parallelism (MoE): ranks the routed experts are spread "
                               "over; 1 for dense models.",
    )
    etp: int | None = Field(
        default=None, description="Expert tensor parallelism with ep > 1 (ranks one expert is "
                                  "split over); None = the experts split like the dense layers.",
    )


class MemoryBreakdown(Frozen):
    """Per-GPU memory of the most loaded GPU, GiB."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    kv_cache_gib: float = 0.0
    overhead_gib: float

    @property
    def total_gib(self) -> float:
        return (
            self.weights_gib
            + self.gradients_gib
            + self.optimizer_gib
            + self.activations_gib
            + self.kv_cache_gib
            + self.overhead_gib
        )


class Candidate(Frozen):
    """A layout the planner evaluated, kept for the runner-up/rejection report."""

    gpus: int
    layout: TrainingLayout
    fits: bool
    memory_gib_per_gpu: float
    step_time_s: float | None = None
    time_hours: float | None = None
    reason: str = Field(default="", description="Why it lost or was rejected.")


class SeedEstimate(Frozen):
    """The seed document's rule of thumb, shown beside podplan's answer."""

    formula: str
    gpus: float | None = None
    hours: float | None = None
    note: str = ""


class Uncertainty(Frozen):
    """Band around an estimate's headline figure, from calibration residuals of its regime."""

    low_pct: float
    high_pct: float
    similar_measurements: int
    calibrated: bool
    regime: str = Field(default="", description="The regime the band comes from.")

    def to_json(self) -> dict[str, Any]:
        return {"low": round(self.low_pct, 1), "high": round(self.high_pct, 1),
                "similar_measurements": self.similar_measurements}


class MoeDispatch(Frozen):
    """How an MoE workload's expert-parallel all-to-all runs, and who said so."""

    dispatcher: Literal["alltoall", "deepep", "hybridep"] = Field(
        description="Token dispatcher: alltoall (one copy per selected expert) or DeepEP / "
                    "HybridEP (once per destination node and GPU).")
    ep_comm_overlap: bool = Field(
        description="Overlap of the all-to-all with another micro-batch's compute, as set.")
    overlapped: bool = Field(
        description="Whether the chosen layout overlaps it (EP > 1 and, for Megatron-Core, "
                    "no full recompute and VP under PP); false: exposed in full.")
    stated: bool = Field(
        description="true: set in the spec (parallelism.moe_dispatcher / ep_comm_overlap); "
                    "false: the framework's default.")

    def text(self) -> str:
        """``deepep dispatcher, overlapped with compute (stated)``: the size table's and the
        report's words."""
        how = "overlapped with compute" if self.overlapped else "exposed"
        who = "stated" if self.stated else "framework default"
        return f"{self.dispatcher} dispatcher, {how} ({who})"


class TrainingEstimate(Frozen):
    """Sizing answer for one training workload."""

    name: str
    kind: Literal["pretrain", "sft", "lora", "ptuning"]
    model: str
    gpus: int
    parallelism: TrainingLayout
    memory_gib_per_gpu: float
    memory: MemoryBreakdown
    fits: bool
    step_time_s: float
    step_time_parts_s: dict[str, float] = Field(
        default_factory=dict,
        description="One step's time by cause (s): compute, TP/CP/PP communication, ZeRO-3 "
                    "gathers, overheads, pipeline bubble, exposed DP communication, optimizer.",
    )
    steps: int
    processed_tokens: float
    tokens_per_second_per_gpu: float
    mfu: float
    time_hours: float = Field(description="Compute time: steps x step time.")
    evaluation_hours: float = Field(default=0.0, description="Periodic evaluation passes.")
    checkpoint_hours: float = Field(default=0.0, description="Writing checkpoints (Young/Daly).")
    failure_hours: float = Field(
        default=0.0, description="Work lost to interruptions and the restarts after them."
    )
    gpu_hours: float
    meets_deadline: bool | None = Field(description="Judged on the wall-clock total.")
    uncertainty: Uncertainty | None = None
    checkpoint_gb: float = Field(description="Size of one restartable checkpoint (GB, 1e9).")
    params_b: float
    runners_up: list[Candidate] = Field(default_factory=list)
    rejected: dict[str, int] = Field(
        default_factory=dict, description="Count of rejected layouts per reason."
    )
    seed: SeedEstimate | None = None
    notes: list[str] = Field(default_factory=list)
    moe_dispatch: MoeDispatch | None = Field(
        default=None, description="MoE models: the EP all-to-all's dispatcher and overlap.")

    wall_clock_hours: float = Field(
        default=0.0,
        description="Compute + evaluation + checkpoints + failures: what the deadline is "
                    "judged on (filled in from the parts when not given).",
    )

    @model_validator(mode="before")
    @classmethod
    def _wall_clock(cls, data: Any) -> Any:
        if isinstance(data, dict) and "wall_clock_hours" not in data:
            parts = ("time_hours", "evaluation_hours", "checkpoint_hours", "failure_hours")
            data = {**data, "wall_clock_hours": sum(float(data.get(k, 0.0)) for k in parts)}
        return data

    @model_serializer(mode="wrap")
    def _without_dense_dispatch(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Dense workloads carry no ``moe_dispatch`` key: their plan.yaml and JSON stay as
        they were before MoE settings existed."""
        data = handler(self)
        if self.moe_dispatch is None and isinstance(data, dict):
            data.pop("moe_dispatch", None)
        return data

    @property
    def uncertainty_pct(self) -> dict[str, Any] | None:
        """The band as ``size --json`` prints it (``{low, high, similar_measurements}``)."""
        return None if self.uncertainty is None else self.uncertainty.to_json()

    def to_json(self) -> dict[str, Any]:
        """Every field (the memory breakdown with its total, runners-up, rejected layouts,
        the seed rule, notes), floats to four significant figures, plus the time breakdown
        and the uncertainty band under the names the JSON contract gives them."""
        doc: dict[str, Any] = json_data(self.model_dump(mode="python"))
        doc["memory"]["total_gib"] = json_number(self.memory.total_gib)
        doc["time_breakdown_hours"] = {
            "compute": json_number(self.time_hours),
            "evaluation": json_number(self.evaluation_hours),
            "checkpoint": json_number(self.checkpoint_hours),
            "failures": json_number(self.failure_hours),
        }
        u = self.uncertainty
        doc["uncertainty_pct"] = None if u is None else u.to_json()
        doc["calibrated"] = None if u is None else u.calibrated
        return doc


class OperatingPoint(Frozen):
    """One operating point of a serving workload (all replicas)."""

    name: Literal["max-throughput", "latency"] = Field(
        description="max-throughput: the largest batch meeting the SLOs; latency: batch 1.")
    batch: int = Field(description="Sequences in flight per replica.")
    output_tokens_per_second: float
    ttft_ms: float
    tpot_ms: float


class ServingOption(Frozen):
    """Latency SLOs out of reach: another sizing of the same load, beside the sized plan's
    batch 1 on the nearest layout (a small miss otherwise read as a GPU count many times the
    load's): the SLOs eased to just past the nearest reach (``near_slo``), or set aside
    (``without_slo``: the fewest GPUs at the max-throughput batch)."""

    tpot_slo_ms: float | None = Field(default=None, description="The TPOT SLO it meets.")
    ttft_slo_ms: float | None = Field(default=None, description="The TTFT SLO it meets.")
    gpus: int
    replicas: int
    tp: int
    pp: int = 1
    ep: int = 1
    batch: int = Field(description="Sequences in flight per replica.")
    output_tokens_per_second: float = Field(description="All replicas together.")
    ttft_ms: float
    tpot_ms: float


class InferenceEstimate(Frozen):
    """Sizing answer for one inference workload."""

    name: str
    kind: Literal["inference"] = "inference"
    model: str
    engine: str = "tensorrt-llm"
    gpus: int
    replicas: int
    tp: int
    pp: int = 1
    ep: int = 1
    memory_gib_per_gpu: float
    fits: bool
    kv_cache_tokens: int = Field(
        default=0, description="KV-cache capacity of one replica in tokens (engine's rule).")
    output_tokens_per_second: float
    ttft_ms: float
    tpot_ms: float
    max_batch: int
    meets_slo: bool | None
    operating_points: list[OperatingPoint] = Field(default_factory=list)
    near_slo: ServingOption | None = Field(
        default=None, description="Only when the SLOs are missed (ServingOption).")
    without_slo: ServingOption | None = Field(
        default=None, description="Only when the SLOs are missed (ServingOption).")
    uncertainty: Uncertainty | None = None
    seed: SeedEstimate | None = None
    notes: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_met_slo(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A workload that meets its SLOs carries no ``near_slo``/``without_slo`` keys:
        plan.yaml and the JSON stay as they were for it."""
        data = handler(self)
        for key in ("near_slo", "without_slo"):
            if getattr(self, key) is None and isinstance(data, dict):
                data.pop(key, None)
        return data

    @property
    def uncertainty_pct(self) -> dict[str, Any] | None:
        """The band as ``size --json`` prints it (``{low, high, similar_measurements}``)."""
        return None if self.uncertainty is None else self.uncertainty.to_json()

    def to_json(self) -> dict[str, Any]:
        """Every field, plus ``parallelism: {tp, pp}`` as the JSON contract has always had,
        and the uncertainty band under the contract's names."""
        doc: dict[str, Any] = json_data(self.model_dump(mode="python"))
        doc["parallelism"] = {"tp": self.tp, "pp": self.pp, "ep": self.ep}
        u = self.uncertainty
        doc["uncertainty_pct"] = None if u is None else u.to_json()
        doc["calibrated"] = None if u is None else u.calibrated
        return doc


class SizingResult(Frozen):
    """The cluster size and every workload's estimate."""

    name: str
    server: str
    gpu: str
    gpus_per_node: int
    nodes: int
    gpus: int
    training: list[TrainingEstimate] = Field(default_factory=list)
    inference: list[InferenceEstimate] = Field(default_factory=list)
    fits: bool = Field(description="Every workload fits in memory on the chosen cluster.")
    order: list[str] = Field(default_factory=list, description="Workload names in spec order.")
    notes: list[str] = Field(default_factory=list)
    short_of_gpus: list[str] = Field(
        default_factory=list, exclude=True,
        description="The notes (also in ``notes``) that say the fixed hardware.gpus is too "
        "few: the plan's warning repeats them, found by this field rather than by their text.",
    )

    @property
    def workloads(self) -> list[TrainingEstimate | InferenceEstimate]:
        """All estimates in spec order."""
        every: list[TrainingEstimate | InferenceEstimate] = [*self.training, *self.inference]
        rank = {name: i for i, name in enumerate(self.order)}
        return sorted(every, key=lambda w: rank.get(w.name, len(rank)))

    def to_json(self) -> dict[str, Any]:
        """The ``podplan size --json`` document, workloads in spec order."""
        return {
            "name": self.name,
            "server": self.server,
            "gpu": self.gpu,
            "gpus_per_node": self.gpus_per_node,
            "nodes": self.nodes,
            "gpus": self.gpus,
            "fits": self.fits,
            "notes": list(self.notes),
            "workloads": [w.to_json() for w in self.workloads],
        }
