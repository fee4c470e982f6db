"""What the formulas need to know about a GPU and a node, in SI units.

Built once from the catalog (``Gpu``, ``Server``) and the spec's NIC choice; the benchmarks
build them the same way for the GPUs and fabrics of the papers they replay (A100 on Selene's
8x HDR 200 Gb/s, for example).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.models import Gpu


@dataclass(frozen=True, slots=True)
class Device:
    """One GPU: memory, bandwidths and dense peaks."""

    id: str
    memory_bytes: float
    hbm_bytes_per_s: float
    bf16_flops: float
    fp8_flops: float
    nvlink_bytes_per_s: float
    """Per direction, per GPU (NVLink 4: 900 GB/s both ways -> 450 GB/s)."""

    def peak_flops(self, precision: str) -> float:
        """Dense peak at the workload precision; a GPU without fp8 runs fp8 jobs at bf16."""
        return self.fp8_flops if precision == "fp8" else self.bf16_flops


@dataclass(frozen=True, slots=True)
class Node:
    """One server as the fabric sees it."""

    gpus: int
    nics: int
    nic_gbps: float

    @property
    def fabric_bytes_per_s_per_gpu(self) -> float:
        """Each GPU's share of the node's east-west bandwidth (raw, before efficiency).

        With 8 NICs every GPU has its own 400 Gb/s rail; with 4, two GPUs share one, so
        inter-node collectives see half the bandwidth per GPU.
        """
        return self.nics * self.nic_gbps * 1e9 / 8 / self.gpus


def device_from_gpu(gpu: Gpu) -> Device:
    """Catalog ``Gpu`` (GB, TB/s, GB/s, TFLOP/s) to SI units."""
    bf16 = gpu.bf16_dense_tflops * 1e12
    return Device(
        id=gpu.id,
        memory_bytes=gpu.memory_bytes,
        hbm_bytes_per_s=gpu.memory_bandwidth_tbps * 1e12,
        bf16_flops=bf16,
        fp8_flops=gpu.fp8_dense_tflops * 1e12 if gpu.fp8_dense_tflops else bf16,
        nvlink_bytes_per_s=gpu.nvlink_gbps * 1e9 / 2,
    )
