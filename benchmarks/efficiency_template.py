"""The text of generator/catalog/data/efficiency.yaml, comments included, from a mapping.

``fit.py`` owns the file: it fills this template with the fitted values, the date and the
resulting errors (in-sample and leave-one-source-out), so the header always says where the
numbers came from.
"""

from __future__ import annotations

from typing import Any

from benchmarks.crossval import PARAMS

FITTED = {path for p in PARAMS for path in p.paths}


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


def _section(name: str, values: dict[str, Any]) -> list[str]:
    """``name:`` and one line per key, ``# fitted`` where fit.py writes the value."""
    out = [f"{name}:"]
    for k, v in values.items():
        text = _flow(v) if isinstance(v, dict) else (
            "[" + ", ".join(v) + "]" if isinstance(v, list) else _num(v))
        fitted = f"{name}.{k}" in FITTED or any(
            path.startswith(f"{name}.{k}.") for path in FITTED)
        out.append(f"  {k}: {text}" + ("   # fitted" if fitted else ""))
    return out


COMMENTS: dict[str, list[str]] = {
    "compute": [
        "# GEMM efficiency: eta = gemm_efficiency[gpu] * framework compute_scale",
        "#   / (1 + (tokens_half / n)^tokens_exponent) / (1 + width_half / w),",
        "# n = micro-batch tokens per GPU (b*s/cp), w = hidden / tp. fp8_speedup multiplies",
        "# GEMM throughput in fp8 (< 2: casts, amax, bf16 attention). layer_overhead_s: CPU",
        "# time to launch one layer's kernels per micro-batch (hidden unless the GPU is faster);",
        "# moe_layer_overhead_s: CPU time an MoE layer spends after its dispatcher's host",
        "# sync (token counts per expert copied to the host), which the GPU waits out: added",
        "# to the micro-batch's time, never hidden. moe_layer_launch_s: CPU time an MoE layer",
        "# spends after the sync issuing kernels the GPU runs as they arrive (permute, the",
        "# grouped GEMM's per-expert GEMMs, combine): added to the launch time, so hidden",
        "# unless the CPU is the slower.",
        "# head_dim_64_attention: an attention kernel's speed at head dim 64 relative to 128",
        "# on Hopper (exponent-bound: half the matrix FLOPs per softmax exponential);",
        "# FlashAttention-3 paper (Shah et al. 2024) Fig. 5, H100 SXM5 BF16 forward at 4k:",
        "# cuDNN 408 vs 609 TFLOP/s, FlashAttention-2 321 vs 368. Backward assumed alike [R];",
        "# not fitted.",
    ],
    "memory": [
        "# usable_fraction applies to the catalog's nominal memory_bytes (vendor GB = 1e9 bytes);",
        "# the HBM behind \"80 GB\" is 80 GiB (85.9e9 bytes, 79.6 GiB visible to CUDA), so 1.0",
        "# already leaves ~7 % for fragmentation. overhead_gib: CUDA context + NCCL + allocator",
        "# per GPU. zero3_live_layers: layers ZeRO-3 holds gathered at once (current + prefetch).",
    ],
    "network": [
        "# Achieved fraction of NVLink (~360 GB/s busBW on H100), of PCIe peer-to-peer (GPUs",
        "# NVLink does not join: L40S, H100 PCIe beyond a bridged pair) and of the east-west",
        "# NICs (line rate and count from the server catalog); per-hop latency of a ring/tree.",
        "# deepep_rdma_efficiency: DeepEP/HybridEP's GPU-initiated RDMA dispatch, the lowest of",
        "# the DeepEP README's internode figures (43 GB/s at EP16 per ~50 GB/s CX7 400G NIC).",
    ],
    "overlap": [
        "# Share of each communication left exposed where the stack overlaps it (one value",
        "# per kind of overlap, shared by every stack with the feature): tp (TE userbuffers /",
        "# async TP), dp (distributed optimizer's bucketed reduce-scatter/all-gather), fsdp",
        "# (ZeRO-3 prefetched gathers), pp (stage send/recv), cp (K/V ring), ep (MoE",
        "# all-to-all token dispatch/combine, where the stack or run overlaps it with another",
        "# micro-batch's compute: Megatron-Core overlap_moe_expert_parallel_comm; none where",
        "# the schedule states a full overlap, DeepSeek's DualPipe; otherwise exposed in full).",
    ],
    "frameworks": [
        "# Software stacks a spec may name, described by features (data, not fitted):",
        "# sharding: distributed (Megatron distributed optimizer, 2 + grad + 12/(d*c) bytes per",
        "# param) or zero3 (everything / d; HSDP / shard group). sequence_parallel: activations",
        "# of norms/dropout split over TP. tp_comm_overlap: TP collectives hidden behind GEMMs",
        "# (else fully exposed). fused_attention: no s^2 scores (FlashAttention/cuDNN);",
        "# attention_kernel: fused (cuDNN / FlashAttention 3) or fa2 (FlashAttention 2).",
        "# recompute: levels offered; partial_recompute: full recompute of only some layers",
        "# (Megatron recompute_num_layers; FSDP/HF checkpoint whole blocks, all or nothing).",
        "# parallelism: dimensions the stack runs besides data parallelism. gathers_per_layer:",
        "# ZeRO-3 collectives per layer and direction (default 1, a flat buffer per layer).",
        "# compute_scale: kernel efficiency relative to NeMo (fitted). base: inherit, override.",
        "# moe_dispatcher: alltoall (default; one copy per selected expert) or deepep (DeepEP /",
        "# HybridEP: once per destination node and GPU). ep_comm_overlap: the EP all-to-all",
        "# overlapped with another micro-batch's compute (default false: Megatron-Core's).",
    ],
    "calibration_stacks": [
        "# Stacks that published calibration rows, each a user-facing stack minus or plus a",
        "# stated feature (not selectable in a spec; benchmarks/stacks.py maps rows to them).",
        "# moe_host_sync: false = Megatron-Core's sync-free MoE dispatch (HybridEP buffers",
        "# pre-sized by moe_expert_rank_capacity_factor, TE fused grouped MLP, CUDA graphs):",
        "# no per-layer host sync, so compute.moe_layer_overhead_s is not paid.",
        "# schedule_per_local_batch: the pipeline schedule runs once per gradient-accumulation",
        "# batch (NeMo AutoModel), each call with its own bubble and unhidden FSDP reduction.",
    ],
    "optimizer": [
        "# Adam's update: bytes read+written per local parameter, at this share of HBM bandwidth.",
    ],
    "peft": [
        "# Adapter defaults: NeMo 2 / Megatron-Bridge LoRA (rank 32 on qkv, proj, fc1, fc2);",
        "# NeMo P-tuning (10 virtual tokens, prompt-encoder bottleneck 1024).",
    ],
    "inference": [
        "# Serving (sizing/inference/; fitted in their own stage on the inference rows):",
        "# HBM share for weight and KV reads; fraction of the bf16 peak for serving GEMMs, of",
        "# the KV-cache dtype's peak for attention; static-scaled fp8 GEMM gain (its own, not",
        "# training's); MoE grouped GEMMs relative to dense ones (routing, permutation);",
        "# scheduler time per engine iteration and per sequence in flight (SGLang adds its",
        "# own per iteration, fitted on SGLang rows only); extra latency of a TP all-reduce",
        "# whose group spans nodes (NCCL over the fabric, no custom all-reduce). max_batch /",
        "# max_num_tokens: TensorRT-LLM's batch and per-iteration token limits (its defaults",
        "# 2048 / 8192; vLLM's own in sizing/inference/memory.py). runtime_reserve_gib: CUDA",
        "# context, NCCL and workspaces. KV cache: TensorRT-LLM",
        "# KvCacheConfig.free_gpu_memory_fraction of the memory free after weights (default 0.9);",
        "# vLLM gpu_memory_utilization of the total (default 0.9), weights and activations inside",
        "# it. Memory is what CUDA reports (gpus.yaml memory_total_mib).",
    ],
}
SECTIONS = ("compute", "memory", "network", "overlap", "frameworks", "calibration_stacks",
            "optimizer", "peft", "inference")


