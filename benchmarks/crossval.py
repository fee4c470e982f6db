"""Fitting the efficiency parameters, and leave-one-source-out cross-validation.

Few, physical parameters (each a fraction of a peak, a size at which GEMMs reach half their
speed, an fp8 gain, a share of communication left exposed, a latency, a fixed overhead, a
stack's kernel efficiency) are fitted together by a small bounded Nelder-Mead on a robust
loss: mean |log(pred/measured)| plus a quadratic penalty on any row beyond 25 %, so one bad
row cannot dominate but every row counts. Tied parameters (e.g. NeMo and Megatron, which
share Megatron-Core's communication code) move together. scipy is not needed.

Every fit starts from the same priors (``Param.prior``), never from a previous fit, so a
cross-validation fold that leaves a publication out has seen nothing of it: its rows are
predicted by parameters fitted on the other publications only.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.calibration import Case, Prediction, load_cases, predict
from generator.sizing.model.efficiency import from_mapping, read_mapping


@dataclass(frozen=True)
class Param:
    """A fitted value: one or more dotted paths into efficiency.yaml that move together."""

    paths: tuple[str, ...]
    low: float
    high: float
    prior: float


STEP_OVERHEAD = tuple(f"frameworks.{f}.step_overhead_s" for f in ("nemo", "fsdp"))
PARAMS: tuple[Param, ...] = (
    Param(("compute.gemm_efficiency.default",), 0.3, 0.95, 0.65),
    Param(("compute.gemm_efficiency.a100-sxm-80gb",), 0.3, 0.95, 0.7),
    Param(("compute.tokens_half",), 10.0, 4000.0, 400.0),
    Param(("compute.tokens_exponent",), 0.5, 6.0, 2.0),
    Param(("compute.width_half",), 1.0, 2000.0, 300.0),
    Param(("compute.fp8_speedup",), 1.0, 2.0, 1.5),
    Param(("compute.fa2_efficiency.hopper",), 0.2, 1.2, 0.6),
    Param(("frameworks.megatron.compute_scale",), 0.5, 1.3, 0.95),
    Param(("frameworks.fsdp.compute_scale",), 0.3, 1.3, 0.85),
    Param(("frameworks.deepspeed.compute_scale",), 0.3, 1.3, 0.85),
    Param(("frameworks.hf.compute_scale",), 0.1, 1.3, 0.5),
    Param(("overlap.tp",), 0.0, 1.0, 0.1),
    Param(("overlap.dp",), 0.0, 1.0, 0.05),
    Param(("overlap.fsdp",), 0.0, 1.0, 0.1),
    Param(("overlap.cp",), 0.0, 1.0, 0.3),
    Param(STEP_OVERHEAD, 0.0, 5.0, 0.05),
    Param(("network.fabric_efficiency",), 0.4, 0.95, 0.7),
    Param(("network.hop_latency_s",), 1e-6, 3e-5, 5e-6),
)
INFERENCE_PARAMS: tuple[Param, ...] = (
    Param(("inference.hbm_efficiency",), 0.5, 0.95, 0.8),
    Param(("inference.gemm_efficiency",), 0.2, 0.95, 0.6),
    Param(("inference.attention_efficiency",), 0.1, 0.95, 0.4),
    Param(("inference.fp8_speedup",), 1.0, 2.0, 1.6),
    Param(("inference.expert_gemm_efficiency",), 0.3, 1.0, 0.8),
    Param(("inference.step_overhead_s",), 0.0, 0.02, 0.002),
    Param(("inference.sequence_overhead_s",), 0.0, 1e-4, 5e-6),
)
"""Serving parameters: fitted in a second stage on the inference rows only, the training
parameters held at their fitted values (and training rows never see these), so the two
stages' values stay disjoint."""
ALL_PARAMS = PARAMS + INFERENCE_PARAMS

