"""Which parallel layouts exist for a job on a GPU count, and which the user pinned.

Pure enumeration, no memory or time. What is searched depends on the stack's profile
(``Framework.parallelism``): tp (1, 2, 4, 8, at most a node, dividing the heads), cp (only
for long sequences), pp (any count that splits what tp*cp leaves), dp (the rest, dividing
the global batch), the HSDP shard group of ZeRO-3 stacks (whole nodes, 1, 2, 4 ... of them,
or all of dp), expert parallelism for MoE models (ep dividing the experts and the ranks
of a stage), micro-batch, interleaving vp, and the recompute levels the stack offers.
A pin is honoured even where the profile would not search the dimension; the spec checks
pins against the stack before sizing starts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from generator.sizing.model.efficiency import Efficiency, Framework
from generator.sizing.model.hardware import Node
from generator.sizing.model.job import Job, Layout

TP_CHOICES = (1, 2, 4, 8)
MBS_CHOICES = (1, 2, 4, 8, 16)
CP_CHOICES = (1, 2, 4, 8, 16, 32)
CP_MIN_TOKENS = 4096
"""Context parallelism is only worth its ring exchange when each chunk stays this long."""


@dataclass(frozen=True, slots=True)
class Pins:
    """Parts of the layout the user fixed (None = search)."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    cp: int | None = None
    vp: int | None = None
    mbs: int | None = None
    recompute: str | None = None
    shard: int | None = None
    """ZeRO-3 shard group (HSDP); 0 = FULL_SHARD; None = search."""
    recompute_layers: int | None = None
    """With recompute "full": layers per stage recomputed (None: all, or the fewest that
    fit when recompute is searched)."""
    ep: int | None = None
    """Expert parallelism (MoE only)."""
    etp: int | None = None
    """Expert tensor parallelism (MoE only; None: 1 with EP, else tp)."""


