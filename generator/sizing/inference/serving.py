"""Operating points of a replica and the replica layout a workload gets.

**Max throughput** (in-flight batching): ``B`` sequences decode together and, in steady
state, one request finishes (and one prompt of ``n_in`` tokens enters) every ``n_out / B``
cycles, so each cycle also carries ``B * n_in / n_out`` prompt tokens in its iterations:

    cycle(B)   = cycle_s(decode=B, prefill=B * n_in / n_out)
    TPOT       = cycle(B)                   (every sequence gets one token per cycle)
    throughput = B / cycle(B)               output tokens/s of the replica
    TTFT       = cycle(B) + cycle_s(decode=0, prefill=n_in)
                 (the cycle in flight finishes, then the prompt's own chunks go through)

``B`` is the largest batch the KV cache admits that meets the SLOs (TPOT and TTFT only
grow with ``B``, so a bisection finds it). **Latency-bound**: batch 1 with nothing else in
flight, TPOT = cycle_s(1, 0) and TTFT = cycle_s(0, n_in): the interactive floor.

**Layouts.** TP 1/2/4/8 inside a node; a model that does not fit one node gets PP stages
across nodes (TP = the node's GPUs); a mixture of experts also tries EP over the replica's
GPUs. Without a load: the fewest GPUs that fit and meet the SLOs, then the fastest; with a
load: the fewest GPUs in total (replicas x layout), then the lowest TPOT.
"""

from __future__ import annotations

import math
from itertools import product

from generator.sizing.inference.job import InferenceJob, Layout, Point, Serving
from generator.sizing.inference.memory import (
    kv_capacity_tokens,
    kv_per_token_per_gpu,
    max_batch,
    runtime_bytes,
    tokens_held,
    weights_per_gpu,
)
from generator.sizing.inference.steps import cycle_s
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node

TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 3, 4, 6, 8, 16)


def loaded_point(job: InferenceJob, lay: Layout, batch: float, device: Device, node: Node,
                 eff: Efficiency) -> Point:
    """The replica at ``batch`` sequences in flight (in-flight batching steady state)."""
    ratio = job.input_tokens / job.output_tokens
    cycle = cycle_s(job, lay, batch, batch * ratio, device, node, eff)
    ttft = cycle + cycle_s(job, lay, 0.0, job.input_tokens, device, node, eff)
    return Point(max(1, round(batch)), batch / cycle, cycle, ttft)


def latency_point(job: InferenceJob, lay: Layout, device: Device, node: Node,
                  eff: Efficiency) -> Point:
    """Batch 1, nothing else in flight."""
    tpot = cycle_s(job, lay, 1.0, 0.0, device, node, eff)
    ttft = cycle_s(job, lay, 0.0, job.input_tokens, device, node, eff)
    return Point(1, 1.0 / tpot, tpot, ttft)


def meets(job: InferenceJob, p: Point) -> bool:
    ok_tpot = job.tpot_ms is None or p.tpot_s * 1e3 <= job.tpot_ms
    return ok_tpot and (job.ttft_ms is None or p.ttft_s * 1e3 <= job.ttft_ms)


def slo_gap(job: InferenceJob, p: Point) -> float:
    """How far ``p`` is from the SLOs: the worst ratio of reached to asked (<= 1 meets them;
    0 without SLOs)."""
    ratios = [] if job.tpot_ms is None else [p.tpot_s * 1e3 / job.tpot_ms]
    ratios += [] if job.ttft_ms is None else [p.ttft_s * 1e3 / job.ttft_ms]
    return max(ratios, default=0.0)


def slo_batch(job: InferenceJob, lay: Layout, limit: int, device: Device, node: Node,
              eff: Efficiency) -> int:
    """Largest batch <= limit meeting the SLOs (0 if not even batch 1 does): bisection."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if meets(job, loaded_point(job, lay, mid, device, node, eff)):
            lo = mid
        else:
            hi = mid - 1
    return lo


def replica(job: InferenceJob, lay: Layout, device: Device, node: Node,
            eff: Efficiency) -> Serving:
    """Both operating points of one replica layout, and the replicas the load needs."""
    limit = max_batch(job, lay, device, eff)
    fits = limit >= 1
    batch = slo_batch(job, lay, limit, device, node, eff) if fits and job.has_slo else limit
    meets_slo = (batch >= 1) if job.has_slo else None
    top = loaded_point(job, lay, max(batch, 1), device, node, eff)
    load = (job.requests_per_minute or 0.0) / 60.0 * job.output_tokens
    replicas = max(1, math.ceil(load / top.tokens_per_s)) if load else 1
    kv = max(batch, 1) * tokens_held(job) * kv_per_token_per_gpu(job, lay)
    memory = weights_per_gpu(job, lay) + kv + runtime_bytes(job, lay, eff)
    return Serving(lay, fits, weights_per_gpu(job, lay),
                   kv_capacity_tokens(job, lay, device, eff) if fits else 0, top,
                   latency_point(job, lay, device, node, eff), replicas, meets_slo, memory)


def layouts(job: InferenceJob, node: Node, tp: int | None = None, pp: int | None = None,
            ep: int | None = None) -> list[Layout]:
    """Candidate replica layouts (pins respected): PP > 1 only with TP across a whole node."""
    tps = (tp,) if tp else tuple(t for t in TP_CHOICES if t <= node.gpus)
    pps = (pp,) if pp else PP_CHOICES
    out = []
    for t, p in product(tps, pps):
        if p > 1 and not pp and t != node.gpus:
            continue
        if p > job.arch.layers:
            continue
        eps = (ep,) if ep else ((1, t * p) if job.moe and t * p > 1 else (1,))
        out += [Layout(t, p, e) for e in dict.fromkeys(eps)
                if e == 1 or (job.arch.experts % e == 0 and (t * p) % e == 0)]
    return out


def serve(job: InferenceJob, device: Device, node: Node, eff: Efficiency,
          tp: int | None = None, pp: int | None = None, ep: int | None = None) -> Serving:
    """The replica layout the workload gets (module docstring: layouts)."""
    options: list[Serving] = []
    for lay in layouts(job, node, tp, pp, ep):
        if lay.pp > 1 and not pp and any(o.fits and o.layout.pp == 1 for o in options):
            continue  # pipeline stages across nodes only where one node cannot hold it
        options.append(replica(job, lay, device, node, eff))
    good = [s for s in options if s.fits and s.meets_slo is not False]
    if not good and any(s.fits for s in options):  # unreachable: the nearest at batch 1
        # judged at batch 1 under the load (the point the SLO check reads), not decode alone
        return min((s for s in options if s.fits),
                   key=lambda s: (round(slo_gap(job, s.throughput), 6), s.gpus, s.tpot_s))
    pool = good or options
    if job.requests_per_minute is None:
        return min(pool, key=lambda s: (s.layout.gpus, -s.tokens_per_s))
    return min(pool, key=lambda s: (s.gpus, s.tpot_s))
