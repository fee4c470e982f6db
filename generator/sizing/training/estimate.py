"""One training workload, from spec to estimate: job, candidate sizes, plan, wall-clock, band.

The GPU count is the cluster's when ``hardware.gpus`` is fixed (any count, whole nodes or
not), a fully pinned layout's, or the smallest whole-node count that fits (and meets the
deadline, judged on the wall-clock total). When no layout uses exactly the GPUs given, the
estimate says so and plans on the largest count below it on which one exists: never a
silent change of GPU count.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Literal, cast

from generator.catalog.load import Catalog
from generator.errors import PodplanError, Problem
from generator.sizing.model.arch import Architecture, resolve_model
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.flops import mfu, model_flops
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import (
    Evaluation,
    Job,
    Layout,
    peft_terms,
    sequence_tokens,
    steps_for_dataset,
    steps_for_tokens,
)
from generator.sizing.model.params import active_params, total_params
from generator.sizing.result import (
    Candidate,
    MemoryBreakdown,
    TrainingEstimate,
    TrainingLayout,
    Uncertainty,
)
from generator.sizing.seed import training_seed
from generator.sizing.training.dispatch import dispatch_notes, moe_dispatch, with_settings
from generator.sizing.training.evaluation import evaluation_seconds
from generator.sizing.training.layouts import Pins
from generator.sizing.training.memory import GIB
from generator.sizing.training.notes import explain_misfit, pin_notes, workload_notes
from generator.sizing.training.planner import Evaluated, Plan, plan
from generator.sizing.training.steptime import step_parts
from generator.sizing.uncertainty import Regime, Table, outside_note
from generator.sizing.wallclock import RunEnvironment, WallClock, wall_clock
from generator.spec.models import TrainingWorkload

MAX_NODES = 4096
"""Largest cluster the planner tries when sizing freely (32,768 GPUs on 8-GPU nodes)."""
CHECKPOINT_BYTES_PER_PARAM = 14.0
"""bf16 weights (2) + fp32 master weights and Adam moments (12) per trainable parameter."""


def training_job(w: TrainingWorkload, arch: Architecture, eff: Efficiency) -> Job:
    """The spec workload reduced to the engine's ``Job`` (steps from steps | tokens | dataset)."""
    adapters, extra = peft_terms(arch, w.kind, eff.peft)
    sample_tokens = None
    if w.steps is not None:
        steps = w.steps
    elif w.tokens is not None:
        steps = steps_for_tokens(w.tokens, w.global_batch_size, w.sequence_length)
    else:
        d = w.dataset
        assert d is not None
        steps = steps_for_dataset(d.samples, d.avg_tokens_per_sample, d.epochs,
                                  w.global_batch_size, w.sequence_length, d.packed)
        sample_tokens = None if d.packed else d.avg_tokens_per_sample
    ev = w.evaluation
    return with_settings(Job(
        name=w.name, arch=arch, kind=w.kind, precision=w.precision.value,
        framework=w.framework.value, global_batch=w.global_batch_size,
        seq_len=w.sequence_length, steps=steps, sample_tokens=sample_tokens,
        extra_tokens=extra, adapter_params=adapters,
        evaluation=None if ev is None else Evaluation(ev.every_samples, ev.samples),
    ), w)


def pins_of(w: TrainingWorkload) -> Pins:
    """The user's layout pins."""
    p = w.parallelism
    return Pins(tp=p.tp, pp=p.pp, dp=p.dp, cp=p.cp, vp=p.vp, mbs=w.micro_batch_size,
                recompute=p.recompute.value if p.recompute else None, ep=p.ep, etp=p.etp)


def candidate_sizes(pins: Pins, fixed: int | None, gpn: int) -> list[int]:
    """GPU counts to try: a fully pinned layout's size, the fixed size, or whole nodes."""
    pinned = [pins.tp, pins.pp, pins.dp, pins.cp]
    if all(v is not None for v in pinned):
        return [math.prod(v for v in pinned if v is not None)]
    if fixed is not None:
        return [fixed]
    return [gpn * k for k in range(1, MAX_NODES + 1)]


