"""Per-GPU memory of the most loaded GPU during training (sizing-models.md §9.3).

**States.** Bytes per parameter on the GPU's shard Ψ (its L/p layers ÷ t, plus one V*h/t
embedding or output matrix on the first/last stage, both when p = 1):

* ``distributed`` (NeMo, Megatron): Megatron's distributed optimizer, the ZeRO-1 of these
  stacks: bf16 weights 2 + fp32 main gradients 4 + (fp32 master 4 + Adam m 4 + v 4) / (d*c)
  = 6 + 12/(d*c). This is the default of every published NeMo/Megatron recipe.
* ``zero3`` (FSDP FULL_SHARD, DeepSpeed ZeRO-3): everything sharded over d, 2 + g + 12 bytes
  per param / d, plus the layers gathered at once (current + prefetched) in bf16 with their
  gradients.
* LoRA / P-tuning: the base is frozen bf16 (2 bytes, sharded only by ZeRO-3) with no
  gradients or optimizer state; the adapters carry 2 + 4 + 12 = 18 bytes/param.

**Activations** per layer per micro-batch (Korthikanti et al. 2022, generalised by Megatron's
``theoretical_memory_usage``): with sequence parallelism s*b*h*(18 + 4f/h)/t bytes (34 sbh/t
for f = 4h); without it the layer norms' and dropouts' 10 sbh are replicated on every TP
rank: s*b*h*(10 + (8 + 4f/h)/t). Stacks without fused attention add the 5*a*s^2*b/t scores
unless recomputed. Full recompute keeps only each layer's input (2sbh/t) plus one layer's
working set (for k of a stage's layers only, when partial: Megatron's recompute_num_layers;
FSDP/HF checkpoint whole blocks, all of them). With 1F1B the first stage holds min(p, m)
micro-batches in flight, times 1 + (p-1)/(p*v) when interleaved; the last stage holds one
plus the fp32 logits, 4*s*b*(h + V)/t. Context parallelism divides s by c. LoRA keeps the
inputs of every adapted linear layer, so its activations are counted like full fine-tuning
(conservative by design).

**Pipeline split.** Where Megatron counts the embedding and the loss as pipeline layers
(``Job.pipeline_split``), the first and last ranks build one layer fewer: the most loaded
stage's states are the larger of the first, last and a middle rank's, and its activations
the larger of the first two ranks' and the last's, counted chunk by chunk
(``layers_in_flight``).

**HSDP** shards ZeRO-3 states over the ``shard`` ranks of a replica instead of all of d.

**MoE.** A stage's routed experts are split over ep x etp ranks (expert parallelism, expert
tensor parallelism), everything else over t as before, so the weights and gradients a GPU
holds are Ψ_dense/t + Ψ_experts/(ep*etp). The distributed optimizer shards the dense
states over d*c and the expert states over the expert-data-parallel group
t*c*d/(ep*etp): per GPU both come to Ψ/(t*d*c), so EP never changes the optimizer's share.
FSDP shards experts over the dp/ep ranks left after EP: the same per-GPU states, but only
1/ep of each MoE layer's experts is gathered at a time. Activations of an MoE layer hold
the router's fp32 scores, the k dispatched copies of each token in and out of the experts
and the experts' intermediates (k*f wide, padded to the capacity factor), plus the shared
experts'; EP moves tokens between GPUs but leaves each GPU's share the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.sizing.model.efficiency import Efficiency, Framework
from generator.sizing.model.job import Job, Layout, sequence_tokens
from generator.sizing.model.params import layer_params, moe_layers, routed_params

GIB = float(2**30)


@dataclass(frozen=True, slots=True)
class MemoryTerms:
    """Bytes on the most loaded GPU."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    overhead: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.overhead

    def dominant(self) -> str:
        """Name of the largest term (for "why doesn't it fit" notes)."""
        terms = {"weights": self.weights, "gradients": self.gradients,
                 "optimizer states": self.optimizer, "activations": self.activations}
        return max(terms, key=lambda k: terms[k])


def split_counts(job: Job, pp: int) -> tuple[int, int]:
    """(e, l): 1 each where Megatron's pipeline split counts the embedding / the loss as a
    layer (``Job.pipeline_split``); (0, 0) without pipeline parallelism."""
    if pp == 1:
        return 0, 0
    return int("embedding" in job.pipeline_split), int("loss" in job.pipeline_split)


def rank_layers(job: Job, pp: int) -> tuple[int, int, int]:
    """Transformer layers of the (first, middle, last) pipeline rank. Without a split every
    rank is counted at the busiest one's ceil(L/p). Megatron-Core's account-for-embedding /
    loss split (``get_num_layers_to_build``) divides L + e + l evenly (it asserts so): each
    rank (L+e+l)/p layers, the first e fewer beside the embedding, the last l fewer beside
    the output layer and loss."""
    e, loss = split_counts(job, pp)
    per = math.ceil((job.arch.layers + e + loss) / pp)
    return per - e, per, per - loss


