"""The sweep of a spec that only serves: GPU types compared by what serving the load costs.

A serving cluster has no run to time: each GPU type is sized by the spec's SLOs exactly as
``podplan plan`` would (``--gpus`` instead fixes the cluster and says when the load does
not fit it), and the point carries what a platform team compares: GPUs and layout, TPOT
and TTFT at the sized batch, whether the SLOs are met, capex, and the cloud equivalent per
month and per million output tokens. Per million tokens is the cloud's monthly price (GPU
instances 24x7 plus file system, ``bom.CloudCost.usd_per_month``) over the output tokens the
cluster serves in a month: the spec's load (requests a minute x output tokens), or with no
load given, what the sized replicas deliver at their batch. The cheapest point that fits and
meets the SLOs is marked, by $ per million tokens where a cloud is priced, else by capex.
"""

from __future__ import annotations

from generator.sizing.result import InferenceEstimate, SizingResult
from generator.spec.models import InferenceWorkload, Spec

HOURS_PER_MONTH = 730.0
"""As the BOM's ``usd_per_month`` counts a month (24 x 365 / 12)."""

SERVING_COLUMNS = ("gpu", "gpus", "nodes", "layout", "tpot_ms", "ttft_ms", "meets_slo",
                   "cloud", "instance", "usd_per_month", "usd_per_mtok", "capex_usd", "it_kw",
                   "fits", "cheapest", "note")


def is_serving_only(spec: Spec) -> bool:
    return not spec.training and bool(spec.inference)


def served_tokens_per_s(spec: Spec, sizing: SizingResult) -> float:
    """Output tokens/s the cluster serves: each workload's load, else its sized capacity."""
    total = 0.0
    for w, est in zip(spec.inference, sizing.inference, strict=True):
        total += _load(w) if w.requests_per_minute else est.output_tokens_per_second
    return total


def _load(w: InferenceWorkload) -> float:
    return (w.requests_per_minute or 0.0) / 60.0 * w.output_tokens


def usd_per_mtok(usd_per_month: float | None, tokens_per_s: float) -> float | None:
    """Cloud $ per million output tokens at ``tokens_per_s`` around the clock."""
    if usd_per_month is None or tokens_per_s <= 0:
        return None
    return usd_per_month / (tokens_per_s * HOURS_PER_MONTH * 3600 / 1e6)


def _layout(i: InferenceEstimate) -> str:
    return (f"{i.replicas} x TP{i.tp} PP{i.pp}" + (f" EP{i.ep}" if i.ep > 1 else "")
            + f" b{i.max_batch}")


def serving_fields(sizing: SizingResult) -> dict[str, object]:
    """The serving columns of one point: layouts, the worst TPOT/TTFT, SLOs met by all."""
    inf = sizing.inference
    met = [i.meets_slo for i in inf]
    return {
        "layout": "; ".join(_layout(i) for i in inf),
        "tpot_ms": max(i.tpot_ms for i in inf),
        "ttft_ms": max(i.ttft_ms for i in inf),
        "meets_slo": None if all(m is None for m in met) else all(m is not False for m in met),
    }


def sized_note(sizing: SizingResult) -> str:
    """What to say on a point whose SLOs are missed: the nearest reach is what was sized."""
    missed = [i.name for i in sizing.inference if i.meets_slo is False]
    if not missed:
        return ""
    return (f"SLOs out of reach for {', '.join(missed)}: sized at batch 1 on the nearest "
            "layout (`podplan size` names what would meet them)")