@lru_cache(maxsize=4096)
def divisors(n: int) -> list[int]:
    """Every positive divisor of n, ascending."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def tp_choices(job: Job, node: Node, pins: Pins, fw: Framework) -> Iterable[int]:
    if pins.tp is not None:
        return (pins.tp,)
    if not fw.runs("tp"):
        return (1,)
    return [t for t in TP_CHOICES if t <= node.gpus and job.arch.heads % t == 0]


def cp_choices(job: Job, pins: Pins, fw: Framework) -> Iterable[int]:
    if pins.cp is not None:
        return (pins.cp,)
    if not fw.runs("cp"):
        return (1,)
    return [c for c in CP_CHOICES if c == 1 or job.seq_len / c >= CP_MIN_TOKENS]


def pp_choices(job: Job, rest: int, pins: Pins, fw: Framework) -> Iterable[int]:
    """Stages that split the ``rest`` GPUs left after tp*cp evenly; uneven layer splits are
    allowed (the busiest stage holds ceil(L/p) layers and sets the pace)."""
    if pins.pp is not None:
        return (pins.pp,)
    if not fw.runs("pp"):
        return (1,)
    if pins.vp is not None and pins.vp > 1:
        # a pinned vp holds on every pipeline tried: no pp=1 layout that silently drops it
        return [p for p in divisors(rest)
                if 1 < p <= job.arch.layers and -(-job.arch.layers // p) % pins.vp == 0]
    return [p for p in divisors(rest) if p <= job.arch.layers]


def vp_choices(job: Job, pp: int, m: int, pins: Pins, fw: Framework) -> Sequence[int]:
    """Virtual stages: divisors of the busiest stage's ceil(L/p) layers (uneven pipelines
    interleave too, as Llama 3.1 405B's 126 layers on PP16 do); Megatron needs m % p == 0."""
    if pp == 1:
        return (1,)
    if pins.vp is not None:
        return (pins.vp,)
    if m % pp or not fw.runs("vp"):
        return (1,)
    return divisors(-(-job.arch.layers // pp))


def shard_choices(tp: int, cp: int, dp: int, node: Node, pins: Pins, fw: Framework) -> list[int]:
    """ZeRO-3 shard groups: 0 (all of dp, FULL_SHARD), and for stacks that run HSDP shard
    groups of 1, 2, 4 ... whole nodes (at least two ranks) that leave two replicas or more."""
    if fw.sharding != "zero3":
        return [0]
    if pins.shard is not None:
        return [0 if pins.shard in (0, dp) else pins.shard]
    out = [0]
    if not fw.runs("hsdp"):
        return out
    s = max(2, node.gpus // (tp * cp))
    while s * 2 <= dp:
        if dp % s == 0:
            out.append(s)
        s *= 2
    return out


def expert_choices(
    job: Job, tp: int, cp: int, dp: int, pins: Pins, fw: Framework
) -> list[tuple[int, int]]:
    """(ep, etp) pairs for an MoE model: ep divides the expert count and, with etp, the
    stage's tp*cp*dp ranks (Megatron-Core's parallel folding; ZeRO-3 stacks carve ep out of
    dp). Searched EP layouts run etp = 1, as Megatron's MoE guide recommends; without EP the
    experts are split like the dense layers (etp = tp, Megatron's default). Dense models
    and stacks without EP get (1, 0)."""
    if not job.arch.moe:
        return [(1, 0)]
    ranks = dp if fw.sharding == "zero3" else tp * cp * dp
    if pins.ep is not None:
        etp = pins.etp if pins.etp is not None else (1 if pins.ep > 1 else 0)
        return [(pins.ep, etp)]
    if not fw.runs("ep"):
        return [(1, pins.etp or 0)]
    if pins.etp is not None:
        return [(e, pins.etp) for e in divisors(job.arch.experts)
                if ranks % (e * pins.etp) == 0 and (e > 1 or pins.etp in (1, tp))]
    return [(1, 0)] + [(e, 1) for e in divisors(job.arch.experts)[1:] if ranks % e == 0]


def mbs_choices(job: Job, dp: int, pins: Pins) -> Iterable[int]:
    if pins.mbs is not None:
        return (pins.mbs,)
    return [b for b in MBS_CHOICES if job.global_batch % (dp * b) == 0]


def recompute_choices(pins: Pins, fw: Framework) -> tuple[str, ...]:
    """The stack's recompute levels, lightest first. Selective recompute only saves memory
    without fused attention (FlashAttention already recomputes the scores), so a stack with
    it does not search selective."""
    if pins.recompute is not None:
        return (pins.recompute,)
    if fw.fused_attention:
        return tuple(r for r in fw.recompute if r != "selective")
    return fw.recompute


def frames(
    job: Job, gpus: int, node: Node, pins: Pins, eff: Efficiency, rejected: Counter[str]
) -> Iterator[tuple[int, int, int, int]]:
    """(tp, cp, pp, dp) using exactly ``gpus`` GPUs, counting the combinations that cannot."""
    fw = eff.framework(job.framework)
    for tp in tp_choices(job, node, pins, fw):
        for cp in cp_choices(job, pins, fw):
            if gpus % (tp * cp):
                continue
            for pp in pp_choices(job, gpus // (tp * cp), pins, fw):
                model = tp * cp * pp
                if gpus % model:
                    continue
                dp = gpus // model
                if pins.dp is not None and pins.dp != dp:
                    rejected["dp pin does not match the GPU count"] += 1
                elif job.global_batch % dp or not mbs_choices(job, dp, pins):
                    rejected["global batch not divisible by dp x micro-batch"] += 1
                else:
                    yield tp, cp, pp, dp


def layouts(job: Job, gpus: int, node: Node, pins: Pins, eff: Efficiency) -> Iterator[Layout]:
    """Every structurally valid layout on exactly ``gpus`` GPUs (no memory check)."""
    fw = eff.framework(job.framework)
    for tp, cp, pp, dp in frames(job, gpus, node, pins, eff, Counter()):
        for shard in shard_choices(tp, cp, dp, node, pins, fw):
            for ep, etp in expert_choices(job, tp, cp, dp, pins, fw):
                for mbs in mbs_choices(job, dp, pins):
                    m = max(1, job.global_batch // (dp * mbs))
                    for vp in vp_choices(job, pp, m, pins, fw):
                        for rc in recompute_choices(pins, fw):
                            yield Layout(tp, pp, dp, cp, vp, mbs, rc, shard=shard, ep=ep,
                                         etp=etp)
