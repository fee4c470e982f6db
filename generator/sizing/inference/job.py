"""One serving workload, one replica layout, and the serving engines podplan knows.

A replica is ``tp x pp`` GPUs (TP inside a node, PP across nodes when the weights do not fit
one node); a mixture-of-experts model may spread its experts over ``ep`` of those GPUs
(expert parallelism: tokens are dispatched to the GPUs holding their experts, all-to-all,
instead of every GPU holding a TP slice of every expert).

**Attention data parallelism** (``attn_dp``; TensorRT-LLM ``enable_attention_dp``, SGLang
``--enable-dp-attention``): the replica's GPUs split the *sequences* instead of the heads.
Every GPU holds the whole attention (and the weights that are not routed experts: dense
MLPs, shared experts) and the KV cache of its own sequences only, so nothing is replicated
in the cache (MLA's latent and GQA's few KV heads are otherwise copied on every TP rank);
only the routed experts stay sharded over the replica (TensorRT-LLM builds those modules
with ``overridden_tp_size=1`` under attention DP: modeling_llama.py, modeling_qwen3.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.sizing.model.arch import Architecture

ENGINES = ("tensorrt-llm", "vllm", "sglang")
"""Serving engines whose KV-cache rule podplan models (``memory.kv_budget_bytes``). SGLang
(calibration rows only; not selectable in a spec yet) sizes its KV pool like vLLM
(``mem_fraction_static`` of the total holds weights and pool), keeps the model's dtype for
an ``auto`` KV cache, and adds its own per-iteration host time (``steps.cycle_s``)."""
MODEL_DTYPE_KV = ("vllm", "sglang")
"""Engines whose ``kv_cache_dtype="auto"`` keeps the activations' dtype (bf16) whatever
the weights (vLLM; SGLang's ``--kv-cache-dtype auto``, ServerArgs)."""
DEFAULT_ENGINE = "tensorrt-llm"


@dataclass(frozen=True, slots=True)
class InferenceJob:
    """One serving workload as the engine sees it."""

    arch: Architecture
    precision: str
    input_tokens: int
    output_tokens: int
    requests_per_minute: float | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    engine: str = DEFAULT_ENGINE
    kv_fraction: float | None = None
    """The engine's KV-cache memory fraction when the run states one (else the engine's
    default from efficiency.yaml)."""
    kv_cache_dtype: str | None = None
    """``"fp8"`` or ``"bf16"`` when the run states its KV-cache dtype; else the engine's
    default (``kv_bytes``)."""
    max_batch: int | None = None
    """The engine's ``max_batch_size`` when the run sets one (per attention-DP rank);
    else efficiency.yaml's ``inference.max_batch``."""
    max_num_tokens: int | None = None
    """The engine's ``max_num_tokens`` per iteration when the run sets one (per
    attention-DP rank); else efficiency.yaml's ``inference.max_num_tokens``."""

    @property
    def value_bytes(self) -> float:
        """Bytes per weight (fp8 weights: 1 byte)."""
        return 1.0 if self.precision == "fp8" else 2.0

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached K/V value. Stated dtype first; else the engine's default:
        TensorRT-LLM stores the KV cache in fp8 for an fp8 (per-tensor) checkpoint
        (trtllm-bench maps quant_algo FP8 to kv_cache_dtype fp8; ``trtllm-bench build
        --quantization FP8`` forces it), vLLM's ``kv_cache_dtype="auto"`` keeps the
        model's activation dtype (bf16) whatever the weights, as does SGLang's ``auto``."""
        if self.kv_cache_dtype is not None:
            return 1.0 if self.kv_cache_dtype == "fp8" else 2.0
        if self.engine in MODEL_DTYPE_KV:
            return 2.0
        return self.value_bytes

    @property
    def moe(self) -> bool:
        return self.arch.experts > 1

    @property
    def has_slo(self) -> bool:
        return self.tpot_ms is not None or self.ttft_ms is not None


@dataclass(frozen=True, slots=True)
class Layout:
    """One replica: tensor-parallel x pipeline stages, experts over ``ep`` of its GPUs."""

    tp: int = 1
    pp: int = 1
    ep: int = 1
    attn_dp: bool = False
    """Attention data-parallel over the ``tp`` GPUs (module docstring)."""

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    def text(self) -> str:
        return (f"TP{self.tp} PP{self.pp}" + (f" EP{self.ep}" if self.ep > 1 else "")
                + (" attnDP" if self.attn_dp else ""))


@dataclass(frozen=True, slots=True)
class Point:
    """One operating point of a replica: batch, speed and latency."""

    batch: int
    tokens_per_s: float
    """Output tokens/s of one replica."""
    tpot_s: float
    ttft_s: float


@dataclass(frozen=True, slots=True)
class Serving:
    """A replica layout, its two operating points and the replicas the load needs."""

    layout: Layout
    fits: bool
    weights_bytes: float
    kv_capacity_tokens: int
    """Tokens of KV cache one replica holds (the engine's rule on the physical HBM)."""
    throughput: Point
    """Max throughput under the SLOs (largest batch that fits and meets them)."""
    latency: Point
    """Latency-bound: batch 1, nothing else in flight."""
    replicas: int
    meets_slo: bool | None
    memory_bytes: float

    @property
    def tp(self) -> int:
        return self.layout.tp

    @property
    def pp(self) -> int:
        return self.layout.pp

    @property
    def ep(self) -> int:
        return self.layout.ep

    @property
    def batch(self) -> int:
        return self.throughput.batch

    @property
    def tokens_per_s(self) -> float:
        return self.throughput.tokens_per_s

    @property
    def tpot_s(self) -> float:
        return self.throughput.tpot_s

    @property
    def ttft_s(self) -> float:
        return self.throughput.ttft_s

    @property
    def gpus(self) -> int:
        return self.replicas * self.layout.gpus
