"""Serving step structure, hand-worked: the KV-cache dtype each engine stores, the batch and
token limits trtllm-bench gives itself, and the kernel classes of one engine iteration
(GEMMs, routed-expert GEMMs and attention run one after the other, each its own roofline)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.calibration import load_cases
from benchmarks.calibration_inference import _kv_dtype, bench_limits
from generator.catalog.load import default_catalog
from generator.sizing.inference import InferenceJob, Layout, kv_cache_bytes_per_token
from generator.sizing.inference.memory import (
    batch_limit,
    engine_limits,
    expert_weights_per_gpu,
    token_limit,
)
from generator.sizing.inference.steps import (
    attention_rate,
    attention_s,
    cycle_s,
    dense_gemm_s,
    expert_gemm_s,
    expert_pass_s,
    gemm_rate,
    touched,
)
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu
from tests.unit.sizing_models import LLAMA2_70B, LLAMA3_8B, MIXTRAL_8X7B, XE9680_8NIC

EFF = default_efficiency()
H100 = device_from_gpu(default_catalog().gpus["h100-sxm-80gb"])


def test_kv_cache_dtype_follows_the_engine_unless_stated() -> None:
    """Llama-2-70B keeps 2*80*8*128 = 163,840 values per token. TensorRT-LLM caches an fp8
    checkpoint's KV in fp8 (1 B: 163,840 B); vLLM's kv_cache_dtype "auto" keeps bf16
    (327,680 B) whatever the weights; a stated dtype wins either way."""
    trt = InferenceJob(LLAMA2_70B, "fp8", 1, 1)
    vllm = replace(trt, engine="vllm")
    assert kv_cache_bytes_per_token(trt) == 163_840
    assert kv_cache_bytes_per_token(vllm) == 327_680
    assert kv_cache_bytes_per_token(replace(trt, kv_cache_dtype="bf16")) == 327_680
    assert kv_cache_bytes_per_token(replace(vllm, kv_cache_dtype="fp8")) == 163_840
    assert kv_cache_bytes_per_token(InferenceJob(LLAMA2_70B, "bf16", 1, 1)) == 327_680


def test_calibration_rows_state_their_kv_dtype() -> None:
    """The precision column's "KV FP8" / "KV BF16" / "FP16 KV" is the row's cache dtype;
    DeepSeek-R1's block-scaled fp8 checkpoint runs a bf16 cache (trtllm-bench maps only
    per-tensor FP8 and NVFP4 to an fp8 cache), with the blog's stated limits."""
    assert _kv_dtype("FP8 W8A8 (ModelOpt FP8 ckpt), KV FP8 [R: not stated]") == "fp8"
    assert _kv_dtype("FP8 W8A8 block-scaled, KV BF16 [R: KV dtype not stated]") == "bf16"
    assert _kv_dtype("FP4 NVFP4 experts+linears, FP16 KV per the title") == "bf16"
    assert _kv_dtype("FP8 (ModelOpt ckpt)") is None
    r1 = next(c for c in load_cases(EFF) if c.id == "I56").inference
    assert r1 is not None
    assert (r1.kv_cache_dtype, r1.kv_bytes, r1.max_batch, r1.max_num_tokens) == (
        "bf16", 2.0, 128, 1151)


