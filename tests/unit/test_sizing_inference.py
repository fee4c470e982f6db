"""Serving model v2: KV bytes and capacity under each engine's rule, in-flight batching, TP
communication per decode step, multi-node and MoE replicas, both operating points."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.catalog.load import default_catalog
from generator.sizing import size
from generator.sizing.inference import (
    InferenceJob,
    Layout,
    kv_cache_bytes_per_token,
    kv_capacity_tokens,
    kv_per_token_per_gpu,
    latency_point,
    loaded_point,
    max_batch,
    replica,
    serve,
    weights_per_gpu,
)
from generator.sizing.inference.steps import comm_s, cycle_s, expert_share
from generator.sizing.model.arch import from_catalog
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import Device, Node, device_from_gpu
from generator.sizing.model.params import total_params
from generator.spec.models import Spec
from tests.unit.sizing_models import (
    H100,
    LLAMA2_70B,
    LLAMA3_8B,
    LLAMA3_70B,
    LLAMA31_405B,
    MIXTRAL_8X7B,
    XE9680_8NIC,
)

EFF = default_efficiency()
CATALOG = default_catalog()
H100_SMI = device_from_gpu(CATALOG.gpus["h100-sxm-80gb"])


def test_kv_bytes_per_token_with_gqa() -> None:
    """2 (K, V) x L x g x d_h x bytes: Llama-2-70B (80 layers, 8 KV heads of 128) is
    2*80*8*128*2 = 327,680 B = 320 KiB in bf16 and 160 KiB in fp8; a 64-head MHA model of
    the same shape would need 8x that."""
    assert kv_cache_bytes_per_token(InferenceJob(LLAMA2_70B, "bf16", 1, 1)) == 327_680
    assert kv_cache_bytes_per_token(InferenceJob(LLAMA2_70B, "fp8", 1, 1)) == 163_840
    mha = replace(LLAMA2_70B, kv_heads=64)
    assert kv_cache_bytes_per_token(InferenceJob(mha, "bf16", 1, 1)) == 8 * 327_680


def test_kv_cache_splits_over_kv_heads_only() -> None:
    """TP4 splits 320 KiB four ways; TP16 cannot go beyond g = 8 (heads are replicated)."""
    j = InferenceJob(LLAMA2_70B, "bf16", 1000, 1000)
    assert kv_per_token_per_gpu(j, Layout(1)) == 320 * 1024
    assert kv_per_token_per_gpu(j, Layout(4)) == 80 * 1024
    assert kv_per_token_per_gpu(j, Layout(16)) == 40 * 1024
    assert kv_per_token_per_gpu(j, Layout(8, 2)) == 20 * 1024


def test_physical_hbm_comes_from_the_catalog() -> None:
    """nvidia-smi's 81,559 MiB on an H100 SXM 80GB (85.52e9 bytes, not 80e9)."""
    assert H100_SMI.hbm_total_bytes == 81_559 * 2**20 == 85_520_809_984
    assert device_from_gpu(CATALOG.gpus["h200-sxm-141gb"]).hbm_total_bytes == 143_771 * 2**20


def test_kv_capacity_of_70b_fp8_at_tp2_under_each_engine_rule() -> None:
    """Llama 3 70B fp8 at TP2 on an H100, worked by hand with the shipped constants:
    weights 70,553,706,496 / 2 = 35,276,853,248 B per GPU; runtime 3 GiB + activations
    8192 tokens x (8192 + 28672) x 2 B x 2 = 3,221,225,472 + 1,207,959,552 B; KV 163,840 / 2
    = 81,920 B per token per GPU.
    TensorRT-LLM: 0.9 x (85,520,809,984 - 39,706,038,272) = 41,233,294,540.8 B -> 503,336
    tokens. vLLM (run with --kv-cache-dtype fp8; its default keeps a bf16 cache):
    0.9 x 85,520,809,984 - 39,706,038,272 = 37,262,690,713.6 B -> 454,866."""
    inf = EFF.inference
    assert (inf.runtime_reserve_gib, inf.max_num_tokens) == (3, 8192)
    assert inf.trtllm_free_memory_fraction == inf.vllm_gpu_memory_utilization == 0.9
    trt = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000)
    vllm = replace(trt, engine="vllm", kv_cache_dtype="fp8")
    assert weights_per_gpu(trt, Layout(2)) == 35_276_853_248
    assert kv_capacity_tokens(trt, Layout(2), H100_SMI, EFF) == 503_336
    assert kv_capacity_tokens(vllm, Layout(2), H100_SMI, EFF) == 454_866
    # TensorRT-LLM reserves the whole context (2,000 tokens), vLLM the mean (1,500).
    assert max_batch(trt, Layout(2), H100_SMI, EFF) == 503_336 // 2000
    assert max_batch(vllm, Layout(2), H100_SMI, EFF) == 454_866 // 1500