PENALTY_BEYOND = math.log(1.25)
PRIOR_WEIGHT = 0.002
"""Pull toward the priors: moving a parameter by a factor of two (or by its whole range, for
shares that may be zero) costs 0.002 of loss, a twentieth of a row's 10 % error. Parameters
the rows constrain move freely; those no remaining row constrains (a cross-validation fold
that leaves out the only publication of a stack) stay at the physical prior instead of
drifting wherever the optimizer last wandered."""


@dataclass(frozen=True)
class Row:
    """One calibration row and the engine's prediction of it."""

    case: Case
    prediction: Prediction

    @property
    def error(self) -> float:
        """Signed relative error of podplan (predicted / measured - 1)."""
        return self.prediction.value / self.case.measured - 1.0

    @property
    def seed_error(self) -> float | None:
        seed = self.prediction.seed
        return None if seed is None else seed / self.case.measured - 1.0

    @property
    def headline_error(self) -> float:
        """Error on the estimate's headline figure (true / predicted - 1): time for training
        (so +18 % means the run took 18 % longer than predicted), output tokens/s for
        inference. This is what the uncertainty band is built from."""
        ratio = self.prediction.value / self.case.measured
        if self.case.inference is not None or self.case.time_like:
            return 1.0 / ratio - 1.0
        return ratio - 1.0


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


def apply(doc: dict[str, Any], values: Sequence[float],
          params: tuple[Param, ...] = PARAMS) -> dict[str, Any]:
    """A copy of ``doc`` with the fitted values written in."""
    out = copy.deepcopy(doc)
    for p, v in zip(params, values, strict=True):
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


def prior_penalty(values: Sequence[float], params: tuple[Param, ...] = PARAMS) -> float:
    """Weighted squared distance from the priors (log scale where the range allows)."""
    total = 0.0
    for p, v in zip(params, values, strict=True):
        if p.low > 0 and p.prior > 0:
            d = math.log(v / p.prior) / math.log(2.0)
        else:
            d = (v - p.prior) / (p.high - p.low)
        total += d * d
    return PRIOR_WEIGHT * total


def make_objective(
    doc: dict[str, Any], cases: list[Case], params: tuple[Param, ...] = PARAMS
) -> Callable[[Sequence[float]], float]:
    def objective(values: Sequence[float]) -> float:
        eff = from_mapping(apply(doc, values, params))
        return loss([Row(c, predict(c, eff)) for c in cases]) + prior_penalty(values, params)

    return objective


def _clip_to(x: list[float], params: tuple[Param, ...]) -> list[float]:
    return [min(max(v, p.low), p.high) for v, p in zip(x, params, strict=True)]


def nelder_mead(
    f: Callable[[Sequence[float]], float], x0: list[float], iterations: int, scale: float = 0.15,
    params: tuple[Param, ...] = PARAMS,
) -> tuple[list[float], float]:
    """Bounded Nelder-Mead (points are clipped into the box)."""
    n = len(x0)

    def _clip(x: list[float]) -> list[float]:
        return _clip_to(x, params)

    simplex = [_clip(list(x0))]
    for i in range(n):
        x = list(x0)
        x[i] = x[i] * (1 + scale) if x[i] else scale * (params[i].high - params[i].low)
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


@dataclass(frozen=True)
class Budget:
    """How hard a fit tries: Nelder-Mead iterations per restart, and restarts."""

    iterations: int = 700
    restarts: int = 3


def fit(doc: dict[str, Any], cases: list[Case], budget: Budget,
        params: tuple[Param, ...] = PARAMS) -> tuple[list[float], float]:
    """Fitted values of ``params`` (from their priors) on ``cases``, and the final loss."""
    objective = make_objective(doc, cases, params)
    x = [p.prior for p in params]
    best = objective(x)
    for r in range(budget.restarts):
        x, best = nelder_mead(objective, x, budget.iterations, scale=0.25 / (r + 1),
                              params=params)
    return x, best


def training_cases(cases: list[Case]) -> list[Case]:
    return [c for c in cases if c.inference is None]


def inference_cases(cases: list[Case]) -> list[Case]:
    return [c for c in cases if c.inference is not None]


