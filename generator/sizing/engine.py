"""``size(spec, catalog)``: every workload's layout, memory and time, and the cluster size.

Training workloads use the cluster in turn, so the cluster must hold the largest of them;
inference workloads get dedicated GPUs, so they add up. With ``hardware.gpus`` fixed that is
the cluster: training is estimated on it (or on its fully pinned layout), inference on the
GPUs its load needs, with a note when the two do not fit together.
"""

from __future__ import annotations

import math
from typing import Literal, cast

from generator.catalog.load import Catalog
from generator.sizing.inference import InferenceJob, max_batch, operating_point, serve
from generator.sizing.model.arch import Architecture, resolve_model
from generator.sizing.model.efficiency import Efficiency, default_efficiency
from generator.sizing.model.flops import mfu, model_flops
from generator.sizing.model.hardware import Device, Node, device_from_gpu
from generator.sizing.model.job import (
    Job,
    Layout,
    peft_terms,
    sequence_tokens,
    steps_for_dataset,
    steps_for_tokens,
)
from generator.sizing.model.params import total_params
from generator.sizing.result import (
    Candidate,
    InferenceEstimate,
    MemoryBreakdown,
    SizingResult,
    TrainingEstimate,
    TrainingLayout,
)
from generator.sizing.seed import inference_seed, training_seed
from generator.sizing.training.layouts import Pins
from generator.sizing.training.memory import GIB
from generator.sizing.training.notes import explain_misfit, workload_notes
from generator.sizing.training.planner import Plan, plan
from generator.spec.models import InferenceWorkload, Spec, TrainingWorkload

MAX_NODES = 4096
"""Largest cluster the planner tries when sizing freely (32,768 GPUs on 8-GPU nodes)."""


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
    return Job(
        name=w.name, arch=arch, kind=w.kind, precision=w.precision.value,
        framework=w.framework.value, global_batch=w.global_batch_size,
        seq_len=w.sequence_length, steps=steps, sample_tokens=sample_tokens,
        extra_tokens=extra, adapter_params=adapters,
    )


def pins_of(w: TrainingWorkload) -> Pins:
    """The user's layout pins."""
    p = w.parallelism
    return Pins(tp=p.tp, pp=p.pp, dp=p.dp, cp=p.cp, vp=p.vp, mbs=w.micro_batch_size,
                recompute=p.recompute.value if p.recompute else None)


def candidate_sizes(pins: Pins, fixed: int | None, gpn: int) -> list[int]:
    """GPU counts to try: the fixed size, a fully pinned layout's size, or whole nodes."""
    pinned = [pins.tp, pins.pp, pins.dp, pins.cp]
    if all(v is not None for v in pinned):
        return [math.prod(v for v in pinned if v is not None)]
    if fixed is not None:
        return [fixed]
    return [gpn * k for k in range(1, MAX_NODES + 1)]


def _layout(lay: Layout) -> TrainingLayout:
    recompute = cast(Literal["none", "selective", "full"], lay.recompute)
    return TrainingLayout(tp=lay.tp, pp=lay.pp, dp=lay.dp, cp=lay.cp, vp=lay.vp,
                          micro_batch_size=lay.mbs, recompute=recompute,
                          recompute_layers=lay.recompute_layers or None)


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
            gpus=e.layout.gpus, layout=_layout(e.layout), fits=e.fits,
            memory_gib_per_gpu=e.memory.total / GIB, step_time_s=e.step_s,
            time_hours=e.step_s * steps / 3600,
            reason=f"{100 * (e.step_s / best - 1):.1f} % slower",
        )
        for e in ranked[1:]
    ]


def estimate_training(
    w: TrainingWorkload, catalog: Catalog, device: Device, node: Node, eff: Efficiency,
    fixed_gpus: int | None,
) -> TrainingEstimate:
    """Plan one training workload and fill its estimate."""
    arch = resolve_model(w.model, catalog)
    job = training_job(w, arch, eff)
    pins = pins_of(w)
    deadline = w.deadline_hours * 3600 if w.deadline_hours else None
    sizes = candidate_sizes(pins, fixed_gpus, node.gpus)
    p = plan(job, sizes, device, node, eff, pins, deadline)
    notes = [*p.notes, *workload_notes(job)]
    if fixed_gpus is not None and sizes[0] > fixed_gpus:
        notes.append(f"the pinned layout needs {sizes[0]} GPUs; the cluster has {fixed_gpus}")
    if p.chosen.best is None and p.chosen.tightest is None and len(sizes) == 1:
        p = _fewer_gpus(job, sizes[0], device, node, eff, pins, deadline)
        notes.insert(0, f"no layout uses exactly {sizes[0]} GPUs (tp x pp x dp x cp and the "
                        f"global batch must divide); planned on {p.chosen.gpus}")
    best = p.chosen.best or p.chosen.tightest
    if best is None:
        raise_no_layout(w, sizes[-1])
    assert best is not None
    if not p.fits:
        notes += explain_misfit(job, p, device, node, eff, pins)
    step = best.step_s
    seq = sequence_tokens(job, best.layout.mbs)
    processed = job.steps * job.global_batch * seq
    gpus = best.layout.gpus
    tok_s_gpu = job.global_batch * seq / (step * gpus)
    hours = step * job.steps / 3600
    params = total_params(arch)
    mem, total_gib = _breakdown(p)
    trainable = job.adapter_params if job.frozen_base else params
    dataset_tokens = job.steps * job.global_batch * (job.sample_tokens or job.seq_len)
    return TrainingEstimate(
        name=w.name, kind=w.kind, model=arch.name, gpus=gpus, parallelism=_layout(best.layout),
        memory_gib_per_gpu=total_gib, memory=mem, fits=p.fits, step_time_s=step,
        steps=job.steps, processed_tokens=processed, tokens_per_second_per_gpu=tok_s_gpu,
        mfu=mfu(model_flops(arch, job.kind, seq, job.adapter_params).total, tok_s_gpu,
                device.peak_flops(job.precision)),
        time_hours=hours, gpu_hours=hours * gpus,
        meets_deadline=p.meets_deadline if w.deadline_hours else None,
        checkpoint_gb=trainable * 14.0 / 1e9, params_b=params / 1e9,
        runners_up=_runners_up(p, job.steps), rejected=dict(p.chosen.rejected),
        seed=training_seed(dataset_tokens, params, gpus, w.deadline_hours), notes=notes,
    )


