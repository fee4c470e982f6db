"""What nccl-tests should report: bus bandwidth from the sizing engine's collective model.

nccl-tests runs one rank per GPU (``-g 1``, eight tasks per node) over ``nodes`` whole
nodes, so every collective is one group of ``nodes x gpus`` ranks, stride 1, and the
sizing engine's ``group_link`` says which link it runs on: NVLink inside one node, and
across nodes each node's eight rails (capped by the ring's NVLink hops inside the node).
Times come from the same ring/tree formulas the step-time model uses; only the link
efficiencies differ, because a microbenchmark alone on the cluster reaches more of each
link than a training step that shares it with compute (``acceptance.yaml``).

nccl-tests turns a time into bus bandwidth with the factors of its PERFORMANCE.md (A1):
algbw = S/t, busbw = algbw x 2(n-1)/n for all_reduce, x (n-1)/n for all_gather,
reduce_scatter and alltoall, where S is the size column (the whole buffer).
"""

from __future__ import annotations

from dataclasses import replace

from generator.sizing.acceptance.data import AcceptanceData
from generator.sizing.model import collectives as coll
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node

OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
"""The collectives the ladder runs, as nccl-tests names its binaries (``<op>_perf``)."""


def microbenchmark_efficiency(eff: Efficiency, data: AcceptanceData) -> Efficiency:
    """The engine's efficiencies with the link fractions nccl-tests reaches on an idle
    cluster (hop latency and PCIe stay the engine's)."""
    net = replace(eff.network, nvlink_efficiency=data.value("nccl_nvlink_efficiency"),
                  fabric_efficiency=data.value("nccl_nic_efficiency"))
    return replace(eff, network=net)


def bus_factor(op: str, ranks: int) -> float:
    """nccl-tests' algbw -> busbw factor (PERFORMANCE.md)."""
    if ranks <= 1:
        return 0.0
    share = (ranks - 1) / ranks
    return 2 * share if op == "all_reduce" else share


def seconds(op: str, size: float, nodes: int, node: Node, device: Device,
            eff: Efficiency) -> float:
    """Time of one ``op`` of ``size`` bytes (nccl-tests' size column) on ``nodes`` nodes."""
    ranks = nodes * node.gpus
    link = coll.group_link(ranks, 1, node, device, eff)
    if op == "all_reduce":
        return coll.all_reduce(size, ranks, link, eff)
    if op in ("all_gather", "reduce_scatter"):
        return coll.all_gather(size, ranks, link, eff)
    if op == "alltoall":
        return coll.all_to_all(size, ranks, 1, node, device, eff)
    raise ValueError(f"unknown collective '{op}' (one of {', '.join(OPS)})")


def bus_bandwidth(op: str, size: float, nodes: int, node: Node, device: Device,
                  eff: Efficiency) -> float:
    """Expected nccl-tests busbw, bytes/s, for ``op`` at ``size`` bytes on ``nodes`` nodes."""
    ranks = nodes * node.gpus
    t = seconds(op, size, nodes, node, device, eff)
    return size / t * bus_factor(op, ranks) if t > 0 else 0.0
