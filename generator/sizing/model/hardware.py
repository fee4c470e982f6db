"""What the formulas need to know about a GPU and a node, in SI units.

Built once from the catalog (``Gpu``, ``Server``) and the spec's NIC choice; the benchmarks
build them the same way for the GPUs and fabrics of the papers they replay (A100 on Selene's
8x HDR 200 Gb/s, for example).

Links inside a node: GPUs joined by NVLink (all of an HGX board through NVSwitch, or the
two GPUs of an NVLink bridge) talk at NVLink speed; any other pair goes peer-to-peer over
PCIe (an L40S has no NVLink at all). Links between nodes: each GPU's share of the node's
east-west NICs, whose count and line rate come from the server (8x 400G on an XE9680,
8x 200G HDR on a DGX A100, 4x 400G on an XE8640).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.models import Gpu, Server


@dataclass(frozen=True, slots=True)
class Device:
    """One GPU: memory, bandwidths and dense peaks."""

    id: str
    memory_bytes: float
    hbm_bytes_per_s: float
    bf16_flops: float
    fp8_flops: float | None
    """None: no FP8 tensor cores (A100)."""
    nvlink_bytes_per_s: float
    """Per direction, per GPU (NVLink 4: 900 GB/s both ways -> 450 GB/s); 0 = no NVLink."""
    pcie_bytes_per_s: float = 32e9
    """Per direction, per GPU: PCIe Gen4 x16 carries 32 GB/s, Gen5 64 GB/s."""
    architecture: str = "hopper"
    hbm_total_bytes: float = 0.0
    """Memory CUDA reports (nvidia-smi memory.total); 0 = unknown, use ``memory_bytes``.
    Serving engines size their KV cache from it (sizing/inference/memory.py)."""

    @property
    def supports_fp8(self) -> bool:
        return self.fp8_flops is not None

    def peak_flops(self, precision: str) -> float:
        """Dense peak at the workload precision (the spec refuses fp8 where there is none)."""
        if precision == "fp8" and self.fp8_flops is not None:
            return self.fp8_flops
        return self.bf16_flops


@dataclass(frozen=True, slots=True)
class Node:
    """One server as the collectives see it."""

    gpus: int
    nics: int
    nic_gbps: float
    nvlink_domain: int = 8
    """GPUs mutually reachable over NVLink (8 on HGX H100, 2 with NVLink bridges, 1 for L40S)."""

    @property
    def fabric_bytes_per_s_per_gpu(self) -> float:
        """Each GPU's share of the node's east-west bandwidth (raw, before efficiency).

        With 8 NICs every GPU has its own 400 Gb/s rail; with 4, two GPUs share one, so
        inter-node collectives see half the bandwidth per GPU.
        """
        return self.nics * self.nic_gbps * 1e9 / 8 / self.gpus


def device_from_gpu(gpu: Gpu) -> Device:
    """Catalog ``Gpu`` (GB, TB/s, GB/s, TFLOP/s) to SI units."""
    return Device(
        id=gpu.id,
        memory_bytes=gpu.memory_bytes,
        hbm_bytes_per_s=gpu.memory_bandwidth_tbps * 1e12,
        bf16_flops=gpu.bf16_dense_tflops * 1e12,
        fp8_flops=gpu.fp8_dense_tflops * 1e12 if gpu.fp8_dense_tflops else None,
        nvlink_bytes_per_s=gpu.nvlink_gbps * 1e9 / 2,
        pcie_bytes_per_s=gpu.pcie_gbps * 1e9 / 2,
        architecture=gpu.architecture,
        hbm_total_bytes=(gpu.memory_total_mib or 0.0) * 2**20,
    )


def nvlink_domain(server: Server, gpu: Gpu) -> int:
    """How many of the server's GPUs NVLink joins: the whole board behind NVSwitch (or the
    XE8640's fully connected four), a bridged pair, or none."""
    if gpu.nvlink_gbps <= 0 or server.gpu_interconnect in ("pcie", "none"):
        return 1
    if server.gpu_interconnect == "nvlink-bridge":
        return min(2, server.gpu_slots)
    return server.gpu_slots


def node_from_server(server: Server, gpu: Gpu, nics: int | None = None) -> Node:
    """The node the collectives run on: the server's GPUs, its NICs (``nics`` overrides the
    server's default count) at the server's NIC line rate, and its NVLink domain."""
    count = server.default_east_west_nics if nics is None else nics
    return Node(gpus=server.gpu_slots, nics=count, nic_gbps=server.east_west_nic_gbps,
                nvlink_domain=nvlink_domain(server, gpu))
