"""Communication time per parallel dimension of a training layout (sizing-models.md §9.5).

Ranks are ordered as Megatron-Core orders them (``tp-cp-dp-pp``; the FSDP device mesh is
the same with dp split into shard and replicate): TP groups are consecutive ranks, CP
groups are TP apart, DP groups t*c apart, pipeline peers t*c*d apart. Where each group
lands (NVLink, PCIe or the fabric, and how many rails it spreads over) is
``collectives.group_link``; how long a collective takes there is ``collectives``.

Volumes: TP moves one layer's activations S = b*(s/c)*h*2 bytes per collective, 4 per layer
(2 forward, 2 backward; sequence parallelism swaps each all-reduce for a reduce-scatter +
all-gather pair, the same bytes), 6 when the layer's forward is recomputed in full. CP
rings K and V. PP sends S/t each way per stage boundary. The distributed optimizer
reduce-scatters gradients and all-gathers bf16 weights once per step; ZeRO-3/FSDP gathers
each layer's weights for forward and again for backward and reduce-scatters its gradients
every micro-batch, and HSDP all-reduces the gradient shard across replicas.

MoE: every MoE layer dispatches each token's hidden vector to its k experts and combines
the results back, an all-to-all over the EP group each way (2 forward, 2 backward, 2 more
when the layer's forward is recomputed). A rank sends what it routes: its sequence-parallel
share of the micro-batch, b*(s/c)/t tokens, times k*h*2 bytes (padded to the capacity
factor) with the ``alltoall`` dispatcher (Megatron-Core's MoEAlltoAllTokenDispatcher
permutes one copy of a token per selected expert). DeepEP and HybridEP (``deepep``: the
``flex`` dispatcher, NeMo AutoModel's) deduplicate: ``get_dispatch_layout`` counts tokens
per destination rank and per RDMA rank (``num_tokens_per_rank``, ``num_tokens_per_rdma_rank``,
``is_token_in_rank``), so a token crosses the fabric once per destination node, to the
GPU of its own rail there, which forwards it over NVLink once per destination GPU
(``dispatch_bytes``; DeepEP README, "normal kernels"; AutoModel
``components/moe/megatron/fused_a2a.py``). The expert grid is ordered etp-ep-edp, so EP
peers are etp ranks apart. The routed experts' gradients and weights are reduced and
gathered over the expert-data-parallel group (t*c*d/(ep*etp) ranks, ep*etp apart) instead
of the dense d*c.
"""

from __future__ import annotations

import math

from generator.sizing.model.collectives import (
    all_gather,
    all_reduce,
    all_to_all,
    dedup_all_to_all,
    group_link,
    send_recv,
)
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout, sequence_tokens
from generator.sizing.model.params import moe_layers


def allreduce_bytes(size: float, n: int) -> float:
    """Bytes through each GPU for a ring all-reduce of ``size`` over ``n`` GPUs."""
    return 2.0 * (n - 1) / n * size if n > 1 else 0.0


def gather_bytes(size: float, n: int) -> float:
    """Bytes through each GPU for an all-gather or reduce-scatter of ``size`` (full buffer)."""
    return (n - 1) / n * size if n > 1 else 0.0


def activation_size(job: Job, lay: Layout) -> float:
    """S = b * (s/c) * h * 2 bytes: one layer's bf16 activations for a micro-batch."""
    return lay.mbs * sequence_tokens(job, lay.mbs) / lay.cp * job.arch.hidden * 2.0


def tp_collectives(job: Job, lay: Layout, forward_only: bool = False) -> float:
    """TP collectives per micro-batch on the busiest stage: 2 forward per layer, 2 backward,
    and 2 more for every layer whose forward is recomputed."""
    per_layer = 2.0 if forward_only else 4.0 + 2.0 * lay.recompute_fraction(job.arch.layers)
    return per_layer * math.ceil(job.arch.layers / lay.pp)


