"""Fit the sizing engine to calibration.csv; rewrite efficiency.yaml and uncertainty.yaml.

1. Fit every parameter of ``crossval.PARAMS`` on all rows, from the priors.
2. Leave one source out: refit without each publication and predict its rows.
3. Write ``efficiency.yaml`` (the fitted values, with the in-sample and cross-validated
   errors in its header) and ``uncertainty.yaml`` (the band per regime, from the
   cross-validated errors, and the scores ``tests/unit/test_accuracy.py`` holds the model to).

``python -m benchmarks.fit [--iterations N] [--restarts N] [--jobs N] [--dry-run]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

from benchmarks.accuracy import evaluate, format_groups, format_rows, summary, verdict
from benchmarks.calibration import load_cases
from benchmarks.crossval import PARAMS, Budget, Row, apply, fit, leave_one_source_out
from benchmarks.uncertainty_table import render_uncertainty
from generator.sizing.model.efficiency import EFFICIENCY_FILE, from_mapping, read_mapping
from generator.sizing.uncertainty import UNCERTAINTY_FILE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=Budget.iterations)
    ap.add_argument("--restarts", type=int, default=Budget.restarts)
    ap.add_argument("--jobs", type=int, default=1, help="processes for the folds")
    ap.add_argument("--dry-run", action="store_true", help="fit and report, do not write")
    args = ap.parse_args(argv)
    budget = Budget(args.iterations, args.restarts)
    doc = read_mapping()
    cases = load_cases(from_mapping(doc))
    values, best = fit(doc, cases, budget)
    print(f"loss {best:.4f} over {len(cases)} rows")
    for p, v in zip(PARAMS, values, strict=True):
        print(f"  {p.paths[0]:<45} {v:.6g}")
    fitted = apply(doc, values)
    inside = evaluate(from_mapping(fitted))
    loso = leave_one_source_out(doc, budget, args.jobs)
    stats, cv = summary(inside), summary(loso)
    print(format_rows(inside, loso), format_groups(inside, loso), sep="\n\n", end="\n\n")
    print(verdict("in-sample", inside))
    print(verdict("leave-one-source-out", loso))
    if not args.dry_run:
        write(fitted, stats, cv, loso)
        print(f"wrote {EFFICIENCY_FILE} and {UNCERTAINTY_FILE}")
    return 0


def write(
    doc: dict[str, Any], stats: dict[str, float], cv: dict[str, float], loso: list[Row]
) -> None:
    """Rewrite efficiency.yaml (header, comments and all) and uncertainty.yaml."""
    from benchmarks.efficiency_template import render

    today = dt.date.today().isoformat()
    EFFICIENCY_FILE.write_text(render(doc, stats, cv, today), encoding="utf-8")
    UNCERTAINTY_FILE.write_text(render_uncertainty(loso, today), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
