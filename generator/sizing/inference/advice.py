"""What to say when no serving layout meets the latency SLOs on the spec's hardware.

Sizing then reports every replica at batch 1 (the closest it gets), which for a real load can
mean hundreds of replicas: a number nobody should order from. An architect needs to see how
far off the SLO is, and what would meet it: fp8 weights where the spec serves bf16 (half the
bytes every decode step reads), or another GPU the server takes (more HBM bandwidth and
memory). Each alternative is sized with the same model and the same pins, so the advice is a
plan podplan would produce, not a rule of thumb.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from generator.sizing.inference.job import InferenceJob, Serving
from generator.sizing.inference.serving import serve
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node


@dataclass(frozen=True)
class Hardware:
    """The GPUs the spec's server takes, and the device and node each makes in it."""

    options: list[str]
    make: Callable[[str], tuple[Device, Node]]


def shortfall(job: InferenceJob, s: Serving, gpu: str, node_gpus: int = 0) -> str:
    """How close the layout gets at batch 1, against the SLOs it misses. The planner keeps
    the layout with the fewest GPUs, so a wider TP inside the node (``node_gpus``) gets
    closer: 'the closest it gets' read as the best any layout does (70B bf16 at 32k inputs:
    TP2 reaches TPOT 40 ms, TP8 19 ms)."""
    low = s.latency
    asked = []
    if job.tpot_ms is not None:
        asked.append(f"TPOT <= {job.tpot_ms:g} ms")
    if job.ttft_ms is not None:
        asked.append(f"TTFT <= {job.ttft_ms:g} ms")
    return (f"no batch meets the latency SLOs ({', '.join(asked)}) on {gpu} in "
            f"{job.precision}: the lowest this layout reaches is TPOT {low.tpot_s * 1e3:.1f} ms, "
            f"TTFT {low.ttft_s * 1e3:.0f} ms at batch 1 ({s.layout.text()}), "
            "so every replica is sized at batch 1"
            + (f"; a wider tp (up to {node_gpus}, pinned with parallelism.tp) can get closer on "
               "more GPUs" if s.layout.tp < node_gpus and s.layout.pp == 1 else
               ", the closest it gets"))


def alternatives(job: InferenceJob, gpu: str, hardware: Hardware, eff: Efficiency,
                 pins: dict[str, int | None]) -> str:
    """The changes (fp8, another of the server's GPUs) that would meet the SLOs, sized."""
    tries: list[tuple[str, InferenceJob, str]] = []
    device, _ = hardware.make(gpu)
    if job.precision != "fp8" and device.fp8_flops is not None:
        tries.append(("precision fp8", replace(job, precision="fp8"), gpu))
    for other in hardware.options:
        if other != gpu:
            tries.append((f"gpu {other}", job, other))
    met = []
    for label, candidate, gpu_id in tries:
        dev, node = hardware.make(gpu_id)
        if candidate.precision == "fp8" and dev.fp8_flops is None:
            continue
        s = serve(candidate, dev, node, eff, **pins)
        if s.fits and s.meets_slo:
            met.append(f"{label} ({s.replicas} x {s.layout.text()} = {s.gpus} GPUs, "
                       f"batch {s.batch}, TPOT {s.throughput.tpot_s * 1e3:.1f} ms)")
    if not met:
        names = ", ".join(label for label, _, _ in tries) or "no alternative"
        return f"no change podplan can size meets them either (tried {names})"
    return "would meet them with " + "; or ".join(met)
