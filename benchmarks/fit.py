"""Fit the sizing engine's efficiency parameters to calibration.csv and rewrite efficiency.yaml.

Few, physical parameters (each one a fraction of a peak, a size at which GEMMs reach half
their speed, an fp8 gain, a share of communication left exposed, a fixed overhead) are
fitted together by a small bounded Nelder-Mead on a robust loss: mean |log(pred/measured)|
plus a quadratic penalty on any row beyond 25 %, so one bad row cannot dominate but every
row counts. Tied parameters (e.g. NeMo and Megatron, which share Megatron-Core's
communication code) move together. scipy is not needed.

``python -m benchmarks.fit [--iterations N] [--dry-run]``
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.accuracy import Row, evaluate, summary
from benchmarks.calibration import load_cases, predict
from generator.sizing.model.efficiency import EFFICIENCY_FILE, from_mapping, read_mapping


@dataclass(frozen=True)
class Param:
    """A fitted value: one or more dotted paths into efficiency.yaml that move together."""

    paths: tuple[str, ...]
    low: float
    high: float


PARAMS: tuple[Param, ...] = (
    Param(("compute.gemm_efficiency.default",), 0.3, 0.95),
    Param(("compute.gemm_efficiency.a100-sxm-80gb",), 0.3, 0.95),
    Param(("compute.tokens_half",), 10.0, 4000.0),
    Param(("compute.tokens_exponent",), 0.5, 6.0),
    Param(("compute.width_half",), 1.0, 2000.0),
    Param(("compute.fp8_speedup",), 1.0, 2.0),
    Param(("frameworks.megatron.compute_scale",), 0.5, 1.3),
    Param(("frameworks.fsdp.compute_scale",), 0.5, 1.3),
    Param(("frameworks.deepspeed.compute_scale",), 0.3, 1.3),
    Param(("frameworks.nemo.tp_exposed", "frameworks.megatron.tp_exposed"), 0.0, 1.0),
    Param(("frameworks.nemo.dp_exposed", "frameworks.megatron.dp_exposed"), 0.0, 1.0),
    Param(("frameworks.fsdp.dp_exposed", "frameworks.deepspeed.dp_exposed"), 0.0, 1.0),
    Param(("frameworks.nemo.step_overhead_s", "frameworks.megatron.step_overhead_s",
           "frameworks.fsdp.step_overhead_s", "frameworks.deepspeed.step_overhead_s"), 0.0, 5.0),
    Param(("network.fabric_efficiency",), 0.4, 0.95),
    Param(("inference.prefill_efficiency", "inference.decode_efficiency"), 0.2, 0.95),
    Param(("inference.step_overhead_s",), 0.0, 0.02),
)

PENALTY_BEYOND = math.log(1.25)


def get(doc: dict[str, Any], path: str) -> float:
    node: Any = doc
    for key in path.split("."):
        node = node[key]
    return float(node)


def put(doc: dict[str, Any], path: str, value: float) -> None:
    *head, last = path.split(".")
    node: Any = doc
    for key in head:
        node = node[key]
    node[last] = value


def apply(doc: dict[str, Any], values: Sequence[float]) -> dict[str, Any]:
    """A copy of ``doc`` with the fitted values written in."""
    out = copy.deepcopy(doc)
    for p, v in zip(PARAMS, values, strict=True):
        for path in p.paths:
            put(out, path, v)
    return out


def loss(rows: list[Row]) -> float:
    """Mean |log ratio| + penalty on rows beyond 25 %."""
    total = 0.0
    for r in rows:
        ratio = r.prediction.value / r.case.measured
        err = abs(math.log(ratio)) if ratio > 0 and math.isfinite(ratio) else 5.0
        total += err + 4.0 * max(0.0, err - PENALTY_BEYOND) ** 2
    return total / len(rows)


def make_objective(doc: dict[str, Any]) -> Callable[[Sequence[float]], float]:
    cases = load_cases(from_mapping(doc))

    def objective(values: Sequence[float]) -> float:
        eff = from_mapping(apply(doc, values))
        rows = [Row(c, predict(c, eff)) for c in cases]
        return loss(rows)

    return objective


def _clip(x: list[float]) -> list[float]:
    return [min(max(v, p.low), p.high) for v, p in zip(x, PARAMS, strict=True)]


def nelder_mead(
    f: Callable[[Sequence[float]], float], x0: list[float], iterations: int, scale: float = 0.15
) -> tuple[list[float], float]:
    """Bounded Nelder-Mead (points are clipped into the box)."""
    n = len(x0)
    simplex = [_clip(list(x0))]
    for i in range(n):
        x = list(x0)
        x[i] = x[i] * (1 + scale) if x[i] else scale * (PARAMS[i].high - PARAMS[i].low)
        simplex.append(_clip(x))
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=lambda k: values[k])
        simplex = [simplex[k] for k in order]
        values = [values[k] for k in order]
        centroid = [sum(x[i] for x in simplex[:-1]) / n for i in range(n)]
        worst = simplex[-1]

        def toward(t: float, c: list[float] = centroid, w: list[float] = worst) -> list[float]:
            return _clip([c[i] + t * (w[i] - c[i]) for i in range(n)])

        xr = toward(-1.0)
        fr = f(xr)
        if fr < values[0]:
            xe = toward(-2.0)
            fe = f(xe)
            simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = xr, fr
        else:
            xc = toward(0.5)
            fc = f(xc)
            if fc < values[-1]:
                simplex[-1], values[-1] = xc, fc
            else:
                best = simplex[0]
                simplex = [best] + [_clip([best[i] + 0.5 * (x[i] - best[i]) for i in range(n)])
                                    for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    k = min(range(n + 1), key=lambda j: values[j])
    return simplex[k], values[k]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=600)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--dry-run", action="store_true", help="fit and report, do not write")
    args = ap.parse_args(argv)
    doc = read_mapping()
    objective = make_objective(doc)
    x = [get(doc, p.paths[0]) for p in PARAMS]
    best = objective(x)
    print(f"start loss {best:.4f}")
    for r in range(args.restarts):
        x, best = nelder_mead(objective, x, args.iterations, scale=0.2 / (r + 1))
        print(f"restart {r}: loss {best:.4f}")
    fitted = apply(doc, x)
    stats = summary(evaluate(from_mapping(fitted)))
    for p, v in zip(PARAMS, x, strict=True):
        print(f"  {p.paths[0]:<45} {v:.6g}")
    print(f"median |error| {100 * stats['median']:.1f} %, worst {100 * stats['worst']:.1f} %")
    if not args.dry_run:
        write(fitted, stats)
        print(f"wrote {EFFICIENCY_FILE}")
    return 0


def write(doc: dict[str, Any], stats: dict[str, float]) -> None:
    """Rewrite efficiency.yaml (header, comments and all) from the fitted mapping."""
    from benchmarks.efficiency_template import render

    today = dt.date.today().isoformat()
    EFFICIENCY_FILE.write_text(render(doc, stats, today), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
