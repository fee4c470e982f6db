"""Serving one model: replicas x TP, batch, latency and throughput (sizing-models.md §9.6).

A replica holds the weights (÷ t*p) and a KV cache; the largest batch is what the memory
left over holds at the full context (input + output: in-flight batching must be able to
finish every admitted request). Decode is memory-bound at small batch (weights + KV read
per step at HBM speed) and compute-bound at large batch; each step pays two TP all-reduces
per layer and a fixed scheduler overhead. Prefill is compute-bound (causal attention:
2*P*n + 2*L*n^2*a*d_h FLOPs). With in-flight batching a replica prefills one batch of
prompts for every n_out decode steps, so

    throughput = B * n_out / (n_out * t_decode(B) + B * t_prefill)
    TPOT       = (n_out * t_decode(B) + B * t_prefill) / n_out
    TTFT       = t_prefill + t_decode(B)   (own prefill + the iteration in flight)

The batch is the largest that fits and meets the TPOT/TTFT SLOs; replicas cover the offered
load (requests/min x output tokens). Quantised weights and KV (fp8) are 1 byte per value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.sizing.model.arch import Architecture
from generator.sizing.model.collectives import all_reduce, group_link
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.params import active_params, kv_bytes_per_token, total_params
from generator.sizing.training.memory import GIB

TP_CHOICES = (1, 2, 4, 8)


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

    @property
    def value_bytes(self) -> float:
        """Bytes per weight and per KV value."""
        return 1.0 if self.precision == "fp8" else 2.0


@dataclass(frozen=True, slots=True)
class Serving:
    """One replica's operating point, and the replicas the load needs."""

    tp: int
    pp: int
    batch: int
    fits: bool
    memory_bytes: float
    weights_bytes: float
    kv_bytes: float
    tpot_s: float
    ttft_s: float
    tokens_per_s: float
    replicas: int
    meets_slo: bool | None

    @property
    def gpus(self) -> int:
        return self.replicas * self.tp * self.pp


def weights_per_gpu(job: InferenceJob, tp: int, pp: int) -> float:
    """Weight bytes on one GPU."""
    return total_params(job.arch) * job.value_bytes / (tp * pp)


def kv_per_token_per_gpu(job: InferenceJob, tp: int, pp: int) -> float:
    """KV bytes per token on one GPU: heads split over t (replicated once t > g), layers over p."""
    return kv_bytes_per_token(job.arch, job.value_bytes) / (min(tp, job.arch.kv_heads) * pp)