def _fewer_gpus(
    job: Job, gpus: int, device: Device, node: Node, eff: Efficiency, pins: Pins,
    deadline: float | None,
) -> Plan:
    """The largest GPU count below ``gpus`` on which some layout exists."""
    p = plan(job, [gpus], device, node, eff, pins, deadline)
    for n in range(gpus - 1, 0, -1):
        p = plan(job, [n], device, node, eff, pins, deadline)
        if p.chosen.best is not None or p.chosen.tightest is not None:
            break
    return p


def raise_no_layout(w: TrainingWorkload, gpus: int) -> None:
    """No layout is even structurally possible (pins contradict the GPU count)."""
    from generator.errors import PodplanError, Problem

    raise PodplanError(
        f"workload '{w.name}': no parallel layout exists on {gpus} GPUs with these pins",
        problems=[Problem(path=f"workloads.{w.name}.parallelism",
                          message="tp x pp x dp x cp must equal the GPU count and "
                                  "global_batch_size must divide by dp x micro_batch_size")],
    )


def estimate_inference(
    w: InferenceWorkload, catalog: Catalog, device: Device, node: Node, eff: Efficiency
) -> InferenceEstimate:
    """Size one serving workload."""
    arch = resolve_model(w.model, catalog)
    job = InferenceJob(arch=arch, precision=w.precision.value, input_tokens=w.input_tokens,
                       output_tokens=w.output_tokens, requests_per_minute=w.requests_per_minute,
                       ttft_ms=w.ttft_ms, tpot_ms=w.tpot_ms)
    s = serve(job, device, node, eff, tp=w.parallelism.tp, pp=w.parallelism.pp)
    notes = []
    if not s.fits:
        notes.append(f"the weights alone ({s.weights_bytes / GIB:.0f} GiB per GPU at TP{s.tp}) "
                     "leave no room for a KV cache; pin a larger tp")
    if s.meets_slo is False:
        notes.append("no batch meets the latency SLOs on this GPU; reported at batch 1")
    saturated = max(1, max_batch(job, s.tp, s.pp, device, eff))
    per_gpu = operating_point(job, s.tp, s.pp, saturated, device, eff)[0] / (s.tp * s.pp)
    return InferenceEstimate(
        name=w.name, model=arch.name, gpus=s.gpus, replicas=s.replicas, tp=s.tp, pp=s.pp,
        memory_gib_per_gpu=s.memory_bytes / GIB, fits=s.fits,
        output_tokens_per_second=s.tokens_per_s * s.replicas, ttft_ms=s.ttft_s * 1e3,
        tpot_ms=s.tpot_s * 1e3, max_batch=s.batch, meets_slo=s.meets_slo,
        seed=inference_seed(w.output_tokens, w.requests_per_minute, per_gpu), notes=notes,
    )


def size(spec: Spec, catalog: Catalog, eff: Efficiency | None = None) -> SizingResult:
    """Size every workload of ``spec`` and the cluster that runs them."""
    e = eff or default_efficiency()
    hw = spec.hardware
    server = catalog.servers[hw.server]
    device = device_from_gpu(catalog.gpus[hw.gpu])
    node = Node(gpus=server.gpu_slots, nics=hw.east_west_nics_per_node, nic_gbps=e.network.nic_gbps)
    training = [estimate_training(w, catalog, device, node, e, hw.gpus) for w in spec.training]
    inference = [estimate_inference(w, catalog, device, node, e) for w in spec.inference]
    train_gpus = max((t.gpus for t in training), default=0)
    serve_gpus = sum(i.gpus for i in inference)
    notes = []
    if hw.gpus is not None:
        gpus = hw.gpus
        if serve_gpus > gpus:
            notes.append(f"inference needs {serve_gpus} GPUs; the fixed cluster has {gpus}")
        elif train_gpus and train_gpus + serve_gpus > gpus:
            notes.append(f"training ({train_gpus} GPUs) and dedicated inference ({serve_gpus}) "
                         f"need {train_gpus + serve_gpus} GPUs together; the cluster has {gpus}")
    else:
        gpus = math.ceil((train_gpus + serve_gpus) / node.gpus) * node.gpus
    return SizingResult(
        name=spec.name, server=hw.server, gpu=hw.gpu, gpus_per_node=node.gpus,
        nodes=math.ceil(gpus / node.gpus), gpus=gpus, training=training, inference=inference,
        fits=all(t.fits for t in training) and all(i.fits for i in inference)
        and (hw.gpus is None or serve_gpus <= hw.gpus),
        order=[w.name for w in spec.workloads], notes=notes,
    )