def tp_time(
    job: Job, lay: Layout, node: Node, device: Device, eff: Efficiency,
    forward_only: bool = False,
) -> float:
    """Seconds of TP communication per micro-batch (before overlap)."""
    if lay.tp == 1:
        return 0.0
    link = group_link(lay.tp, 1, node, device, eff)
    one = all_reduce(activation_size(job, lay), lay.tp, link, eff)
    return tp_collectives(job, lay, forward_only) * one


def cp_time(job: Job, lay: Layout, node: Node, device: Device, eff: Efficiency) -> float:
    """Ring exchange of K and V per layer: (c-1) chunks forward, twice that backward."""
    if lay.cp == 1:
        return 0.0
    arch = job.arch
    seq = sequence_tokens(job, lay.mbs) / lay.cp
    heads = arch.kv_heads / min(lay.tp, arch.kv_heads)
    kv_chunk = 2.0 * lay.mbs * seq * heads * arch.head_dim * 2.0
    layers = math.ceil(arch.layers / lay.pp)
    link = group_link(lay.cp, lay.tp, node, device, eff)
    return 3.0 * (lay.cp - 1) * layers * send_recv(kv_chunk, link, eff)


def a2a_bytes(job: Job, lay: Layout) -> float:
    """Bytes one rank sends in one MoE dispatch (or combine): its b*(s/c)/t tokens, each to
    k experts, h bf16 values each, padded to the capacity factor."""
    tokens = lay.mbs * sequence_tokens(job, lay.mbs) / (lay.cp * lay.tp)
    arch = job.arch
    return tokens * arch.top_k * job.capacity_factor * arch.hidden * 2.0


def hit_fraction(experts: int, groups: int, k: int) -> float:
    """Probability that a token whose k distinct experts are drawn uniformly from ``experts``
    (balanced routing) picks at least one expert of a given group of experts/groups:
    1 - C(E - E/G, k) / C(E, k)."""
    if groups <= 1:
        return 1.0
    left = experts - experts / groups
    miss = 1.0
    for i in range(k):
        miss *= max(left - i, 0.0) / (experts - i)
    return 1.0 - miss