def _candidate_stages(job: Job, pp: int) -> list[tuple[int, int]]:
    """(transformer layers, embedding/output matrices) of the stages that can be the most
    loaded: ceil(L/p) layers and one matrix (both when p = 1), or, under the split, the
    first and last ranks with theirs and a middle rank with none."""
    arch = job.arch
    first, middle, last = rank_layers(job, pp)
    if split_counts(job, pp) == (0, 0):
        return [(first, 2 if pp == 1 and not arch.tied_embeddings else 1)]
    return [(first, 1), (last, 1)] + ([(middle, 0)] if pp > 2 else [])


def stage_split(job: Job, pp: int) -> tuple[float, float]:
    """(dense, routed-expert) parameters of the most loaded stage, before any sharding:
    its layers, as many of them MoE layers as the model has, plus its embedding or output
    matrices (``_candidate_stages``)."""
    arch = job.arch
    embed = arch.vocab * arch.hidden
    best = (0.0, 0.0)
    for layers, matrices in _candidate_stages(job, pp):
        n_moe = min(layers, moe_layers(arch))
        routed = n_moe * routed_params(arch)
        blocks = n_moe * layer_params(arch, moe=True) + (layers - n_moe) * layer_params(
            arch, moe=False)
        got = (float(blocks - routed + matrices * embed), float(routed))
        if sum(got) > sum(best):
            best = got
    return best


def stage_params(job: Job, tp: int, pp: int) -> float:
    """Ψ: parameters on the most loaded stage per TP rank (what optimizer shards divide)."""
    dense, routed = stage_split(job, pp)
    return (dense + routed) / tp


def held_params(job: Job, lay: Layout) -> tuple[float, float]:
    """(dense, expert) parameters whose full copy one GPU keeps: Ψ_dense/t, Ψ_experts/(ep*etp)."""
    dense, routed = stage_split(job, lay.pp)
    return dense / lay.tp, routed / (lay.ep * lay.expert_tp)


def mlp_width(job: Job) -> float:
    """Per-token MLP intermediate width of the heaviest layer, for activations: f for a
    dense model; an MoE layer keeps k*(f + h) per token (the k dispatched copies in and the
    expert intermediates) padded to the capacity factor, the shared experts' widths and the
    router's fp32 scores (4E bytes per token: E units of width at the formula's 4 bytes)."""
    arch = job.arch
    if not arch.moe:
        return float(arch.ffn)
    routed = job.capacity_factor * arch.top_k * (arch.ffn + arch.hidden)
    shared = arch.shared_experts * (arch.shared_ffn or arch.ffn)
    return routed + shared + float(arch.experts)


def layer_activation_bytes(job: Job, lay: Layout, eff: Efficiency) -> float:
    """One layer's stored activations for one micro-batch, without recompute."""
    arch = job.arch
    fw = eff.framework(job.framework)
    seq = sequence_tokens(job, lay.mbs) / lay.cp
    sbh = seq * lay.mbs * arch.hidden
    split = 8.0 + 4.0 * mlp_width(job) / arch.hidden
    if fw.sequence_parallel:
        stored = sbh * (10.0 + split) / lay.tp
    else:
        stored = sbh * (10.0 + split / lay.tp)
    if not fw.fused_attention and lay.recompute == "none":
        stored += 5.0 * arch.heads * seq * seq * lay.mbs / lay.tp
    norm, act = discarded_bytes(job)
    if fw.sequence_parallel:
        stored -= seq * lay.mbs * (norm + act) / lay.tp
    else:
        stored -= seq * lay.mbs * (norm + act / lay.tp)
    return stored


def discarded_bytes(job: Job) -> tuple[float, float]:
    """Bytes per token an MoE layer does not store under Megatron-Core's output-discarding
    recompute (TransformerConfig.recompute_modules): ``layernorm`` drops the pre-MLP norm's
    bf16 output, 2h (the attention's input norm is fused into TE's LayerNormLinear QKV,
    which keeps its output, so it saves nothing, nor in dense layers, whose pre-MLP norm
    is fused into fc1 the same way); ``moe_act`` drops the routed experts' activation
    outputs, 2*k*f padded to the capacity factor (half of the experts' 4kf in
    ``mlp_width``). (norm, act) replicated vs. split over TP like the rest."""
    arch = job.arch
    if not arch.moe:
        return 0.0, 0.0
    norm = 2.0 * arch.hidden if "layernorm" in job.recompute_modules else 0.0
    act = (2.0 * job.capacity_factor * arch.top_k * arch.ffn
           if "moe_act" in job.recompute_modules else 0.0)
    return norm, act


