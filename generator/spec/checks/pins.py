"""Check workloads against the hardware and the model: precision the GPU has, and pins that
can exist.

Pydantic checks each field; these rules need the catalog (the GPU's FP8 support, the
server's GPU count, the model's heads and layers) and the software stacks' profiles (which
parallel dimensions and recompute levels a framework runs). Everything impossible is a
located error here, before sizing starts; what is possible but probably unintended (an
uneven pipeline split, a pinned layout smaller than the cluster) is a note on the estimate.
"""

from __future__ import annotations

from generator.catalog.load import Catalog
from generator.errors import Problem
from generator.sizing.model.efficiency import Framework, default_efficiency
from generator.spec.checks.moe_pins import moe_comm_problems
from generator.spec.checks.serving_pins import serving_pin_problems
from generator.spec.load import LoadedSpec, format_path
from generator.spec.models import InferenceWorkload, InlineArchitecture, TrainingWorkload

STACK_DIMENSIONS = {"tp": "tensor parallelism", "pp": "pipeline parallelism",
                    "cp": "context parallelism", "vp": "interleaved pipelines",
                    "ep": "expert parallelism"}


def _problem(
    loaded: LoadedSpec, loc: tuple[str | int, ...], message: str, allowed: str | None = None,
    hint: str | None = None,
) -> Problem:
    return Problem(path=format_path(loc), message=message, line=loaded.lines.line_of(loc),
                   allowed=allowed, hint=hint)


def precision_problems(loaded: LoadedSpec, catalog: Catalog) -> list[Problem]:
    """FP8 only where the GPU has FP8 tensor cores (no silent fallback to bf16)."""
    gpu = catalog.gpus.get(loaded.spec.hardware.gpu)
    if gpu is None or gpu.supports_fp8:
        return []
    return [
        _problem(loaded, ("workloads", i, "precision"),
                 f"{gpu.name} has no FP8 tensor cores", allowed="bf16",
                 hint="use precision: bf16, or a GPU with FP8 (H100, H200, L40S, B200)")
        for i, w in enumerate(loaded.spec.workloads) if w.precision.value == "fp8"
    ]


def _shape(
    w: TrainingWorkload | InferenceWorkload, catalog: Catalog
) -> tuple[int, int, int] | None:
    """(attention heads, layers, experts) of the workload's model, if it is known."""
    if isinstance(w.model, InlineArchitecture):
        return w.model.attention_heads, w.model.layers, w.model.experts
    m = catalog.models.get(w.model)
    return None if m is None else (m.attention_heads, m.layers, m.experts)


def _nearest(value: int, allowed: list[int]) -> str:
    best = min(allowed, key=lambda a: (abs(a - value), a))
    return f"did you mean ep: {best}?"


def _expert_problems(
    loaded: LoadedSpec, i: int, w: TrainingWorkload, experts: int
) -> list[Problem]:
    """ep only for MoE models, dividing the experts and the pinned ranks of a stage; etp
    only with experts and within one server's tensor-parallel reach."""
    p = w.parallelism
    base: tuple[str | int, ...] = ("workloads", i, "parallelism")
    out = []
    if experts == 1:
        for dim in ("ep", "etp"):
            value = getattr(p, dim)
            if value is not None and value > 1:
                out.append(_problem(loaded, (*base, dim), f"{dim}={value} needs a mixture-of-"
                                    "experts model; this model is dense", allowed="1"))
        return out
    allowed = [d for d in range(1, experts + 1) if experts % d == 0]
    if p.ep is not None and experts % p.ep:
        out.append(_problem(
            loaded, (*base, "ep"), f"ep={p.ep} does not divide the model's {experts} experts",
            allowed=", ".join(map(str, allowed)), hint=_nearest(p.ep, allowed)))
        return out
    if p.ep is not None and None not in (p.tp, p.dp):
        ranks = (p.tp or 1) * (p.cp or 1) * (p.dp or 1)
        width = p.ep * (p.etp or 1)
        if ranks % width:
            out.append(_problem(
                loaded, (*base, "ep"),
                f"ep x etp = {width} does not divide the {ranks} ranks of a pipeline stage "
                f"(tp x cp x dp)", allowed=f"ep x etp dividing {ranks}"))
    return out


def _stack_problems(
    loaded: LoadedSpec, i: int, w: TrainingWorkload, fw: Framework
) -> list[Problem]:
    out = []
    p = w.parallelism
    for dim, what in STACK_DIMENSIONS.items():
        value = getattr(p, dim)
        if value is not None and value > 1 and not fw.runs(dim):
            out.append(_problem(
                loaded, ("workloads", i, "parallelism", dim),
                f"framework '{fw.name}' does not run {what}",
                allowed="1", hint="use framework nemo or megatron, or leave it to the planner"))
    if p.recompute is not None and p.recompute.value not in fw.recompute:
        out.append(_problem(
            loaded, ("workloads", i, "parallelism", "recompute"),
            f"framework '{fw.name}' does not offer {p.recompute.value} recompute",
            allowed=" | ".join(fw.recompute)))
    return out


