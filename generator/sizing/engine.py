"""``size(spec, catalog)``: every workload's layout, memory and time, and the cluster size.

Training workloads use the cluster in turn, so the cluster must hold the largest of them;
inference workloads get dedicated GPUs, so they add up. With ``hardware.gpus`` fixed that is
the cluster (whole servers or not: a what-if on 4 of an XE9680's 8 GPUs is a question
users ask): training is estimated on it (or on its fully pinned layout), inference on the
GPUs its load needs, with a note when the two do not fit together. The plan and the bill
of materials round the GPU count up to whole servers, and say so.

Wall-clock needs the checkpoint bandwidth of the storage plan and the failure rate: the
pipeline passes them in as a ``RunEnvironment`` (see ``wallclock``).
"""

from __future__ import annotations

import math

from generator.catalog.load import Catalog
from generator.catalog.models import Server
from generator.errors import PodplanError, Problem
from generator.sizing.inference import (
    InferenceJob,
    Layout,
    Serving,
    loaded_point,
    max_batch,
    serve,
)
from generator.sizing.inference.advice import (
    Hardware,
    alternatives,
    near_slo,
    shortfall,
    without_slo,
    without_slo_text,
)
from generator.sizing.model.arch import resolve_model
from generator.sizing.model.efficiency import Efficiency, default_efficiency
from generator.sizing.model.hardware import Device, Node, device_from_gpu, node_from_server
from generator.sizing.result import (
    InferenceEstimate,
    OperatingPoint,
    ServingOption,
    SizingResult,
    Uncertainty,
)
from generator.sizing.seed import inference_seed
from generator.sizing.training.estimate import MAX_NODES, estimate_training
from generator.sizing.training.memory import GIB
from generator.sizing.uncertainty import Regime, Table, default_table, outside_note
from generator.sizing.wallclock import RunEnvironment
from generator.spec.checks.plausible import slo_unit_notes
from generator.spec.models import InferenceWorkload, InlineArchitecture, ServingEngine, Spec

__all__ = ["MAX_NODES", "size"]

NO_STORAGE = RunEnvironment(0.0, 0.0, 0.0, 0.0)
"""No storage plan and no failure data: wall-clock = compute + evaluation (the caller notes it)."""


