"""Property: whatever spec and command line, ``podplan`` exits 0 or 2, never shows a
traceback, and finishes within 10 s.

Cases come from ``benchmarks.fuzz_cases`` (generated specs, field and byte-level mutations
of the examples, YAML attacks) and run through the real entry point, ``generator.cli.main``,
in-process. The example budget is fixed and the run derandomized so CI is repeatable and
fast; ``python -m benchmarks.fuzz N`` runs the long campaign.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from benchmarks.fuzz import LIMIT_S, run_case
from benchmarks.fuzz_cases import Case, cases

EXAMPLES_BUDGET = 600


@settings(max_examples=EXAMPLES_BUDGET, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
def test_every_input_gets_an_answer_or_a_clear_error(case: Case) -> None:
    with tempfile.TemporaryDirectory(prefix="podplan-fuzz-") as tmp:
        outcome = run_case(case, Path(tmp), LIMIT_S)
    assert outcome.kind in ("ok", "user-error"), (
        f"{outcome.kind} (exit {outcome.code}, {outcome.seconds:.1f} s) for "
        f"{' '.join(case.argv)} on:\n{case.text[:2000]!r}\n{outcome.stderr[-3000:]}"
    )
    assert outcome.seconds < LIMIT_S
