"""Time of one optimizer step for a layout (sizing-models.md §9.4).

t_step = (m + (p-1)/v) * t_mb + DP exposed + optimizer + fixed per-step overhead, with
t_mb = max(GPU time, CPU launch time) + MoE post-sync CPU time + exposed TP/CP/PP/EP
communication + per-micro-batch overhead (an MoE layer's token dispatcher syncs with the
host, so the CPU work after that sync cannot run ahead of the GPU: it adds). The GPU time
is hardware FLOPs ÷ (peak * η), and η falls for small GEMMs:

    η = peak_fraction(GPU) * framework scale / (1 + (n0/n)^k) / (1 + w0/w)

with n = b*s/c the rows of every GEMM (tokens in the micro-batch) and w = h/t its shard
width. Short sequences are therefore slow twice over: small GEMMs, and a CPU that cannot
launch a layer's kernels as fast as the GPU finishes them. fp8 only speeds up the GEMMs
(by ``fp8_speedup`` < 2: quantisation, amax and casts cost time); the attention core stays
in bf16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.sizing.model.efficiency import Efficiency, Framework
from generator.sizing.model.flops import TokenFlops, hardware_flops
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout, sequence_tokens
from generator.sizing.model.params import moe_layers
from generator.sizing.training import comm
from generator.sizing.training.memory import held_params, rank_layers, stage_params


@dataclass(frozen=True, slots=True)
class MicrobatchTime:
    """Seconds for one micro-batch through one pipeline stage (``total`` is their sum,
    stored because the planner reads it many times)."""

    compute: float
    tp: float
    cp: float
    pp: float
    overhead: float
    zero3: float
    ep: float = 0.0
    """Exposed MoE all-to-all (dispatch and combine)."""
    total: float = field(init=False)

    def __post_init__(self) -> None:
        total = (self.compute + self.tp + self.cp + self.pp + self.overhead + self.zero3
                 + self.ep)
        object.__setattr__(self, "total", total)


@dataclass(frozen=True, slots=True)
class StepTime:
    """Seconds for one optimizer step, by cause (``total`` stored, as above)."""

    microbatch: MicrobatchTime
    microbatches: int
    bubble: float
    dp_exposed: float
    optimizer: float
    fixed: float
    total: float = field(init=False)

    def __post_init__(self) -> None:
        total = (self.microbatches * self.microbatch.total + self.bubble + self.dp_exposed
                 + self.optimizer + self.fixed)
        object.__setattr__(self, "total", total)


def step_parts(step: StepTime) -> dict[str, float]:
    """One step's seconds by cause, for reports (they sum to ``step.total``)."""
    mb, m = step.microbatch, step.microbatches
    return {
        "compute": m * mb.compute,
        "tp_communication": m * mb.tp,
        "cp_communication": m * mb.cp,
        "pp_communication": m * mb.pp,
        "ep_communication": m * mb.ep,
        "zero3_gathers": m * mb.zero3,
        "microbatch_overhead": m * mb.overhead,
        "pipeline_bubble": step.bubble,
        "dp_exposed_communication": step.dp_exposed,
        "optimizer": step.optimizer,
        "fixed_per_step": step.fixed,
    }


def gemm_efficiency(
    job: Job, lay: Layout, device: Device, eff: Efficiency, expert: bool = False
) -> float:
    """η for this micro-batch shape: see the module docstring. ``expert``: the routed
    experts' grouped GEMMs, whose rows are the tokens one expert receives,
    b*(s/c)/t * etp * ep * k * capacity / E, and whose width is the expert's f/etp."""
    c = eff.compute
    tokens = lay.mbs * sequence_tokens(job, lay.mbs) / lay.cp
    width = job.arch.hidden / lay.tp
    if expert:
        arch = job.arch
        tokens *= (lay.expert_tp * lay.ep * arch.top_k * job.capacity_factor
                   / (lay.tp * arch.experts))
        width = arch.ffn / lay.expert_tp
    size: float = 1.0 / (1.0 + (c.tokens_half / tokens) ** c.tokens_exponent)
    size /= 1.0 + c.width_half / width
    return c.peak_fraction(device.id) * eff.framework(job.framework).compute_scale * size


