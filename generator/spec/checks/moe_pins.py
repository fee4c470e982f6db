"""Check a training workload's MoE communication settings (``parallelism.moe_dispatcher``,
``parallelism.ep_comm_overlap``) against the model and the framework that runs it.

What each stack offers, read from its code:
- Megatron-Core (nemo, megatron): ``moe_token_dispatcher_type`` alltoall, or flex with
  ``moe_flex_dispatcher_backend`` deepep | hybridep; ``overlap_moe_expert_parallel_comm``
  (Megatron-Bridge's ``moe_a2a_overlap``), which ``transformer_config.py`` refuses without
  expert parallelism, with full recompute, and with pipeline parallelism but no virtual stages.
- torchtitan (fsdp): ``parallelism.expert_parallel_comm_backend`` standard (all-to-all) |
  deepep | hybridep (``torchtitan/distributed/deepep``); no overlap of the all-to-all with
  another micro-batch's compute.
- DeepSpeed-MoE (deepspeed): torch all-to-all only.
- hf: no expert parallelism, so nothing to dispatch across GPUs.
"""

from __future__ import annotations

from generator.errors import Problem
from generator.spec.load import LoadedSpec, format_path
from generator.spec.models import Recompute, TrainingWorkload

STACK_DISPATCHERS = {
    "nemo": ("alltoall", "deepep", "hybridep"),
    "megatron": ("alltoall", "deepep", "hybridep"),
    "fsdp": ("alltoall", "deepep", "hybridep"),
    "deepspeed": ("alltoall",),
    "hf": (),
}
"""MoE token dispatchers each user-facing framework runs."""
OVERLAP_STACKS = ("nemo", "megatron")
"""Frameworks that overlap the EP all-to-all (Megatron-Core's
``overlap_moe_expert_parallel_comm``)."""


def _problem(
    loaded: LoadedSpec, i: int, field: str, message: str, allowed: str,
    hint: str | None = None,
) -> Problem:
    loc: tuple[str | int, ...] = ("workloads", i, "parallelism", field)
    return Problem(path=format_path(loc), message=message, line=loaded.lines.line_of(loc),
                   allowed=allowed, hint=hint)


def moe_comm_problems(
    loaded: LoadedSpec, i: int, w: TrainingWorkload, experts: int
) -> list[Problem]:
    """Dispatcher and overlap only for MoE models, only as the framework runs them."""
    p = w.parallelism
    if p.moe_dispatcher is None and p.ep_comm_overlap is None:
        return []
    if experts == 1:
        return [_problem(loaded, i, f, f"{f} applies to mixture-of-experts models; this "
                         "model is dense", allowed="leave it out")
                for f in ("moe_dispatcher", "ep_comm_overlap") if getattr(p, f) is not None]
    out = []
    stack = w.framework.value
    offered = STACK_DISPATCHERS.get(stack, ())
    if p.moe_dispatcher is not None and p.moe_dispatcher.value not in offered:
        out.append(_problem(
            loaded, i, "moe_dispatcher",
            f"framework '{stack}' does not run the {p.moe_dispatcher.value} dispatcher"
            + ("" if offered else " (it has no expert parallelism)"),
            allowed=" | ".join(offered) or "leave it out",
            hint="DeepEP and HybridEP run under framework nemo, megatron or fsdp (torchtitan)"))
    if p.ep_comm_overlap:
        out += _overlap_problems(loaded, i, w)
    return out


def _overlap_problems(loaded: LoadedSpec, i: int, w: TrainingWorkload) -> list[Problem]:
    """Megatron-Core's conditions on ``overlap_moe_expert_parallel_comm`` that pins break."""
    p = w.parallelism
    stack = w.framework.value
    if stack not in OVERLAP_STACKS:
        return [_problem(loaded, i, "ep_comm_overlap",
                         f"framework '{stack}' does not overlap the EP all-to-all with compute",
                         allowed="false", hint="the overlap is Megatron-Core's "
                         "overlap_moe_expert_parallel_comm: use framework nemo or megatron")]
    why = []
    if p.ep == 1:
        why.append("ep: 1 (it needs expert parallelism)")
    if p.recompute == Recompute.full:
        why.append("recompute: full")
    if p.pp is not None and p.pp > 1 and p.vp == 1:
        why.append(f"pp: {p.pp} with vp: 1 (it needs virtual pipeline stages)")
    if not why:
        return []
    return [_problem(loaded, i, "ep_comm_overlap",
                     "Megatron-Core refuses overlap_moe_expert_parallel_comm with "
                     + " and ".join(why),
                     allowed="false, or ep > 1, recompute none | selective, vp > 1 with pp > 1")]
