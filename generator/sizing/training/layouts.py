"""Which parallel layouts exist for a job on a GPU count, and which the user pinned.

Pure enumeration, no memory or time: tp (1, 2, 4, 8, at most a node, dividing the heads),
cp (only for long sequences), pp (any count that splits what tp*cp leaves), dp (the rest,
dividing the global batch), micro-batch, interleaving vp and recompute level.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from generator.sizing.model.efficiency import Efficiency
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


@lru_cache(maxsize=4096)
def divisors(n: int) -> list[int]:
    """Every positive divisor of n, ascending."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def tp_choices(job: Job, node: Node, pins: Pins, zero3: bool) -> Iterable[int]:
    if pins.tp is not None:
        return (pins.tp,)
    if zero3:
        return (1,)
    return [t for t in TP_CHOICES if t <= node.gpus and job.arch.heads % t == 0]


def cp_choices(job: Job, pins: Pins, zero3: bool) -> Iterable[int]:
    if pins.cp is not None:
        return (pins.cp,)
    if zero3:
        return (1,)
    return [c for c in CP_CHOICES if c == 1 or job.seq_len / c >= CP_MIN_TOKENS]


def pp_choices(job: Job, rest: int, pins: Pins, zero3: bool) -> Iterable[int]:
    """Stages that split the ``rest`` GPUs left after tp*cp evenly; uneven layer splits are
    allowed (the busiest stage holds ceil(L/p) layers and sets the pace)."""
    if pins.pp is not None:
        return (pins.pp,)
    if zero3:
        return (1,)
    return [p for p in divisors(rest) if p <= job.arch.layers]


def vp_choices(job: Job, pp: int, m: int, pins: Pins) -> Sequence[int]:
    """Virtual stages: divisors of the busiest stage's ceil(L/p) layers (uneven pipelines
    interleave too, as Llama 3.1 405B's 126 layers on PP16 do); Megatron needs m % p == 0."""
    if pp == 1:
        return (1,)
    if pins.vp is not None:
        return (pins.vp,)
    if m % pp:
        return (1,)
    return divisors(-(-job.arch.layers // pp))


def mbs_choices(job: Job, dp: int, pins: Pins) -> Iterable[int]:
    if pins.mbs is not None:
        return (pins.mbs,)
    return [b for b in MBS_CHOICES if job.global_batch % (dp * b) == 0]


def recompute_choices(pins: Pins, eff: Efficiency) -> tuple[str, ...]:
    """Selective recompute only saves memory without FlashAttention, so it is searched then."""
    if pins.recompute is not None:
        return (pins.recompute,)
    return ("none", "full") if eff.memory.flash_attention else ("none", "selective", "full")


def frames(
    job: Job, gpus: int, node: Node, pins: Pins, eff: Efficiency, rejected: Counter[str]
) -> Iterator[tuple[int, int, int, int]]:
    """(tp, cp, pp, dp) using exactly ``gpus`` GPUs, counting the combinations that cannot."""
    zero3 = eff.framework(job.framework).sharding == "zero3"
    for tp in tp_choices(job, node, pins, zero3):
        for cp in cp_choices(job, pins, zero3):
            if gpus % (tp * cp):
                continue
            for pp in pp_choices(job, gpus // (tp * cp), pins, zero3):
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
    for tp, cp, pp, dp in frames(job, gpus, node, pins, eff, Counter()):
        for mbs in mbs_choices(job, dp, pins):
            m = max(1, job.global_batch // (dp * mbs))
            for vp in vp_choices(job, pp, m, pins):
                for rc in recompute_choices(pins, eff):
                    yield Layout(tp, pp, dp, cp, vp, mbs, rc)
