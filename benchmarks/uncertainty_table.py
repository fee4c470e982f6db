"""The text of generator/catalog/data/uncertainty.yaml from cross-validated rows.

For each regime (framework x kind x scale x GPU x data class, and the coarser one without
scale)
the 10th and 90th percentiles of the rows' cross-validated errors on the headline figure,
widened to at least +-5 % (run-to-run noise of published throughput). The file also keeps
the scores the model achieved per fit stage, so ``tests/unit/test_accuracy.py`` can hold it
to them. A run that refits only some stages keeps the other stages' entries as recorded.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from benchmarks.calibration import Case
from benchmarks.crossval import STAGES, Row
from generator.sizing.uncertainty import ALL_ROWS_KEYS, Regime

FLOOR_PCT = 5.0
LOW_Q, HIGH_Q = 0.10, 0.90
MIN_SIMILAR = 3


def quantile(values: list[float], q: float) -> float:
    """Linear-interpolated quantile of a non-empty list."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def band(errors: list[float]) -> tuple[float, float]:
    """(low %, high %) of the headline errors, at least +-FLOOR_PCT."""
    low = min(-FLOOR_PCT, 100 * quantile(errors, LOW_Q))
    high = max(FLOOR_PCT, 100 * quantile(errors, HIGH_Q))
    return round(low, 1), round(high, 1)


def regimes(rows: list[Row]) -> dict[Regime, list[float]]:
    """Headline errors per regime, at both levels."""
    out: dict[Regime, list[float]] = defaultdict(list)
    for r in rows:
        regime = r.case.regime
        if regime is None:
            continue
        for level in regime.levels():
            out[level].append(r.headline_error)
    return out


def stage_of(case: Case) -> str:
    """The name of the fit stage whose rows include ``case``."""
    return next(s.name for s in STAGES if s.selects(case))


def scores(rows: list[Row], date: str) -> dict[str, Any]:
    """One stage's cross-validated scores (what tests/unit/test_accuracy.py holds)."""
    errors = [abs(r.error) for r in rows]
    return {"rows": len(rows), "fitted": date,
            "median_abs_error": round(statistics.median(errors), 4),
            "within_20pct": round(sum(e <= 0.2 for e in errors) / len(errors), 4),
            "worst_abs_error": round(max(errors), 4)}


def _regime_entries(rows: list[Row], stage: str) -> list[dict[str, Any]]:
    table = regimes(rows)
    out = []
    for r in sorted(table, key=lambda g: (g.framework, g.kind, g.gpu, g.data, g.scale)):
        low, high = band(table[r])
        out.append({"stage": stage, "framework": r.framework, "kind": r.kind,
                    "scale": r.scale, "gpu": r.gpu, "data": r.data,
                    "rows": len(table[r]), "low_pct": low, "high_pct": high})
    return out


def _all_rows_entries(rows: list[Row], stage: str) -> dict[str, dict[str, Any]]:
    """The uncalibrated band of each fallback class (dense data class, MoE, serving): every
    row of it."""
    classes: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r.case.regime is not None:
            classes[r.case.regime.fallback].append(r.headline_error)
    out = {}
    for key in ALL_ROWS_KEYS:
        if classes.get(key):
            low, high = band(classes[key])
            out[key] = {"stage": stage, "rows": len(classes[key]), "low_pct": low,
                        "high_pct": high}
    return out


def _flow(d: dict[str, Any]) -> str:
    def text(k: str, v: Any) -> str:
        return f'"{v}"' if k == "scale" else str(v)

    return "{" + ", ".join(f"{k}: {text(k, v)}" for k, v in d.items()) + "}"


def render_uncertainty(
    loso: list[Row], date: str, recorded: dict[str, Any] | None = None
) -> str:
    """The whole file. ``loso``: the cross-validated rows of the stages refitted now;
    ``recorded``: the previous file, whose entries for every other stage are kept as they
    were (their folds were not rerun, and nothing they depend on changed)."""
    fresh = {stage_of(r.case) for r in loso}
    old = recorded or {"scores": {}, "all_rows": {}, "regimes": []}
    stage_scores = {k: v for k, v in old["scores"].items()
                    if isinstance(v, dict) and k not in fresh}
    all_rows = {k: v for k, v in old["all_rows"].items() if v.get("stage") not in fresh}
    entries = [e for e in old["regimes"] if e.get("stage") not in fresh]
    for name in (s.name for s in STAGES if s.name in fresh):
        rows = [r for r in loso if stage_of(r.case) == name]
        stage_scores[name] = scores(rows, date)
        all_rows.update(_all_rows_entries(rows, name))
        entries += _regime_entries(rows, name)
    order = [s.name for s in STAGES]
    entries.sort(key=lambda e: (order.index(e["stage"]), e["framework"], e["kind"], e["gpu"],
                                e["data"], e["scale"]))
    lines = [
        "# Uncertainty bands of the podplan sizing engine (generator/sizing/uncertainty.py).",
        "# Written by benchmarks/fit.py from leave-one-source-out errors: every row predicted",
        "# by parameters refitted without its publication, per fit stage (the date each",
        "# stage was last cross-validated is in its scores). low/high: 10th and 90th",
        "# percentile of (true / predicted - 1) on the headline figure (training time,",
        f"# serving throughput), at least +-{FLOOR_PCT:g} %. Do not hand-edit.",
        f"# Last written {date}.",
        "version: 2",
        f"min_similar: {MIN_SIMILAR}",
        "scores:",
        f"  rows: {sum(int(v['rows']) for v in stage_scores.values())}",
        *(f"  {k}: {_flow(stage_scores[k])}" for k in order if k in stage_scores),
        "all_rows:",
        *(f"  {k}: {_flow(v)}" for k, v in all_rows.items()),
        "regimes:",
        *(f"  - {_flow(e)}" for e in entries),
    ]
    return "\n".join(lines) + "\n"
