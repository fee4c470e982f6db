"""Serving model: KV capacity, roofline decode, SLO batch choice, replicas for a load."""

from __future__ import annotations

import math

import pytest

from generator.sizing.inference import (
    InferenceJob,
    decode_step,
    kv_per_token_per_gpu,
    max_batch,
    operating_point,
    replica,
    serve,
    weights_per_gpu,
)
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.params import total_params
from generator.sizing.training.memory import GIB
from tests.unit.sizing_models import H100, LLAMA2_70B, LLAMA3_8B, LLAMA3_70B, XE9680_8NIC

EFF = default_efficiency()


def test_kv_cache_splits_over_kv_heads_only() -> None:
    """Llama-2-70B bf16: 320 KiB/token; TP4 splits it 4 ways, TP16 cannot beyond g = 8."""
    j = InferenceJob(LLAMA2_70B, "bf16", 1000, 1000)
    assert kv_per_token_per_gpu(j, 1, 1) == 320 * 1024
    assert kv_per_token_per_gpu(j, 4, 1) == 80 * 1024
    assert kv_per_token_per_gpu(j, 16, 1) == 40 * 1024


def test_max_batch_is_what_memory_holds() -> None:
    j = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000)
    inf = EFF.inference
    free = 80e9 * inf.usable_fraction - inf.overhead_gib * GIB - total_params(LLAMA3_70B) / 2
    per_seq = 2000 * 320 * 1024 / 2 / 2  # fp8 halves it, TP2 halves it again
    assert max_batch(j, 2, 1, H100, EFF) == min(inf.max_batch, int(free // per_seq))
    assert max_batch(j, 1, 1, H100, EFF) < max_batch(j, 2, 1, H100, EFF)


def test_decode_at_batch_one_is_memory_bound() -> None:
    """One sequence: reading the weights once per step dominates (HBM roofline)."""
    j = InferenceJob(LLAMA3_8B, "bf16", 128, 128)
    step = decode_step(j, 1, 1, 1, H100, XE9680_8NIC, EFF)
    floor = weights_per_gpu(j, 1, 1) / (H100.hbm_bytes_per_s * EFF.inference.hbm_efficiency)
    assert floor < step < floor * 1.3 + EFF.inference.step_overhead_s


def test_throughput_grows_and_latency_worsens_with_batch() -> None:
    j = InferenceJob(LLAMA3_8B, "fp8", 512, 512)
    points = [operating_point(j, 1, 1, b, H100, XE9680_8NIC, EFF) for b in (1, 8, 64, 256)]
    tputs, tpots = [p[0] for p in points], [p[1] for p in points]
    assert tputs == sorted(tputs)
    assert tpots == sorted(tpots)


def test_tpot_slo_limits_the_batch() -> None:
    free = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000)
    tight = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000, tpot_ms=30)
    loose = replica(free, 4, 1, H100, XE9680_8NIC, EFF)
    slo = replica(tight, 4, 1, H100, XE9680_8NIC, EFF)
    assert slo.batch < loose.batch
    assert slo.tpot_s * 1e3 <= 30
    assert slo.meets_slo is True


def test_replicas_cover_the_load() -> None:
    j = InferenceJob(
        LLAMA3_70B, "fp8", 1000, 1000, requests_per_minute=600, ttft_ms=2000, tpot_ms=50
    )
    s = serve(j, H100, XE9680_8NIC, EFF)
    load = 600 / 60 * 1000
    assert s.replicas == math.ceil(load / s.tokens_per_s)
    assert s.gpus == s.replicas * s.tp
    assert s.tpot_s * 1e3 <= 50 and s.ttft_s * 1e3 <= 2000


def test_pcie_only_gpus_serve_over_pcie_peer_to_peer() -> None:
    """An L40S has no NVLink: TP all-reduces ride PCIe P2P (no division by zero), and TP
    over PCIe costs more per decode step than the same TP over NVLink."""
    pcie = Node(gpus=4, nics=2, nic_gbps=400, nvlink_domain=1)
    l40s = Device("l40s-48gb", 48e9, 0.864e12, 362e12, 733e12, 0.0, 32e9)
    j = InferenceJob(LLAMA3_8B, "fp8", 512, 512)
    step = decode_step(j, 2, 1, 64, l40s, pcie, EFF)
    assert math.isfinite(step) and step > 0
    nvlinked = Device("nvl", 48e9, 0.864e12, 362e12, 733e12, 450e9, 32e9)
    assert step > decode_step(j, 2, 1, 64, nvlinked, Node(4, 2, 400, nvlink_domain=4), EFF)
    s = serve(j, l40s, pcie, EFF)
    assert s.fits and s.tokens_per_s > 0


def test_no_load_means_one_saturated_replica() -> None:
    s = serve(InferenceJob(LLAMA3_8B, "fp8", 128, 128), H100, XE9680_8NIC, EFF)
    assert (s.replicas, s.tp) == (1, 1)
    assert s.batch == pytest.approx(EFF.inference.max_batch)
