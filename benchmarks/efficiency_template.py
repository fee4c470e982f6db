"""The text of generator/catalog/data/efficiency.yaml, comments included, from a mapping.

``fit.py`` owns the file: it fills this template with the fitted values, the date and the
resulting errors, so the header always says where the numbers came from.
"""

from __future__ import annotations

from typing import Any


def _num(x: Any) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    v = float(x)
    if v == 0:
        return "0.0"
    if abs(v) >= 1e4 or abs(v) < 1e-3:
        mantissa, exponent = f"{v:.3e}".split("e")
        return f"{mantissa}e{int(exponent)}"  # YAML 1.1 needs the dot: 1.000e-5
    return f"{v:.4g}"


def _flow(d: dict[str, Any]) -> str:
    parts = []
    for k, v in d.items():
        text = "[" + ", ".join(v) + "]" if isinstance(v, list | tuple) else (
            v if isinstance(v, str) else _num(v))
        parts.append(f"{k}: {text}")
    return "{" + ", ".join(parts) + "}"


def render(doc: dict[str, Any], stats: dict[str, float], date: str) -> str:
    """The whole file."""
    c, m, n, o, p, i = (doc[k] for k in ("compute", "memory", "network", "optimizer", "peft",
                                          "inference"))
    fw = doc["frameworks"]
    lines = [
        "# Efficiency parameters of the podplan sizing engine (generator/sizing/).",
        "#",
        f"# Fitted by benchmarks/fit.py on benchmarks/data/calibration.csv ({int(stats['rows'])}"
        f" published measurements) on {date}.",
        f"# Result (benchmarks/accuracy.py): median |error| {100 * stats['median']:.1f} %, "
        f"worst {100 * stats['worst']:.1f} %;",
        f"# the seed rule of thumb on the same training rows: median "
        f"{100 * stats['seed_median']:.0f} %, worst {100 * stats['seed_worst']:.0f} %.",
        "# Do not hand-edit fitted values: change the model or the data and rerun the fit.",
        "# Values not in benchmarks/fit.py's PARAMS are physical constants or conventions.",
        "version: 1",
        "",
        "# GEMM efficiency: eta = gemm_efficiency[gpu] * framework compute_scale",
        "#   / (1 + (tokens_half / n)^tokens_exponent) / (1 + width_half / w),",
        "# n = micro-batch tokens per GPU (b*s/cp), w = hidden / tp. fp8_speedup multiplies",
        "# GEMM throughput in fp8 (< 2: casts, amax, bf16 attention). layer_overhead_s: CPU",
        "# time to launch one layer's kernels per micro-batch (hidden unless the GPU is faster).",
        "compute:",
        f"  gemm_efficiency: {_flow(c['gemm_efficiency'])}   # fitted",
        f"  tokens_half: {_num(c['tokens_half'])}   # fitted",
        f"  tokens_exponent: {_num(c['tokens_exponent'])}   # fitted",
        f"  width_half: {_num(c['width_half'])}   # fitted",
        f"  fp8_speedup: {_num(c['fp8_speedup'])}   # fitted",
        f"  layer_overhead_s: {_num(c['layer_overhead_s'])}",
        "",
        "# usable_fraction applies to the catalog's nominal memory_bytes (vendor GB = 1e9 bytes);",
        "# the HBM behind \"80 GB\" is 80 GiB (85.9e9 bytes, 79.6 GiB visible to CUDA), so 1.0",
        "# already leaves ~7 % for fragmentation. overhead_gib: CUDA context + NCCL + allocator",
        "# per GPU. FlashAttention: no s^2 scores stored. ZeRO-3: layers gathered at once.",
        "memory:",
        f"  usable_fraction: {_num(m['usable_fraction'])}",
        f"  overhead_gib: {_num(m['overhead_gib'])}",
        f"  flash_attention: {_num(m['flash_attention'])}",
        f"  zero3_live_layers: {_num(m['zero3_live_layers'])}",
        "",
        "# East-west NIC rate (ConnectX-7 NDR); achieved fraction of NVLink (~360 GB/s busBW)",
        "# and of the fabric for DP collectives (fitted: overlap and congestion included);",
        "# per-hop latency.",
        "network:",
        f"  nic_gbps: {_num(n['nic_gbps'])}",
        f"  nvlink_efficiency: {_num(n['nvlink_efficiency'])}",
        f"  fabric_efficiency: {_num(n['fabric_efficiency'])}   # fitted",
        f"  collective_latency_s: {_num(n['collective_latency_s'])}",
        "",
        "# Software stacks. sharding: distributed (Megatron distributed optimizer, 2 + grad +",
        "# 12/(d*c) bytes/param) or zero3 (everything / d). grad_bytes: gradient buffer and",
        "# reduction dtype. *_exposed: share of TP/DP/PP/CP communication not hidden by compute.",
        "# step_overhead_s / microbatch_overhead_s: fixed costs per optimizer step / micro-batch.",
        "# rail_aggregation: DP collectives use every rail the node's ranks own (NCCL",
        "# multi-channel rings: Megatron buckets) or only the rank's own NIC share (DeepSpeed",
        "# ZeRO-3 on Selene scaled like that). Fitted: compute_scale (nemo = 1 is the",
        "# reference), tp_exposed and dp_exposed, step_overhead_s; the rest are priors.",
        "frameworks:",
        *[f"  {name}: {_flow(f)}" for name, f in fw.items()],
        "",
        "# Adam's update: bytes read+written per local parameter, at this share of HBM bandwidth.",
        "optimizer:",
        f"  bytes_touched_per_param: {_num(o['bytes_touched_per_param'])}",
        f"  hbm_efficiency: {_num(o['hbm_efficiency'])}",
        "",
        "# Adapter defaults: NeMo 2 / Megatron-Bridge LoRA (rank 32 on qkv, proj, fc1, fc2);",
        "# NeMo P-tuning (10 virtual tokens, prompt-encoder bottleneck 1024).",
        "peft:",
        f"  lora_rank: {_num(p['lora_rank'])}",
        f"  lora_targets: [{', '.join(p['lora_targets'])}]",
        f"  ptuning_virtual_tokens: {_num(p['ptuning_virtual_tokens'])}",
        f"  ptuning_bottleneck: {_num(p['ptuning_bottleneck'])}",
        "",
        "# Serving (calibrated on TensorRT-LLM max-throughput runs): HBM share for decode reads,",
        "# fraction of peak for prefill and decode GEMMs (fp8 gain: compute.fp8_speedup),",
        "# scheduler batch cap (trtllm-bench's default max batch),",
        "# fixed time per decode iteration, memory headroom and per-GPU overhead.",
        "inference:",
        *[f"  {k}: {_num(v)}" + ("   # fitted" if k in (
            "prefill_efficiency", "decode_efficiency", "step_overhead_s") else "")
          for k, v in i.items()],
        "",
    ]
    return "\n".join(lines)