def estimate_inference(
    w: InferenceWorkload, catalog: Catalog, device: Device, node: Node, eff: Efficiency,
    table: Table, hardware: Hardware | None = None,
) -> InferenceEstimate:
    """Size one serving workload: its replica layout and both operating points
    (``hardware`` sizes the alternatives named when the SLOs are missed)."""
    arch = resolve_model(w.model, catalog)
    job = InferenceJob(arch=arch, precision=w.precision.value, input_tokens=w.input_tokens,
                       output_tokens=w.output_tokens, requests_per_minute=w.requests_per_minute,
                       ttft_ms=w.ttft_ms, tpot_ms=w.tpot_ms, engine=w.engine.value)
    par = w.parallelism
    pins = {"tp": par.tp, "pp": par.pp, "ep": par.ep}
    s = serve(job, device, node, eff, **pins)
    # the band rests on measurements of this engine only: the scored serving rows are all
    # TensorRT-LLM, so a vLLM or SGLang estimate is outside calibration and says so
    regime = Regime.of(job.engine, "inference", s.tp * s.pp, device.id)
    b = table.band(regime)
    notes = _inference_notes(s.fits, s.weights_bytes, s.layout, node)
    notes += filter(None, [context_note(w, catalog)])
    notes += slo_unit_notes(w)
    free = close = near = None
    if s.meets_slo is False and s.fits:
        free = without_slo(job, device, node, eff, pins)
        near, close = near_slo(job, s, device, node, eff, pins)
        notes += [shortfall(job, s, device.id, pinned=any(v for v in pins.values())),
                  without_slo_text(s, near, close, free)]
        if hardware is not None:
            notes.append(alternatives(job, s, device.id, hardware, eff, pins))
    if not b.calibrated:
        notes.append(outside_note(regime))
    if w.framework is not None:  # accepted for symmetry with training; say it changes nothing
        engines = " | ".join(e.value for e in ServingEngine)
        notes.append(f"framework: {w.framework.value} does not apply to serving; the engine "
                     f"is {job.engine} (engine: {engines})")
    saturated = max(1, max_batch(job, s.layout, device, eff))
    per_gpu = loaded_point(job, s.layout, saturated, device, node, eff).tokens_per_s / s.layout.gpus
    top, low = s.throughput, s.latency
    return InferenceEstimate(
        name=w.name, model=arch.name, engine=job.engine, gpus=s.gpus, replicas=s.replicas,
        tp=s.tp, pp=s.pp, ep=s.ep, memory_gib_per_gpu=s.memory_bytes / GIB, fits=s.fits,
        kv_cache_tokens=s.kv_capacity_tokens,
        output_tokens_per_second=top.tokens_per_s * s.replicas, ttft_ms=top.ttft_s * 1e3,
        tpot_ms=top.tpot_s * 1e3, max_batch=top.batch, meets_slo=s.meets_slo,
        operating_points=[
            OperatingPoint(name="max-throughput", batch=top.batch,
                           output_tokens_per_second=top.tokens_per_s * s.replicas,
                           ttft_ms=top.ttft_s * 1e3, tpot_ms=top.tpot_s * 1e3),
            OperatingPoint(name="latency", batch=1,
                           output_tokens_per_second=low.tokens_per_s * s.replicas,
                           ttft_ms=low.ttft_s * 1e3, tpot_ms=low.tpot_s * 1e3),
        ],
        near_slo=None if near is None or close is None or not close.meets_slo
        else _option(close, near),
        without_slo=None if free is None else _option(free),
        uncertainty=Uncertainty(low_pct=b.low_pct, high_pct=b.high_pct,
                                similar_measurements=b.similar, calibrated=b.calibrated,
                                regime=b.regime.text() if b.regime else "all rows"),
        seed=inference_seed(w.output_tokens, w.requests_per_minute, per_gpu), notes=notes,
    )


def _option(s: Serving, job: InferenceJob | None = None) -> ServingOption:
    top = s.throughput
    return ServingOption(tpot_slo_ms=None if job is None else job.tpot_ms,
                         ttft_slo_ms=None if job is None else job.ttft_ms,
                         gpus=s.gpus, replicas=s.replicas, tp=s.tp, pp=s.pp, ep=s.ep,
                         batch=top.batch, output_tokens_per_second=top.tokens_per_s * s.replicas,
                         ttft_ms=top.ttft_s * 1e3, tpot_ms=top.tpot_s * 1e3)


def context_note(w: InferenceWorkload, catalog: Catalog) -> str | None:
    """A request longer than the model's context: engines refuse it (vLLM caps
    max_model_len at the model's max_position_embeddings), yet it sized without a word."""
    model = None if isinstance(w.model, InlineArchitecture) else catalog.models.get(w.model)
    limit = model.max_sequence_length if model is not None else None
    if model is None or limit is None or w.input_tokens + w.output_tokens <= limit:
        return None
    return (f"{w.input_tokens:,} input + {w.output_tokens:,} output tokens is more than "
            f"{model.name}'s context of {limit:,} tokens (catalog max_sequence_length): "
            "engines refuse such requests unless the context is extended (RoPE scaling such "
            "as YaRN); the figures assume it is")


def _inference_notes(fits: bool, weights: float, lay: Layout, node: Node) -> list[str]:
    notes = []
    if not fits:
        notes.append(f"the weights alone ({weights / GIB:.0f} GiB per GPU at {lay.text()}) "
                     "leave no room for a KV cache; pin a larger tp or pp")
    if lay.gpus > node.gpus:
        how = ("TP inside a node, pipeline stages across nodes" if lay.tp <= node.gpus
               else "tensor parallelism across nodes, its all-reduces over the fabric")
        notes.append(f"one replica spans {-(-lay.gpus // node.gpus)} nodes ({lay.text()}: {how})")
    return notes


