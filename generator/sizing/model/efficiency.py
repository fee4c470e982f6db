"""Efficiency parameters and software-stack profiles as data: ``catalog/data/efficiency.yaml``.

Formulas say how work turns into time; these numbers say how well real software does it
(fraction of peak a GEMM reaches, how much communication hides behind compute, fixed
overheads). They are fitted by ``benchmarks/fit.py`` on ``benchmarks/data/calibration.csv``
and kept out of the code so a refit is a data change.

A framework profile describes a software stack by its *features*, not by fitted fudge:
how it shards states (Megatron's distributed optimizer or ZeRO-3/FSDP), whether it runs
sequence parallelism, which recompute granularities it offers (Megatron: selective, full,
or full on some layers; FSDP/HF: whole blocks, all or nothing), whether it overlaps TP
communication with GEMMs, whether attention is fused (no s^2 scores), and which parallel
dimensions it can run. The share of each communication left exposed is one physical
parameter per kind of overlap (``overlap:``), shared by every stack that has the feature.
Plain frozen dataclasses, not pydantic, because the planner reads them millions of times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from generator.errors import PodplanError

EFFICIENCY_FILE = Path(str(resources.files("generator.catalog") / "data" / "efficiency.yaml"))

Sharding = Literal["distributed", "zero3"]
RECOMPUTE_LEVELS = ("none", "selective", "full")
SMALL_HEAD_MEASURED_ON = "hopper"
"""The GPU architecture ``Compute.head_dim_64_attention`` was measured on."""
DIMENSIONS = frozenset({"tp", "pp", "cp", "vp", "hsdp", "ep"})
"""Parallel dimensions a stack may run (``ep``: expert parallelism, for MoE)."""


@dataclass(frozen=True, slots=True)
class Compute:
    """How close matrix math gets to the GPU's dense peak."""

    gemm_efficiency: dict[str, float]
    tokens_half: float
    tokens_exponent: float
    width_half: float
    fp8_speedup: float
    layer_overhead_s: float
    fa2_efficiency: dict[str, float]
    """FlashAttention-2's speed relative to the GEMMs, by GPU architecture: tuned for Ampere,
    it reaches ~35 % of an H100's peak where Hopper kernels (FA3, cuDNN) reach ~75 %."""
    head_dim_64_attention: dict[str, float] = field(default_factory=dict)
    """An attention kernel's speed at head dimension 64 relative to 128, by kernel, on
    Hopper: at d_h 64 each score costs half the matrix FLOPs for the same softmax
    exponentials, so the kernel is bound by its exponent units, not its tensor cores.
    FlashAttention-3 paper (Shah et al. 2024, Fig. 5, H100 SXM5, BF16 forward, seqlen 4k):
    cuDNN 408 vs 609 TFLOP/s (fused: 0.67), FlashAttention-2 321 vs 368 (fa2: 0.87); the
    backward pass is taken to slow the same way [R]. Head dims between 64 and 128 were
    not measured and are left at 1."""
    moe_layer_overhead_s: float = 0.0
    """CPU time per MoE layer and micro-batch spent after the token dispatcher's host sync
    (Megatron's all-to-all and DeepEP dispatchers copy the tokens per expert to the host
    to size their buffers): the CPU cannot run ahead across the sync, so the GPU waits
    out the kernels issued after it (permutation, grouped-GEMM set-up, combine). It is
    added to the micro-batch's time rather than hidden behind the GPU's."""
    moe_layer_launch_s: float = 0.0
    """CPU time per MoE layer and micro-batch, after the same sync, spent issuing kernels
    the GPU runs as they arrive (permutation, the grouped GEMM's per-expert GEMMs, combine):
    it overlaps the GPU's work, so it shows only where the CPU is the slower of the two."""

    def peak_fraction(self, gpu_id: str) -> float:
        """Best-case fraction of peak for large GEMMs on this GPU (``default`` if unlisted)."""
        return self.gemm_efficiency.get(gpu_id, self.gemm_efficiency["default"])

    def attention_factor(self, kernel: str, architecture: str, head_dim: int = 128) -> float:
        """Attention-core speed relative to the GEMMs for a stack's attention kernel and the
        model's head dimension (``head_dim_64_attention``: measured on Hopper only)."""
        small = 1.0
        if head_dim <= 64 and architecture == SMALL_HEAD_MEASURED_ON:
            small = self.head_dim_64_attention.get(kernel, 1.0)
        if kernel != "fa2":
            return small
        return small * self.fa2_efficiency.get(architecture, self.fa2_efficiency["default"])


@dataclass(frozen=True, slots=True)
class Memory:
    """What the formulas leave out of per-GPU memory."""

    usable_fraction: float
    overhead_gib: float
    zero3_live_layers: float


