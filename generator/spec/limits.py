"""The sane ranges of every spec number, in one place, checked once before any work starts.

``validate``, ``size``, ``plan`` and ``bom`` all read a spec through ``pipeline.load_checked``,
which applies these bounds, so the four commands accept and reject exactly the same specs.
The bounds are not physics (the catalog and the planner judge that); they keep every accepted
spec answerable in a few seconds on a laptop and keep numbers finite. Each bound states why
it sits where it does. A bound is inclusive on both ends.

Measured on the 2-core CI machine with ``python -m benchmarks.fuzz --worst`` (the README
has the table): every spec at the limits sizes and plans in well under 10 s.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

MAX_GPUS = 32_768
"""The largest cluster the sizing engine searches when sizing freely (4,096 x 8-GPU nodes),
so a fixed size and a sized one share one ceiling. ``podplan plan`` of such a cluster writes
over 4,000 files in about 5 s on the 2-core CI machine, most of it file-system time."""

MAX_NODES = 4_096
"""Compute nodes of a fixed GPU count: the same ceiling in nodes (on 4-GPU servers it is the
binding one: 16,384 GPUs)."""

MAX_SPARES = 512
"""Hot spares: 12.5 % of the largest cluster; the reliability model's own choice is 1-3 %."""

MAX_GROWTH = 4_096
"""Growth nodes the fabric must accept later: the fabric may at most double. 8,192 nodes on
8 rails is also the most a three-tier fat tree of 64-port QM9790 switches holds (64**3/4)."""

MAX_WORKLOADS = 16
"""Each workload is sized on its own (up to a few hundred ms when sized freely); a cluster
plan for more than 16 distinct jobs is a portfolio, better split into specs."""

MAX_TOKENS = 1e15
"""Training tokens (given, or from a dataset): 25x the largest public pretraining run
(Llama 4, ~40T tokens); beyond it time and energy figures stop meaning anything."""


@dataclass(frozen=True)
class Bound:
    """An inclusive range for one field and the reason it sits there."""

    low: float
    high: float
    why: str


def _b(low: float, high: float, why: str) -> Bound:
    return Bound(low, high, why)


