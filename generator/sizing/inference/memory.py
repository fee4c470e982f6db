"""Serving memory: weights, the KV cache per token, and how many tokens the engine caches.

**Physical HBM.** Engines size their KV cache from what CUDA reports (``cudaMemGetInfo``,
nvidia-smi's ``memory.total``: 81,559 MiB on an H100 SXM 80GB, 143,771 MiB on an H200),
not from the marketing "80 GB"; the catalog carries that figure per GPU.

**The engine's rule** (chosen by the workload's ``engine``):

* TensorRT-LLM: ``KvCacheConfig.free_gpu_memory_fraction`` (default 0.9) of the memory that
  is *free* once the weights and the runtime's buffers are loaded;
* vLLM: ``gpu_memory_utilization`` (default 0.9) of the *total* memory is the engine's
  budget; the weights and the profiled activation peak come out of it, the KV cache gets
  the rest.

**Admission.** TensorRT-LLM's default scheduler (``GUARANTEED_NO_EVICT``) admits a request
only when its whole context (input + output) fits in the free blocks; vLLM allocates blocks
as sequences grow and pre-empts when they run out, so in steady state a sequence holds its
mean context (input + half the output).
"""

from __future__ import annotations

from generator.sizing.inference.job import InferenceJob, Layout
from generator.sizing.model import kvcache
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device
from generator.sizing.model.params import (
    embedding_params,
    moe_layers,
    routed_params,
    total_params,
)
from generator.sizing.training.memory import GIB

ACTIVATION_BYTES = 2.0
"""Activations stay bf16 whatever the weight precision."""


def kv_cache_bytes_per_token(job: InferenceJob) -> float:
    """KV bytes of one token over every layer, in the job's KV-cache dtype
    (``InferenceJob.kv_bytes``): GQA's K and V (2*L*g*d_h) or MLA's compressed latent
    (``model/kvcache.py``, the one formula)."""
    return kvcache.kv_cache_bytes_per_token(job.arch, job.kv_bytes)


def expert_weights_per_gpu(job: InferenceJob, lay: Layout) -> float:
    """Routed-expert weight bytes on one GPU: every expert is resident (a MoE replica holds
    all of them), split over the replica's GPUs by TP or EP alike."""
    return moe_layers(job.arch) * routed_params(job.arch) * job.value_bytes / lay.gpus


def other_weights_per_gpu(job: InferenceJob, lay: Layout) -> float:
    """Every other weight on one GPU: split t*p ways, except under attention DP, where each
    GPU holds its stage's attention, dense MLPs and shared experts whole (``job.Layout``);
    the embedding and output projection stay vocabulary-parallel."""
    arch = job.arch
    experts = moe_layers(arch) * routed_params(arch)
    embed = embedding_params(arch)
    blocks = total_params(arch) - experts - embed
    split = lay.pp if lay.attn_dp else lay.gpus
    return (blocks / split + embed / lay.gpus) * job.value_bytes


def weights_per_gpu(job: InferenceJob, lay: Layout) -> float:
    """Weight bytes on one GPU (routed experts plus everything else)."""
    return expert_weights_per_gpu(job, lay) + other_weights_per_gpu(job, lay)


def kv_per_token_per_gpu(job: InferenceJob, lay: Layout) -> float:
    """KV bytes per token on one GPU: heads split over t (replicated once t > g), layers
    over p. MLA's latent is shared by every head, so each TP rank holds all of it (the
    MLA kernels of vLLM, SGLang and TensorRT-LLM replicate it over TP). Under attention DP
    a token's cache lives on one GPU only (its sequence's rank), so nothing is replicated:
    averaged over the replica, a token costs 1/(t*p) of its cache per GPU."""
    if lay.attn_dp:
        return kv_cache_bytes_per_token(job) / (lay.tp * lay.pp)
    split = 1 if job.arch.mla else min(lay.tp, job.arch.kv_heads)
    return kv_cache_bytes_per_token(job) / (split * lay.pp)


VLLM_LIMITS = {"large": (1024, 8192), "other": (256, 2048)}
"""vLLM's ``max_num_seqs`` / ``max_num_batched_tokens`` when the server is started without
them (``EngineArgs.get_batch_defaults``, OpenAI API server context, vLLM V1): GPUs of at
least 70 GiB other than the A100 get 1024 / 8192, every other GPU 256 / 2048."""