@dataclass(frozen=True, slots=True)
class Network:
    """The fraction of each link's rate that collectives achieve, and per-hop latency."""

    nvlink_efficiency: float
    pcie_efficiency: float
    fabric_efficiency: float
    hop_latency_s: float
    deepep_rdma_efficiency: float = 0.86
    """Share of a NIC's line rate DeepEP/HybridEP dispatch reaches (GPU-initiated RDMA):
    the lowest of its README's internode figures, 43 GB/s (EP16) per ~50 GB/s CX7."""


@dataclass(frozen=True, slots=True)
class Overlap:
    """Share of each communication a stack with the matching feature leaves exposed."""

    tp: float
    """TP collectives when the stack overlaps them with GEMMs (TE userbuffers, async TP)."""
    dp: float
    """The distributed optimizer's bucketed reduce-scatter / all-gather behind backward."""
    fsdp: float
    """ZeRO-3 / FSDP gathers prefetched behind the previous layer's compute."""
    pp: float
    cp: float
    ep: float = 1.0
    """MoE all-to-all dispatch/combine left exposed where the stack overlaps it with another
    micro-batch's compute (Megatron-Core's ``--overlap-moe-expert-parallel-comm``, the
    Bridge recipes' ``moe_a2a_overlap``). DeepSeek's DualPipe states a full overlap and
    exposes none (``Job.ep_overlap_full``). Without either the dispatch sits on the compute
    stream's critical path: exposed in full."""


@dataclass(frozen=True, slots=True)
class Framework:
    """A software stack: its features (data) and the exposure they imply."""

    name: str
    family: str
    """The user-facing profile this one is (or derives from): nemo, megatron, fsdp, deepspeed."""
    compute_scale: float
    sharding: Sharding
    grad_bytes: float
    sequence_parallel: bool
    tp_comm_overlap: bool
    fused_attention: bool
    attention_kernel: str
    """fused (cuDNN / FlashAttention 3: as fast as the GEMMs) or fa2 (FlashAttention 2)."""
    recompute: tuple[str, ...]
    """Recompute levels offered, lightest first."""
    partial_recompute: bool
    """Full recompute may cover only some layers of a stage (Megatron recompute_num_layers)."""
    parallelism: frozenset[str]
    """Dimensions the stack runs besides data parallelism (tp, pp, cp, vp, hsdp, ep)."""
    step_overhead_s: float
    microbatch_overhead_s: float
    gathers_per_layer: int
    """ZeRO-3 collectives per layer and direction (1: a flat buffer per layer, FSDP)."""
    tp_exposed: float
    dp_exposed: float
    pp_exposed: float
    cp_exposed: float
    ep_exposed: float = 1.0
    optimizer_bytes: float = 12.0
    """Optimizer state per trained parameter: fp32 master copy + Adam m, v (12, Megatron's
    distributed optimizer, DeepSpeed, FSDP with fp32 master weights); 4 where the resident
    parameter is bf16 and torch Adam keeps m, v in the parameter's dtype (NeMo AutoModel's
    default ``torch_dtype`` bf16 with ``torch.optim.Adam``: no separate master copy)."""
    moe_dispatcher: str = "alltoall"
    """MoE token dispatcher: ``alltoall`` (Megatron-Core's MoEAlltoAllTokenDispatcher and
    NCCL all-to-all: a token is copied once per selected expert) or ``deepep`` (DeepEP /
    HybridEP, Megatron's ``flex`` dispatcher, NeMo AutoModel's default: a token crosses the
    fabric once per destination node and NVLink once per destination GPU,
    ``comm.dispatch_bytes``)."""
    ep_comm_overlap: bool = False
    """Whether the stack overlaps the EP all-to-all with another micro-batch's compute
    (Megatron-Core's ``overlap_moe_expert_parallel_comm``, default off). Off: exposed in
    full (``ep_exposed`` 1); on: ``overlap.ep``."""
    schedule_per_local_batch: bool = False
    """Whether, under pipeline parallelism, the stack runs the pipeline schedule once per
    local batch, GA times a step (NeMo AutoModel's ``train_ft.py`` calls
    ``schedule.step`` per gradient-accumulation batch): each call fills and drains the
    pipeline, and its FSDP2 stages reduce-scatter gradients after the call's last backward
    (``fsdp_mixin.py``: gradient sync off during the schedule, ``post_backward`` run by
    hand at the end), where no compute is left to hide them."""
    moe_host_sync: bool = True
    """Whether the MoE token dispatcher copies the tokens per expert to the host every layer
    (Megatron's dropless all-to-all and DeepEP dispatchers do, to size their buffers).
    False for Megatron-Core's sync-free mode (HybridEP with ``moe_expert_rank_capacity_factor``
    and TE's fused grouped MLP: buffers pre-sized from the capacity, so nothing waits for the
    host and the iteration can be captured in CUDA graphs)."""

    def runs(self, dim: str) -> bool:
        """Whether the stack can run parallel dimension ``dim``."""
        return dim in self.parallelism

    def shards_per_layer(self, pp: int) -> bool:
        """ZeRO-3 gathers and reduces layer by layer every micro-batch, except under pipeline
        parallelism: there FSDP keeps a stage's weights gathered across its micro-batches
        and reduces gradients once per step (torchtitan and Llama 3 do not reshard after
        forward), which is the distributed optimizer's traffic and memory."""
        return self.sharding == "zero3" and pp == 1