BOUNDS: dict[tuple[str, str], Bound] = {
    ("Hardware", "gpus"): _b(1, MAX_GPUS, "the largest cluster podplan sizes"),
    ("Hardware", "hot_spares"): _b(0, MAX_SPARES, "12.5 % of the largest cluster"),
    ("Hardware", "login_nodes"): _b(0, 8, "login nodes beyond 8 are a service of their own"),
    ("Hardware", "east_west_nics_per_node"): _b(0, 16, "GPU-fabric NIC slots of a server"),
    ("FabricSpec", "growth_nodes"): _b(0, MAX_GROWTH, "the fabric may at most double"),
    ("TrainingWorkload", "sequence_length"): _b(
        1, 1_048_576, "1M tokens: 8x the longest context trained by catalog models"
    ),
    ("TrainingWorkload", "global_batch_size"): _b(
        1, 1_048_576, "sequences per step; published runs use at most a few thousand"
    ),
    ("TrainingWorkload", "micro_batch_size"): _b(1, 4096, "sequences per GPU per micro-step"),
    ("TrainingWorkload", "steps"): _b(1, 1e9, "a billion optimizer steps is decades of training"),
    ("TrainingWorkload", "tokens"): _b(1, MAX_TOKENS, "25x the largest public pretraining run"),
    ("TrainingWorkload", "deadline_hours"): _b(0.01, 87_600, "36 seconds to 10 years"),
    ("Parallelism", "tp"): _b(1, MAX_GPUS, "no group can exceed the largest cluster"),
    ("Parallelism", "pp"): _b(1, 1024, "pipeline stages cannot exceed the layer limit"),
    ("Parallelism", "dp"): _b(1, MAX_GPUS, "no group can exceed the largest cluster"),
    ("Parallelism", "cp"): _b(1, MAX_GPUS, "no group can exceed the largest cluster"),
    ("Parallelism", "vp"): _b(1, 1024, "virtual stages cannot exceed the layer limit"),
    ("InferenceParallelism", "tp"): _b(1, MAX_GPUS, "no replica can exceed the largest cluster"),
    ("InferenceParallelism", "pp"): _b(1, 1024, "pipeline stages cannot exceed the layer limit"),
    ("Dataset", "samples"): _b(1, 1e13, "ten trillion samples"),
    ("Dataset", "avg_tokens_per_sample"): _b(1e-3, 1_048_576, "at most the longest sequence"),
    ("Dataset", "epochs"): _b(1e-3, 10_000, "passes over the data"),
    ("Evaluation", "every_samples"): _b(1, 1e13, "ten trillion samples between evaluations"),
    ("Evaluation", "samples"): _b(1, 1e13, "ten trillion samples per evaluation pass"),
    ("InferenceWorkload", "input_tokens"): _b(1, 1_048_576, "1M-token prompts"),
    ("InferenceWorkload", "output_tokens"): _b(1, 1_048_576, "1M generated tokens"),
    ("InferenceWorkload", "requests_per_minute"): _b(
        1e-3, 1e8, "a hundred million requests a minute: more than any public service"
    ),
    ("InferenceWorkload", "ttft_ms"): _b(1e-3, 86_400_000, "up to a day"),
    ("InferenceWorkload", "tpot_ms"): _b(1e-3, 86_400_000, "up to a day"),
    ("InlineArchitecture", "layers"): _b(1, 1024, "8x the deepest catalog model (126 layers)"),
    ("InlineArchitecture", "hidden_size"): _b(1, 262_144, "8x the widest published model"),
    ("InlineArchitecture", "attention_heads"): _b(1, 4096, "heads per layer"),
    ("InlineArchitecture", "kv_heads"): _b(1, 4096, "heads per layer"),
    ("InlineArchitecture", "ffn_hidden_size"): _b(1, 1_048_576, "8x the widest published FFN"),
    ("InlineArchitecture", "vocab_size"): _b(1, 4_194_304, "16x the largest catalog vocabulary"),
    ("InlineArchitecture", "experts"): _b(1, 4096, "16x DeepSeek-V3's 256 routed experts"),
    ("InlineArchitecture", "top_k"): _b(1, 4096, "at most the expert count"),
    ("Storage", "dataset_tb"): _b(0, 1_000_000, "an exabyte; the storage planner says sooner"),
    ("Storage", "checkpoint_keep"): _b(1, 1000, "checkpoints kept at once"),
    ("Storage", "checkpoint_write_seconds"): _b(1, 86_400, "one second to one day"),
    ("Facility", "rack_power_kw"): _b(1, 1000, "1 kW to 1 MW per rack"),
    ("Facility", "power_usd_per_kwh"): _b(
        0, 2, "USD per kWh, not cents: the dearest grid power costs under 1 USD"
    ),
    ("Facility", "rack_units"): _b(10, 58, "usable U of real racks"),
    ("Facility", "pue"): _b(1.0, 3.0, "from a perfect facility to a very poor one"),
}
"""(model class name, field name) -> bound. The model's own constraints still apply."""

MAX_TEXT = {
    ("Spec", "name"): 40,
    ("TrainingWorkload", "name"): 63,
    ("InferenceWorkload", "name"): 63,
    ("InlineArchitecture", "name"): 100,
    ("Spec", "prices"): 4096,
    ("Spec", "site_calibration"): 4096,
}
"""Longest text, in characters: names become Slurm, host and file names (63, a DNS label)."""


@dataclass(frozen=True)
class Violation:
    """A value outside its range: where, what, and what is allowed."""

    loc: tuple[str | int, ...]
    message: str
    allowed: str


def number(x: float) -> str:
    """A number as people write it: 65,536 or 0.001 or 1e15 (or 'a 401-digit number')."""
    if isinstance(x, int) and abs(x) >= 10**300:
        return f"a {len(str(abs(x))) if x.bit_length() < 14_000 else 'many'}-digit number"
    if isinstance(x, int) and abs(x) < 10**12:
        return f"{x:,}"
    if abs(x) >= 1e7:
        mantissa, exp = f"{x:.3g}".split("e+") if "e+" in f"{x:.3g}" else (f"{x:.3g}", "")
        return f"{mantissa}e{int(exp)}" if exp else f"{x:,.0f}"
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def allowed_range(bound: Bound) -> str:
    """``1 to 65,536 (the largest three-tier QM9790 fabric)``."""
    return f"{number(bound.low)} to {number(bound.high)} ({bound.why})"


Loc = tuple[str | int, ...]


