"""Fitting the efficiency parameters in stages, and leave-one-source-out cross-validation.

Few, physical parameters (each a fraction of a peak, a size at which GEMMs reach half their
speed, an fp8 gain, a share of communication left exposed, a latency, a fixed overhead, a
stack's kernel efficiency) are fitted together by a small bounded Nelder-Mead on a robust
loss: mean |log(pred/measured)| plus a quadratic penalty on any row beyond 25 %, so one bad
row cannot dominate but every row counts. Tied parameters (e.g. NeMo and Megatron, which
share Megatron-Core's communication code) move together. scipy is not needed.

The fit runs in **stages** (``STAGES``): a stage is a list of parameters and the rows that
fit them, and each stage is fitted with every earlier stage's values fixed. The dense
training stage fits the dense physics on the dense rows exactly as it did before MoE rows
existed; the MoE stage then fits only what is specific to MoE (the exposed share of the
all-to-all, the MoE layers' launch cost, the B200's peak fraction: every B200 row is MoE) on
the MoE rows, so new rows can never pull the dense parameters, and the dense figures are
those of the dense fit alone. The inference stage fits the serving engine's physics (HBM and
GEMM fractions, the fp8 inference gain, scheduler overheads) on the inference rows only; no
training row depends on them and no training stage sees an inference row.

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
    span_steps: bool = False
    """Explore by steps of the whole range rather than of the value: for a value whose prior
    sits near zero (a CPU time of a millisecond in a 0-20 ms range), where relative steps
    would never leave the region where it does not show."""


STEP_OVERHEAD = tuple(f"frameworks.{f}.step_overhead_s" for f in ("nemo", "fsdp"))
DENSE_PARAMS: tuple[Param, ...] = (
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
"""The dense stage: the parameters (and priors, and order) of the issue-13 fit."""
MOE_PARAMS: tuple[Param, ...] = (
    Param(("overlap.ep",), 0.0, 1.0, 0.5),
    Param(("compute.moe_layer_overhead_s",), 0.0, 0.02, 1e-3, span_steps=True),
    Param(("compute.moe_layer_launch_s",), 0.0, 0.03, 1e-3, span_steps=True),
    Param(("compute.gemm_efficiency.b200-sxm-180gb",), 0.3, 0.95, 0.6),
)
"""The MoE stage: physics only MoE rows see (every B200 row is an MoE row)."""
INFERENCE_PARAMS: tuple[Param, ...] = (
    Param(("inference.hbm_efficiency",), 0.5, 0.95, 0.8),
    Param(("inference.gemm_efficiency",), 0.2, 0.95, 0.6),
    Param(("inference.attention_efficiency",), 0.1, 0.95, 0.4),
    Param(("inference.fp8_speedup",), 1.0, 2.0, 1.6),
    Param(("inference.expert_gemm_efficiency",), 0.3, 1.0, 0.8),
    Param(("inference.step_overhead_s",), 0.0, 0.02, 0.002),
    Param(("inference.sequence_overhead_s",), 0.0, 1e-4, 5e-6),
    Param(("inference.sglang_step_overhead_s",), 0.0, 0.03, 0.003),
    Param(("inference.cross_node_all_reduce_s",), 0.0, 5e-4, 5e-5),
)
"""The serving stage: the inference engine's physics, fitted on the inference rows only
(training rows never see these, and the training stages never see an inference row)."""


def is_inference_case(case: Case) -> bool:
    """A serving row (the inference stage's rows)."""
    return case.inference is not None


def is_moe_case(case: Case) -> bool:
    """A mixture-of-experts training row (the MoE stage's rows)."""
    return case.job is not None and case.job.arch.moe


def is_dense_case(case: Case) -> bool:
    """A dense training row (the issue-13 rows and targets)."""
    return not is_inference_case(case) and not is_moe_case(case)


@dataclass(frozen=True)
class Stage:
    """Parameters fitted together, on the rows ``selects`` keeps, after earlier stages."""

    name: str
    params: tuple[Param, ...]
    selects: Callable[[Case], bool]


STAGES: tuple[Stage, ...] = (
    Stage("dense", DENSE_PARAMS, is_dense_case),
    Stage("moe", MOE_PARAMS, is_moe_case),
    Stage("inference", INFERENCE_PARAMS, is_inference_case),
)
PARAMS: tuple[Param, ...] = tuple(p for stage in STAGES for p in stage.params)
"""Every fitted parameter (efficiency.yaml marks them ``# fitted``)."""


def stage_named(name: str) -> Stage:
    for stage in STAGES:
        if stage.name == name:
            return stage
    raise KeyError(f"no fit stage {name!r} ({', '.join(s.name for s in STAGES)})")


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


def apply(
    doc: dict[str, Any], values: Sequence[float], params: Sequence[Param] = PARAMS
) -> dict[str, Any]:
    """A copy of ``doc`` with the fitted values of ``params`` written in."""
    out = copy.deepcopy(doc)
    for p, v in zip(params, values, strict=True):
        for path in p.paths:
            put(out, path, v)
    return out


def values_of(doc: dict[str, Any], params: Sequence[Param] = PARAMS) -> list[float]:
    """The values ``doc`` holds for ``params`` (their first path)."""
    return [get(doc, p.paths[0]) for p in params]


def loss(rows: list[Row]) -> float:
    """Mean |log ratio| + penalty on rows beyond 25 %."""
    total = 0.0
    for r in rows:
        ratio = r.prediction.value / r.case.measured
        err = abs(math.log(ratio)) if ratio > 0 and math.isfinite(ratio) else 5.0
        total += err + 4.0 * max(0.0, err - PENALTY_BEYOND) ** 2
    return total / len(rows)


def prior_penalty(values: Sequence[float], params: Sequence[Param]) -> float:
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
    doc: dict[str, Any], cases: list[Case], params: Sequence[Param]
) -> Callable[[Sequence[float]], float]:
    def objective(values: Sequence[float]) -> float:
        eff = from_mapping(apply(doc, values, params))
        return loss([Row(c, predict(c, eff)) for c in cases]) + prior_penalty(values, params)

    return objective