def fp8_gain(job: Job, device: Device, eff: Efficiency) -> float:
    """GEMM speed-up of fp8 over bf16 (the spec refuses fp8 on GPUs without it)."""
    if job.precision != "fp8" or device.fp8_flops is None:
        return 1.0
    return min(eff.compute.fp8_speedup, device.fp8_flops / device.bf16_flops)


def attention_factor(job: Job, device: Device, eff: Efficiency) -> float:
    """The attention core's speed relative to the GEMMs (FlashAttention 2 on Hopper lags;
    head dimension 64 lags on Hopper)."""
    kernel = eff.framework(job.framework).attention_kernel
    return eff.compute.attention_factor(kernel, device.architecture, job.arch.head_dim)


def token_flops(job: Job, lay: Layout) -> TokenFlops:
    """Hardware FLOPs per processed token for this layout's sequence length and recompute."""
    seq = sequence_tokens(job, lay.mbs)
    fraction = lay.recompute_fraction(job.arch.layers)
    return hardware_flops(job.arch, job.kind, seq, lay.recompute, job.adapter_params, fraction,
                          job.capacity_factor)


def flops_seconds(
    job: Job, lay: Layout, flops: TokenFlops, tokens: float, device: Device, eff: Efficiency
) -> float:
    """Seconds for ``tokens`` tokens of ``flops`` on one GPU of the busiest stage: the dense
    GEMMs and attention at the micro-batch's η, the routed experts at their own (every
    rank of the stage does 1/(t*c) of the experts' work whatever ep is: EP moves tokens,
    not FLOPs). The busiest stage is the last when the output layer outweighs the layers
    it lacks (``busiest_stage``)."""
    gain = fp8_gain(job, device, eff)
    eta = gemm_efficiency(job, lay, device, eff)
    dense = (flops.gemm / gain + flops.attention / attention_factor(job, device, eff)) / eta
    if flops.expert:
        dense += flops.expert / gain / gemm_efficiency(job, lay, device, eff, expert=True)
    busiest = busiest_stage(job, lay.pp, dense, head_flops(job, flops) / gain / eta)
    return busiest * tokens / (lay.tp * lay.cp * device.bf16_flops)


def busiest_stage(job: Job, pp: int, work: float, head: float) -> float:
    """The slowest pipeline rank's share of a token's ``work`` (any unit), of which ``head``
    is the output layer's: every rank runs its layers' share of the rest (``rank_layers``:
    ceil(L/p) each, or Megatron's embedding/loss split), and the last rank the output layer
    too, which 1F1B cannot hide: the pipeline runs at its slowest stage."""
    layers = job.arch.layers
    body = work - head
    first, middle, last = rank_layers(job, pp)
    return max(first * body / layers, middle * body / layers, last * body / layers + head)


def head_flops(job: Job, flops: TokenFlops) -> float:
    """The output layer's GEMMs per token (2, 4 or 6 * V * h for forward, frozen or trained
    training), which only the last pipeline stage runs: the weight FLOPs a token does
    against the logits matrix, ``flops.gemm``'s share of them."""
    arch = job.arch
    per_weight = 4.0 if job.frozen_base else 6.0
    return min(flops.gemm, per_weight * arch.vocab * arch.hidden)


def compute_time(job: Job, lay: Layout, device: Device, eff: Efficiency) -> float:
    """GPU time of one micro-batch's math on one GPU of the busiest stage (ceil(L/p) layers)."""
    tokens = lay.mbs * sequence_tokens(job, lay.mbs)
    return flops_seconds(job, lay, token_flops(job, lay), tokens, device, eff)


def launch_time(job: Job, lay: Layout, eff: Efficiency) -> float:
    """CPU time to issue one micro-batch's kernels for the stage's layers (runs ahead of
    the GPU, so it only shows when it exceeds the GPU time)."""
    layers = math.ceil(job.arch.layers / lay.pp)
    factor = 1.0 + lay.recompute_fraction(job.arch.layers) / 3.0
    return eff.compute.layer_overhead_s * layers * factor