def test_old_nominal_rule_was_a_quarter_low() -> None:
    """80e9 x 0.9 - 4 GiB - weights (issue 14) left 32.4e9 B; the engine's rule on the
    physical HBM leaves 41.2e9 B: 27 % more KV cache, hence batch and throughput."""
    old = 80e9 * 0.9 - 4 * 2**30 - 35_276_853_248
    new = kv_capacity_tokens(InferenceJob(LLAMA3_70B, "fp8", 1, 1), Layout(2), H100_SMI,
                             EFF) * 81_920
    assert 1.25 < new / old < 1.3


def test_tp_all_reduce_per_decode_step_at_batch_one() -> None:
    """Batch 1, TP2: two all-reduces of 1 x 8192 x 2 B per layer, 80 layers. A 2-rank ring
    moves 2 x (1/2) x 16,384 B; the engine's custom all-reduce adds its fixed
    ``inference.all_reduce_latency_s`` per call (steps.tp_all_reduce), which at this size
    is most of it."""
    inf = EFF.inference
    bw = inf.all_reduce_bytes_per_s
    one = 16_384 / bw + inf.all_reduce_latency_s
    j = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000)
    got = comm_s(j, Layout(2), per_iter=1.0, iters=1.0, device=H100, node=XE9680_8NIC, eff=EFF)
    assert got == pytest.approx(80 * 2 * one)
    assert inf.all_reduce_latency_s > 16_384 / bw
    assert comm_s(j, Layout(1), 1.0, 1.0, H100, XE9680_8NIC, EFF) == 0.0


def test_decode_at_batch_one_is_memory_bound() -> None:
    """One sequence: reading the weights once per step dominates (HBM roofline)."""
    j = InferenceJob(LLAMA3_8B, "bf16", 128, 128)
    tpot = latency_point(j, Layout(1), H100, XE9680_8NIC, EFF).tpot_s
    floor = weights_per_gpu(j, Layout(1)) / (H100.hbm_bytes_per_s * EFF.inference.hbm_efficiency)
    assert floor < tpot < floor * 1.1 + EFF.inference.step_overhead_s + 1e-4


def test_in_flight_prefill_rides_along_memory_bound_decode() -> None:
    """Mixing a prompt chunk into a memory-bound decode iteration costs far less than
    running it on its own (the serial model added the two)."""
    j = InferenceJob(LLAMA3_70B, "fp8", 512, 512)
    lay = Layout(2)
    alone = cycle_s(j, lay, 8, 0, H100, XE9680_8NIC, EFF) + cycle_s(j, lay, 0, 256, H100,
                                                                    XE9680_8NIC, EFF)
    mixed = cycle_s(j, lay, 8, 256, H100, XE9680_8NIC, EFF)
    assert mixed < 0.75 * alone


def test_throughput_grows_and_latency_worsens_with_batch() -> None:
    j = InferenceJob(LLAMA3_8B, "fp8", 512, 512)
    points = [loaded_point(j, Layout(1), b, H100, XE9680_8NIC, EFF) for b in (1, 8, 64, 256)]
    assert [p.tokens_per_s for p in points] == sorted(p.tokens_per_s for p in points)
    assert [p.tpot_s for p in points] == sorted(p.tpot_s for p in points)


MODELS = st.sampled_from([LLAMA3_8B, LLAMA3_70B, MIXTRAL_8X7B, LLAMA31_405B])


@settings(max_examples=40, deadline=None)
@given(arch=MODELS, fp8=st.booleans(), isl=st.integers(1, 32_768), osl=st.integers(1, 4096),
       tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]),
       b1=st.integers(1, 2048), grow=st.integers(0, 2048),
       engine=st.sampled_from(["tensorrt-llm", "vllm"]))
def test_tpot_never_falls_as_batch_grows(arch, fp8, isl, osl, tp, pp, b1, grow, engine) -> None:
    j = InferenceJob(arch, "fp8" if fp8 else "bf16", isl, osl, engine=engine)
    lay = Layout(tp, pp, tp * pp if arch.experts > 1 and tp * pp in (2, 4, 8) else 1)
    small = loaded_point(j, lay, b1, H100, XE9680_8NIC, EFF)
    large = loaded_point(j, lay, b1 + grow, H100, XE9680_8NIC, EFF)
    assert large.tpot_s >= small.tpot_s * (1 - 1e-12)
    assert large.ttft_s >= small.ttft_s * (1 - 1e-12)


