"""Serving one model: KV capacity under the engine's rule, in-flight batching, TP/PP/EP
replicas, and the two operating points (max throughput under the SLOs, batch-1 latency)."""

from generator.sizing.inference.job import (
    DEFAULT_ENGINE,
    ENGINES,
    InferenceJob,
    Layout,
    Point,
    Serving,
)
from generator.sizing.inference.memory import (
    kv_budget_bytes,
    kv_cache_bytes_per_token,
    kv_capacity_tokens,
    kv_per_token_per_gpu,
    max_batch,
    weights_per_gpu,
)
from generator.sizing.inference.serving import (
    latency_point,
    layouts,
    loaded_point,
    replica,
    serve,
    slo_batch,
    slo_gap,
)
from generator.sizing.inference.steps import cycle_s

__all__ = [
    "DEFAULT_ENGINE", "ENGINES", "InferenceJob", "Layout", "Point", "Serving", "cycle_s",
    "kv_budget_bytes", "kv_cache_bytes_per_token", "kv_capacity_tokens",
    "kv_per_token_per_gpu", "latency_point", "layouts", "loaded_point", "max_batch",
    "replica", "serve", "slo_batch", "slo_gap", "weights_per_gpu",
]