def _moe_cpu_time(job: Job, lay: Layout, eff: Efficiency, per_layer_s: float) -> float:
    """``per_layer_s`` for each MoE layer of the stage's busiest stage, recomputed ones
    again (none where the stack's dispatch is sync-free: no host sync, its CPU runs ahead)."""
    if not eff.framework(job.framework).moe_host_sync:
        return 0.0
    layers = math.ceil(job.arch.layers / lay.pp)
    factor = 1.0 + lay.recompute_fraction(job.arch.layers) / 3.0
    return per_layer_s * min(layers, moe_layers(job.arch)) * factor


def moe_sync_time(job: Job, lay: Layout, eff: Efficiency) -> float:
    """CPU time of the stage's MoE layers spent after the dispatcher's host sync, before
    the GPU gets work again."""
    return _moe_cpu_time(job, lay, eff, eff.compute.moe_layer_overhead_s)


def moe_launch_time(job: Job, lay: Layout, eff: Efficiency) -> float:
    """CPU time of the stage's MoE layers spent issuing post-sync kernels the GPU runs as
    they arrive."""
    return _moe_cpu_time(job, lay, eff, eff.compute.moe_layer_launch_s)


def busy_time(job: Job, lay: Layout, device: Device, eff: Efficiency) -> float:
    """GPU busy time of one micro-batch: the math, or the CPU launch when that is slower,
    plus the MoE layers' post-sync CPU time, which the GPU waits out."""
    gpu = compute_time(job, lay, device, eff)
    cpu = launch_time(job, lay, eff) + moe_launch_time(job, lay, eff)
    return max(gpu, cpu) + moe_sync_time(job, lay, eff)


def _zero3_exposed(moved: float, busy: float, fw: Framework) -> float:
    """ZeRO-3 gathers run behind the previous layer's compute: what exceeds the compute is
    exposed in full, the rest by the stack's measured share."""
    return max(moved - busy, 0.0) + fw.dp_exposed * min(moved, busy)


def microbatch_time(
    job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency
) -> MicrobatchTime:
    """One micro-batch on one stage, with the exposed part of its communication."""
    fw = eff.framework(job.framework)
    busy = busy_time(job, lay, device, eff)
    zero3 = 0.0
    if fw.shards_per_layer(lay.pp):
        zero3 = _zero3_exposed(_zero3_moved(job, lay, device, node, eff), busy, fw)
    return MicrobatchTime(
        compute=busy,
        tp=fw.tp_exposed * comm.tp_time(job, lay, node, device, eff),
        cp=fw.cp_exposed * comm.cp_time(job, lay, node, device, eff),
        pp=fw.pp_exposed * comm.pp_time(job, lay, node, device, eff),
        overhead=fw.microbatch_overhead_s,
        zero3=zero3,
        ep=comm.ep_exposed(job, eff, lay) * comm.ep_time(job, lay, node, device, eff),
    )


def _expert_split(job: Job, lay: Layout) -> tuple[float, float]:
    """(Ψ per TP rank of what the dense groups reduce, expert Ψ the expert groups reduce):
    with EP or expert TP of its own, the routed experts leave the dense groups."""
    psi = stage_params(job, lay.tp, lay.pp)
    if lay.ep == 1 and lay.expert_tp == lay.tp:
        return psi, 0.0
    dense, expert = held_params(job, lay)
    return dense, expert


def _zero3_moved(
    job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency,
    forward_only: bool = False,
) -> float:
    """ZeRO-3 traffic of one micro-batch: dense layers over the shard group, routed experts
    over their expert-data-parallel group."""
    fw = eff.framework(job.framework)
    psi, expert = _expert_split(job, lay)
    moved = comm.zero3_time(job, lay, psi, fw.grad_bytes, node, device, eff,
                            forward_only=forward_only, pieces=fw.gathers_per_layer)
    return moved + comm.expert_zero3_time(job, lay, expert, fw.grad_bytes, node, device, eff,
                                          forward_only=forward_only)


