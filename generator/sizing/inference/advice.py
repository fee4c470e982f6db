"""What to say when no serving layout meets the latency SLOs on the spec's hardware.

Sizing then keeps the layout nearest the SLOs at batch 1 (``serving.serve``), which for a real
load can mean hundreds of replicas: a number nobody should order from without seeing the
other side. An architect needs three things, each a number podplan computed, not a rule of
thumb: how far off the SLO is (``shortfall``); what the load needs with the SLOs eased to
just past the nearest reach (``near_slo``: 405B bf16 on H100 at TPOT 45 ms reaches 53.0 ms
at batch 1 on 864 GPUs, and 58.2 ms on 48) or set aside (``without_slo``: the fewest GPUs
at the max-throughput batch, with the TPOT that batch gets); and what would meet it
(``alternatives``): fp8 weights where the spec serves bf16 (half the bytes every decode step
reads), another GPU the server takes (more HBM bandwidth and memory), or TP over more GPUs
(fewer bytes per GPU each step). Each alternative is sized with the same model and the same
pins, so it is a plan podplan would produce; a change that comes closer without meeting the
SLO is named with the latency it reaches.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from generator.sizing.inference.job import InferenceJob, Serving
from generator.sizing.inference.serving import serve, slo_gap
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node

Pins = dict[str, int | None]


@dataclass(frozen=True)
class Hardware:
    """The GPUs the spec's server takes, and the device and node each makes in it."""

    options: list[str]
    make: Callable[[str], tuple[Device, Node]]


def asked_text(job: InferenceJob) -> str:
    """``TPOT <= 15 ms, TTFT <= 2000 ms``: the SLOs as the spec gives them."""
    asked = [] if job.tpot_ms is None else [f"TPOT <= {job.tpot_ms:g} ms"]
    asked += [] if job.ttft_ms is None else [f"TTFT <= {job.ttft_ms:g} ms"]
    return ", ".join(asked)


def shortfall(job: InferenceJob, s: Serving, gpu: str, pinned: bool = False) -> str:
    """The SLOs are out of reach: the nearest the layouts get at batch 1 under the load (prompt
    chunks interleaved: the point the SLO check reads, so the figure quoted is the one that
    missed; decode alone is faster), and on which."""
    low = s.throughput
    which = "the pinned layout" if pinned else "any layout"
    return (f"the latency SLOs ({asked_text(job)}) are out of reach on {gpu} in "
            f"{job.precision}: the nearest {which} gets is TPOT {low.tpot_s * 1e3:.1f} ms, "
            f"TTFT {low.ttft_s * 1e3:.0f} ms at batch 1 under the load ({s.layout.text()}), "
            "so each "
            "replica is sized there, at batch 1")


def without_slo(job: InferenceJob, device: Device, node: Node, eff: Efficiency,
                pins: Pins) -> Serving:
    """The plan with the SLOs set aside: the fewest GPUs at the max-throughput batch."""
    return serve(replace(job, tpot_ms=None, ttft_ms=None), device, node, eff, **pins)


NEAR = 1.1
"""``near_slo`` eases each missed SLO to 10 % past what the sized replica reaches at batch 1
under load (its throughput point: the batch-1 decode plus its share of prompt chunks, the
point the SLO check reads): close enough to read as the SLO the hardware can keep, far
enough for a batch above 1."""


def eased(job: InferenceJob, s: Serving) -> InferenceJob:
    """The SLOs eased to ``NEAR`` x the sized replica's reach where missed (kept where met),
    rounded up to 0.1 ms so the text and the sizing read the same number."""
    def ease(asked: float | None, reached: float) -> float | None:
        if asked is None or reached <= asked:
            return asked
        return math.ceil(NEAR * reached * 10) / 10

    return replace(job, tpot_ms=ease(job.tpot_ms, s.throughput.tpot_s * 1e3),
                   ttft_ms=ease(job.ttft_ms, s.throughput.ttft_s * 1e3))


def near_slo(job: InferenceJob, s: Serving, device: Device, node: Node, eff: Efficiency,
             pins: Pins) -> tuple[InferenceJob, Serving]:
    """The plan under the eased SLOs, and the job that states them."""
    near = eased(job, s)
    return near, serve(near, device, node, eff, **pins)


