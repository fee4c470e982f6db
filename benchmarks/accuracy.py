"""podplan's sizing engine against every published measurement in calibration.csv.

Prints, for every row: id, model, method, GPUs, layout, measured, predicted, error %, and the
seed formula's prediction and error where it applies; then median and worst |error| for
podplan and for the seed formula. ``python -m benchmarks.accuracy``.
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass

from benchmarks.calibration import Case, Prediction, load_cases, predict
from generator.sizing.model.efficiency import Efficiency, default_efficiency

UNITS = {
    "tok_s_gpu": "tok/s/GPU", "tflops_model": "TFLOP/s", "tflops_hw": "hwTFLOP/s",
    "s_iter": "s/iter", "minutes": "min", "out_tok_s": "out tok/s",
}


@dataclass(frozen=True)
class Row:
    """One line of the accuracy table."""

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


def evaluate(eff: Efficiency | None = None) -> list[Row]:
    """Predict every calibration row."""
    e = eff or default_efficiency()
    return [Row(c, predict(c, e)) for c in load_cases(e)]


def summary(rows: list[Row]) -> dict[str, float]:
    """Median and worst |error| for podplan and for the seed formula (fractions)."""
    ours = [abs(r.error) if math.isfinite(r.error) else math.inf for r in rows]
    seeds = [abs(s) for r in rows if (s := r.seed_error) is not None]
    return {
        "median": statistics.median(ours), "worst": max(ours),
        "seed_median": statistics.median(seeds) if seeds else math.nan,
        "seed_worst": max(seeds) if seeds else math.nan,
        "rows": float(len(rows)), "seed_rows": float(len(seeds)),
    }


def _fmt(x: float) -> str:
    return f"{x:,.3g}" if abs(x) < 100 else f"{x:,.0f}"


def format_rows(rows: list[Row]) -> str:
    """The accuracy table as fixed-width text."""
    head = (f"{'id':>4} {'model':<14} {'method':<22} {'GPUs':>5} {'layout (podplan)':<32} "
            f"{'unit':<10} {'measured':>9} {'predicted':>9} {'err %':>6} {'seed':>9} {'seed %':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        c, p = r.case, r.prediction
        seed = "" if p.seed is None else _fmt(p.seed)
        serr = "" if r.seed_error is None else f"{100 * r.seed_error:+.0f}"
        layout = p.layout + ("" if p.fits else " (!mem)")
        lines.append(
            f"{c.id:>4} {c.model[:14]:<14} {c.method[:22]:<22} {c.gpus:>5} {layout[:32]:<32} "
            f"{UNITS[c.metric]:<10} {_fmt(c.measured):>9} {_fmt(p.value):>9} "
            f"{100 * r.error:>+6.1f} {seed:>9} {serr:>7}"
        )
    s = summary(rows)
    lines += [
        "-" * len(head),
        f"podplan: median |error| {100 * s['median']:.1f} %, worst {100 * s['worst']:.1f} % "
        f"over {int(s['rows'])} rows",
        f"seed formula: median |error| {100 * s['seed_median']:.1f} %, worst "
        f"{100 * s['seed_worst']:.1f} % over {int(s['seed_rows'])} training rows "
        "(no inference rule without a throughput figure)",
    ]
    return "\n".join(lines)


def main() -> int:
    print(format_rows(evaluate()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
