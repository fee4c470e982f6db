"""Pins of a serving replica that cannot exist: checked against the model and the server
before sizing, like the training pins (``pins.py``), so an impossible ``tp``/``pp``/``ep`` is
a located error instead of an empty layout search.

A replica is ``tp x pp`` GPUs: TP within one server or over whole servers (multi-node TP, as
SGLang and vLLM run DeepSeek on 2 x 8 GPUs), dividing the attention heads (every engine
splits heads evenly); PP stages up to one per layer; EP over the replica's GPUs, dividing
both its GPU count and the experts (``generator/sizing/inference/serving.py``).
"""

from __future__ import annotations

from generator.errors import Problem
from generator.sizing.inference.serving import PP_CHOICES, TP_CHOICES
from generator.spec.load import LoadedSpec, format_path
from generator.spec.models import InferenceWorkload


def _problem(loaded: LoadedSpec, loc: tuple[str | int, ...], message: str, allowed: str,
             hint: str | None = None) -> Problem:
    return Problem(path=format_path(loc), message=message, line=loaded.lines.line_of(loc),
                   allowed=allowed, hint=hint)


def _nearest(dim: str, value: int, allowed: list[int]) -> str | None:
    if not allowed:
        return None
    best = min(allowed, key=lambda a: (abs(a - value), a))
    return f"did you mean {dim}: {best}?"


def tp_values(heads: int, gpn: int) -> list[int]:
    """TP sizes a replica can have: divisors of the heads within a server, or whole servers."""
    inside = [t for t in range(1, gpn + 1) if heads % t == 0]
    across = [k * gpn for k in (2, 4, 8) if heads % (k * gpn) == 0]
    return inside + across


def _candidates(w: InferenceWorkload, layers: int, gpn: int) -> list[tuple[int, int]]:
    """The (tp, pp) pairs the planner could pick under the pins (``serving.layouts``)."""
    p = w.parallelism
    tps = (p.tp,) if p.tp else tuple(t for t in TP_CHOICES if t <= gpn)
    pps = (p.pp,) if p.pp else PP_CHOICES
    return [(t, q) for t in tps for q in pps
            if q <= layers and (q == 1 or p.pp or t == gpn)]


def serving_pin_problems(loaded: LoadedSpec, i: int, w: InferenceWorkload,
                         shape: tuple[int, int, int], gpn: int, server: str) -> list[Problem]:
    """Every impossible serving pin of workload ``i`` (heads, layers, experts = ``shape``)."""
    heads, layers, experts = shape
    p = w.parallelism
    base: tuple[str | int, ...] = ("workloads", i, "parallelism")
    out = []
    tps = tp_values(heads, gpn)
    if p.tp is not None and p.tp not in tps:
        why = (f"does not divide the model's {heads} attention heads" if heads % p.tp
               else f"spans servers unevenly (one {server} has {gpn} GPUs)")
        out.append(_problem(loaded, (*base, "tp"), f"tp={p.tp} {why}",
                            allowed=", ".join(map(str, tps)), hint=_nearest("tp", p.tp, tps)))
    if p.pp is not None and p.pp > layers:
        out.append(_problem(loaded, (*base, "pp"), f"pp={p.pp} exceeds the model's {layers} "
                            "layers", allowed=f"1 ... {layers}"))
    if out or p.ep is None or p.ep == 1:
        return out
    loc = (*base, "ep")
    if experts == 1:
        return [_problem(loaded, loc, f"ep={p.ep} needs a mixture-of-experts model; this "
                         "model is dense", allowed="1")]
    sizes = sorted({t * q for t, q in _candidates(w, layers, gpn)})
    allowed = [e for e in range(1, experts + 1)
               if experts % e == 0 and any(g % e == 0 for g in sizes)]
    if p.ep not in allowed:
        return [_problem(loaded, loc, f"ep={p.ep} must divide the model's {experts} experts "
                         f"and the replica's GPUs (tp x pp: {', '.join(map(str, sizes))})",
                         allowed=", ".join(map(str, allowed)), hint=_nearest("ep", p.ep, allowed))]
    return out
