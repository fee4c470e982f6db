"""Collectives as NCCL runs them: which links a group of ranks uses, and how long it takes.

**Placement.** Ranks fill nodes in order; a group is ``ranks`` members ``stride`` ranks
apart (TP: stride 1; DP over a TP x CP model: stride t*c; the FSDP replicas of an HSDP
layout: stride t*shard). A group whose whole extent fits in one node runs on NVLink when
NVLink joins all its GPUs, otherwise peer-to-peer over PCIe (L40S; H100 PCIe beyond a
bridged pair). A group across nodes has k = gpus_per_node / stride members in each node
(at least one).

**Bandwidth across nodes.** NCCL builds one ring (or tree) channel per rail and spreads the
inter-node hops of a group over the NICs of its k members, so the group sees k times one
GPU's share of the node's NICs: DP over a TP1 layout on an 8x 400G node sees all eight
rails (~8 x 50 GB/s), DP over TP8 sees one rail per rank, but the node's eight TP ranks run
eight such groups at once, one per rail. Either way every rail of the node carries traffic;
only the bytes crossing the node differ. The intra-node hops of the same ring cap it.

**Time.** Ring all-gather / reduce-scatter: (n-1)/n of the buffer through every rank and
n-1 hop latencies. All-reduce: the faster of a ring (2(n-1)/n of the buffer, 2(n-1) hops)
and NCCL's double binary tree (~2x the buffer, 2 log2 n hops), which is why NCCL switches
to trees for small messages at scale. All-to-all (MoE token dispatch and combine): every
rank sends (n-1)/n of its buffer, to peers on its node over NVLink and to the others over
its own rail (DeepEP and NCCL route each GPU's remote traffic through the NIC of its rail,
so the node's eight rails carry the eight GPUs' traffic at once); the two paths run
concurrently, the slower one sets the time, and every peer is sent to at once (one hop of
latency).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node


@dataclass(frozen=True, slots=True)
class Link:
    """What a group of ranks gets: achieved bytes/s per rank on its slowest hop."""

    bytes_per_s: float
    nodes: int
    """Nodes the group spans (1: all on one node)."""


def intra_node_bw(span: int, node: Node, device: Device, eff: Efficiency) -> float:
    """Achieved per-GPU bandwidth inside a node for a group ``span`` consecutive GPUs wide."""
    if span <= node.nvlink_domain and device.nvlink_bytes_per_s > 0:
        return device.nvlink_bytes_per_s * eff.network.nvlink_efficiency
    return device.pcie_bytes_per_s * eff.network.pcie_efficiency


def rail_bw(node: Node, eff: Efficiency) -> float:
    """Achieved share of the node's east-west NICs per GPU (one rail with 8 NICs)."""
    return node.fabric_bytes_per_s_per_gpu * eff.network.fabric_efficiency


def group_link(ranks: int, stride: int, node: Node, device: Device, eff: Efficiency) -> Link:
    """The link a group of ``ranks`` members ``stride`` ranks apart runs on (see module doc)."""
    span = ranks * stride
    gpn = node.gpus
    if span <= gpn:
        return Link(intra_node_bw(span, node, device, eff), 1)
    per_node = max(1, min(ranks, gpn // stride))
    nodes = math.ceil(ranks / per_node)
    local = intra_node_bw(per_node * stride, node, device, eff) if per_node > 1 else math.inf
    return Link(min(per_node * rail_bw(node, eff), local), nodes)


def _transfer(size: float, link: Link) -> float:
    return size / link.bytes_per_s if link.bytes_per_s > 0 else math.inf


def all_gather(size: float, ranks: int, link: Link, eff: Efficiency) -> float:
    """Seconds for a ring all-gather (or reduce-scatter) of a ``size``-byte full buffer."""
    if ranks <= 1:
        return 0.0
    alpha = eff.network.hop_latency_s
    return _transfer((ranks - 1) / ranks * size, link) + (ranks - 1) * alpha


def all_reduce(size: float, ranks: int, link: Link, eff: Efficiency) -> float:
    """Seconds for an all-reduce of ``size`` bytes: the faster of ring and tree."""
    if ranks <= 1:
        return 0.0
    alpha = eff.network.hop_latency_s
    ring = _transfer(2.0 * (ranks - 1) / ranks * size, link) + 2 * (ranks - 1) * alpha
    tree = _transfer(2.0 * size, link) + 2 * math.ceil(math.log2(ranks)) * alpha
    return min(ring, tree)


def send_recv(size: float, link: Link, eff: Efficiency) -> float:
    """Seconds for one point-to-point transfer (pipeline stage boundary)."""
    return _transfer(size, link) + eff.network.hop_latency_s


def all_to_all(
    size: float, ranks: int, stride: int, node: Node, device: Device, eff: Efficiency
) -> float:
    """Seconds for an all-to-all in which each of ``ranks`` members (``stride`` ranks apart)
    holds ``size`` bytes spread evenly over all members (see the module doc)."""
    if ranks <= 1:
        return 0.0
    per_node = max(1, min(ranks, node.gpus // stride))
    local = (per_node - 1) / ranks * size
    remote = (ranks - per_node) / ranks * size
    seconds = 0.0
    if local > 0:
        seconds = local / intra_node_bw(per_node * stride, node, device, eff)
    if remote > 0:
        seconds = max(seconds, _transfer(remote, Link(rail_bw(node, eff), 2)))
    return seconds + eff.network.hop_latency_s


def dedup_all_to_all(
    nvlink: float, fabric: float, ranks: int, stride: int, node: Node, device: Device,
    eff: Efficiency,
) -> float:
    """Seconds for a deduplicating all-to-all (DeepEP, HybridEP) in which each rank sends
    ``fabric`` bytes across nodes over its own rail and ``nvlink`` bytes within its node
    (its own tokens and those it forwards from its rail peers); both run concurrently.
    The rail runs at ``network.deepep_rdma_efficiency`` of line rate: DeepEP's GPU-initiated
    RDMA (NVSHMEM IBGDA) measures 43-58 GB/s per ~50 GB/s CX7 NIC in its README's normal
    kernels table, well above what ring collectives reach (``fabric_efficiency``)."""
    if ranks <= 1:
        return 0.0
    per_node = max(1, min(ranks, node.gpus // stride))
    seconds = 0.0
    if nvlink > 0:
        seconds = nvlink / intra_node_bw(per_node * stride, node, device, eff)
    if fabric > 0:
        rail = node.fabric_bytes_per_s_per_gpu * eff.network.deepep_rdma_efficiency
        seconds = max(seconds, _transfer(fabric, Link(rail, 2)))
    return seconds + eff.network.hop_latency_s
