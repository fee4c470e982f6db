"""The text of generator/catalog/data/uncertainty.yaml from cross-validated rows.

For each regime (framework x kind x scale x GPU x data class, and the coarser one without
scale)
the 10th and 90th percentiles of the rows' cross-validated errors on the headline figure,
widened to at least +-5 % (run-to-run noise of published throughput). The file also keeps
the scores the model achieved, so ``tests/unit/test_accuracy.py`` can hold it to them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from benchmarks.crossval import Row
from generator.sizing.uncertainty import DATA_CLASSES, Regime

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


def _line(r: Regime, errors: list[float]) -> str:
    low, high = band(errors)
    return (f"  - {{framework: {r.framework}, kind: {r.kind}, scale: \"{r.scale}\", "
            f"gpu: {r.gpu}, data: {r.data}, rows: {len(errors)}, low_pct: {low}, "
            f"high_pct: {high}}}")


def _all_rows(loso: list[Row]) -> list[str]:
    """The uncalibrated band of each data class: every row of the class."""
    out = ["all_rows:"]
    for data in DATA_CLASSES:
        errors = [r.headline_error for r in loso if r.case.regime and r.case.regime.data == data]
        if errors:
            low, high = band(errors)
            out.append(f"  {data}: {{rows: {len(errors)}, low_pct: {low}, high_pct: {high}}}")
    return out


def render_uncertainty(loso: list[Row], date: str) -> str:
    """The whole file."""
    table = regimes(loso)
    abs_errors = [abs(r.error) for r in loso]
    training = [abs(r.error) for r in loso if r.case.inference is None]
    lines = [
        "# Uncertainty bands of the podplan sizing engine (generator/sizing/uncertainty.py).",
        f"# Written by benchmarks/fit.py on {date} from leave-one-source-out errors: every",
        "# row predicted by parameters refitted without its publication. low/high: 10th and",
        "# 90th percentile of (true / predicted - 1) on the headline figure (training time,",
        f"# serving throughput), at least +-{FLOOR_PCT:g} %. Do not hand-edit.",
        "version: 1",
        f"min_similar: {MIN_SIMILAR}",
        "scores:",
        f"  rows: {len(loso)}",
        f"  median_abs_error: {statistics.median(abs_errors):.4f}",
        f"  within_20pct: {sum(e <= 0.2 for e in abs_errors) / len(abs_errors):.4f}",
        f"  training_median_abs_error: {statistics.median(training):.4f}",
        *_all_rows(loso),
        "regimes:",
    ]
    for r in sorted(table, key=lambda g: (g.framework, g.kind, g.gpu, g.data, g.scale)):
        lines.append(_line(r, table[r]))
    return "\n".join(lines) + "\n"