def max_batch(job: InferenceJob, tp: int, pp: int, device: Device, eff: Efficiency) -> int:
    """Sequences whose full-context KV cache fits beside the weights (capped by the scheduler)."""
    inf = eff.inference
    free = device.memory_bytes * inf.usable_fraction - inf.overhead_gib * GIB
    free -= weights_per_gpu(job, tp, pp)
    per_seq = kv_per_token_per_gpu(job, tp, pp) * (job.input_tokens + job.output_tokens)
    return max(0, min(inf.max_batch, int(free // per_seq)))


def _gemm_rate(job: InferenceJob, device: Device, eff: Efficiency, efficiency: float) -> float:
    if job.precision != "fp8" or device.fp8_flops is None:
        return device.bf16_flops * efficiency
    speedup = min(eff.compute.fp8_speedup, device.fp8_flops / device.bf16_flops)
    return device.bf16_flops * efficiency * speedup


def _tp_allreduce(size: float, tp: int, device: Device, node: Node, eff: Efficiency) -> float:
    """One TP all-reduce of ``size`` bytes: NVLink where it joins the replica's GPUs,
    PCIe peer-to-peer otherwise (L40S)."""
    return all_reduce(size, tp, group_link(tp, 1, node, device, eff), eff)


def decode_step(
    job: InferenceJob, tp: int, pp: int, batch: int, device: Device, node: Node, eff: Efficiency
) -> float:
    """One decode iteration for ``batch`` sequences at the mean decode context."""
    arch, inf = job.arch, eff.inference
    ctx = job.input_tokens + job.output_tokens / 2
    read = weights_per_gpu(job, tp, pp) + batch * ctx * kv_per_token_per_gpu(job, tp, pp)
    memory = read / (device.hbm_bytes_per_s * inf.hbm_efficiency)
    gemm = 2.0 * active_params(arch) * batch / (tp * pp)
    attention = 4.0 * arch.layers * ctx * arch.heads * arch.head_dim * batch / (tp * pp)
    compute = (gemm / _gemm_rate(job, device, eff, inf.decode_efficiency)
               + attention / (device.bf16_flops * inf.decode_efficiency))
    tp_comm = 2 * arch.layers / pp * _tp_allreduce(batch * arch.hidden * 2.0, tp, device,
                                                   node, eff)
    return max(memory, compute) + tp_comm + inf.step_overhead_s


def prefill_time(
    job: InferenceJob, tp: int, pp: int, device: Device, node: Node, eff: Efficiency
) -> float:
    """One request's prompt: compute-bound, causal attention."""
    arch, n = job.arch, job.input_tokens
    gemm = 2.0 * active_params(arch) * n / (tp * pp)
    attention = 2.0 * arch.layers * n * n * arch.heads * arch.head_dim / (tp * pp)
    rate = eff.inference.prefill_efficiency
    tp_comm = 2 * arch.layers / pp * _tp_allreduce(n * arch.hidden * 2.0, tp, device, node, eff)
    return (gemm / _gemm_rate(job, device, eff, rate)
            + attention / (device.bf16_flops * rate) + tp_comm)


def operating_point(
    job: InferenceJob, tp: int, pp: int, batch: int, device: Device, node: Node, eff: Efficiency
) -> tuple[float, float, float]:
    """(output tokens/s, TPOT s, TTFT s) of one replica running ``batch`` sequences."""
    step = decode_step(job, tp, pp, batch, device, node, eff)
    prefill = prefill_time(job, tp, pp, device, node, eff)
    cycle = job.output_tokens * step + batch * prefill
    return batch * job.output_tokens / cycle, cycle / job.output_tokens, prefill + step


def _meets(job: InferenceJob, tpot: float, ttft: float) -> bool:
    ok_tpot = job.tpot_ms is None or tpot * 1e3 <= job.tpot_ms
    return ok_tpot and (job.ttft_ms is None or ttft * 1e3 <= job.ttft_ms)


def slo_batch(
    job: InferenceJob, tp: int, pp: int, limit: int, device: Device, node: Node, eff: Efficiency
) -> int:
    """Largest batch <= limit meeting the SLOs (TPOT and TTFT grow with batch): bisection."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        _, tpot, ttft = operating_point(job, tp, pp, mid, device, node, eff)
        if _meets(job, tpot, ttft):
            lo = mid
        else:
            hi = mid - 1
    return lo


def replica(
    job: InferenceJob, tp: int, pp: int, device: Device, node: Node, eff: Efficiency
) -> Serving:
    """The best operating point of one replica layout, and replicas for the load."""
    limit = max_batch(job, tp, pp, device, eff)
    fits = limit >= 1
    batch = slo_batch(job, tp, pp, limit, device, node, eff) if fits else 0
    meets = None if job.tpot_ms is None and job.ttft_ms is None else batch >= 1
    batch = max(batch, 1 if fits else 0) or 1
    tput, tpot, ttft = operating_point(job, tp, pp, batch, device, node, eff)
    load = (job.requests_per_minute or 0.0) / 60.0 * job.output_tokens
    replicas = max(1, math.ceil(load / tput)) if load else 1
    kv = batch * (job.input_tokens + job.output_tokens) * kv_per_token_per_gpu(job, tp, pp)
    weights = weights_per_gpu(job, tp, pp)
    memory = weights + kv + eff.inference.overhead_gib * GIB
    return Serving(tp, pp, batch, fits, memory, weights, kv, tpot, ttft, tput, replicas, meets)


def serve(
    job: InferenceJob, device: Device, node: Node, eff: Efficiency,
    tp: int | None = None, pp: int | None = None,
) -> Serving:
    """Pick the replica layout needing the fewest GPUs (then the lowest TPOT)."""
    tps = (tp,) if tp else tuple(t for t in TP_CHOICES if t <= node.gpus)
    options = [replica(job, t, pp or 1, device, node, eff) for t in tps]
    good = [s for s in options if s.fits and s.meets_slo is not False]
    pool = good or [s for s in options if s.fits] or options
    if job.requests_per_minute is None:
        return min(pool, key=lambda s: (s.tp * s.pp, -s.tokens_per_s))
    return min(pool, key=lambda s: (s.gpus, s.tpot_s))