def forward_time(job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency) -> float:
    """One forward-only micro-batch on one stage (evaluation): the model's forward FLOPs
    (a third of training's weight GEMMs and attention, no recompute), the forward half of
    TP/PP traffic and, under ZeRO-3, one gather per layer."""
    fw = eff.framework(job.framework)
    seq = sequence_tokens(job, lay.mbs)
    flops = hardware_flops(job.arch, "pretrain", seq, "none", job.adapter_params,
                           capacity_factor=job.capacity_factor)
    gpu = flops_seconds(job, lay, flops, lay.mbs * seq, device, eff) / 3.0
    plain = lay._replace(recompute="none")
    cpu = launch_time(job, plain, eff) + moe_launch_time(job, plain, eff)
    busy = max(gpu, cpu / 3.0) + moe_sync_time(job, plain, eff) / 3.0
    exposed = (fw.tp_exposed * comm.tp_time(job, lay, node, device, eff, forward_only=True)
               + fw.pp_exposed * comm.pp_time(job, lay, node, device, eff, forward_only=True)
               + comm.ep_exposed(job, eff, lay)
               * comm.ep_time(job, lay, node, device, eff, forward_only=True))
    if fw.shards_per_layer(lay.pp):
        moved = _zero3_moved(job, lay, device, node, eff, forward_only=True)
        exposed += _zero3_exposed(moved, busy, fw)
    return busy + exposed + fw.microbatch_overhead_s


def optimizer_time(job: Job, lay: Layout, device: Device, eff: Efficiency) -> float:
    """Adam sweeps the local optimizer shard: a memory-bound pass at HBM speed."""
    fw = eff.framework(job.framework)
    if job.frozen_base:
        shard = job.adapter_params / (lay.tp * lay.pp)
    else:
        shards = lay.shard_ranks * lay.cp if fw.sharding == "zero3" else lay.dp * lay.cp
        shard = stage_params(job, lay.tp, lay.pp) / shards
    o = eff.optimizer
    return shard * o.bytes_touched_per_param / (device.hbm_bytes_per_s * o.hbm_efficiency)


def dp_comm_time(job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency) -> float:
    """The once-per-step DP reduction (the distributed optimizer's, and ZeRO-3's under
    pipeline parallelism); ZeRO-3 without it pays per micro-batch instead."""
    fw = eff.framework(job.framework)
    if fw.shards_per_layer(lay.pp):
        return 0.0
    psi, expert = _expert_split(job, lay)
    experts = comm.expert_dp_step_time(job, lay, expert, fw.grad_bytes, node, device, eff)
    if fw.sharding == "zero3" and lay.replicas > 1:
        return comm.hsdp_step_time(job, lay, psi, fw.grad_bytes, node, device, eff) + experts
    return comm.dp_step_time(job, lay, psi, fw.grad_bytes, node, device, eff) + experts


def assemble(
    lay: Layout, m: int, mb: MicrobatchTime, dp: float, optimizer: float, fw: Framework,
    flushes: int = 0,
) -> StepTime:
    """Combine the parts: m micro-batches, the (p-1)/v bubble, and the part of the DP
    reduction that the last micro-batch's backward (and the next step's first forward)
    cannot hide. ``flushes`` > 0 (``schedule_flushes``): the schedule runs that many times
    a step, each with its own bubble and its own DP reduction after its last backward,
    exposed in full."""
    window = mb.total
    bubble = (lay.pp - 1) / lay.vp * mb.total
    if flushes:
        return StepTime(microbatch=mb, microbatches=m, bubble=flushes * bubble,
                        dp_exposed=flushes * dp, optimizer=optimizer, fixed=fw.step_overhead_s)
    return StepTime(
        microbatch=mb, microbatches=m, bubble=bubble,
        dp_exposed=max(dp - window, 0.0) + fw.dp_exposed * min(dp, window),
        optimizer=optimizer, fixed=fw.step_overhead_s,
    )


def schedule_flushes(job: Job, lay: Layout, fw: Framework) -> int:
    """Pipeline schedule calls a step where the stack runs one per local batch under
    pipeline parallelism (``Framework.schedule_per_local_batch``), else 0."""
    return job.local_batches if lay.pp > 1 and fw.schedule_per_local_batch else 0


def step_time(
    job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency,
    mb: MicrobatchTime | None = None,
) -> StepTime:
    """Everything in one optimizer step (``mb``: a cached ``microbatch_time`` for this shape)."""
    return assemble(
        lay, lay.microbatches(job.global_batch),
        mb or microbatch_time(job, lay, device, node, eff),
        dp_comm_time(job, lay, device, node, eff), optimizer_time(job, lay, device, eff),
        eff.framework(job.framework),
        schedule_flushes(job, lay, eff.framework(job.framework)),
    )
