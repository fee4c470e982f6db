"""A training workload reduced to what the formulas need, and its processed tokens.

Time depends on **processed** tokens, not dataset tokens (sizing-models.md §9.7):

* pretraining, ``tokens`` work and ``dataset`` with ``packed: true`` fill every sequence to
  ``sequence_length``;
* ``dataset`` with ``packed: false`` makes each sample its own sequence. With one sample per
  micro-batch that is the sample's length (on average ``avg_tokens_per_sample``); with b > 1
  the micro-batch is padded to its longest sample. Only the mean length is known, so lengths
  are taken as exponentially distributed (the maximum-entropy law for a positive length with
  a known mean, and right-skewed like real instruction data): E[max of b] = mean * H_b, the
  b-th harmonic number, capped at ``sequence_length``.
* P-tuning prepends virtual tokens to every sample, and they go through every layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from generator.sizing.model.arch import Architecture
from generator.sizing.model.efficiency import Peft
from generator.sizing.model.params import lora_adapter_params, ptuning_params


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Forward-only evaluation passes: ``samples`` every ``every_samples`` training samples."""

    every_samples: int
    samples: int


@dataclass(frozen=True, slots=True)
class Job:
    """One training workload as the engine sees it."""

    name: str
    arch: Architecture
    kind: str
    precision: str
    framework: str
    global_batch: int
    seq_len: int
    steps: int
    sample_tokens: float | None = None
    """Mean sample length of an unpacked dataset; None when sequences are full."""
    extra_tokens: int = 0
    """Tokens added to every sequence (P-tuning's virtual tokens)."""
    adapter_params: float = 0.0
    """Trainable parameters of LoRA adapters or the P-tuning prompt encoder."""
    evaluation: Evaluation | None = None
    capacity_factor: float = 1.0
    """MoE token capacity per expert relative to a perfectly balanced share: 1.0 for dropless
    routing with balanced load (what benchmarks force), > 1 pads every expert's batch to
    capacity (Megatron's moe_expert_capacity_factor with token dropping)."""
    recompute_modules: tuple[str, ...] = ()
    """Megatron-Core's output-discarding recompute of element-wise modules
    (``--recompute-granularity selective --recompute-modules layernorm moe_act``): their
    outputs are recomputed in backward instead of stored, at a negligible time cost."""
    pipeline_split: tuple[str, ...] = ()
    """Megatron-Core's ``--account-for-embedding-in-pipeline-split`` ("embedding") and
    ``--account-for-loss-in-pipeline-split`` ("loss"): the layer split counts the embedding
    and the output layer as one layer each, so the first and last virtual stages build one
    transformer layer fewer (``memory.stage_layer_counts``)."""
    moe_dispatcher: str = ""
    """The MoE token dispatcher a run states (``alltoall`` or ``deepep``: DeepEP/HybridEP);
    empty: the stack's (``Framework.moe_dispatcher``)."""
    routing: str = "random"
    """How tokens pick their k experts: ``random`` (balanced, k distinct experts drawn
    uniformly: real routing at balance, Megatron-Core's ``moe_router_force_load_balancing``
    random logits) or ``contiguous`` (NeMo AutoModel's ``FakeBalancedGate`` without noise:
    token t takes experts t*k ... t*k+k-1 mod E, neighbours on the same GPU and node)."""
    local_batches: int = 1
    """Pipeline schedule calls per optimizer step where a stack runs one per local batch
    (``Framework.schedule_per_local_batch``: NeMo AutoModel's gradient accumulation, GA =
    GBS / (DP x local batch size)); 1 elsewhere."""
    ep_overlap: bool | None = None
    """Whether a run states the EP all-to-all overlapped with compute (Megatron-Core's
    ``--overlap-moe-expert-parallel-comm``, DualPipe); None: the stack's default."""
    ep_overlap_full: bool = False
    """The run's schedule states the all-to-all fully hidden (DeepSeek-V3's DualPipe: "full
    overlap of forward and backward computation-communication phases", deepseek-ai/DualPipe
    README and the DeepSeek-V3 report), so none of it is exposed; Megatron-Core's 1F1B
    overlap (``ep_overlap``) hides the fitted share ``overlap.ep``."""
    ep_overlap_megatron_rules: bool = False
    """Whether the stated overlap obeys Megatron-Core's conditions on
    ``overlap_moe_expert_parallel_comm`` (``transformer_config.py``: no full recompute, and
    virtual pipeline stages under pipeline parallelism), so the planner's layouts that break
    them run the all-to-all exposed. Set for a spec's nemo/megatron workloads; a calibration
    row states the layout it ran."""

    @property
    def frozen_base(self) -> bool:
        return self.kind in ("lora", "ptuning")


