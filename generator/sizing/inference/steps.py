"""Time of one engine cycle: every sequence in flight advances one token, with prompts
chunked into the same iterations (in-flight batching, chunked prefill).

An iteration runs at most ``max_num_tokens`` tokens (decode tokens of the running batch
plus chunks of waiting prompts). Its kernels run one after the other, so each class has
its own roofline and the times add: the GEMMs read the weights once per iteration (for a
mixture of experts only the experts the iteration's tokens touch) and are memory-bound
until the iteration carries enough tokens (a prompt chunk riding along a memory-bound
decode GEMM is nearly free), while the attention kernels stream the decode KV cache
(memory-bound at any batch) and run the prefill chunks' attention (compute-bound).
The routed experts' grouped GEMMs are kernels of their own too. One roofline over the
whole iteration would let the cache reads hide under the GEMMs' arithmetic, which no
engine does. On top: the TP all-reduces (two per layer; at batch 1 their
latency, not their bytes, is what counts), the all-to-all dispatch and combine of expert
parallelism, the pipeline's stage hand-offs, a fixed scheduler time per iteration and a
time per sequence in flight (sampling, detokenisation, the scheduler's per-request work;
under attention DP every rank's executor handles its own sequences, in parallel).

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
    token_limit,
)
from generator.sizing.model.arch import Architecture
from generator.sizing.model.collectives import (
    Link,
    all_reduce,
    all_to_all,
    group_link,
    send_recv,
)
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


def _hbm_rate(device: Device, eff: Efficiency) -> float:
    return device.hbm_bytes_per_s * eff.inference.hbm_efficiency


def rank_tokens(lay: Layout, decode: float, prefill: float) -> float:
    """Tokens one GPU pushes through the weights that are not routed experts (attention
    projections, dense MLPs, shared experts), and through attention, per pass: every
    token on every GPU of a TP group (each holds 1/t of those weights), or under
    attention DP each rank's own share of the sequences through its whole copy. Either
    way (decode + prefill) / (t*p) of the work.

    Attention DP can also leave ranks idle while one runs a prompt (TensorRT-LLM tech
    blog 10, "ADP Balance Strategy"); taking the busiest rank as carrying whole prompts
    made the long-prompt rows (I22, I24: 20k-token prompts) 2x slower than measured,
    so the calibration data does not support it for these runs and it is not modelled."""
    return (decode + prefill) / lay.gpus


def dense_gemm_s(job: InferenceJob, lay: Layout, decode: float, prefill: float,
                 iters: float, device: Device, eff: Efficiency) -> float:
    """The GEMMs of the weights that are not routed experts (attention projections, dense
    MLPs, shared experts, the LM head) on one GPU: they read their weights once per
    iteration and multiply every token of it, max(bytes / HBM rate, FLOPs / GEMM rate)."""
    arch = job.arch
    read = iters * other_weights_per_gpu(job, lay) / _hbm_rate(device, eff)
    routed = moe_layers(arch) * routed_params(arch) if job.moe else 0
    dense = total_params(arch) - embedding_params(arch) - routed
    flops = 2.0 * dense * rank_tokens(lay, decode, prefill)
    flops += 2.0 * arch.vocab * arch.hidden * decode / lay.gpus
    return max(read, flops / gemm_rate(job, device, eff))


def expert_gemm_s(job: InferenceJob, lay: Layout, decode: float, prefill: float,
                  limit: float, device: Device, eff: Efficiency) -> float:
    """The routed experts' grouped GEMMs on one GPU (a kernel of their own, after the
    router), expected over the pass.

    The engine schedules a prompt as whole chunks (up to ``limit`` tokens), not as a
    trickle of a few tokens per iteration. When the pass carries less than one chunk on
    average (``prefill`` is a steady-state mean: a small batch decoding long outputs), it
    either carries no prompt or a whole chunk, with the chance that keeps the mean. That
    matters only for a mixture of experts: spreading the chunk's tokens over every pass
    would make each decode step touch experts it does not (DeepSeek-V3 at batch 1 with
    an 8k prompt per 500 outputs: 41 % of the experts per step instead of 3 %, a TPOT
    three times too long)."""
    if not job.moe:
        return 0.0
    chunk = min(float(job.input_tokens), limit)
    share = min(1.0, prefill / chunk) if prefill > 0 else 0.0
    if share in (0.0, 1.0):
        return expert_pass_s(job, lay, decode + prefill, limit, device, eff)
    return ((1.0 - share) * expert_pass_s(job, lay, decode, limit, device, eff)
            + share * expert_pass_s(job, lay, decode + chunk, limit, device, eff))


def expert_pass_s(job: InferenceJob, lay: Layout, tokens: float, limit: float,
                   device: Device, eff: Efficiency) -> float:
    """``tokens`` through the routed experts in iterations of at most ``limit`` tokens:
    each iteration reads the experts its tokens touch, and the grouped GEMMs run at
    ``expert_gemm_efficiency`` of a dense GEMM, less when each expert gets few tokens."""
    arch = job.arch
    iters = max(1.0, tokens / limit)
    per_iter = tokens / iters
    read = iters * expert_weights_per_gpu(job, lay) * touched(arch, per_iter)
    per_expert = per_iter * arch.top_k / arch.experts
    moe_eff = eff.inference.expert_gemm_efficiency * per_expert / (
        per_expert + EXPERT_TOKENS_HALF)
    flops = 2.0 * routed_active_params(arch) * tokens / lay.gpus
    return max(read / _hbm_rate(device, eff),
               flops / (gemm_rate(job, device, eff) * max(moe_eff, 1e-6)))


def attention_rate(job: InferenceJob, device: Device, eff: Efficiency) -> float:
    """Achieved attention FLOP/s: ``attention_efficiency`` of the tensor-core peak in the
    cache's dtype. TensorRT-LLM runs context attention in fp8 over an fp8 KV cache
    (``use_fp8_context_fmha``, which ``trtllm-bench build`` enables with FP8
    quantization); vLLM's, SGLang's and bf16 caches run it in bf16."""
    peak = device.bf16_flops
    if job.kv_bytes == 1.0 and job.engine == "tensorrt-llm" and device.fp8_flops is not None:
        peak = device.fp8_flops
    return peak * eff.inference.attention_efficiency


def attention_s(job: InferenceJob, lay: Layout, decode: float, prefill: float,
                device: Device, eff: Efficiency) -> float:
    """The attention kernels of one GPU, which run between the GEMMs, not under them:
    decode attention streams each sequence's cache (its mean context) from HBM, a
    roofline of its own; prefill attention (a chunk against its prompt so far, on average
    half the prompt) is compute-bound (``attention_rate``)."""
    arch = job.arch
    span = 4.0 * arch.layers * arch.attention_width
    rate = attention_rate(job, device, eff)
    context = decode * mean_context(job)
    read = context * kv_per_token_per_gpu(job, lay) / _hbm_rate(device, eff)
    decode_s = max(read, span * context / lay.gpus / rate)
    prompt = rank_tokens(lay, 0.0, prefill)
    return decode_s + span * prompt * job.input_tokens / 2 / rate


def tp_all_reduce(size: float, tp: int, link: Link, device: Device, node: Node,
                  eff: Efficiency) -> float:
    """Seconds for one TP all-reduce of ``size`` bytes in a serving engine.

    Inside a node the engines run their own custom all-reduce for small and mid-sized
    messages: TensorRT-LLM's one-shot/two-shot kernels (``AllReduceStrategy.AUTO``),
    vLLM's and SGLang's ``custom_all_reduce`` (peer buffers over NVLink, one kernel, no
    ring of hops), and fall back to NCCL for large ones, whichever is faster. The custom
    kernel costs ``inference.all_reduce_latency_s`` per call plus ``size`` at
    ``inference.all_reduce_bytes_per_s``; both are read off SGLang PR #2904's H100
    table (TP8: 5.7-7.8 us up to 32k elements, then 16.7 / 22.1 / 33.8 us at 256k /
    512k / 1M bf16 elements: ~92 GB/s of buffer per second), not fitted. NCCL is the
    training collective model (ring or tree bytes at the NVLink rate plus
    ``network.hop_latency_s`` per hop: 63 us at TP8), which charged a batch-1 70B token
    10 ms of all-reduces for 8.5 ms of weight reads before this rule. A group wider than
    a node cannot use the custom kernel (it is disabled across nodes): NCCL over the
    fabric, plus ``inference.cross_node_all_reduce_s``; nor can GPUs without NVLink (vLLM
    and SGLang refuse it on PCIe-only GPUs beyond two, and its measured speed is
    NVLink's): NCCL over PCIe."""
    if tp <= 1:
        return 0.0
    nccl = all_reduce(size, tp, link, eff)
    if tp > node.gpus:
        return nccl + eff.inference.cross_node_all_reduce_s
    if device.nvlink_bytes_per_s <= 0 or tp > node.nvlink_domain:
        return nccl
    inf = eff.inference
    return min(nccl, inf.all_reduce_latency_s + size / inf.all_reduce_bytes_per_s)


def comm_s(job: InferenceJob, lay: Layout, per_iter: float, iters: float, device: Device,
            node: Node, eff: Efficiency) -> float:
    """TP all-reduces (attention and MLP of every layer on this stage; ``tp_all_reduce``)
    and, with EP, the all-to-all dispatch + combine of the expert layers instead of the
    MLP all-reduce.

    Under attention DP the attention and the replicated dense/shared MLPs need no
    collective; only the MoE layers gather their tokens from the replica's ranks and send
    the results back (an all-to-all pair with EP, else an all-gather + reduce-scatter,
    the bytes of one all-reduce)."""
    arch = job.arch
    layers = arch.layers / lay.pp
    size = per_iter * arch.hidden * ACTIVATION_BYTES
    tp_link = group_link(lay.tp, 1, node, device, eff)
    reduce = tp_all_reduce(size, lay.tp, tp_link, device, node, eff)
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
    limit = token_limit(job, lay, device, eff)
    iters = max(1.0, tokens / limit)
    per_iter = tokens / iters
    return (dense_gemm_s(job, lay, decode, prefill, iters, device, eff)
            + expert_gemm_s(job, lay, decode, prefill, limit, device, eff)
            + attention_s(job, lay, decode, prefill, device, eff)
            + comm_s(job, lay, per_iter, iters, device, node, eff))


def cycle_s(job: InferenceJob, lay: Layout, decode: float, prefill: float, device: Device,
            node: Node, eff: Efficiency) -> float:
    """Seconds for ``decode`` sequences to each get one token while ``prefill`` prompt
    tokens are processed alongside (see the module docstring for PP)."""
    micro = max(1.0, min(float(lay.pp), decode)) if decode else 1.0
    stage = stage_s(job, lay, decode / micro, prefill / micro, device, node, eff)
    iters = max(1.0, (decode + prefill) / token_limit(job, lay, device, eff))
    hand_off = 0.0
    if lay.pp > 1:
        link = group_link(lay.pp, lay.tp, node, device, eff)
        hand_off = lay.pp * send_recv((decode + prefill) / micro * job.arch.hidden
                                      * ACTIVATION_BYTES / lay.tp, link, eff)
    inf = eff.inference
    per_scheduler = decode / lay.tp if lay.attn_dp else decode
    return (lay.pp * stage + hand_off + iters * step_overhead_s(job, eff)
            + per_scheduler * inf.sequence_overhead_s)


def step_overhead_s(job: InferenceJob, eff: Efficiency) -> float:
    """Fixed time of one engine iteration outside the GPU kernels' work. SGLang adds its
    own (``inference.sglang_step_overhead_s``, fitted on SGLang rows only): its scheduler
    is a Python loop run once per iteration (scheduler.py ``event_loop_overlap``: receive
    requests, ``get_next_batch_to_run``, ``run_batch``, then ``process_batch_result`` of
    the previous batch while the current one runs), where TensorRT-LLM's executor loop is
    C++; whatever of it the overlap does not hide lengthens every iteration. TensorRT-LLM
    (and vLLM) jobs never see it."""
    inf = eff.inference
    extra = inf.sglang_step_overhead_s if job.engine == "sglang" else 0.0
    return inf.step_overhead_s + extra