@dataclass(frozen=True, slots=True)
class Optimizer:
    """Adam's update is a memory-bound sweep over the local optimizer shard."""

    bytes_touched_per_param: float
    hbm_efficiency: float


@dataclass(frozen=True, slots=True)
class Peft:
    """Adapter defaults (NeMo/Megatron-Bridge conventions)."""

    lora_rank: int
    lora_targets: tuple[str, ...]
    ptuning_virtual_tokens: int
    ptuning_bottleneck: int


@dataclass(frozen=True, slots=True)
class Inference:
    """Serving-side parameters (sizing/inference/; calibrated on TensorRT-LLM runs, fitted in
    their own stage by benchmarks/fit.py)."""

    hbm_efficiency: float
    gemm_efficiency: float
    attention_efficiency: float
    fp8_speedup: float
    expert_gemm_efficiency: float
    step_overhead_s: float
    sequence_overhead_s: float
    sglang_step_overhead_s: float
    """SGLang's per-iteration host time on top of ``step_overhead_s`` (steps.step_overhead_s);
    fitted on the SGLang rows of the inference stage."""
    cross_node_all_reduce_s: float
    """Extra latency of one TP all-reduce whose group spans nodes (steps.comm_s): the
    engines' custom one-shot all-reduce is intra-node only (vLLM/SGLang
    ``custom_all_reduce.py``: "Custom allreduce is disabled because this process group
    spans across nodes"), so such a TP group falls back to an NCCL all-reduce over the
    fabric, whose per-call latency (network hops, proxy thread) the byte-and-hop collective
    model does not carry. Fitted on the multi-node serving rows."""
    all_reduce_latency_s: float
    """Fixed cost of one intra-node TP all-reduce in a serving engine (its custom one-shot
    kernel over NVLink, steps.tp_all_reduce); measured, not fitted."""
    all_reduce_bytes_per_s: float
    """Buffer bytes per second the custom all-reduce kernel adds beyond its latency (the
    slope of its measured time over message size, steps.tp_all_reduce); not fitted."""
    max_batch: int
    max_num_tokens: int
    runtime_reserve_gib: float
    trtllm_free_memory_fraction: float
    vllm_gpu_memory_utilization: float


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Every efficiency parameter and stack profile the sizing engine uses."""

    compute: Compute
    memory: Memory
    network: Network
    overlap: Overlap
    frameworks: dict[str, Framework]
    optimizer: Optimizer
    peft: Peft
    inference: Inference

    def framework(self, name: str) -> Framework:
        """Profile for ``name``; unknown names are a data error, not a silent default."""
        try:
            return self.frameworks[name]
        except KeyError:
            known = ", ".join(sorted(self.frameworks))
            raise PodplanError(f"no efficiency profile for framework '{name}' ({known})") from None


INTEGER_INFERENCE_KEYS = ("max_batch", "max_num_tokens")


def from_mapping(doc: dict[str, Any]) -> Efficiency:
    """Build ``Efficiency`` from the YAML mapping (``fit.py`` edits the mapping and calls this)."""
    try:
        c, m, n, ov, o, p, i = (doc[k] for k in ("compute", "memory", "network", "overlap",
                                                  "optimizer", "peft", "inference"))
        overlap = Overlap(**{k: float(v) for k, v in ov.items()})
        profiles = {**doc["frameworks"], **doc.get("calibration_stacks", {})}
        return Efficiency(
            compute=Compute(
                gemm_efficiency={str(k): float(v) for k, v in c["gemm_efficiency"].items()},
                fa2_efficiency={str(k): float(v) for k, v in c["fa2_efficiency"].items()},
                **{k: float(c[k]) for k in ("tokens_half", "tokens_exponent", "width_half",
                                            "fp8_speedup", "layer_overhead_s",
                                            "moe_layer_overhead_s")},
                moe_layer_launch_s=float(c.get("moe_layer_launch_s", 0.0)),
                head_dim_64_attention={str(k): float(v) for k, v in
                                       c.get("head_dim_64_attention", {}).items()},
            ),
            memory=Memory(**{k: float(v) for k, v in m.items()}),
            network=Network(**{k: float(v) for k, v in n.items()}),
            overlap=overlap,
            frameworks={name: _framework(name, profiles, overlap, set(doc["frameworks"]))
                        for name in profiles},
            optimizer=Optimizer(**{k: float(v) for k, v in o.items()}),
            peft=Peft(int(p["lora_rank"]), tuple(p["lora_targets"]),
                      int(p["ptuning_virtual_tokens"]), int(p["ptuning_bottleneck"])),
            inference=Inference(
                max_batch=int(i["max_batch"]), max_num_tokens=int(i["max_num_tokens"]),
                **{k: float(v) for k, v in i.items() if k not in INTEGER_INFERENCE_KEYS},
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"efficiency data is malformed ({exc!r})"
        raise PodplanError(problem, str(EFFICIENCY_FILE)) from None


def _merged(name: str, profiles: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """A profile with its ``base`` profile's values filled in (one level of inheritance is
    how calibration stacks say "Megatron as of 2021": the same stack minus a feature)."""
    f = dict(profiles[name])
    base = f.pop("base", None)
    if base is None:
        return f
    if depth > 3:
        raise ValueError(f"profile '{name}': base chain too long")
    return {**_merged(base, profiles, depth + 1), **f}


def _family(name: str, profiles: dict[str, Any], users: set[str]) -> str:
    while name not in users:
        name = profiles[name]["base"]
    return name


def _framework(
    name: str, profiles: dict[str, Any], overlap: Overlap, users: set[str]
) -> Framework:
    f = _merged(name, profiles)
    sharding = f["sharding"]
    if sharding not in ("distributed", "zero3"):
        raise ValueError(f"sharding must be distributed or zero3, not {sharding}")
    recompute = tuple(str(r) for r in f["recompute"])
    if not recompute or any(r not in RECOMPUTE_LEVELS for r in recompute):
        raise ValueError(f"profile '{name}': recompute must list levels of {RECOMPUTE_LEVELS}")
    dims = frozenset(str(d) for d in f["parallelism"])
    unknown = sorted(dims - DIMENSIONS)
    if unknown:
        raise ValueError(f"profile '{name}': unknown parallel dimensions {unknown}")
    tp_overlap = bool(f["tp_comm_overlap"])
    return Framework(
        name=name, family=_family(name, profiles, users),
        compute_scale=float(f["compute_scale"]), sharding=sharding,
        grad_bytes=float(f["grad_bytes"]), sequence_parallel=bool(f["sequence_parallel"]),
        tp_comm_overlap=tp_overlap, fused_attention=bool(f["fused_attention"]),
        attention_kernel=str(f.get("attention_kernel", "fused")),
        recompute=recompute, partial_recompute=bool(f["partial_recompute"]), parallelism=dims,
        step_overhead_s=float(f["step_overhead_s"]),
        microbatch_overhead_s=float(f["microbatch_overhead_s"]),
        gathers_per_layer=int(f.get("gathers_per_layer", 1)),
        tp_exposed=overlap.tp if tp_overlap else 1.0,
        dp_exposed=overlap.dp if sharding == "distributed" else overlap.fsdp,
        pp_exposed=overlap.pp, cp_exposed=overlap.cp,
        ep_exposed=overlap.ep if bool(f.get("ep_comm_overlap", False)) else 1.0,
        moe_dispatcher=_dispatcher(name, f), ep_comm_overlap=bool(f.get("ep_comm_overlap", False)),
        moe_host_sync=bool(f.get("moe_host_sync", True)),
        schedule_per_local_batch=bool(f.get("schedule_per_local_batch", False)),
        optimizer_bytes=float(f.get("optimizer_bytes", 12.0)),
    )


MOE_DISPATCHERS = ("alltoall", "deepep")


def _dispatcher(name: str, f: dict[str, Any]) -> str:
    dispatcher = str(f.get("moe_dispatcher", "alltoall"))
    if dispatcher not in MOE_DISPATCHERS:
        raise ValueError(f"profile '{name}': moe_dispatcher must be one of {MOE_DISPATCHERS}")
    return dispatcher


def read_mapping(path: Path = EFFICIENCY_FILE) -> dict[str, Any]:
    """The raw YAML document."""
    # libyaml when built (as the catalog reads its files): the same document, faster
    doc = yaml.load(path.read_text(encoding="utf-8"),
                    Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(doc, dict):
        raise PodplanError("efficiency data must be a mapping", str(path))
    return doc


@cache
def default_efficiency() -> Efficiency:
    """The shipped, fitted parameters."""
    return from_mapping(read_mapping())
