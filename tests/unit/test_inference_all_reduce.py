"""The serving TP all-reduce inside a node, hand-worked (``steps.tp_all_reduce``): the
engine's custom one-shot/two-shot kernel costs ``inference.all_reduce_latency_s`` per call
plus the ring's bytes at the NVLink rate; the training collective model's hop latencies
(``network.hop_latency_s``) play no part in it. H100: NVLink 450 GB/s x 0.8 = 360 GB/s."""

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


def _eff(latency: float, hop: float | None = None):  # type: ignore[no-untyped-def]
    network = EFF.network if hop is None else replace(EFF.network, hop_latency_s=hop)
    return replace(EFF, network=network,
                   inference=replace(EFF.inference, all_reduce_latency_s=latency))


def test_decode_sized_all_reduce_is_the_kernel_latency() -> None:
    """One decode token of a hidden-8192 model at TP8: 16,384 bytes; the ring moves
    2 x 7/8 of them, 28,672 bytes / 360 GB/s = 79.6 ns, on top of 8 us."""
    seconds = tp_all_reduce(8192 * 2.0, 8, NVLINK, XE9680_8NIC, _eff(8e-6))
    assert seconds == pytest.approx(8e-6 + 28672 / 360e9)


def test_prefill_sized_all_reduce_is_the_bytes() -> None:
    """An 8,192-token chunk at TP8: 134,217,728 bytes, x 1.75 = 234,881,024 bytes at
    360 GB/s = 652.4 us, plus the same 8 us."""
    size = 8192 * 8192 * 2.0
    seconds = tp_all_reduce(size, 8, NVLINK, XE9680_8NIC, _eff(8e-6))
    assert seconds == pytest.approx(8e-6 + 234881024 / 360e9)
    assert seconds == pytest.approx(660.4e-6, rel=1e-3)


def test_tp1_has_no_all_reduce() -> None:
    assert tp_all_reduce(1e6, 1, NVLINK, XE9680_8NIC, _eff(8e-6)) == 0.0


def test_batch1_70b_token_pays_160_kernel_latencies() -> None:
    """Llama-2-70B at TP8, one decode token: 80 layers x 2 all-reduces = 160 calls, so
    8 us each is 1.293 ms of communication (160 x (8 us + 79.6 ns)); the training model's
    2 log2(8) = 6 hops of 10.5 us would have been 10 ms."""
    job = InferenceJob(LLAMA2_70B, "bf16", 1024, 512)
    comm = comm_s(job, Layout(8), 1.0, 1.0, H100, XE9680_8NIC, _eff(8e-6))
    assert comm == pytest.approx(160 * (8e-6 + 28672 / 360e9))
    assert comm == pytest.approx(1.2927e-3, rel=1e-3)


def test_hop_latency_does_not_reach_an_intra_node_tp_group() -> None:
    """The NCCL hop latency (fitted on training collectives) leaves a TP8 decode cycle on
    one node unchanged; the custom all-reduce latency moves it by 160 calls' worth."""
    job = InferenceJob(LLAMA2_70B, "fp8", 1024, 512)
    lay = Layout(8)
    a = cycle_s(job, lay, 1, 0, H100, XE9680_8NIC, _eff(8e-6, hop=1e-5))
    b = cycle_s(job, lay, 1, 0, H100, XE9680_8NIC, _eff(8e-6, hop=1e-4))
    c = cycle_s(job, lay, 1, 0, H100, XE9680_8NIC, _eff(18e-6, hop=1e-5))
    assert a == b
    assert c - a == pytest.approx(160 * 10e-6)