def to_layout(lay: Layout) -> TrainingLayout:
    """The result model of an engine layout."""
    recompute = cast(Literal["none", "selective", "full"], lay.recompute)
    shard = lay.shard if lay.shard and lay.shard < lay.dp else None
    return TrainingLayout(tp=lay.tp, pp=lay.pp, dp=lay.dp, cp=lay.cp, vp=lay.vp,
                          micro_batch_size=lay.mbs, recompute=recompute,
                          recompute_layers=lay.recompute_layers or None, shard=shard,
                          ep=lay.ep, etp=lay.etp or None)


class Clock:
    """Wall-clock of a job on an evaluated layout (the planner's deadline yardstick)."""

    def __init__(self, job: Job, device: Device, node: Node, eff: Efficiency,
                 env: RunEnvironment) -> None:
        self.job, self.device, self.node, self.eff, self.env = job, device, node, eff, env
        self.checkpoint_gb = checkpoint_gb(job)

    def of(self, e: Evaluated) -> WallClock:
        compute = e.step_s * self.job.steps / 3600.0
        ev = evaluation_seconds(self.job, e.layout, self.device, self.node, self.eff) / 3600.0
        return wall_clock(compute, ev, e.layout.gpus, self.checkpoint_gb, self.env)

    def seconds(self, e: Evaluated) -> float:
        return self.of(e).total_h * 3600.0


def checkpoint_gb(job: Job) -> float:
    """One restartable checkpoint: weights and optimizer state of what trains."""
    trainable = job.adapter_params if job.frozen_base else total_params(job.arch)
    return trainable * CHECKPOINT_BYTES_PER_PARAM / 1e9


def _breakdown(p: Plan) -> tuple[MemoryBreakdown, float]:
    best = p.chosen.best or p.chosen.tightest
    assert best is not None
    m = best.memory
    mb = MemoryBreakdown(
        weights_gib=m.weights / GIB, gradients_gib=m.gradients / GIB,
        optimizer_gib=m.optimizer / GIB, activations_gib=m.activations / GIB,
        overhead_gib=m.overhead / GIB,
    )
    return mb, m.total / GIB


def _runners_up(p: Plan, steps: int) -> list[Candidate]:
    ranked = p.chosen.ranked
    if not ranked:
        return []
    best = ranked[0].step_s
    return [
        Candidate(
            gpus=e.layout.gpus, layout=to_layout(e.layout), fits=e.fits,
            memory_gib_per_gpu=e.memory.total / GIB, step_time_s=e.step_s,
            time_hours=e.step_s * steps / 3600,
            reason=f"{100 * (e.step_s / best - 1):.1f} % slower",
        )
        for e in ranked[1:]
    ]


def _reasons(rejected: Counter[str]) -> str:
    top = sorted(rejected.items(), key=lambda kv: -kv[1])[:2]
    return "; ".join(f"{n:,} {why}" for why, n in top) or "no tp x pp x dp x cp product"


def fewer_gpus(
    job: Job, gpus: int, device: Device, node: Node, eff: Efficiency, pins: Pins,
    deadline: float | None, clock: Clock,
) -> tuple[Plan, str]:
    """The largest GPU count below ``gpus`` with a layout, and the note that says so."""
    first = plan(job, [gpus], device, node, eff, pins, deadline, clock.seconds)
    for n in range(gpus - 1, 0, -1):
        p = plan(job, [n], device, node, eff, pins, deadline, clock.seconds)
        if p.chosen.best is not None or p.chosen.tightest is not None:
            note = (f"no layout uses all {gpus} GPUs ({_reasons(first.chosen.rejected)}); "
                    f"planned on {n} of them, {gpus - n} idle: change global_batch_size or "
                    "the GPU count to use them all")
            return p, note
    raise_no_layout(job.name, gpus)
    raise AssertionError  # unreachable


def raise_no_layout(name: str, gpus: int) -> None:
    """No layout is even structurally possible (pins contradict the GPU count)."""
    raise PodplanError(
        f"workload '{name}': no parallel layout exists on {gpus} GPUs with these pins",
        problems=[Problem(path=f"workloads.{name}.parallelism",
                          message="tp x pp x dp x cp must equal the GPU count and "
                                  "global_batch_size must divide by dp x micro_batch_size")],
    )