def fit_inference(doc: dict[str, Any], cases: list[Case], budget: Budget) -> dict[str, Any]:
    """Stage 2: the serving parameters on the inference rows, everything else as in ``doc``."""
    values, _ = fit(doc, inference_cases(cases), budget, INFERENCE_PARAMS)
    return apply(doc, values, INFERENCE_PARAMS)


def fit_all(doc: dict[str, Any], cases: list[Case], budget: Budget) -> dict[str, Any]:
    """Stage 1 (training parameters on training rows), then stage 2 on top of it."""
    values, _ = fit(doc, training_cases(cases), budget)
    return fit_inference(apply(doc, values), cases, budget)


def source_groups(cases: list[Case]) -> dict[str, list[Case]]:
    """Cases by publication (the normalised ``source``), in first-seen order."""
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(c.source, []).append(c)
    return groups


def _fold(args: tuple[dict[str, Any], str, Budget]) -> list[tuple[str, Prediction]]:
    """One publication held out. Training rows: stage 1 refitted without it. Inference rows:
    stage 2 refitted without it on top of ``doc``'s training values (stage 1 never sees an
    inference row, so those values already exclude the held-out publication)."""
    doc, held_out, budget = args
    cases = load_cases(from_mapping(doc))
    rest = [c for c in cases if c.source != held_out]
    held = [c for c in cases if c.source == held_out]
    if all(c.inference is not None for c in held):
        values, _ = fit(doc, inference_cases(rest), budget, INFERENCE_PARAMS)
        eff = from_mapping(apply(doc, values, INFERENCE_PARAMS))
    else:
        values, _ = fit(doc, training_cases(rest), budget)
        eff = from_mapping(apply(doc, values))
    return [(c.id, predict(c, eff)) for c in held]


def held_out(source: str, doc: dict[str, Any] | None = None,
             budget: Budget | None = None) -> list[Row]:
    """One fold: the rows of ``source`` predicted by a fit on every other publication."""
    base = doc or read_mapping()
    cases = {c.id: c for c in load_cases(from_mapping(base))}
    return [Row(cases[cid], p) for cid, p in _fold((base, source, budget or Budget()))]


def leave_one_source_out(
    doc: dict[str, Any] | None = None, budget: Budget | None = None, jobs: int = 1,
    stage: str = "all",
) -> list[Row]:
    """Every row predicted by a fit that never saw its publication (rows in file order);
    ``stage``: ``training`` or ``inference`` rows only (``all``: both)."""
    base = doc or read_mapping()
    cases = load_cases(from_mapping(base))
    if stage == "inference":
        cases = inference_cases(cases)
    elif stage == "training":
        cases = training_cases(cases)
    plan = [(base, source, budget or Budget()) for source in source_groups(cases)]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            folds = list(pool.map(_fold, plan))
    else:
        folds = [_fold(p) for p in plan]
    predicted = {cid: p for fold in folds for cid, p in fold}
    return [Row(c, predicted[c.id]) for c in cases]


TRAINING_LOSO_FILE = Path(__file__).resolve().parent / "data" / "crossval_training.csv"
"""Stage 1's leave-one-source-out predictions, one per training row, as ``fit.py`` last
computed them: ``--stage inference`` reuses them (the training stage did not change)."""


def write_training_loso(rows: list[Row]) -> None:
    """Record the training rows' cross-validated predictions."""
    lines = ["id,predicted,layout,fits"]
    lines += [f"{r.case.id},{r.prediction.value!r},{r.prediction.layout},{int(r.prediction.fits)}"
              for r in rows if r.case.inference is None]
    TRAINING_LOSO_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")


def recorded_training_loso(cases: list[Case]) -> list[Row]:
    """The training rows' recorded cross-validated predictions (file order)."""
    text = TRAINING_LOSO_FILE.read_text(encoding="utf-8").splitlines()[1:]
    recorded = {}
    for line in text:
        cid, value, layout, fits = line.split(",")
        recorded[cid] = Prediction(float(value), layout, fits == "1", None)
    return [Row(c, recorded[c.id]) for c in training_cases(cases)]