def size(
    spec: Spec, catalog: Catalog, eff: Efficiency | None = None,
    env: RunEnvironment | None = None, table: Table | None = None,
) -> SizingResult:
    """Size every workload of ``spec`` and the cluster that runs them."""
    e = eff or default_efficiency()
    bands = table or default_table()
    run_env = env or NO_STORAGE
    hw = spec.hardware
    server = catalog.servers[hw.server]
    gpu = catalog.gpus[hw.gpu]
    device = device_from_gpu(gpu)
    refuse_fp8_without_it(spec, gpu.name, device)
    node = node_from_server(server, gpu, hw.east_west_nics_per_node)
    training = [estimate_training(w, catalog, device, node, e, hw.gpus, run_env, bands)
                for w in spec.training]
    hardware = Hardware(list(server.gpu_options), lambda g: (
        device_from_gpu(catalog.gpus[g]),
        node_from_server(server, catalog.gpus[g], hw.east_west_nics_per_node)))
    inference = [estimate_inference(w, catalog, device, node, e, bands, hardware)
                 for w in spec.inference]
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
    nodes = math.ceil(gpus / node.gpus)
    rounding = whole_servers_note(gpus, nodes, server)
    return SizingResult(
        name=spec.name, server=hw.server, gpu=hw.gpu, gpus_per_node=node.gpus,
        nodes=nodes, gpus=gpus, training=training, inference=inference,
        fits=all(t.fits for t in training) and all(i.fits for i in inference)
        and (hw.gpus is None or serve_gpus <= hw.gpus),
        order=[w.name for w in spec.workloads], notes=[*notes, *rounding, *_mlp_notes(spec)],
        short_of_gpus=notes,
    )


def _mlp_notes(spec: Spec) -> list[str]:
    """An inline model without ``mlp`` is counted as gelu (its ffn 4 x hidden): say so, since
    a Llama-style (swiglu) model counted that way has a third fewer FFN weights."""
    seen = {w.model.name: w.model for w in spec.workloads
            if isinstance(w.model, InlineArchitecture) and "mlp" not in w.model.model_fields_set}
    return [f"model {name}: no mlp given, so gelu with a {m.ffn_hidden_size or 4 * m.hidden_size}"
            f"-wide FFN (4 x hidden_size) is assumed; for a Llama-style model set mlp: swiglu "
            f"and its ffn_hidden_size" for name, m in seen.items()]


def refuse_fp8_without_it(spec: Spec, gpu_name: str, device: Device) -> None:
    """FP8 workloads on a GPU without FP8 tensor cores are an error, never a silent bf16 run
    (the spec check says so with line numbers; this guards every other caller)."""
    bad = [w.name for w in spec.workloads if w.precision.value == "fp8"]
    if bad and not device.supports_fp8:
        raise PodplanError(
            f"{gpu_name} has no FP8 tensor cores",
            problems=[Problem(path=f"workloads.{name}.precision", message="fp8 is not "
                              f"available on {gpu_name}", allowed="bf16") for name in bad],
        )


def whole_servers_note(gpus: int, nodes: int, server: Server) -> list[str]:
    """A GPU count that is not whole servers: what is bought, and what is idle."""
    slots = nodes * server.gpu_slots
    if slots == gpus:
        return []
    return [f"{gpus} GPUs is not a whole number of {server.name} ({server.gpu_slots} GPUs each): "
            f"sized on {gpus} GPUs; the plan and bill of materials round up to {nodes} "
            f"server{'s' if nodes != 1 else ''} ({slots} GPUs, {slots - gpus} idle)"]
