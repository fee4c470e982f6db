"""The MoE all-to-all as a spec states it (``parallelism.moe_dispatcher``,
``parallelism.ep_comm_overlap``) or as its framework defaults it, for the engine's ``Job``,
the estimate and its notes.

The defaults are each stack's own: Megatron-Core (nemo, megatron) dispatches with alltoall
and does not overlap the EP all-to-all; torchtitan (fsdp) and DeepSpeed use a plain
all-to-all. A plan on those defaults can be far from a team that runs DeepEP with the
overlap, so the estimate says which it assumed and what to set.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, cast

from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.job import Job, Layout
from generator.sizing.result import MoeDispatch
from generator.sizing.training import comm
from generator.spec.models import TrainingWorkload

MEGATRON_STACKS = ("nemo", "megatron")
"""Frameworks whose overlap follows Megatron-Core's ``overlap_moe_expert_parallel_comm``."""
DEFAULTS = {"nemo": "Megatron-Core's default", "megatron": "Megatron-Core's default",
            "fsdp": "torchtitan's default", "deepspeed": "DeepSpeed-MoE's"}
TO_SET = {
    "nemo": "set parallelism.moe_dispatcher: deepep and parallelism.ep_comm_overlap: true "
            "if you run DeepEP with the A2A overlap",
    "megatron": "set parallelism.moe_dispatcher: deepep and parallelism.ep_comm_overlap: true "
                "if you run DeepEP with the A2A overlap",
    "fsdp": "set parallelism.moe_dispatcher: deepep if you run torchtitan's DeepEP backend",
}


def with_settings(job: Job, w: TrainingWorkload) -> Job:
    """``job`` with the spec's dispatcher and overlap (unset: the stack's)."""
    p = w.parallelism
    dispatcher = "" if p.moe_dispatcher is None else p.moe_dispatcher.value
    return replace(
        job,
        # HybridEP deduplicates like DeepEP (Megatron's flex dispatcher, either backend)
        moe_dispatcher="deepep" if dispatcher == "hybridep" else dispatcher,
        ep_overlap=p.ep_comm_overlap,
        ep_overlap_megatron_rules=w.framework.value in MEGATRON_STACKS,
    )


def moe_dispatch(w: TrainingWorkload, job: Job, lay: Layout, eff: Efficiency) -> MoeDispatch | None:
    """What the estimate assumed for the all-to-all (None for dense models)."""
    if not job.arch.moe:
        return None
    p = w.parallelism
    name = p.moe_dispatcher.value if p.moe_dispatcher else comm.dispatcher(job, eff)
    overlap = (eff.framework(job.framework).ep_comm_overlap if p.ep_comm_overlap is None
               else p.ep_comm_overlap)
    return MoeDispatch(
        dispatcher=cast(Literal["alltoall", "deepep", "hybridep"], name),
        ep_comm_overlap=overlap,
        overlapped=lay.ep > 1 and comm.ep_exposed(job, eff, lay) < 1.0,
        stated=p.moe_dispatcher is not None or p.ep_comm_overlap is not None,
    )


def dispatch_notes(w: TrainingWorkload, d: MoeDispatch | None, lay: Layout) -> list[str]:
    """What the reader should know: the default assumed and what to set, or a stated
    overlap the chosen layout cannot run."""
    if d is None or lay.ep == 1:
        return []
    stack = w.framework.value
    if d.ep_comm_overlap and not d.overlapped:
        return [f"ep_comm_overlap is set but the chosen layout (PP{lay.pp} VP{lay.vp}, "
                f"recompute={lay.recompute}) cannot run it: Megatron-Core overlaps the EP "
                "all-to-all only without full recompute and with VP under PP; it is timed "
                "exposed"]
    if d.stated or d.overlapped:
        return []
    what = f"MoE all-to-all exposed ({d.dispatcher} dispatcher, no overlap): {DEFAULTS[stack]}"
    return [f"{what}; {TO_SET[stack]}" if stack in TO_SET else what]