def test_tpot_slo_limits_the_batch() -> None:
    free = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000)
    tight = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000, tpot_ms=30)
    loose = replica(free, Layout(4), H100, XE9680_8NIC, EFF)
    slo = replica(tight, Layout(4), H100, XE9680_8NIC, EFF)
    assert slo.batch < loose.batch
    assert slo.tpot_s * 1e3 <= 30
    assert slo.meets_slo is True
    assert slo.latency.batch == 1 and slo.latency.tpot_s < slo.tpot_s


def test_replicas_cover_the_load() -> None:
    j = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000, requests_per_minute=600, ttft_ms=2000,
                     tpot_ms=50)
    s = serve(j, H100, XE9680_8NIC, EFF)
    assert s.replicas == math.ceil(600 / 60 * 1000 / s.tokens_per_s)
    assert s.gpus == s.replicas * s.tp * s.pp
    assert s.tpot_s * 1e3 <= 50 and s.ttft_s * 1e3 <= 2000


def test_405b_bf16_spans_two_nodes_with_pipeline_stages() -> None:
    """810 GB of bf16 weights do not fit 8 H100s: TP8 x PP2 across two nodes; the stage
    hand-off crosses the fabric."""
    s = serve(InferenceJob(LLAMA31_405B, "bf16", 1000, 1000), H100_SMI, XE9680_8NIC, EFF)
    assert (s.tp, s.pp) == (8, 2) and s.fits
    assert s.kv_capacity_tokens > 0


def test_moe_serving_keeps_every_expert_resident_and_computes_top_k() -> None:
    """Mixtral 8x7B: all 46.7 B weights in memory, ~12.9 B active per token; EP over the
    replica is among the layouts tried."""
    j = InferenceJob(MIXTRAL_8X7B, "fp8", 1000, 1000)
    assert weights_per_gpu(j, Layout(2)) == pytest.approx(46.7e9 / 2, rel=0.01)
    s = serve(j, H100_SMI, XE9680_8NIC, EFF, tp=2)
    assert s.fits and s.ep in (1, 2)
    dense_like = replace(MIXTRAL_8X7B, experts=1, top_k=1, ffn=14336 * 8)
    heavy = serve(InferenceJob(dense_like, "fp8", 1000, 1000), H100_SMI, XE9680_8NIC, EFF, tp=2)
    assert s.tokens_per_s > heavy.tokens_per_s


def test_mla_latent_is_cached_whole_on_every_tp_rank() -> None:
    """DeepSeek-V3 caches one 576-value latent per layer (61 * 576 * 2 B = 70,272 B per
    token in bf16, the ``model/kvcache.py`` formula); every head reads all of it, so TP8
    keeps it whole on each rank and only PP splits it (by layers)."""
    arch = from_catalog(CATALOG.models["deepseek-v3"])
    j = InferenceJob(arch, "bf16", 1000, 1000)
    assert kv_cache_bytes_per_token(j) == 61 * 576 * 2
    assert kv_per_token_per_gpu(j, Layout(8)) == 61 * 576 * 2
    assert kv_per_token_per_gpu(j, Layout(8, 2)) == 61 * 576


def test_expert_share_counts_only_the_moe_layers() -> None:
    """DeepSeek-V3: 58 MoE layers (the first 3 are dense) of 256 experts of 3 x 7168 x 2048
    weights, 657.0 B of its 671.0 B; Llama 4 Maverick interleaves MoE and dense layers, so
    half its 48 layers hold 128 experts."""
    ds = from_catalog(CATALOG.models["deepseek-v3"])
    assert expert_share(ds) == pytest.approx(58 * 256 * 3 * 7168 * 2048 / 671.03e9, rel=1e-3)
    mav = from_catalog(CATALOG.models["llama4-maverick"])
    assert expert_share(mav) == pytest.approx(
        24 * 128 * 3 * mav.hidden * mav.ffn / total_params(mav))