def _fields(model: BaseModel, loc: Loc) -> Iterator[tuple[BaseModel, str, Loc, Any]]:
    """Every (model, field name, location, value) in ``model`` and the models below it."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        here = (*loc, name)
        yield model, name, here, value
        if isinstance(value, BaseModel):
            yield from _fields(value, here)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from _fields(item, (*here, i))


def _check_field(model: BaseModel, name: str, loc: Loc, value: Any) -> Violation | None:
    key = (type(model).__name__, name)
    if isinstance(value, str) and key in MAX_TEXT and len(value) > MAX_TEXT[key]:
        n = MAX_TEXT[key]
        return Violation(loc, f"is {len(value):,} characters long", f"at most {n} characters")
    bound = BOUNDS.get(key)
    if bound is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if bound.low <= value <= bound.high:
        return None
    side = "more than" if value > bound.high else "less than"
    limit = bound.high if value > bound.high else bound.low
    return Violation(loc, f"{number(value)} is {side} {number(limit)}", allowed_range(bound))


def _cross_field(spec: Any) -> Iterator[Violation]:
    """Bounds on combinations: pinned layouts, dataset size, workload count."""
    if len(spec.workloads) > MAX_WORKLOADS:
        yield Violation(("workloads",), f"has {len(spec.workloads)} workloads",
                        f"at most {MAX_WORKLOADS} (split larger portfolios into several specs)")
    for i, w in enumerate(spec.workloads):
        pins = getattr(w, "parallelism", None)
        sizes = [getattr(pins, k, None) for k in ("tp", "pp", "dp", "cp")]
        product = math.prod(s for s in sizes if s is not None)
        if product > MAX_GPUS:
            yield Violation(("workloads", i, "parallelism"),
                            f"the pinned sizes multiply to {number(product)} GPUs",
                            f"tp x pp x dp x cp at most {MAX_GPUS:,} (the largest cluster)")
        d = getattr(w, "dataset", None)
        if d is not None and d.samples * d.avg_tokens_per_sample * d.epochs > MAX_TOKENS:
            total = d.samples * d.avg_tokens_per_sample * d.epochs
            yield Violation(("workloads", i, "dataset"),
                            f"samples x avg_tokens_per_sample x epochs = {number(total)} tokens",
                            f"at most {number(MAX_TOKENS)} tokens (as for tokens:)")


def violations(spec: BaseModel) -> list[Violation]:
    """Every value of a validated spec that lies outside its bound, in document order."""
    found = [
        v for model, name, loc, value in _fields(spec, ())
        if (v := _check_field(model, name, loc, value)) is not None
    ]
    return [*found, *_cross_field(spec)]


def node_violations(spec: Any, gpus_per_node: int) -> list[Violation]:
    """Servers beyond the compute nodes: a fixed GPU count fills at most ``MAX_NODES`` of
    them, and spares plus growth add at most ``MAX_GROWTH`` more (the three-tier limit)."""
    out = []
    gpus, spares = spec.hardware.gpus, spec.hardware.hot_spares
    nodes = -(-gpus // gpus_per_node) if gpus and gpus_per_node else 0
    if nodes > MAX_NODES:
        out.append(Violation(("hardware", "gpus"),
                             f"{gpus:,} GPUs need {nodes:,} servers of {gpus_per_node} GPUs",
                             f"at most {MAX_NODES:,} compute nodes "
                             f"({MAX_NODES * gpus_per_node:,} GPUs on this server)"))
    extra = (spares if isinstance(spares, int) else 0) + spec.fabric.growth_nodes
    if extra > MAX_GROWTH:
        out.append(Violation(("fabric", "growth_nodes"),
                             f"hot spares and growth nodes add {extra:,} nodes",
                             f"at most {MAX_GROWTH:,} together (the fabric may at most double)"))
    return out


def annotate_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Add each bound to the JSON Schema as ``minimum``/``maximum``/``maxLength``."""
    defs = schema.get("$defs", {})
    for (model, field), bound in BOUNDS.items():
        prop = _schema_prop(schema, defs, model, field)
        if prop is not None:
            prop.setdefault("minimum", bound.low)
            prop["maximum"] = bound.high
    for (model, field), n in MAX_TEXT.items():
        prop = _schema_prop(schema, defs, model, field)
        if prop is not None:
            prop["maxLength"] = n
    return schema


def _schema_prop(
    schema: dict[str, Any], defs: dict[str, Any], model: str, field: str
) -> dict[str, Any] | None:
    owner = schema if model == "Spec" else defs.get(model)
    if owner is None:
        return None
    prop = owner.get("properties", {}).get(field)
    if prop is None:
        return None
    options = prop.get("anyOf")
    if options:
        numeric = [o for o in options if o.get("type") in ("integer", "number", "string")]
        return numeric[0] if numeric else None
    return prop if isinstance(prop, dict) else None
