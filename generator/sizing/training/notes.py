"""Plain-language notes on a training estimate: what was assumed, and why a job does not fit."""

from __future__ import annotations

from dataclasses import replace

from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.layouts import Pins
from generator.sizing.training.memory import GIB, usable_bytes
from generator.sizing.training.planner import Evaluated, Plan, search_size

WHAT_FITS_MAX_NODES = 1024


def workload_notes(job: Job) -> list[str]:
    """Assumptions a reader should see next to the numbers."""
    notes = []
    if job.sample_tokens is not None:
        notes.append(
            f"unpacked dataset: each sample is its own sequence (~{job.sample_tokens:.0f} tokens; "
            "micro-batches > 1 are padded to their longest sample)"
        )
    if job.arch.experts > 1:
        notes.append(f"MoE: {job.arch.experts} experts, top-{job.arch.top_k}; routing taken as "
                     f"balanced and dropless (capacity factor {job.capacity_factor:g}); each "
                     "MoE layer's token dispatch and combine are all-to-alls over the EP group")
    if job.evaluation is not None:
        ev = job.evaluation
        notes.append(f"evaluation: {ev.samples:,} samples forward-only every "
                     f"{ev.every_samples:,} training samples")
    if job.kind == "lora":
        notes.append(f"LoRA adapters: {job.adapter_params / 1e6:.1f} M trainable parameters")
    if job.kind == "ptuning":
        notes.append(f"P-tuning: {job.extra_tokens} virtual tokens per sample, "
                     f"{job.adapter_params / 1e6:.1f} M trainable parameters")
    return notes


def pin_notes(job: Job, pins: Pins, fixed_gpus: int | None, size: int) -> list[str]:
    """What pinned values imply that the user may not have meant (the spec refuses the
    impossible ones before sizing starts)."""
    notes = []
    layers = job.arch.layers
    if pins.pp is not None and pins.pp > 1 and layers % pins.pp:
        busiest = -(-layers // pins.pp)
        notes.append(
            f"PP{pins.pp} splits {layers} layers unevenly ({busiest} on the busiest stage, "
            f"{layers - busiest * (pins.pp - 1)} on the last): the busiest stage sets the pace; "
            "Megatron needs decoder_first/last_pipeline_num_layers for such a split"
        )
    if fixed_gpus is not None and size < fixed_gpus:
        notes.append(f"the pinned layout uses {size} of the cluster's {fixed_gpus} GPUs")
    return notes


def layout_text(lay: Layout) -> str:
    """``TP8 PP4 DP2 CP1 VP1 MBS1 recompute=none`` (plus the HSDP shard group if any)."""
    partial = f" ({lay.recompute_layers} layers/stage)" if lay.recompute_layers else ""
    hsdp = f" HSDP shard {lay.shard}" if lay.shard and lay.shard < lay.dp else ""
    hsdp += f" EP{lay.ep} ETP{lay.expert_tp}" if lay.ep > 1 else ""
    return (f"TP{lay.tp} PP{lay.pp} DP{lay.dp} CP{lay.cp} VP{lay.vp} MBS{lay.mbs} "
            f"recompute={lay.recompute}{partial}{hsdp}")


def _why(e: Evaluated, limit: float) -> str:
    m = e.memory
    terms = {"weights": m.weights, "gradients": m.gradients, "optimizer states": m.optimizer,
             "activations": m.activations}
    top = m.dominant()
    return (f"the leanest layout ({layout_text(e.layout)}) needs {m.total / GIB:.1f} GiB per GPU "
            f"of {limit / GIB:.1f} GiB usable; {top} dominate ({terms[top] / GIB:.1f} GiB)")


def smallest_fit(
    job: Job, start: int, device: Device, node: Node, eff: Efficiency, pins: Pins
) -> Evaluated | None:
    """The first whole-node GPU count above ``start`` on which some layout fits."""
    first = start // node.gpus + 1
    for k in range(first, WHAT_FITS_MAX_NODES + 1):
        best = search_size(job, k * node.gpus, device, node, eff, pins).best
        if best is not None:
            return best
    return None


def explain_misfit(
    job: Job, p: Plan, device: Device, node: Node, eff: Efficiency, pins: Pins
) -> list[str]:
    """Why nothing fits on the GPUs given, and the smallest cluster on which it would."""
    limit = usable_bytes(device.memory_bytes, eff)
    notes = [f"does not fit on {p.chosen.gpus} GPUs"]
    if p.chosen.tightest is not None:
        notes[0] += ": " + _why(p.chosen.tightest, limit)
    free = replace(pins, dp=None)
    found = smallest_fit(job, p.chosen.gpus, device, node, eff, free)
    if found is None and free != Pins(mbs=pins.mbs):
        found = smallest_fit(job, p.chosen.gpus, device, node, eff, Pins(mbs=pins.mbs))
    if found is None:
        notes.append(f"nothing fits up to {WHAT_FITS_MAX_NODES} nodes")
    else:
        notes.append(
            f"would fit on {found.layout.gpus} GPUs with {layout_text(found.layout)} "
            f"({found.memory.total / GIB:.1f} GiB per GPU)"
        )
    return notes