class Layout(NamedTuple):
    """A parallel layout (a NamedTuple: cheap to build in the planner's inner loop)."""

    tp: int
    pp: int
    dp: int
    cp: int
    vp: int
    mbs: int
    recompute: str
    recompute_layers: int = 0
    """With ``recompute == "full"``: how many of each stage's layers are recomputed
    (Megatron's ``recompute_num_layers``); 0 means all of them."""
    shard: int = 0
    """ZeRO-3/FSDP: ranks one copy of the states is sharded over (HSDP: a divisor of dp,
    the rest replicate); 0 means all of dp (FULL_SHARD)."""
    ep: int = 1
    """Expert parallelism (MoE); 1 for dense models. The expert layers regroup the stage's
    tp*cp*dp ranks as etp x ep x edp (Megatron-Core's parallel folding), so ep*etp divides
    tp*cp*dp; ZeRO-3 stacks carve ep out of dp."""
    etp: int = 0
    """Expert tensor parallelism: ranks one expert's matrices are split over; 0 means tp
    (Megatron's default), 1 is what EP layouts run."""

    @property
    def expert_tp(self) -> int:
        """ETP in effect (0 stands for the layout's tp)."""
        return self.etp or self.tp

    @property
    def expert_dp(self) -> int:
        """Ranks holding a copy of one expert shard: tp*cp*dp / (ep*etp)."""
        return max(1, self.tp * self.cp * self.dp // (self.ep * self.expert_tp))

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    @property
    def shard_ranks(self) -> int:
        """Ranks a ZeRO-3 copy of the states is sharded over."""
        return self.shard or self.dp

    @property
    def replicas(self) -> int:
        """HSDP replica groups (1 for FULL_SHARD)."""
        return self.dp // self.shard_ranks

    def stage_layers(self, layers: int) -> int:
        """Layers on the busiest stage: ceil(L/p)."""
        return -(-layers // self.pp)

    def recompute_fraction(self, layers: int) -> float:
        """Share of the stage's layers whose forward is recomputed in full."""
        if self.recompute != "full":
            return 0.0
        if self.recompute_layers <= 0:
            return 1.0
        return min(1.0, self.recompute_layers / self.stage_layers(layers))

    def microbatches(self, global_batch: int) -> int:
        """m: micro-batches each pipeline runs per optimizer step."""
        return max(1, global_batch // (self.mbs * self.dp))


def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n."""
    return sum(1.0 / k for k in range(1, n + 1))


def sequence_tokens(job: Job, mbs: int) -> float:
    """Tokens each sequence occupies in a micro-batch of ``mbs`` (padding included)."""
    if job.sample_tokens is None:
        seq = float(job.seq_len)
    else:
        seq = min(float(job.seq_len), job.sample_tokens * harmonic(mbs))
    return seq + job.extra_tokens


def steps_for_tokens(tokens: float, global_batch: int, seq_len: int) -> int:
    """Optimizer steps that consume ``tokens`` in full sequences."""
    return max(1, math.ceil(tokens / (global_batch * seq_len)))


def steps_for_dataset(
    samples: int, avg_tokens: float, epochs: float, global_batch: int, seq_len: int, packed: bool
) -> int:
    """Steps for ``epochs`` passes: packed data fills sequences, unpacked data is per sample."""
    if packed:
        return steps_for_tokens(samples * avg_tokens * epochs, global_batch, seq_len)
    return max(1, math.ceil(samples * epochs / global_batch))


def peft_terms(
    arch: Architecture, kind: str, peft: Peft, lora_rank: int | None = None
) -> tuple[float, int]:
    """(trainable adapter parameters, tokens added per sequence) for a training kind."""
    if kind == "lora":
        return float(lora_adapter_params(arch, lora_rank or peft.lora_rank, peft.lora_targets)), 0
    if kind == "ptuning":
        virtual = peft.ptuning_virtual_tokens
        return float(ptuning_params(arch, virtual, peft.ptuning_bottleneck)), virtual
    return 0.0, 0