def band(
    table: Table, w: TrainingWorkload, job: Job, gpus: int, gpu: str
) -> tuple[Uncertainty, list[str]]:
    """The estimate's uncertainty band and, outside calibration, the note."""
    regime = Regime.of(w.framework.value, w.kind, gpus, gpu, job.sample_tokens, job.arch.moe)
    b = table.band(regime)
    u = Uncertainty(low_pct=b.low_pct, high_pct=b.high_pct, similar_measurements=b.similar,
                    calibrated=b.calibrated, regime=b.regime.text() if b.regime else "all rows")
    return u, [] if b.calibrated else [outside_note(regime)]


def estimate_training(
    w: TrainingWorkload, catalog: Catalog, device: Device, node: Node, eff: Efficiency,
    fixed_gpus: int | None, env: RunEnvironment, table: Table,
) -> TrainingEstimate:
    """Plan one training workload and fill its estimate."""
    arch = resolve_model(w.model, catalog)
    job = training_job(w, arch, eff)
    pins = pins_of(w)
    clock = Clock(job, device, node, eff, env)
    deadline = w.deadline_hours * 3600 if w.deadline_hours else None
    sizes = candidate_sizes(pins, fixed_gpus, node.gpus)
    p = plan(job, sizes, device, node, eff, pins, deadline, clock.seconds)
    notes = [*p.notes, *pin_notes(job, pins, fixed_gpus, sizes[0])]
    if p.chosen.best is None and p.chosen.tightest is None and len(sizes) == 1:
        p, why = fewer_gpus(job, sizes[0], device, node, eff, pins, deadline, clock)
        notes.insert(0, why)
    best = p.chosen.best or p.chosen.tightest
    if best is None:
        raise_no_layout(w.name, sizes[-1])
    assert best is not None
    notes += workload_notes(job)
    if not p.fits:
        notes += explain_misfit(job, p, device, node, eff, pins)
    return _estimate(w, job, p, best, clock, device, table, notes)


def _estimate(
    w: TrainingWorkload, job: Job, p: Plan, best: Evaluated, clock: Clock, device: Device,
    table: Table, notes: list[str],
) -> TrainingEstimate:
    arch = job.arch
    step = best.step_s
    seq = sequence_tokens(job, best.layout.mbs)
    gpus = best.layout.gpus
    tok_s_gpu = job.global_batch * seq / (step * gpus)
    wc = clock.of(best)
    if not clock.env.has_storage:
        notes.append("checkpoint time not included: it needs the storage plan (podplan plan "
                     "and podplan size read it from the shared storage's write bandwidth)")
    params = total_params(arch)
    mem, total_gib = _breakdown(p)
    uncertainty, band_notes = band(table, w, job, gpus, device.id)
    dispatch = moe_dispatch(w, job, best.layout, clock.eff)
    notes += dispatch_notes(w, dispatch, best.layout)
    dataset_tokens = job.steps * job.global_batch * (job.sample_tokens or job.seq_len)
    meets = None
    if w.deadline_hours:
        meets = wc.total_h <= w.deadline_hours
    return TrainingEstimate(
        name=w.name, kind=w.kind, model=arch.name, gpus=gpus, parallelism=to_layout(best.layout),
        memory_gib_per_gpu=total_gib, memory=mem, fits=p.fits, step_time_s=step,
        step_time_parts_s={k: v for k, v in step_parts(best.step).items() if v > 0},
        steps=job.steps, processed_tokens=job.steps * job.global_batch * seq,
        tokens_per_second_per_gpu=tok_s_gpu,
        mfu=mfu(model_flops(arch, job.kind, seq, job.adapter_params).total, tok_s_gpu,
                device.peak_flops(job.precision)),
        time_hours=wc.compute_h, evaluation_hours=wc.evaluation_h,
        checkpoint_hours=wc.checkpoint_h, failure_hours=wc.failures_h,
        gpu_hours=wc.compute_h * gpus, meets_deadline=meets, uncertainty=uncertainty,
        checkpoint_gb=clock.checkpoint_gb, params_b=params / 1e9,
        runners_up=_runners_up(p, job.steps), rejected=dict(p.chosen.rejected),
        seed=training_seed(dataset_tokens, active_params(arch), gpus, w.deadline_hours, params),
        notes=[*notes, *band_notes], moe_dispatch=dispatch,
    )
