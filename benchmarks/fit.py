"""Fit the sizing engine to calibration.csv; rewrite efficiency.yaml and uncertainty.yaml.

1. Fit the stages of ``crossval.STAGES`` in order, each stage's parameters on its own rows
   from the priors, every earlier stage's values fixed (dense training first, then MoE
   training, then inference).
2. Leave one source out, per stage: refit without each publication and predict its rows.
3. Write ``efficiency.yaml`` (the fitted values, with each stage's in-sample and
   cross-validated errors in its header) and ``uncertainty.yaml`` (the band per regime, from
   the cross-validated errors, and the scores ``tests/unit/test_accuracy.py`` holds the
   model to).

``--stages moe`` refits only the named stages: the others keep their values in
efficiency.yaml and their cross-validated entries in uncertainty.yaml (exact, not an
approximation, as long as nothing their rows depend on changed: a later stage's parameters
never touch an earlier stage's rows, and a fold whose publication has no rows in an earlier
stage reuses that stage's full fit, see ``crossval.fold_stages``).

``python -m benchmarks.fit [--stages a,b] [--iterations N] [--restarts N] [--jobs N]
[--dry-run]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

import yaml

from benchmarks.accuracy import evaluate, format_groups, format_rows, summary, verdict
from benchmarks.calibration import load_cases
from benchmarks.crossval import STAGES, Budget, Row, fit, leave_one_source_out, stage_named
from benchmarks.uncertainty_table import render_uncertainty
from generator.sizing.model.efficiency import EFFICIENCY_FILE, from_mapping, read_mapping
from generator.sizing.uncertainty import UNCERTAINTY_FILE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stages", default=",".join(s.name for s in STAGES),
                    help="comma-separated fit stages to refit (default: all)")
    ap.add_argument("--iterations", type=int, default=Budget.iterations)
    ap.add_argument("--restarts", type=int, default=Budget.restarts)
    ap.add_argument("--jobs", type=int, default=1, help="processes for the folds")
    ap.add_argument("--dry-run", action="store_true", help="fit and report, do not write")
    args = ap.parse_args(argv)
    budget = Budget(args.iterations, args.restarts)
    stages = [stage_named(n.strip()) for n in args.stages.split(",") if n.strip()]
    doc = read_mapping()
    cases = load_cases(from_mapping(doc))
    fitted, losses = fit(doc, cases, budget, stages)
    for stage in stages:
        rows = sum(stage.selects(c) for c in cases)
        print(f"stage {stage.name}: loss {losses[stage.name]:.4f} over {rows} rows")
        for p in stage.params:
            print(f"  {p.paths[0]:<45} {get_value(fitted, p.paths[0]):.6g}")
    inside = evaluate(from_mapping(fitted))
    loso = leave_one_source_out(fitted, budget, args.jobs, [s.name for s in stages])
    by_id = {r.case.id: r for r in loso}
    print(format_rows(inside, [by_id.get(r.case.id, r) for r in inside]))
    print()
    print(format_groups(inside, None))
    print()
    for stage in stages:
        ins = [r for r in inside if stage.selects(r.case)]
        cv = [r for r in loso if stage.selects(r.case)]
        print(verdict("in-sample", ins, stage.name))
        print(verdict("leave-one-source-out", cv, stage.name))
    if not args.dry_run:
        write(fitted, inside, loso)
        print(f"wrote {EFFICIENCY_FILE} and {UNCERTAINTY_FILE}")
    return 0


def get_value(doc: dict[str, Any], path: str) -> float:
    node: Any = doc
    for key in path.split("."):
        node = node[key]
    return float(node)


def write(doc: dict[str, Any], inside: list[Row], loso: list[Row]) -> None:
    """Rewrite uncertainty.yaml (keeping the stages not refitted now) and efficiency.yaml
    (header, comments and all; its per-stage cross-validated figures from the new file)."""
    from benchmarks.efficiency_template import render

    today = dt.date.today().isoformat()
    recorded = yaml.safe_load(UNCERTAINTY_FILE.read_text(encoding="utf-8"))
    UNCERTAINTY_FILE.write_text(render_uncertainty(loso, today, recorded), encoding="utf-8")
    scores = yaml.safe_load(UNCERTAINTY_FILE.read_text(encoding="utf-8"))["scores"]
    in_sample = {s.name: summary([r for r in inside if s.selects(r.case)]) for s in STAGES
                 if any(s.selects(r.case) for r in inside)}
    EFFICIENCY_FILE.write_text(render(doc, summary(inside), in_sample, scores, today),
                               encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
