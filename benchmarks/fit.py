"""Fit the sizing engine to calibration.csv; rewrite efficiency.yaml and uncertainty.yaml.

1. Fit in two stages, from the priors: ``crossval.PARAMS`` (training) on the training
   rows, then ``crossval.INFERENCE_PARAMS`` (serving) on the inference rows with the
   training values fixed. ``--stage inference`` refits only the second stage on top of the
   shipped training values (seconds instead of a quarter hour).
2. Leave one source out: refit without each publication and predict its rows.
3. Write ``efficiency.yaml`` (the fitted values, with the in-sample and cross-validated
   errors in its header) and ``uncertainty.yaml`` (the band per regime, from the
   cross-validated errors, and the scores ``tests/unit/test_accuracy.py`` holds the model to).

``python -m benchmarks.fit [--stage all|inference] [--iterations N] [--restarts N] [--jobs N]
[--dry-run]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

from benchmarks.accuracy import evaluate, format_groups, format_rows, summary, verdict
from benchmarks.calibration import Case, load_cases
from benchmarks.crossval import (
    ALL_PARAMS,
    Budget,
    Row,
    fit_all,
    fit_inference,
    get,
    leave_one_source_out,
    recorded_training_loso,
    write_training_loso,
)
from benchmarks.uncertainty_table import render_uncertainty
from generator.sizing.model.efficiency import EFFICIENCY_FILE, from_mapping, read_mapping
from generator.sizing.uncertainty import UNCERTAINTY_FILE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=Budget.iterations)
    ap.add_argument("--restarts", type=int, default=Budget.restarts)
    ap.add_argument("--jobs", type=int, default=1, help="processes for the folds")
    ap.add_argument("--dry-run", action="store_true", help="fit and report, do not write")
    ap.add_argument("--stage", choices=("all", "inference", "training-loso"), default="all",
                    help="inference: refit the serving stage only, reusing the recorded "
                         "training cross-validation; training-loso: only rerun and record it")
    args = ap.parse_args(argv)
    budget = Budget(args.iterations, args.restarts)
    doc = read_mapping()
    cases = load_cases(from_mapping(doc))
    if args.stage == "training-loso":
        rows = leave_one_source_out(doc, budget, args.jobs, "training")
        write_training_loso(rows)
        print(verdict("leave-one-source-out", rows))
        return 0
    fitted = fit_inference(doc, cases, budget) if args.stage == "inference" else fit_all(
        doc, cases, budget)
    print(f"fitted over {len(cases)} rows")
    for p in ALL_PARAMS:
        print(f"  {p.paths[0]:<45} {get(fitted, p.paths[0]):.6g}")
    inside = evaluate(from_mapping(fitted))
    if args.stage == "inference":
        serving = leave_one_source_out(fitted, budget, args.jobs, "inference")
        loso = _file_order(cases, [*recorded_training_loso(cases), *serving])
    else:
        loso = leave_one_source_out(doc, budget, args.jobs)
    stats, cv = summary(inside), summary(loso)
    print(format_rows(inside, loso), format_groups(inside, loso), sep="\n\n", end="\n\n")
    print(verdict("in-sample", inside))
    print(verdict("leave-one-source-out", loso))
    if not args.dry_run:
        write(fitted, stats, cv, loso)
        if args.stage == "all":
            write_training_loso(loso)
        print(f"wrote {EFFICIENCY_FILE} and {UNCERTAINTY_FILE}")
    return 0


def _file_order(cases: list[Case], rows: list[Row]) -> list[Row]:
    by_id = {r.case.id: r for r in rows}
    return [by_id[c.id] for c in cases]


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