def test_trtllm_bench_picks_its_own_batch_and_token_limits() -> None:
    """Llama 3.1 8B fp8 on one H100 (tuning.py, worked by hand): 81,559 MiB = 79.6475 GiB
    less 8,030,261,248 B = 7.4788 GiB of weights leaves 72.1687 GiB, x 0.95 = 68.5603 GiB;
    a token costs 2*32*8*128*1 B = 6.1035e-5 GiB.
    128/2048: 68.5603 / (6.1035e-5 * 2176) = 516.2 requests -> 128 * ceil(516.2/128) = 640;
    tokens 516.2 * (1 + 128/2048) = 548.5 -> the 2048 floor.
    128/128: 4,387.6 requests, capped at 4096 -> 4096; tokens 4096 * 2 = 8192 -> 8192.
    5000/500: 204.2 requests -> 32 * ceil(204.2/32) = 224; tokens 204.2 * 11 = 2,246.6
    -> 256 * ceil(2246.6/256) = 2304; chunked prefill is off by default, so trtllm-bench
    raises it to max ISL + max batch = 5000 + 224 = 5224 (benchmark/utils/general.py).
    20000/2000: 51.1 requests -> the 64 floor; tokens 56.2 -> 2048, raised to 20064."""
    def limits(isl: int, osl: int) -> tuple[int, int]:
        return bench_limits(InferenceJob(LLAMA3_8B, "fp8", isl, osl), Layout(1), H100)
    assert limits(128, 2048) == (640, 2048)
    assert limits(128, 128) == (4096, 8192)
    assert limits(5000, 500) == (224, 5224)
    assert limits(20000, 2000) == (64, 20064)


def test_engine_limits_are_per_scheduler() -> None:
    """A stated max_batch_size / max_num_tokens replaces the defaults (2048 / 8192); under
    attention DP each of the t ranks schedules its own (DeepSeek-R1 blog: 128 per rank)."""
    j = InferenceJob(MIXTRAL_8X7B, "fp8", 1024, 2048, max_batch=128, max_num_tokens=1151)
    tp = Layout(8)
    assert (batch_limit(j, tp, H100, EFF), token_limit(j, tp, H100, EFF)) == (128, 1151)
    dp = Layout(8, 1, 8, attn_dp=True)
    assert (batch_limit(j, dp, H100, EFF), token_limit(j, dp, H100, EFF)) == (1024, 9208)
    plain = InferenceJob(MIXTRAL_8X7B, "fp8", 1024, 2048)
    assert engine_limits(plain, H100, EFF) == (2048, 8192)


def test_vllm_default_limits_depend_on_the_gpu() -> None:
    """vLLM without --max-num-seqs / --max-num-batched-tokens (API server): 1024 / 8192 on
    an H100 (80 GiB, not an A100), 256 / 2048 on an A100 80GB or an L40S (48 GB)."""
    cat = default_catalog()
    j = InferenceJob(LLAMA3_8B, "bf16", 1000, 1000, engine="vllm")
    assert engine_limits(j, H100, EFF) == (1024, 8192)
    for gpu in ("a100-sxm-80gb", "l40s-48gb"):
        assert engine_limits(j, device_from_gpu(cat.gpus[gpu]), EFF) == (256, 2048)
    assert engine_limits(replace(j, max_batch=64), H100, EFF) == (64, 8192)


def test_gemms_and_attention_are_separate_rooflines() -> None:
    """Llama 3 8B bf16 on one H100, 1024 sequences decoding at mean context 1024 + 512:
    the GEMMs do 2 x 6.98e9 x 1024 FLOPs (+ the LM head) against 16 GB of weights
    (compute-bound), attention streams 1024 x 1536 x 131,072 B = 206 GB of cache
    (memory-bound). The step is the sum of the two, not the larger of their totals."""
    j = InferenceJob(LLAMA3_8B, "bf16", 1024, 1024)
    lay = Layout(1)
    inf = EFF.inference
    kv = 1024 * 1536 * 131_072
    assert kv_cache_bytes_per_token(j) == 131_072
    hbm = H100.hbm_bytes_per_s * inf.hbm_efficiency
    assert attention_s(j, lay, 1024, 0, H100, EFF) == pytest.approx(kv / hbm)
    gemm = dense_gemm_s(j, lay, 1024, 0, 1, H100, EFF)
    flops = 2 * (6_979_588_096 * 1024 + LLAMA3_8B.vocab * LLAMA3_8B.hidden * 1024)
    weights = 16_060_522_496  # 8,030,261,248 parameters in bf16
    assert gemm == pytest.approx(max(weights / hbm, flops / gemm_rate(j, H100, EFF)))
    step = cycle_s(j, lay, 1024, 0, H100, XE9680_8NIC, EFF)
    overhead = inf.step_overhead_s + 1024 * inf.sequence_overhead_s
    assert step == pytest.approx(gemm + kv / hbm + overhead)
    assert step > max(gemm, kv / hbm) + overhead


