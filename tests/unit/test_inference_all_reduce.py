"""The serving TP all-reduce inside a node, hand-worked (``steps.tp_all_reduce``): the
engine's custom one-shot/two-shot kernel costs ``inference.all_reduce_latency_s`` per call
plus the message at ``inference.all_reduce_bytes_per_s``, or NCCL (the training collective
model) where that is faster, as for a prefill chunk. Here: 8 us and 92 GB/s; NCCL on H100
NVLink at 450 GB/s x 0.8 = 360 GB/s with 10 us hops."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.catalog.load import default_catalog
from generator.sizing.inference import InferenceJob, Layout
from generator.sizing.inference.steps import comm_s, cycle_s, tp_all_reduce
from generator.sizing.model.collectives import Link
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu
from tests.unit.sizing_models import LLAMA2_70B, XE9680_8NIC

EFF = default_efficiency()
H100 = device_from_gpu(default_catalog().gpus["h100-sxm-80gb"])
NVLINK = Link(360e9, 1)


def _eff(latency: float, hop: float = 1e-5):  # type: ignore[no-untyped-def]
    network = replace(EFF.network, hop_latency_s=hop, nvlink_efficiency=0.8)
    return replace(EFF, network=network,
                   inference=replace(EFF.inference, all_reduce_latency_s=latency,
                                     all_reduce_bytes_per_s=92e9))


def test_decode_sized_all_reduce_is_the_kernel_latency() -> None:
    """One decode token of a hidden-8192 model at TP8: 16,384 bytes / 92 GB/s = 0.178 us
    on top of 8 us (NCCL: tree 2 x 16,384 B / 360 GB/s + 6 hops x 10 us = 60.1 us)."""
    seconds = tp_all_reduce(8192 * 2.0, 8, NVLINK, H100, XE9680_8NIC, _eff(8e-6))
    assert seconds == pytest.approx(8e-6 + 16384 / 92e9)
    assert seconds == pytest.approx(8.178e-6, rel=1e-3)


def test_mid_sized_all_reduce_stays_on_the_custom_kernel() -> None:
    """256 decode tokens at TP8: 4,194,304 bytes. Custom: 8 us + 45.59 us = 53.59 us;
    NCCL: ring 1.75 x 4 MiB / 360 GB/s = 20.39 us + 14 hops = 160.4 us, tree 2 x 4 MiB /
    360 GB/s = 23.30 us + 6 hops = 83.3 us. The custom kernel is faster."""
    seconds = tp_all_reduce(4194304.0, 8, NVLINK, H100, XE9680_8NIC, _eff(8e-6))
    assert seconds == pytest.approx(8e-6 + 4194304 / 92e9)
    assert seconds == pytest.approx(53.59e-6, rel=1e-3)


def test_prefill_sized_all_reduce_goes_to_nccl() -> None:
    """An 8,192-token chunk at TP8: 134,217,728 bytes. Custom: 8 us + 1,458.9 us; NCCL
    ring: 1.75 x 134,217,728 B = 234,881,024 B / 360 GB/s = 652.4 us + 14 x 10 us =
    792.4 us; tree: 745.7 us + 60 us = 805.7 us. NCCL's ring wins."""
    size = 8192 * 8192 * 2.0
    seconds = tp_all_reduce(size, 8, NVLINK, H100, XE9680_8NIC, _eff(8e-6))
    assert seconds == pytest.approx(234881024 / 360e9 + 14 * 1e-5)
    assert seconds == pytest.approx(792.4e-6, rel=1e-3)


def test_tp1_has_no_all_reduce() -> None:
    assert tp_all_reduce(1e6, 1, NVLINK, H100, XE9680_8NIC, _eff(8e-6)) == 0.0


def test_batch1_70b_token_pays_160_kernel_latencies() -> None:
    """Llama-2-70B at TP8, one decode token: 80 layers x 2 all-reduces = 160 calls, so
    8.178 us each is 1.308 ms of communication; the training model's 2 log2(8) = 6 hops
    of 10.5 us would have been 10 ms."""
    job = InferenceJob(LLAMA2_70B, "bf16", 1024, 512)
    comm = comm_s(job, Layout(8), 1.0, 1.0, H100, XE9680_8NIC, _eff(8e-6))
    assert comm == pytest.approx(160 * (8e-6 + 16384 / 92e9))
    assert comm == pytest.approx(1.3085e-3, rel=1e-3)


def test_hop_latency_does_not_reach_an_intra_node_tp_group() -> None:
    """At batch 1 the NCCL hop latency (fitted on training collectives) leaves a TP8
    decode cycle on one node unchanged; the custom all-reduce latency moves it by 160
    calls' worth."""
    job = InferenceJob(LLAMA2_70B, "fp8", 1024, 512)
    lay = Layout(8)
    a = cycle_s(job, lay, 1, 0, H100, XE9680_8NIC, _eff(8e-6, hop=1e-5))
    b = cycle_s(job, lay, 1, 0, H100, XE9680_8NIC, _eff(8e-6, hop=1e-4))
    c = cycle_s(job, lay, 1, 0, H100, XE9680_8NIC, _eff(18e-6, hop=1e-5))
    assert a == b
    assert c - a == pytest.approx(160 * 10e-6)


def test_pcie_only_gpus_use_nccl() -> None:
    """A GPU without NVLink (L40S-like, PCIe 32 GB/s x 0.8 = 25.6 GB/s assumed here as the
    link) gets NCCL's ring at TP2: 2 x 1/2 x 16,384 B / 25.6 GB/s = 0.64 us + 2 hops x
    10 us = 20.64 us, not the custom kernel's 8.18 us."""
    pcie_gpu = replace(H100, nvlink_bytes_per_s=0.0)
    seconds = tp_all_reduce(16384.0, 2, Link(25.6e9, 1), pcie_gpu, XE9680_8NIC, _eff(8e-6))
    assert seconds == pytest.approx(16384 / 25.6e9 + 2 * 1e-5)