def _stage_lines(name: str, ins: dict[str, float], cv: dict[str, Any] | None) -> list[str]:
    out = [f"# {name} stage, {int(ins['rows'])} rows: in-sample median |error| "
           f"{100 * ins['median']:.1f} %, {100 * ins['within20']:.0f} % within +-20 %, worst "
           f"{100 * ins['worst']:.0f} %;"]
    if cv is not None:
        out.append(f"#   leave one source out (run {cv['fitted']}): median "
                   f"{100 * float(cv['median_abs_error']):.1f} %, "
                   f"{100 * float(cv['within_20pct']):.0f} % within +-20 %, worst "
                   f"{100 * float(cv['worst_abs_error']):.0f} %;")
    return out


def render(
    doc: dict[str, Any], stats: dict[str, float], in_sample: dict[str, dict[str, float]],
    cv: dict[str, Any], date: str,
) -> str:
    """The whole file: ``stats`` over every row, ``in_sample`` per fit stage, ``cv`` the
    per-stage cross-validated scores recorded in uncertainty.yaml."""
    lines = [
        "# Efficiency parameters of the podplan sizing engine (generator/sizing/).",
        "#",
        "# Fitted by benchmarks/fit.py on benchmarks/data/calibration.csv "
        f"({int(stats['rows'])} published",
        f"# measurements), last on {date}, in stages from the priors in benchmarks/crossval.py",
        "# (each stage on its own rows, the earlier stages' values fixed):",
        *(line for name, ins in in_sample.items() for line in _stage_lines(name, ins,
                                                                           cv.get(name))),
        f"# the seed rule of thumb on the training rows: median "
        f"{100 * stats['seed_median']:.0f} %, worst {100 * stats['seed_worst']:.0f} %.",
        "# Do not hand-edit fitted values: change the model or the data and rerun the fit.",
        "# Values not marked fitted are physical constants, conventions or stack features.",
        f"version: {doc.get('version', 2)}",
    ]
    for name in SECTIONS:
        lines += ["", *COMMENTS[name], *_section(name, doc[name])]
    return "\n".join(lines) + "\n"