def test_fp8_cache_runs_context_attention_in_fp8_on_tensorrt_llm() -> None:
    """use_fp8_context_fmha: TensorRT-LLM's context attention over an fp8 cache runs at the
    fp8 peak (1,978.9 TFLOP/s on an H100), vLLM's and a bf16 cache's at the bf16 peak."""
    trt = InferenceJob(LLAMA3_8B, "fp8", 1024, 1024)
    eta = EFF.inference.attention_efficiency
    assert attention_rate(trt, H100, EFF) == pytest.approx(1.9789e15 * eta)
    assert attention_rate(replace(trt, engine="vllm"), H100, EFF) == pytest.approx(
        9.894e14 * eta)
    assert attention_rate(replace(trt, kv_cache_dtype="bf16"), H100, EFF) == pytest.approx(
        9.894e14 * eta)


def test_attention_dp_ranks_handle_their_own_sequences() -> None:
    """The per-sequence host time is paid by each rank's executor for its own sequences:
    800 sequences over 8 attention-DP ranks cost 100 sequences' time, over TP8 all 800."""
    j = InferenceJob(MIXTRAL_8X7B, "fp8", 1000, 1000)
    dp, tp = Layout(8, 1, 1, attn_dp=True), Layout(8)
    seq = EFF.inference.sequence_overhead_s
    slow = replace(EFF, inference=replace(EFF.inference, sequence_overhead_s=seq + 1e-3))

    def extra(lay: Layout) -> float:
        return (cycle_s(j, lay, 800, 0, H100, XE9680_8NIC, slow)
                - cycle_s(j, lay, 800, 0, H100, XE9680_8NIC, EFF))
    assert extra(dp) == pytest.approx(100 * 1e-3)
    assert extra(tp) == pytest.approx(800 * 1e-3)


def test_a_prompt_rides_along_as_whole_chunks_not_as_a_trickle() -> None:
    """Mixtral 8x7B fp8 on one H100, 1,000 tokens in and 500 out: a steady-state pass at
    batch 1 carries 2 prompt tokens on average, which the engine schedules as one
    1,000-token chunk in 0.2 % of the passes. A decode token alone touches 1 - (6/8)^1 =
    25 % of the experts, so the expected expert time is 0.998 x that pass + 0.002 x the
    chunk's pass, not a 3-token pass every time (which would touch 1 - 0.75^3 = 58 %)."""
    job, lay = InferenceJob(MIXTRAL_8X7B, "fp8", 1000, 500), Layout(tp=1)
    limit = float(token_limit(job, lay, H100, EFF))
    assert limit >= 1000
    alone = expert_pass_s(job, lay, 1.0, limit, H100, EFF)
    assert touched(MIXTRAL_8X7B, 1.0) == pytest.approx(0.25)
    read = expert_weights_per_gpu(job, lay) * 0.25 / (
        H100.hbm_bytes_per_s * EFF.inference.hbm_efficiency)
    assert alone == pytest.approx(read)  # one token: bound by the weights it reads
    with_chunk = expert_pass_s(job, lay, 1001.0, limit, H100, EFF)
    expected = 0.998 * alone + 0.002 * with_chunk
    assert expert_gemm_s(job, lay, 1.0, 2.0, limit, H100, EFF) == pytest.approx(expected)
    assert expected < 0.7 * expert_pass_s(job, lay, 3.0, limit, H100, EFF)
    # a whole prompt (TTFT) or no prompt at all is one pass of exactly those tokens
    assert expert_gemm_s(job, lay, 0.0, 1000.0, limit, H100, EFF) == pytest.approx(
        expert_pass_s(job, lay, 1000.0, limit, H100, EFF))
    assert expert_gemm_s(job, lay, 1.0, 0.0, limit, H100, EFF) == pytest.approx(alone)