def engine_limits(job: InferenceJob, device: Device, eff: Efficiency) -> tuple[int, int]:
    """(batch, tokens per iteration) one scheduler allows: the run's stated limits, else
    the engine's defaults (TensorRT-LLM: efficiency.yaml's ``max_batch`` /
    ``max_num_tokens``, its LLM API defaults 2048 / 8192; vLLM: ``VLLM_LIMITS``)."""
    inf = eff.inference
    default = (inf.max_batch, inf.max_num_tokens)
    if job.engine == "vllm":
        large = hbm_bytes(device) >= 70 * GIB and not device.id.startswith("a100")
        default = VLLM_LIMITS["large" if large else "other"]
    return job.max_batch or default[0], job.max_num_tokens or default[1]


def batch_limit(job: InferenceJob, lay: Layout, device: Device, eff: Efficiency) -> int:
    """Sequences the engine lets one replica run: the limit is per scheduler, and under
    attention DP every one of the ``tp`` ranks schedules its own."""
    return engine_limits(job, device, eff)[0] * (lay.tp if lay.attn_dp else 1)


def token_limit(job: InferenceJob, lay: Layout, device: Device, eff: Efficiency) -> int:
    """Tokens one engine iteration of the replica may carry (per scheduler, like
    ``batch_limit``)."""
    return engine_limits(job, device, eff)[1] * (lay.tp if lay.attn_dp else 1)


def runtime_bytes(job: InferenceJob, lay: Layout, eff: Efficiency) -> float:
    """CUDA context, NCCL and GEMM workspaces, plus the activation buffers of one engine
    iteration (``max_num_tokens`` tokens through the widest layer: the hidden state and the
    MLP's intermediate, split over t)."""
    inf, arch = eff.inference, job.arch
    width = arch.hidden + arch.ffn * (2 if arch.swiglu else 1) / lay.tp
    tokens = job.max_num_tokens or inf.max_num_tokens
    return inf.runtime_reserve_gib * GIB + tokens * width * ACTIVATION_BYTES * 2


def hbm_bytes(device: Device) -> float:
    """The memory CUDA reports for the GPU (the catalog's nominal figure where the catalog
    has no measured one)."""
    return device.hbm_total_bytes or device.memory_bytes


def kv_budget_bytes(job: InferenceJob, lay: Layout, device: Device, eff: Efficiency) -> float:
    """Bytes per GPU the engine gives its KV cache (module docstring: the engine's rule)."""
    inf = eff.inference
    total = hbm_bytes(device)
    used = weights_per_gpu(job, lay) + runtime_bytes(job, lay, eff)
    if job.engine in ("vllm", "sglang"):
        # SGLang's mem_fraction_static has vLLM's form (weights + KV pool inside it);
        # without a stated value vLLM's default stands in [R: SGLang's own default is
        # 0.79-0.88 by TP and GPU memory]
        fraction = job.kv_fraction or inf.vllm_gpu_memory_utilization
        return max(0.0, fraction * total - used)
    fraction = job.kv_fraction or inf.trtllm_free_memory_fraction
    return max(0.0, fraction * (total - used))


def kv_capacity_tokens(job: InferenceJob, lay: Layout, device: Device, eff: Efficiency) -> int:
    """Tokens of KV cache one replica holds."""
    return int(kv_budget_bytes(job, lay, device, eff) // kv_per_token_per_gpu(job, lay))


def tokens_held(job: InferenceJob) -> float:
    """KV tokens one admitted sequence holds (module docstring: admission)."""
    if job.engine == "vllm":
        return job.input_tokens + job.output_tokens / 2
    return float(job.input_tokens + job.output_tokens)


def max_batch(job: InferenceJob, lay: Layout, device: Device, eff: Efficiency) -> int:
    """Sequences in flight the KV cache admits (capped by the engine's batch limit)."""
    held = int(kv_capacity_tokens(job, lay, device, eff) // tokens_held(job))
    return max(0, min(batch_limit(job, lay, device, eff), held))