def activation_bytes(job: Job, lay: Layout, eff: Efficiency) -> float:
    """Activations on the most loaded stage (first stage's in-flight set vs last's logits)."""
    arch = job.arch
    layers = math.ceil(arch.layers / lay.pp)
    per_layer = layer_activation_bytes(job, lay, eff)
    seq = sequence_tokens(job, lay.mbs) / lay.cp
    in_flight = min(lay.pp, lay.microbatches(job.global_batch))
    interleave = 1.0 + (lay.pp - 1) / (lay.pp * lay.vp) if lay.vp > 1 else 1.0
    if lay.recompute == "full":
        kept = 2.0 * seq * lay.mbs * arch.hidden
        if eff.framework(job.framework).sequence_parallel:
            kept /= lay.tp
        redone = round(lay.recompute_fraction(arch.layers) * layers)
        stored = redone * kept + (layers - redone) * per_layer
        work = per_layer
    else:
        stored, work = layers * per_layer, 0.0
    first = stored * in_flight * interleave + work
    last = stored + work
    logits = 4.0 * seq * lay.mbs * (arch.hidden + arch.vocab) / lay.tp
    if lay.pp == 1:
        return first + logits
    if split_counts(job, lay.pp) != (0, 0):
        # Uneven ranks: the first holds the most micro-batches but fewest layers, so the
        # second (or the last, with the logits) can hold more; count each exactly.
        unit = stored / layers
        m = lay.microbatches(job.global_batch)
        held = [layers_in_flight(job, lay, r, m) for r in range(min(lay.pp - 1, 2))]
        last = layers_in_flight(job, lay, lay.pp - 1, m) * unit + work
        return max(max(held) * unit + work, last + logits)
    return max(first, last + logits)


def layers_in_flight(job: Job, lay: Layout, rank: int, m: int) -> float:
    """Layer activations pipeline rank ``rank`` holds at its 1F1B peak under the split, by
    model chunk: Megatron's interleaved schedule runs 2(p-r-1) + (v-1)p warm-up chunk
    forwards, plus the one in flight, taking chunks in groups of p micro-batches (chunk k
    gets the i-th when (i // p) % v == k); non-interleaved rank r holds p - r. Each chunk
    has (L+e+l)/(p*v) layers; the first rank's first and the last rank's last chunk one
    fewer (they carry the embedding and the loss)."""
    p, v = lay.pp, lay.vp
    e, loss = split_counts(job, p)
    per_rank = rank_layers(job, p)[1]
    chunk = [per_rank / v] * v
    if rank == 0:
        chunk[0] -= e
    if rank == p - 1:
        chunk[-1] -= loss
    if v == 1:
        return min(p - rank, m) * chunk[0]
    warm = min(m * v, 2 * (p - rank - 1) + (v - 1) * p + 1)
    return float(sum(chunk[(i // p) % v] for i in range(warm)))


def state_bytes(
    job: Job, lay: Layout, fw: Framework, eff: Efficiency
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on the most loaded GPU."""
    psi = stage_params(job, lay.tp, lay.pp)
    held = sum(held_params(job, lay))
    shards = lay.shard_ranks * lay.cp if fw.sharding == "zero3" else lay.dp * lay.cp
    adapters = job.adapter_params / (lay.tp * lay.pp)
    if fw.shards_per_layer(lay.pp):
        live = eff.memory.zero3_live_layers * live_layer_params(job, lay)
        shard = lay.shard_ranks
        if job.frozen_base:
            return 2.0 * (psi / shard + live) + 2.0 * adapters, 4.0 * adapters, 12.0 * adapters
        grads = fw.grad_bytes * psi / shard + 2.0 * live
        return 2.0 * (psi / shard + live), grads, fw.optimizer_bytes * psi / shard
    if job.frozen_base:
        return 2.0 * held + 2.0 * adapters, 4.0 * adapters, 12.0 * adapters
    return 2.0 * held, fw.grad_bytes * held, fw.optimizer_bytes * psi / shards


def live_layer_params(job: Job, lay: Layout) -> float:
    """One layer as ZeRO-3 gathers it on a GPU: the dense part over t, 1/(ep*etp) of the
    routed experts."""
    arch = job.arch
    routed = routed_params(arch) if arch.moe else 0
    return (layer_params(arch) - routed) / lay.tp + routed / (lay.ep * lay.expert_tp)


def training_memory(
    job: Job, lay: Layout, eff: Efficiency, activations: float | None = None
) -> MemoryTerms:
    """Every term for one layout (``activations``: a cached ``activation_bytes``)."""
    weights, grads, optim = state_bytes(job, lay, eff.framework(job.framework), eff)
    return MemoryTerms(
        weights=weights, gradients=grads, optimizer=optim,
        activations=activation_bytes(job, lay, eff) if activations is None else activations,
        overhead=eff.memory.overhead_gib * GIB,
    )


def usable_bytes(memory_bytes: float, eff: Efficiency) -> float:
    """What a job may plan to use: the rest is fragmentation and headroom."""
    return memory_bytes * eff.memory.usable_fraction