def groups_spanned(experts: int, groups: int, k: int, routing: str) -> float:
    """Expected number of the ``groups`` equal, consecutive groups of experts (GPUs, nodes)
    one token's k experts fall in. ``random``: G * ``hit_fraction``. ``contiguous``
    (AutoModel's fake balanced gate): token t takes experts t*k ... t*k+k-1 mod E, so the
    mean over the cycle of block starts of the groups one block of k neighbours touches."""
    if groups <= 1:
        return 1.0
    if routing != "contiguous":
        return groups * hit_fraction(experts, groups, k)
    size = experts / groups
    starts = experts // math.gcd(experts, k)
    total = 0
    for t in range(starts):
        first = (t * k) % experts
        total += len({int(((first + j) % experts) // size) for j in range(k)})
    return total / starts


def dispatch_bytes(job: Job, lay: Layout, node: Node) -> tuple[float, float]:
    """(NVLink bytes, fabric bytes) one rank sends in one deduplicating (DeepEP/HybridEP)
    dispatch or combine over an EP group of n ranks on N nodes, g per node: each of its
    tokens, h bf16 values, goes once to every node its experts span (``groups_spanned``),
    (N-1)/N of them remote, and over NVLink once to every GPU they span besides the rail
    peer, (g-1)/g of them (its own and forwarded tokens alike); padded to the capacity."""
    arch = job.arch
    tokens = lay.mbs * sequence_tokens(job, lay.mbs) / (lay.cp * lay.tp)
    vector = tokens * job.capacity_factor * arch.hidden * 2.0
    per_node = max(1, min(lay.ep, node.gpus // lay.expert_tp))
    nodes = math.ceil(lay.ep / per_node)
    k, experts = arch.top_k, arch.experts
    fabric = vector * groups_spanned(experts, nodes, k, job.routing) * (nodes - 1) / nodes
    gpus = groups_spanned(experts, lay.ep, k, job.routing)
    nvlink = vector * gpus * (per_node - 1) / per_node
    return nvlink, fabric


def ep_time(
    job: Job, lay: Layout, node: Node, device: Device, eff: Efficiency,
    forward_only: bool = False,
) -> float:
    """Seconds of MoE all-to-all per micro-batch on the busiest stage (before overlap)."""
    if lay.ep == 1 or not job.arch.moe:
        return 0.0
    arch = job.arch
    n_moe = min(math.ceil(arch.layers / lay.pp), moe_layers(arch))
    per_layer = 2.0 if forward_only else 4.0 + 2.0 * lay.recompute_fraction(arch.layers)
    if dispatcher(job, eff) == "deepep":
        nvlink, fabric = dispatch_bytes(job, lay, node)
        one = dedup_all_to_all(nvlink, fabric, lay.ep, lay.expert_tp, node, device, eff)
    else:
        one = all_to_all(a2a_bytes(job, lay), lay.ep, lay.expert_tp, node, device, eff)
    return per_layer * n_moe * one


def dispatcher(job: Job, eff: Efficiency) -> str:
    """The MoE token dispatcher: the run's stated one, else its stack's."""
    return job.moe_dispatcher or eff.framework(job.framework).moe_dispatcher


def ep_exposed(job: Job, eff: Efficiency, lay: Layout | None = None) -> float:
    """Share of the EP all-to-all left exposed: ``overlap.ep`` where the run (or its stack)
    overlaps it with another micro-batch's compute, none where its schedule states a full
    overlap (DualPipe, ``Job.ep_overlap_full``), else all of it."""
    if job.ep_overlap_full:
        return 0.0
    if job.ep_overlap is None:
        return eff.framework(job.framework).ep_exposed
    return eff.overlap.ep if job.ep_overlap and ep_overlap_runs(job, lay) else 1.0


def ep_overlap_runs(job: Job, lay: Layout | None) -> bool:
    """Whether Megatron-Core would run the stated overlap on this layout: it refuses
    ``overlap_moe_expert_parallel_comm`` with full recompute, and with pipeline parallelism
    unless virtual stages are set (``transformer_config.py``). Only where the job follows
    those rules (``Job.ep_overlap_megatron_rules``)."""
    if lay is None or not job.ep_overlap_megatron_rules:
        return True
    return lay.recompute != "full" and (lay.pp == 1 or lay.vp > 1)


def expert_dp_step_time(
    job: Job, lay: Layout, psi_expert: float, grad_bytes: float, node: Node, device: Device,
    eff: Efficiency,
) -> float:
    """Once per step: reduce-scatter the routed experts' gradients and all-gather their
    weights over the expert-data-parallel group. ``psi_expert``: expert parameters one GPU
    holds (Ψ_experts / (ep*etp))."""
    ranks = lay.expert_dp
    if ranks == 1 or psi_expert == 0 or job.frozen_base:
        return 0.0
    link = group_link(ranks, lay.ep * lay.expert_tp, node, device, eff)
    return (all_gather(psi_expert * grad_bytes, ranks, link, eff)
            + all_gather(psi_expert * 2.0, ranks, link, eff))


def pp_time(
    job: Job, lay: Layout, node: Node, device: Device, eff: Efficiency,
    forward_only: bool = False,
) -> float:
    """Stage-boundary send/recv per micro-batch: S/t forward and back, v times interleaved."""
    if lay.pp == 1:
        return 0.0
    link = group_link(lay.pp, lay.tp * lay.cp * lay.dp, node, device, eff)
    sends = (1 if forward_only else 2) * lay.vp
    return sends * send_recv(activation_size(job, lay) / lay.tp, link, eff)


def dp_step_time(
    job: Job, lay: Layout, psi: float, grad_bytes: float, node: Node, device: Device,
    eff: Efficiency,
) -> float:
    """Once per step (distributed optimizer): reduce-scatter gradients and all-gather bf16
    weights over the d*c ranks of a stage. PEFT only all-reduces the adapters' gradients."""
    ranks = lay.dp * lay.cp
    if ranks == 1:
        return 0.0
    link = group_link(ranks, lay.tp, node, device, eff)
    if job.frozen_base:
        return all_reduce(4.0 * job.adapter_params / (lay.tp * lay.pp), ranks, link, eff)
    return (all_gather(psi * grad_bytes, ranks, link, eff)
            + all_gather(psi * 2.0, ranks, link, eff))


def hsdp_step_time(
    job: Job, lay: Layout, psi: float, grad_bytes: float, node: Node, device: Device,
    eff: Efficiency,
) -> float:
    """Once per step (HSDP under pipeline parallelism): reduce-scatter gradients and gather
    weights within the shard group, all-reduce the gradient shard across replicas."""
    shard, replicas = lay.shard_ranks, lay.replicas
    if job.frozen_base:
        link = group_link(lay.dp, lay.tp * lay.cp, node, device, eff)
        return all_reduce(4.0 * job.adapter_params / (lay.tp * lay.pp), lay.dp, link, eff)
    shard_link = group_link(shard, lay.tp * lay.cp, node, device, eff)
    replica_link = group_link(replicas, lay.tp * lay.cp * shard, node, device, eff)
    return (all_gather(psi * grad_bytes, shard, shard_link, eff)
            + all_gather(psi * 2.0, shard, shard_link, eff)
            + all_reduce(psi * grad_bytes / shard, replicas, replica_link, eff))


def zero3_time(
    job: Job, lay: Layout, psi: float, grad_bytes: float, node: Node, device: Device,
    eff: Efficiency, forward_only: bool = False, pieces: int = 1,
) -> float:
    """ZeRO-3/FSDP per micro-batch, layer by layer: gather the bf16 weights for forward and
    again for backward, reduce-scatter the gradients; HSDP then all-reduces each gradient
    shard across replicas. ``psi``: the stage's parameters per TP rank. ``pieces``: separate
    collectives a stack issues per layer and direction (FSDP: one flat buffer per layer;
    DeepSpeed ZeRO-3 of 2021: one per parameter tensor), each paying its own latency."""
    shard, replicas = lay.shard_ranks, lay.replicas
    layers = math.ceil(job.arch.layers / lay.pp)
    per_layer = psi / layers
    shard_link = group_link(shard, lay.tp * lay.cp, node, device, eff)
    gathers = 1 if forward_only else 2
    one_gather = pieces * all_gather(per_layer * 2.0 / pieces, shard, shard_link, eff)
    total = layers * gathers * one_gather
    if forward_only:
        return total
    grads = 4.0 * job.adapter_params / (lay.tp * lay.pp) / layers if job.frozen_base else (
        per_layer * grad_bytes)
    if job.frozen_base:  # frozen weights: only the adapters' gradients are reduced
        ranks = lay.dp
        link = group_link(ranks, lay.tp * lay.cp, node, device, eff)
        return total + all_reduce(grads * layers, ranks, link, eff)
    total += layers * pieces * all_gather(grads / pieces, shard, shard_link, eff)
    if replicas > 1:
        link = group_link(replicas, lay.tp * lay.cp * shard, node, device, eff)
        total += layers * all_reduce(grads / shard, replicas, link, eff)
    return total


def expert_zero3_time(
    job: Job, lay: Layout, psi_expert: float, grad_bytes: float, node: Node, device: Device,
    eff: Efficiency, forward_only: bool = False,
) -> float:
    """ZeRO-3/FSDP with EP, per micro-batch: each MoE layer's local experts (Ψ_experts /
    (ep*etp) over the stage's MoE layers) are gathered over the expert-data-parallel ranks
    for forward and backward and their gradients reduce-scattered there."""
    ranks = lay.expert_dp
    n_moe = min(math.ceil(job.arch.layers / lay.pp), moe_layers(job.arch))
    if ranks == 1 or n_moe == 0 or psi_expert == 0:
        return 0.0
    per_layer = psi_expert / n_moe
    link = group_link(ranks, lay.ep * lay.expert_tp, node, device, eff)
    gathers = 1 if forward_only else 2
    total = n_moe * gathers * all_gather(per_layer * 2.0, ranks, link, eff)
    if not (forward_only or job.frozen_base):
        total += n_moe * all_gather(per_layer * grad_bytes, ranks, link, eff)
    return total
