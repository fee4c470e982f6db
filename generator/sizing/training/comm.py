"""Communication volumes and times per GPU (sizing-models.md §9.5).

Ring collectives: an all-reduce moves 2(n-1)/n of the buffer through every GPU, an
all-gather or reduce-scatter (n-1)/n. Sequence parallelism turns each TP all-reduce into a
reduce-scatter + all-gather pair, the same bytes. Links: NVLink inside a node (per direction,
times an efficiency), otherwise each GPU's share of the node's NICs — so 4 NICs per node
halve every inter-node collective's bandwidth compared with 8. Latency is charged per
collective on a tree (2*log2 n hops), which is what NCCL switches to at scale.
"""

from __future__ import annotations

import math

from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout, sequence_tokens


def allreduce_bytes(size: float, n: int) -> float:
    """Bytes through each GPU for a ring all-reduce of ``size`` over ``n`` GPUs."""
    return 2.0 * (n - 1) / n * size if n > 1 else 0.0


def gather_bytes(size: float, n: int) -> float:
    """Bytes through each GPU for an all-gather or reduce-scatter of ``size`` (full buffer)."""
    return (n - 1) / n * size if n > 1 else 0.0


def latency(n: int, eff: Efficiency) -> float:
    """Start-up cost of one collective over ``n`` GPUs."""
    return 2.0 * math.ceil(math.log2(n)) * eff.network.collective_latency_s if n > 1 else 0.0


def nvlink_bw(device: Device, eff: Efficiency) -> float:
    """Achieved per-GPU NVLink bandwidth, one direction."""
    return device.nvlink_bytes_per_s * eff.network.nvlink_efficiency


def fabric_bw(node: Node, eff: Efficiency) -> float:
    """Achieved per-GPU share of the node's east-west NICs."""
    return node.fabric_bytes_per_s_per_gpu * eff.network.fabric_efficiency


def group_bw(
    span_gpus: int, node: Node, device: Device, eff: Efficiency, stride: int = 1
) -> float:
    """Per-rank bandwidth of a collective over ranks ``stride`` apart spanning ``span_gpus``.

    Ranks are laid out tp fastest, then cp, then pp, then dp: a group stays on NVLink when
    its whole extent fits in one node. Across nodes, a group with k = gpus/stride members
    in each node runs k NCCL channels, each on its own rail, so it gets k GPUs' share of the
    NICs (capped by NVLink): 8 ranks per node of an 8-NIC XE9680 see ~8 x 50 GB/s, one rank
    per node (TP8) sees its own 50 GB/s, and 4 NICs halve both.
    """
    if span_gpus <= node.gpus:
        return nvlink_bw(device, eff)
    per_node = max(1, node.gpus // stride) if stride < node.gpus else 1
    return min(per_node * fabric_bw(node, eff), nvlink_bw(device, eff))


def activation_size(job: Job, lay: Layout) -> float:
    """S = b * (s/c) * h * 2 bytes: one layer's bf16 activations for a micro-batch."""
    return lay.mbs * sequence_tokens(job, lay.mbs) / lay.cp * job.arch.hidden * 2.0


def tp_time(job: Job, lay: Layout, device: Device, eff: Efficiency) -> float:
    """TP collectives per micro-batch: 4 per layer (2 fwd, 2 bwd), 6 with full recompute."""
    if lay.tp == 1:
        return 0.0
    per_layer = 4 + 2 * lay.recompute_fraction(job.arch.layers)
    count = per_layer * math.ceil(job.arch.layers / lay.pp)
    size = activation_size(job, lay)
    moved = count * allreduce_bytes(size, lay.tp)
    return float(moved / nvlink_bw(device, eff) + count * latency(lay.tp, eff))


def cp_time(job: Job, lay: Layout, node: Node, device: Device, eff: Efficiency) -> float:
    """Ring exchange of K and V per layer: (c-1) chunks forward, twice that backward."""
    if lay.cp == 1:
        return 0.0
    arch = job.arch
    seq = sequence_tokens(job, lay.mbs) / lay.cp
    heads = arch.kv_heads / min(lay.tp, arch.kv_heads)
    kv_chunk = 2.0 * lay.mbs * seq * heads * arch.head_dim * 2.0
    moved = 3.0 * (lay.cp - 1) * kv_chunk * math.ceil(arch.layers / lay.pp)
    return moved / group_bw(lay.tp * lay.cp, node, device, eff)


def pp_time(job: Job, lay: Layout, node: Node, device: Device, eff: Efficiency) -> float:
    """Stage-boundary send/recv per micro-batch: S/t forward and back, v times when interleaved."""
    if lay.pp == 1:
        return 0.0
    moved = 2.0 * lay.vp * activation_size(job, lay) / lay.tp
    span = lay.tp * lay.cp * lay.pp
    return moved / group_bw(span, node, device, eff) + 2 * lay.vp * eff.network.collective_latency_s


def _dp_stride(job: Job, lay: Layout, eff: Efficiency) -> int:
    """Rank distance between DP peers; a framework without rail aggregation behaves as if
    every peer sat on another node (stride = a whole node)."""
    if eff.framework(job.framework).rail_aggregation:
        return lay.tp * lay.cp * lay.pp
    return 1 << 30


def dp_step_time(
    job: Job, lay: Layout, psi: float, grad_bytes: float, node: Node, device: Device,
    eff: Efficiency,
) -> float:
    """Once per step: reduce-scatter gradients and all-gather bf16 weights over d*c ranks.

    PEFT only reduces the adapters' fp32 gradients.
    """
    ranks = lay.dp * lay.cp
    if ranks == 1:
        return 0.0
    bw = group_bw(lay.gpus, node, device, eff, stride=_dp_stride(job, lay, eff))
    if job.frozen_base:
        moved = allreduce_bytes(4.0 * job.adapter_params / (lay.tp * lay.pp), ranks)
    else:
        moved = gather_bytes(psi * grad_bytes, ranks) + gather_bytes(psi * 2.0, ranks)
    return moved / bw + 2 * latency(ranks, eff)


def zero3_microbatch_time(
    job: Job, lay: Layout, psi: float, node: Node, device: Device, eff: Efficiency
) -> float:
    """ZeRO-3/FSDP per micro-batch: gather weights for forward and again for backward,
    reduce-scatter gradients — 1.5x a plain all-reduce of the weights."""
    if lay.dp == 1:
        return 0.0
    bw = group_bw(lay.gpus, node, device, eff, stride=_dp_stride(job, lay, eff))
    grads = 0.0 if job.frozen_base else gather_bytes(psi * 2.0, lay.dp)
    moved = 2.0 * gather_bytes(psi * 2.0, lay.dp) + grads
    return moved / bw + 3 * job.arch.layers * latency(lay.dp, eff)