def _clip(x: list[float], params: Sequence[Param]) -> list[float]:
    return [min(max(v, p.low), p.high) for v, p in zip(x, params, strict=True)]


def nelder_mead(
    f: Callable[[Sequence[float]], float], x0: list[float], iterations: int,
    params: Sequence[Param], scale: float = 0.15,
) -> tuple[list[float], float]:
    """Bounded Nelder-Mead (points are clipped into the box of ``params``)."""
    n = len(x0)
    simplex = [_clip(list(x0), params)]
    for i in range(n):
        x = list(x0)
        span = scale * (params[i].high - params[i].low)
        x[i] = x[i] + span if params[i].span_steps or not x[i] else x[i] * (1 + scale)
        simplex.append(_clip(x, params))
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=lambda k: values[k])
        simplex = [simplex[k] for k in order]
        values = [values[k] for k in order]
        centroid = [sum(x[i] for x in simplex[:-1]) / n for i in range(n)]
        worst = simplex[-1]

        def toward(t: float, c: list[float] = centroid, w: list[float] = worst) -> list[float]:
            return _clip([c[i] + t * (w[i] - c[i]) for i in range(n)], params)

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
                simplex = [best] + [
                    _clip([best[i] + 0.5 * (x[i] - best[i]) for i in range(n)], params)
                    for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    k = min(range(n + 1), key=lambda j: values[j])
    return simplex[k], values[k]


@dataclass(frozen=True)
class Budget:
    """How hard a fit tries: Nelder-Mead iterations per restart, and restarts."""

    iterations: int = 700
    restarts: int = 3


def fit_stage(
    doc: dict[str, Any], cases: list[Case], stage: Stage, budget: Budget
) -> tuple[dict[str, Any], float]:
    """``doc`` with ``stage``'s parameters fitted (from their priors) on its rows among
    ``cases``, every other value as ``doc`` has it; and the final loss."""
    rows = [c for c in cases if stage.selects(c)]
    if not rows:
        return apply(doc, [p.prior for p in stage.params], stage.params), math.nan
    objective = make_objective(doc, rows, stage.params)
    x = [p.prior for p in stage.params]
    best = objective(x)
    for r in range(budget.restarts):
        x, best = nelder_mead(objective, x, budget.iterations, stage.params,
                              scale=0.25 / (r + 1))
    return apply(doc, x, stage.params), best


def fit(
    doc: dict[str, Any], cases: list[Case], budget: Budget,
    stages: Sequence[Stage] = STAGES,
) -> tuple[dict[str, Any], dict[str, float]]:
    """``doc`` with the ``stages`` fitted in order (each on its own rows, the earlier ones
    fixed), and each stage's final loss. Stages not named keep ``doc``'s values."""
    losses = {}
    for stage in stages:
        doc, losses[stage.name] = fit_stage(doc, cases, stage, budget)
    return doc, losses


def source_groups(cases: list[Case]) -> dict[str, list[Case]]:
    """Cases by publication (the normalised ``source``), in first-seen order."""
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(c.source, []).append(c)
    return groups


def fold_stages(source_cases: list[Case], stages: Sequence[Stage]) -> list[Stage]:
    """The stages a fold leaving out ``source_cases`` must refit: from the first stage whose
    rows include one of them (a stage before it never saw the source, so its full fit is
    already that fold's fit) to the last (later stages' parameters do not touch the
    held-out rows)."""
    hits = [i for i, s in enumerate(stages) if any(s.selects(c) for c in source_cases)]
    return list(stages[hits[0]:hits[-1] + 1]) if hits else []


def _fold(
    args: tuple[dict[str, Any], str, Budget, tuple[str, ...]]
) -> list[tuple[str, Prediction]]:
    doc, held_out, budget, names = args
    cases = load_cases(from_mapping(doc))
    source = [c for c in cases if c.source == held_out]
    needed = fold_stages(source, STAGES)
    stages = [s for s in needed if s.name in names]
    if stages and needed[0] not in stages:
        raise ValueError(f"{held_out!r} has rows in stage {needed[0].name!r}, which this "
                         "cross-validation does not refit: its fold would have seen them")
    train = [c for c in cases if c.source != held_out]
    fitted, _ = fit(doc, train, budget, stages)
    eff = from_mapping(fitted)
    kept = {s.name for s in STAGES if s.name in names}
    return [(c.id, predict(c, eff)) for c in source
            if any(s.selects(c) for s in STAGES if s.name in kept)]


def held_out(source: str, doc: dict[str, Any] | None = None,
             budget: Budget | None = None) -> list[Row]:
    """One fold: the rows of ``source`` predicted by a fit on every other publication
    (``doc``: the fitted parameters, default the shipped ones)."""
    base = doc or read_mapping()
    cases = {c.id: c for c in load_cases(from_mapping(base))}
    names = tuple(s.name for s in STAGES)
    return [Row(cases[cid], p) for cid, p in _fold((base, source, budget or Budget(), names))]


def leave_one_source_out(
    doc: dict[str, Any] | None = None, budget: Budget | None = None, jobs: int = 1,
    stages: Sequence[str] | None = None,
) -> list[Row]:
    """The rows of ``stages`` (default all) predicted by fits that never saw their
    publication, in file order. ``doc`` must hold the full fit of every stage (a fold reuses
    the full fit of the stages before its source's first, see ``fold_stages``)."""
    base = doc or read_mapping()
    names = tuple(stages or (s.name for s in STAGES))
    cases = load_cases(from_mapping(base))
    wanted = [c for c in cases if any(s.selects(c) for s in STAGES if s.name in names)]
    plan = [(base, source, budget or Budget(), names) for source in source_groups(wanted)]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            folds = list(pool.map(_fold, plan))
    else:
        folds = [_fold(p) for p in plan]
    predicted = {cid: p for fold in folds for cid, p in fold}
    return [Row(c, predicted[c.id]) for c in wanted]