def _tp_problems(
    loaded: LoadedSpec, i: int, tp: int, heads: int, gpn: int, server: str
) -> list[Problem]:
    loc: tuple[str | int, ...] = ("workloads", i, "parallelism", "tp")
    out = []
    if tp > gpn:
        out.append(_problem(loaded, loc, f"tp={tp} spans servers: tensor parallelism stays "
                            f"within one {server} ({gpn} GPUs)",
                            allowed=f"1 ... {gpn}, dividing {heads} attention heads"))
    if heads % tp:
        out.append(_problem(loaded, loc, f"tp={tp} does not divide the model's {heads} "
                            "attention heads", allowed="a divisor of attention_heads"))
    return out


def _stage_problems(
    loaded: LoadedSpec, i: int, w: TrainingWorkload, layers: int
) -> list[Problem]:
    p = w.parallelism
    base: tuple[str | int, ...] = ("workloads", i, "parallelism")
    out = []
    if p.pp is not None and p.pp > layers:
        out.append(_problem(loaded, (*base, "pp"), f"pp={p.pp} exceeds the model's {layers} "
                            "layers", allowed=f"1 ... {layers}"))
    if p.vp is not None and p.vp > 1:
        if p.pp == 1:
            out.append(_problem(loaded, (*base, "vp"), "vp > 1 needs pipeline parallelism",
                                allowed="1 with pp: 1"))
        elif p.pp is not None and p.pp <= layers:
            per_stage = -(-layers // p.pp)
            if per_stage % p.vp:
                out.append(_problem(
                    loaded, (*base, "vp"),
                    f"vp={p.vp} does not divide the {per_stage} layers per stage",
                    allowed="a divisor of ceil(layers / pp)"))
    if p.cp is not None and p.cp > 1 and w.sequence_length % (2 * p.cp):
        out.append(_problem(
            loaded, (*base, "cp"),
            f"sequence_length {w.sequence_length} is not divisible by 2 x cp = {2 * p.cp} "
            "(load-balanced context parallelism splits each sequence into 2 x cp chunks)",
            allowed="cp with sequence_length % (2 x cp) == 0"))
    return out


def _batch_problems(loaded: LoadedSpec, i: int, w: TrainingWorkload) -> list[Problem]:
    dp = w.parallelism.dp
    if dp is None:
        return []
    per_step = dp * (w.micro_batch_size or 1)
    if w.global_batch_size % per_step:
        what = f"dp x micro_batch_size = {per_step}" if w.micro_batch_size else f"dp = {dp}"
        return [_problem(loaded, ("workloads", i, "parallelism", "dp"),
                         f"global_batch_size {w.global_batch_size} is not divisible by {what}",
                         allowed="dp dividing global_batch_size / micro_batch_size")]
    return []


def _size_problems(loaded: LoadedSpec, i: int, w: TrainingWorkload) -> list[Problem]:
    gpus = loaded.spec.hardware.gpus
    p = w.parallelism
    pinned = {k: getattr(p, k) for k in ("tp", "pp", "dp", "cp") if getattr(p, k) is not None}
    need = 1
    for v in pinned.values():
        need *= v
    if gpus is None or need <= gpus:
        return []
    product = " x ".join(f"{k}={v}" for k, v in pinned.items())
    return [_problem(loaded, ("workloads", i, "parallelism"),
                     f"the pins need at least {product} = {need} GPUs; hardware.gpus is {gpus}",
                     allowed=f"pins whose product is at most {gpus}")]


def workload_problems(loaded: LoadedSpec, catalog: Catalog) -> list[Problem]:
    """Every impossible pin of every workload, located."""
    hw = loaded.spec.hardware
    server = catalog.servers.get(hw.server)
    if server is None:
        return []
    eff = default_efficiency()
    out: list[Problem] = []
    for i, w in enumerate(loaded.spec.workloads):
        if isinstance(w, InferenceWorkload):
            shape = _shape(w, catalog)
            if shape is not None:
                out += serving_pin_problems(loaded, i, w, shape, server.gpu_slots, server.name)
            continue
        out += _stack_problems(loaded, i, w, eff.framework(w.framework.value))
        out += _batch_problems(loaded, i, w)
        out += _size_problems(loaded, i, w)
        shape = _shape(w, catalog)
        if shape is None:
            continue
        heads, layers, experts = shape
        out += _expert_problems(loaded, i, w, experts)
        out += moe_comm_problems(loaded, i, w, experts)
        if w.parallelism.tp is not None:
            out += _tp_problems(loaded, i, w.parallelism.tp, heads, server.gpu_slots, server.name)
        out += _stage_problems(loaded, i, w, layers)
    return out
