"""The seed document's rules of thumb, shown beside podplan's answer (seed 003).

Training: A100 GPUs = tokens(B) x epochs x model size(B) x 13.3 / hours. The constant is
6*P*D FLOPs at about 40 % MFU of an A100's 312 TFLOP/s: 6e18 / (0.4 * 312e12) / 3600 =
13.35 GPU-hours per billion parameters per billion tokens. It knows nothing of H100s, fp8,
PEFT, memory, parallel layouts or short sequences.

Inference: GPUs = output_tokens / throughput x requests per minute / 60, where throughput is
one GPU's output tokens/s — which the seed leaves to the reader; podplan plugs in its own
saturated per-GPU throughput, so the comparison isolates what the rule ignores (latency
SLOs, batch limits, TP granularity).
"""

from __future__ import annotations

from generator.sizing.result import SeedEstimate

SEED_GPU_HOURS_PER_BPARAM_BTOKEN = 13.3
SEED_NOTE = "seed rule assumes A100 80GB at ~40 % MFU (13.3 GPU-h per B params per B tokens)"


def training_gpu_hours(tokens: float, params: float) -> float:
    """GPU-hours by the seed rule (``tokens`` already include epochs)."""
    return tokens / 1e9 * params / 1e9 * SEED_GPU_HOURS_PER_BPARAM_BTOKEN


def training_seed(
    tokens: float, params: float, gpus: int, deadline_hours: float | None,
    total_params: float | None = None,
) -> SeedEstimate:
    """GPUs for the deadline (if any) and hours on podplan's GPU count, by the seed rule.

    ``params`` are the weights a token multiplies against: for a mixture of experts the
    active ones (the rule is 6*P*D, and P there is what each token computes with), so the
    rule is not 18x off for DeepSeek-V3; ``total_params`` (MoE only) is said in the note.
    """
    gpu_hours = training_gpu_hours(tokens, params)
    note = SEED_NOTE
    if total_params is not None and total_params != params:
        note += (f"; MoE: {params / 1e9:,.1f} B active of {total_params / 1e9:,.1f} B "
                 "params, the rule counts the active ones")
    return SeedEstimate(
        formula="gpus = tokens(B) x epochs x params(B) x 13.3 / hours",
        gpus=gpu_hours / deadline_hours if deadline_hours else None,
        hours=gpu_hours / gpus if gpus else None,
        note=note,
    )


def inference_seed(
    output_tokens: int, requests_per_minute: float | None, tokens_per_s_per_gpu: float
) -> SeedEstimate:
    """The seed's inference rule with podplan's saturated per-GPU throughput."""
    gpus = None
    if requests_per_minute and tokens_per_s_per_gpu > 0:
        gpus = output_tokens / tokens_per_s_per_gpu * requests_per_minute / 60
    return SeedEstimate(
        formula="gpus = output_tokens / throughput x requests_per_minute / 60",
        gpus=gpus,
        note=(f"throughput = podplan's saturated {tokens_per_s_per_gpu:,.0f} output tok/s per "
              "GPU; the rule ignores latency SLOs, KV-cache limits and TP granularity"),
    )