def _option(s: Serving) -> str:
    return (f"{s.gpus:,} GPU{'s' if s.gpus != 1 else ''} ({s.replicas} x {s.layout.text()}) "
            f"at batch {s.batch} (TPOT {s.tpot_s * 1e3:.1f} ms, TTFT {s.ttft_s * 1e3:,.0f} ms)")


def without_slo_text(sized: Serving, near: InferenceJob, close: Serving, free: Serving) -> str:
    """The other side of an unreachable SLO, in one sentence beside the sized plan."""
    eased_part = (f"with the SLOs eased to {asked_text(near)} (10 % past the nearest reach), "
                  f"{_option(close)}; " if close.meets_slo else "")
    return (f"beside the {sized.gpus:,} GPUs sized at batch 1: {eased_part}with the SLOs set "
            f"aside, {_option(free)}; to size for another latency, set tpot_ms/ttft_ms to it "
            "and podplan takes the largest batch under it")


def _wider_tp(s: Serving, pins: Pins, node_gpus: int) -> int | None:
    """A TP wider than the nearest layout's, where one could read fewer bytes per GPU:
    the whole node for a narrower pinned TP, two nodes for a one-node replica."""
    if pins.get("pp") not in (None, 1) or s.pp != 1:
        return None
    if pins.get("tp") is not None and s.tp < node_gpus:
        return node_gpus
    return 2 * node_gpus if s.tp == node_gpus else None


def _tries(job: InferenceJob, s: Serving, gpu: str, hardware: Hardware, pins: Pins,
           node_gpus: int) -> list[tuple[str, InferenceJob, str, Pins]]:
    """Every change to size: fp8, each other GPU (in bf16 and fp8), a wider TP."""
    fp8 = replace(job, precision="fp8")
    out: list[tuple[str, InferenceJob, str, Pins]] = []
    if job.precision != "fp8" and hardware.make(gpu)[0].fp8_flops is not None:
        out.append(("precision fp8", fp8, gpu, pins))
    for other in (g for g in hardware.options if g != gpu):
        has_fp8 = hardware.make(other)[0].fp8_flops is not None
        if job.precision != "fp8" or has_fp8:
            out.append((f"gpu {other}", job, other, pins))
        if job.precision != "fp8" and has_fp8:
            out.append((f"gpu {other} with precision fp8", fp8, other, pins))
    tp = _wider_tp(s, pins, node_gpus)
    if tp is not None:
        where = f"one replica over {tp // node_gpus} nodes" if tp > node_gpus else "one node"
        out.append((f"parallelism.tp {tp} ({where})", job, gpu, pins | {"tp": tp, "pp": 1}))
    return out


def alternatives(job: InferenceJob, s: Serving, gpu: str, hardware: Hardware,
                 eff: Efficiency, pins: Pins) -> str:
    """The changes that would meet the SLOs, sized; else those that come closer, with the
    latency they reach; else what was tried."""
    node_gpus = hardware.make(gpu)[1].gpus
    gap = slo_gap(job, s.throughput)
    met, closer, tried = [], [], []
    for label, candidate, gpu_id, pinned in _tries(job, s, gpu, hardware, pins, node_gpus):
        tried.append(label)
        dev, node = hardware.make(gpu_id)
        alt = serve(candidate, dev, node, eff, **pinned)
        if not alt.fits:
            continue
        if alt.meets_slo:
            met.append(f"{label} ({alt.replicas} x {alt.layout.text()} = {alt.gpus:,} GPUs, "
                       f"batch {alt.batch}, TPOT {alt.tpot_s * 1e3:.1f} ms)")
        elif slo_gap(candidate, alt.throughput) < gap:
            closer.append(f"{label} (TPOT {alt.throughput.tpot_s * 1e3:.1f} ms, TTFT "
                          f"{alt.throughput.ttft_s * 1e3:.0f} ms at batch 1 under the load, "
                          f"{alt.layout.text()})")
    if met:
        return "would meet them with " + "; or ".join(met) + (
            "; closer but still short: " + "; ".join(closer) if closer else "")
    if closer:
        return "no change podplan can size meets them; closer: " + "; ".join(closer)
    names = ", ".join(tried) or "no alternative"
    return f"no change podplan can size comes closer (tried {names})"
