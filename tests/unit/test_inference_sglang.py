"""The SGLang serving engine, hand-worked: its own per-iteration host time on top of the
shared one (TensorRT-LLM jobs never see it), its ``auto`` KV cache in the model's dtype,
its bf16 attention over an fp8 cache, and the calibration rules that read SGLang rows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.calibration_inference import Unscored, _kv_fraction, _refuse, engine
from generator.catalog.load import default_catalog
from generator.sizing.inference import InferenceJob, Layout, kv_cache_bytes_per_token
from generator.sizing.inference.steps import attention_rate, cycle_s, step_overhead_s
from generator.sizing.model.efficiency import default_efficiency
from generator.sizing.model.hardware import device_from_gpu
from tests.unit.sizing_models import LLAMA2_70B, LLAMA3_8B, XE9680_8NIC

EFF = default_efficiency()
H100 = device_from_gpu(default_catalog().gpus["h100-sxm-80gb"])


def _eff(shared: float, sglang: float):  # type: ignore[no-untyped-def]
    inf = replace(EFF.inference, step_overhead_s=shared, sglang_step_overhead_s=sglang)
    return replace(EFF, inference=inf)


def test_sglang_pays_its_own_iteration_time_and_tensorrt_llm_does_not() -> None:
    """Shared 1 ms + SGLang's 4 ms: an SGLang iteration pays 5 ms, a TensorRT-LLM one 1 ms.
    A decode cycle of 64 sequences is one iteration (64 tokens < 8,192 per iteration), so
    the SGLang cycle is exactly 4 ms longer; 20,000 prompt tokens are ceil-free 20,000 /
    8,192 = 2.44 iterations, 9.77 ms longer."""
    eff = _eff(1e-3, 4e-3)
    trt = InferenceJob(LLAMA3_8B, "bf16", 1024, 1024)
    sgl = replace(trt, engine="sglang")
    assert step_overhead_s(trt, eff) == pytest.approx(1e-3)
    assert step_overhead_s(sgl, eff) == pytest.approx(5e-3)
    lay = Layout(1)
    decode = cycle_s(sgl, lay, 64, 0, H100, XE9680_8NIC, eff) - cycle_s(
        trt, lay, 64, 0, H100, XE9680_8NIC, eff)
    assert decode == pytest.approx(4e-3)
    prefill = cycle_s(sgl, lay, 0, 20_000, H100, XE9680_8NIC, eff) - cycle_s(
        trt, lay, 0, 20_000, H100, XE9680_8NIC, eff)
    assert prefill == pytest.approx(20_000 / 8_192 * 4e-3)


def test_sglang_parameter_leaves_tensorrt_llm_untouched() -> None:
    """Moving SGLang's overhead from 0 to 30 ms changes no TensorRT-LLM cycle."""
    trt = InferenceJob(LLAMA2_70B, "fp8", 2048, 512)
    lay = Layout(4)
    a = cycle_s(trt, lay, 100, 3000, H100, XE9680_8NIC, _eff(2e-3, 0.0))
    b = cycle_s(trt, lay, 100, 3000, H100, XE9680_8NIC, _eff(2e-3, 0.03))
    assert a == b


def test_sglang_auto_kv_cache_is_bf16_and_attention_runs_at_the_bf16_peak() -> None:
    """Llama-2-70B: 2*80*8*128 = 163,840 values per token; SGLang's --kv-cache-dtype auto
    keeps bf16 (327,680 B) for an fp8 checkpoint, a stated fp8 cache 163,840 B; attention
    over that fp8 cache still runs at the bf16 peak (989.4 TFLOP/s on an H100)."""
    sgl = InferenceJob(LLAMA2_70B, "fp8", 1, 1, engine="sglang")
    assert kv_cache_bytes_per_token(sgl) == 327_680
    fp8 = replace(sgl, kv_cache_dtype="fp8")
    assert kv_cache_bytes_per_token(fp8) == 163_840
    eta = EFF.inference.attention_efficiency
    assert attention_rate(fp8, H100, EFF) == pytest.approx(9.894e14 * eta)


def test_calibration_rows_name_their_engine_and_cuda_graph_rule() -> None:
    """The framework column picks the engine; ``cudagraph=off`` rows are not scored (that
    reason first); SGLang releases before v0.4.1.post2 are not scored, later ones are;
    SGLang's --mem-fraction-static is read as the KV fraction."""
    assert engine({"framework": "SGLang v0.4.1 (docker)"}) == "sglang"
    assert engine({"framework": "TensorRT-LLM 0.14.0"}) == "tensorrt-llm"
    row = {"method": "inference ISL/OSL=1024/1024 qps=1 cudagraph=off", "precision": "FP8",
           "framework": "SGLang v0.4.1"}
    with pytest.raises(Unscored, match="CUDA graphs disabled"):
        _refuse(row)
    with pytest.raises(Unscored, match=r"before v0\.4\.1\.post2"):
        _refuse(dict(row, method="inference ISL/OSL=1024/1024 qps=1"))
    for later in ("SGLang v0.4.1.post2", "SGLang v0.5.7 (x)", "SGLang >= 0.4.8 (y)",
                  "SGLang (multi-node, --nnodes 2) [R: version not stated]"):
        _refuse(dict(row, method="inference ISL/OSL=1024/1024 qps=1", framework=later))
    _refuse(dict(row, method="inference ISL/OSL=1024/1024 qps=1", framework="TensorRT-LLM"))
    assert _kv_fraction("launch_server --tp 16 --mem-fraction-static 0.8 --x") == 0.8