def test_pcie_only_gpus_serve_over_pcie_peer_to_peer() -> None:
    """An L40S has no NVLink: TP all-reduces ride PCIe P2P (no division by zero), and TP
    over PCIe costs more per decode step than the same TP over NVLink."""
    pcie = Node(gpus=4, nics=2, nic_gbps=400, nvlink_domain=1)
    l40s = Device("l40s-48gb", 48e9, 0.864e12, 362e12, 733e12, 0.0, 32e9)
    j = InferenceJob(LLAMA3_8B, "fp8", 512, 512)
    step = cycle_s(j, Layout(2), 64, 0, l40s, pcie, EFF)
    assert math.isfinite(step) and step > 0
    nvlinked = Device("nvl", 48e9, 0.864e12, 362e12, 733e12, 450e9, 32e9)
    assert step > cycle_s(j, Layout(2), 64, 0, nvlinked, Node(4, 2, 400, nvlink_domain=4), EFF)
    assert serve(j, l40s, pcie, EFF).fits


def test_size_json_carries_both_operating_points_and_kv_capacity() -> None:
    spec = Spec.model_validate({
        "name": "t", "hardware": {"server": "xe9680", "gpu": "h100-sxm-80gb"},
        "workloads": [{"name": "chat", "kind": "inference", "model": "llama3.1-70b",
                       "precision": "fp8", "engine": "vllm", "input_tokens": 1000,
                       "output_tokens": 500, "tpot_ms": 40}],
    })
    doc = size(spec, CATALOG).to_json()["workloads"][0]
    assert doc["engine"] == "vllm" and doc["kv_cache_tokens"] > 0
    assert doc["parallelism"] == {"tp": doc["tp"], "pp": 1, "ep": 1}
    points = {p["name"]: p for p in doc["operating_points"]}
    assert set(points) == {"max-throughput", "latency"}
    assert points["latency"]["batch"] == 1
    assert points["max-throughput"]["batch"] == doc["max_batch"] >= 1
    assert points["latency"]["tpot_ms"] <= points["max-throughput"]["tpot_ms"] <= 40


def test_attention_dp_caches_each_token_once_and_replicates_the_rest() -> None:
    """DeepSeek-V3 on 8 GPUs with attention DP (TensorRT-LLM ``enable_attention_dp``): a
    token's 70,272 B latent lives on its sequence's rank only, so the replica's average is
    70,272 / 8 = 8,784 B per GPU (TP8 without it keeps 70,272 B on every rank). The
    routed experts (58 x 256 x 3 x 7168 x 2048 = 653.91 B weights) stay split 8 ways;
    the other block weights (671.03 B - 653.91 B - 1.853 B embeddings = 15.26 B) are
    whole on every rank, the embeddings vocabulary-parallel: in fp8 653.91/8 + 15.26 +
    1.853/8 = 97.23 GB per GPU, against 671.03 / 8 = 83.88 GB without it."""
    arch = from_catalog(CATALOG.models["deepseek-v3"])
    j = InferenceJob(arch, "fp8", 1024, 2048)
    adp = Layout(8, attn_dp=True)
    assert kv_per_token_per_gpu(replace(j, precision="bf16"), adp) == 61 * 576 * 2 / 8
    assert weights_per_gpu(j, adp) == pytest.approx(
        653_908_770_816 / 8 + 15_264_275_456 + 1_853_358_080 / 8)
    assert weights_per_gpu(j, adp) / 1e9 == pytest.approx(97.23, abs=0.01)
    assert weights_per_gpu(j, Layout(8)) / 1e9 == pytest.approx(83.88, abs=0.01)
    h200 = device_from_gpu(CATALOG.gpus["h200-sxm-141gb"])
    assert kv_capacity_tokens(j, adp, h200, EFF) > kv_capacity_tokens(j, Layout(8), h200, EFF) > 0


def test_attention_dp_needs_collectives_only_around_the_experts() -> None:
    """Under attention DP a dense model's ranks never talk (each runs whole sequences);
    an MoE model exchanges tokens only in its MoE layers: half of Maverick's 48 layers, so
    its attention-DP communication is a fraction of TP8's two all-reduces per layer."""
    dense = InferenceJob(LLAMA3_70B, "fp8", 1000, 1000)
    assert comm_s(dense, Layout(8, attn_dp=True), 256, 1, H100_SMI, XE9680_8NIC, EFF) == 0.0
    mav = InferenceJob(from_catalog(CATALOG.models["llama4-maverick"]), "fp8", 1000, 1000)
    adp = comm_s(mav, Layout(8, attn_dp=True), 256, 1, H100_SMI, XE9680_8NIC, EFF)
    tp = comm_s(mav, Layout(8), 256, 1, H100_SMI, XE9680_8NIC, EFF)
    assert adp == pytest.approx(tp * 24 / 48 / 2)
