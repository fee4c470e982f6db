"""Time of one engine cycle: every sequence in flight advances one token, with prompts
chunked into the same iterations (in-flight batching, chunked prefill).

An iteration runs at most ``max_num_tokens`` tokens (decode tokens of the running batch
plus chunks of waiting prompts). Per GPU it is a roofline: the weights (and, for a
mixture of experts, only the experts the iteration's tokens touch) and the decode KV cache
are read once from HBM, while the GEMMs and attention run on the tensor cores; whichever
is slower sets the pace, so a prompt chunk riding along a decode iteration is nearly free
while decode is memory-bound. On top: the TP all-reduces (two per layer; at batch 1 their
latency, not their bytes, is what counts), the all-to-all dispatch and combine of expert
parallelism, the pipeline's stage hand-offs, a fixed scheduler time per iteration and a
time per sequence in flight (sampling, detokenisation, the scheduler's per-request work).

A PP replica keeps ``min(pp, batch)`` micro-batches in flight, so a cycle is ``pp`` stage
times of one micro-batch (a batch-1 token still crosses every stage in turn).
"""

from __future__ import annotations

from generator.sizing.inference.job import InferenceJob, Layout
from generator.sizing.inference.memory import (
    ACTIVATION_BYTES,
    expert_weights_per_gpu,
    kv_per_token_per_gpu,
    other_weights_per_gpu,
)
from generator.sizing.model.arch import Architecture
from generator.sizing.model.collectives import all_reduce, all_to_all, group_link, send_recv
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.params import (
    embedding_params,
    moe_layers,
    routed_active_params,
    routed_params,
    total_params,
)

EXPERT_TOKENS_HALF = 16.0
"""Tokens per expert at which a grouped MoE GEMM reaches half its large-batch speed (one
64-row tile a quarter full on Hopper's wgmma); below it, expert GEMMs are latency-bound."""


def gemm_rate(job: InferenceJob, device: Device, eff: Efficiency) -> float:
    """Achieved GEMM FLOP/s: static-scaled fp8 GEMMs gain ``inference.fp8_speedup`` (up to
    the GPU's fp8/bf16 peak ratio)."""
    inf = eff.inference
    rate = device.bf16_flops * inf.gemm_efficiency
    if job.precision == "fp8" and device.fp8_flops is not None:
        rate *= min(inf.fp8_speedup, device.fp8_flops / device.bf16_flops)
    return rate


def expert_share(arch: Architecture) -> float:
    """Share of the weights that sit in routed experts (0 for a dense model)."""
    if arch.experts <= 1:
        return 0.0
    return moe_layers(arch) * routed_params(arch) / total_params(arch)


def touched(arch: Architecture, tokens: float) -> float:
    """Expected share of a layer's experts that ``tokens`` tokens route to (top-k of E)."""
    if arch.experts <= 1:
        return 1.0
    miss: float = (1.0 - arch.top_k / arch.experts) ** max(tokens, 0.0)
    return 1.0 - miss


def mean_context(job: InferenceJob) -> float:
    """Context a decoding sequence attends to, on average over its output."""
    return job.input_tokens + job.output_tokens / 2


def _memory_s(job: InferenceJob, lay: Layout, decode: float, per_iter: float, iters: float,
              device: Device, eff: Efficiency) -> float:
    experts = expert_weights_per_gpu(job, lay) * touched(job.arch, per_iter)
    weights = other_weights_per_gpu(job, lay) + experts
    kv = decode * mean_context(job) * kv_per_token_per_gpu(job, lay)
    return (iters * weights + kv) / (device.hbm_bytes_per_s * eff.inference.hbm_efficiency)


def _compute_s(job: InferenceJob, lay: Layout, decode: float, prefill: float, per_iter: float,
               device: Device, eff: Efficiency) -> float:
    arch, inf = job.arch, eff.inference
    experts = moe_layers(arch) * routed_params(arch) if job.moe else 0
    dense = total_params(arch) - embedding_params(arch) - experts
    rate = gemm_rate(job, device, eff)
    gemm = (2.0 * dense * (decode + prefill) + 2.0 * arch.vocab * arch.hidden * decode) / rate
    if job.moe:
        per_expert = per_iter * arch.top_k / arch.experts
        moe_eff = inf.expert_gemm_efficiency * per_expert / (per_expert + EXPERT_TOKENS_HALF)
        active = 2.0 * routed_active_params(arch) * (decode + prefill)
        gemm += active / (rate * max(moe_eff, 1e-6))
    span = 4.0 * arch.layers * arch.attention_width
    attention = span * (decode * mean_context(job) + prefill * job.input_tokens / 2)
    attention /= device.bf16_flops * inf.attention_efficiency
    return (gemm + attention) / lay.gpus


def comm_s(job: InferenceJob, lay: Layout, per_iter: float, iters: float, device: Device,
            node: Node, eff: Efficiency) -> float:
    """TP all-reduces (attention and MLP of every layer on this stage) and, with EP, the
    all-to-all dispatch + combine of the expert layers instead of the MLP all-reduce.

    Under attention DP the attention and the replicated dense/shared MLPs need no
    collective; only the MoE layers gather their tokens from the replica's ranks and send
    the results back (an all-to-all pair with EP, else an all-gather + reduce-scatter,
    the bytes of one all-reduce)."""
    arch = job.arch
    layers = arch.layers / lay.pp
    size = per_iter * arch.hidden * ACTIVATION_BYTES
    tp_link = group_link(lay.tp, 1, node, device, eff)
    reduce = all_reduce(size, lay.tp, tp_link, eff)
    expert = 2 * all_to_all(size * arch.top_k, lay.ep, 1, node, device, eff) \
        if lay.ep > 1 and job.moe else reduce
    if lay.attn_dp:
        return iters * moe_layers(arch) / lay.pp * expert
    per_layer = reduce + expert if job.moe else 2 * reduce
    return iters * layers * per_layer


def stage_s(job: InferenceJob, lay: Layout, decode: float, prefill: float, device: Device,
            node: Node, eff: Efficiency) -> float:
    """One pipeline stage (all of it when pp = 1) over ``decode`` sequences' next token and
    ``prefill`` prompt tokens, chunked into iterations of ``max_num_tokens``."""
    tokens = decode + prefill
    iters = max(1.0, tokens / eff.inference.max_num_tokens)
    per_iter = tokens / iters
    memory = _memory_s(job, lay, decode, per_iter, iters, device, eff)
    compute = _compute_s(job, lay, decode, prefill, per_iter, device, eff)
    return max(memory, compute) + comm_s(job, lay, per_iter, iters, device, node, eff)


def cycle_s(job: InferenceJob, lay: Layout, decode: float, prefill: float, device: Device,
            node: Node, eff: Efficiency) -> float:
    """Seconds for ``decode`` sequences to each get one token while ``prefill`` prompt
    tokens are processed alongside (see the module docstring for PP)."""
    micro = max(1.0, min(float(lay.pp), decode)) if decode else 1.0
    stage = stage_s(job, lay, decode / micro, prefill / micro, device, node, eff)
    iters = max(1.0, (decode + prefill) / eff.inference.max_num_tokens)
    hand_off = 0.0
    if lay.pp > 1:
        link = group_link(lay.pp, lay.tp, node, device, eff)
        hand_off = lay.pp * send_recv((decode + prefill) / micro * job.arch.hidden
                                      * ACTIVATION_BYTES / lay.tp, link, eff)
    inf = eff.inference
    return (lay.pp * stage + hand_off + iters * inf.step_overhead_s
            + decode * inf.sequence_overhead_s)
