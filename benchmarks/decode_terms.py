"""Batch-1 decode, term by term: what one token costs in ``sizing/inference/steps.py``.

    python -m benchmarks.decode_terms

For each layout it prints the weight bytes one GPU reads, the weight read at the fitted HBM
share, the KV-cache read, the TP all-reduces (count x seconds per call), the fixed
per-iteration and per-sequence times, the modelled TPOT, and the floor at the full HBM
speed (weights / peak bandwidth, nothing else). Where the calibration data holds a
batch-1 figure for the same model, layout and GPU it is printed beside it (row id).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.calibration import architecture
from generator.catalog.load import default_catalog
from generator.sizing.inference import InferenceJob, Layout
from generator.sizing.inference.memory import (
    ACTIVATION_BYTES,
    expert_weights_per_gpu,
    other_weights_per_gpu,
)
from generator.sizing.inference.steps import (
    attention_s,
    cycle_s,
    dense_gemm_s,
    expert_gemm_s,
    step_overhead_s,
    tp_all_reduce,
)
from generator.sizing.model.collectives import group_link
from generator.sizing.model.efficiency import Efficiency, default_efficiency
from generator.sizing.model.hardware import Device, Node, device_from_gpu


@dataclass(frozen=True)
class Case:
    model: str
    precision: str
    tp: int
    pp: int = 1
    isl: int = 1024
    published: str = ""


CASES = (
    Case("Llama 3.1 8B", "bf16", 1),
    Case("Llama 3.1 70B", "bf16", 4),
    Case("Llama 3.1 70B", "bf16", 8),
    Case("Llama 3.3 70B", "fp8", 2, isl=5000,
         published="I85: 18.58 ms (NIM 1.8.0, 5000/500, concurrency 1)"),
    Case("Llama 3.3 70B", "fp8", 2, isl=500,
         published="I87: 18.91 ms (NIM 1.8.0, 500/2000, concurrency 1)"),
    Case("Llama 3.1 405B", "fp8", 8),
    Case("Llama 3.1 405B", "bf16", 8, 2),
)
NODE = Node(gpus=8, nics=8, nic_gbps=400.0, nvlink_domain=8)


def terms(case: Case, device: Device, eff: Efficiency) -> dict[str, float]:
    """The batch-1 step of ``case`` split into its terms (seconds, bytes)."""
    arch = architecture(case.model, default_catalog())
    job = InferenceJob(arch=arch, precision=case.precision, input_tokens=case.isl,
                       output_tokens=128)
    lay = Layout(case.tp, case.pp)
    weights = other_weights_per_gpu(job, lay) + expert_weights_per_gpu(job, lay)
    link = group_link(lay.tp, 1, NODE, device, eff)
    per_call = tp_all_reduce(arch.hidden * ACTIVATION_BYTES, lay.tp, link, device, NODE,
                             eff)
    calls = 2 * arch.layers if lay.tp > 1 else 0
    read = lay.pp * (dense_gemm_s(job, lay, 1.0, 0.0, 1.0, device, eff)
                     + expert_gemm_s(job, lay, 1.0, 0.0, 8192, device, eff))
    return {
        "weights_gb": weights / 1e9,
        "read_ms": read * 1e3,
        "kv_ms": lay.pp * attention_s(job, lay, 1.0, 0.0, device, eff) * 1e3,
        "calls": calls,
        "call_us": per_call * 1e6,
        "fixed_ms": (step_overhead_s(job, eff) + eff.inference.sequence_overhead_s) * 1e3,
        "tpot_ms": cycle_s(job, lay, 1.0, 0.0, device, NODE, eff) * 1e3,
        "floor_ms": lay.pp * weights / device.hbm_bytes_per_s * 1e3,
    }


def main() -> None:
    eff = default_efficiency()
    device = device_from_gpu(default_catalog().gpus["h100-sxm-80gb"])
    inf = eff.inference
    print(f"H100 SXM, HBM {device.hbm_bytes_per_s / 1e12:.2f} TB/s x fitted share "
          f"{inf.hbm_efficiency:.3f}; custom all-reduce {inf.all_reduce_latency_s * 1e6:.1f} us "
          f"per call; batch 1, context = ISL + 64")
    head = (f"{'model':15} {'prec':4} {'layout':8} {'ISL':>5} {'GB/GPU':>6} {'read ms':>7} "
            f"{'KV ms':>6} {'ARs':>4} {'us/AR':>6} {'fixed ms':>8} {'TPOT ms':>7} "
            f"{'floor ms':>8}  published")
    print(head)
    print("-" * len(head))
    for case in CASES:
        t = terms(case, device, eff)
        print(f"{case.model:15} {case.precision:4} TP{case.tp}PP{case.pp:<4} {case.isl:5d} "
              f"{t['weights_gb']:6.2f} {t['read_ms']:7.2f} {t['kv_ms']:6.3f} "
              f"{t['calls']:4.0f} {t['call_us']:6.2f} {t['fixed_ms']:8.3f} "
              f"{t['tpot_ms']:7.2f} {t['floor_ms']:8.2f}  {case.published}")


if __name__ == "__main__":
    main()
