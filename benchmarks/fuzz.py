"""Fuzz the front door: N generated and mutated specs through the real CLI entry point.

``python -m benchmarks.fuzz 20000`` runs ``generator.cli.main`` in-process on each case
(``benchmarks.fuzz_cases``) with a 10 s limit and prints counts by outcome: ``ok`` (exit 0),
``user-error`` (exit 2 with an ``error:`` screen), and the failures ``internal`` (exit 1: a
bug), ``traceback`` (one leaked), ``bad-exit`` (any other code or an error without
``error:``) and ``hang`` (over the limit). Failing specs are saved under ``--save`` with the
command line and output, one directory each, so they can be replayed.

The limit is on CPU time (user + system), so a machine shared with other work does not turn
a slow moment into a "hang"; a wall-clock backstop of six times the limit catches a run that
blocks without computing.

``--seed`` makes a campaign repeatable; ``--worst`` times the largest specs the limits accept.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.fuzz_cases import SPEC_PATH, Case, cases

LIMIT_S = 10.0
FAILURES = ("internal", "traceback", "bad-exit", "hang")


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so the CLI's own handlers cannot swallow it."""


@dataclass(frozen=True)
class Outcome:
    """What one case did."""

    kind: str
    code: int | None
    seconds: float
    """CPU seconds (user + system) the case took."""
    stdout: str
    stderr: str
    wall: float = 0.0

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES

    @property
    def first_error(self) -> str:
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        return lines[0][:160] if lines else ""


@contextlib.contextmanager
def time_limit(cpu_seconds: float) -> Iterator[None]:
    """Interrupt the block after ``cpu_seconds`` of CPU time, or six times that of wall time
    (main thread only, POSIX)."""
    def _alarm(signum: int, frame: object) -> None:
        raise CaseTimeout

    old = {sig: signal.signal(sig, _alarm) for sig in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    signal.setitimer(signal.ITIMER_REAL, 6 * cpu_seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _classify(code: int | None, stderr: str) -> str:
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    if code == 0:
        return "ok"
    if code == 2 and stderr.startswith(("error:", "Usage:")):
        return "user-error"
    return "internal" if code == 1 else "bad-exit"


def run_case(case: Case, workdir: Path, limit_s: float = LIMIT_S) -> Outcome:
    """Write the spec, run ``podplan <argv>`` in-process, and classify what happened."""
    from generator.cli import main

    spec = workdir / "spec.yaml"
    spec.write_bytes(case.text)
    out_dir = workdir / "out"
    argv = [str(spec) if a == SPEC_PATH else a.replace("{out}", str(out_dir))
            for a in case.argv]
    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = 0  # a console script that returns exits 0
    start, wall = time.process_time(), time.perf_counter()
    saved_argv = sys.argv
    sys.argv = ["podplan", *argv]  # as the console script is invoked
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                time_limit(limit_s):
            main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except CaseTimeout:
        return Outcome("hang", None, time.process_time() - start, stdout.getvalue(),
                       stderr.getvalue(), time.perf_counter() - wall)
    except Exception as exc:  # escaped main(): a bug by definition
        return Outcome("traceback", None, time.process_time() - start, stdout.getvalue(),
                       f"{type(exc).__name__}: {exc}")
    finally:
        sys.argv = saved_argv
    seconds = time.process_time() - start
    err = stderr.getvalue()
    return Outcome(_classify(code, err), code, seconds, stdout.getvalue(), err,
                   time.perf_counter() - wall)


def _save(root: Path, n: int, case: Case, outcome: Outcome) -> None:
    d = root / f"{n:06d}-{outcome.kind}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "spec.yaml").write_bytes(case.text)
    (d / "command.txt").write_text(" ".join(case.argv) + "\n", encoding="utf-8")
    (d / "stderr.txt").write_text(outcome.stderr, encoding="utf-8")


@dataclass
class Tally:
    """Counts by outcome and origin, run times, and the distinct failures seen."""

    outcomes: Counter[str]
    by_origin: Counter[tuple[str, str]]
    seconds: list[float]
    failures: Counter[str]
    max_wall: float = 0.0
    slowest: tuple[float, str] = (0.0, "")

    def add(self, case: Case, outcome: Outcome) -> None:
        self.outcomes[outcome.kind] += 1
        self.by_origin[(case.origin, outcome.kind)] += 1
        self.seconds.append(outcome.seconds)
        self.max_wall = max(self.max_wall, outcome.wall)
        if outcome.failed:
            self.failures[f"{outcome.kind}: {outcome.first_error}"] += 1
        if outcome.seconds > self.slowest[0]:
            self.slowest = (outcome.seconds, f"{case.origin} {' '.join(case.argv[:-1])}")


def campaign(n: int, seed: int | None, save: Path | None) -> Tally:
    """Run ``n`` cases drawn by hypothesis (generation only: no shrinking, no database)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fix_seed

    tally = Tally(Counter(), Counter(), [], Counter())
    counter = iter(range(1, n + 1))

    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=cases())
    def one(case: Case) -> None:
        k = next(counter, n)
        with tempfile.TemporaryDirectory(prefix="podplan-fuzz-") as tmp:
            outcome = run_case(case, Path(tmp))
        tally.add(case, outcome)
        if outcome.failed and save is not None:
            _save(save, k, case, outcome)
        if k % 1000 == 0:
            print(f"  {k:,} cases: {dict(tally.outcomes)}", file=sys.stderr, flush=True)

    test = fix_seed(seed)(one) if seed is not None else one
    test()
    return tally


def report(tally: Tally, wall: float) -> str:
    """The campaign's table."""
    total = sum(tally.outcomes.values())
    lines = [f"{total:,} cases in {wall:,.0f} s", "", f"{'outcome':<12}{'count':>8}{'share':>9}"]
    for kind in ("ok", "user-error", *FAILURES):
        c = tally.outcomes.get(kind, 0)
        lines.append(f"{kind:<12}{c:>8,}{100 * c / max(total, 1):>8.2f}%")
    origins = sorted({o for o, _ in tally.by_origin})
    lines += ["", f"{'origin':<16}" + "".join(f"{k:>12}" for k in ("ok", "user-error",
                                                                    "failed"))]
    for o in origins:
        ok, user = tally.by_origin[(o, "ok")], tally.by_origin[(o, "user-error")]
        bad = sum(tally.by_origin[(o, k)] for k in FAILURES)
        lines.append(f"{o:<16}{ok:>12,}{user:>12,}{bad:>12,}")
    s = sorted(tally.seconds) or [0.0]
    lines += ["", f"CPU time per case: median {statistics.median(s):.3f} s, "
              f"p99 {s[int(0.99 * (len(s) - 1))]:.3f} s, max {s[-1]:.2f} s ({tally.slowest[1]}); "
              f"longest wall time {tally.max_wall:.2f} s"]
    if tally.failures:
        lines += ["", "distinct failures:"]
        lines += [f"  {c:>5} x {what}" for what, c in tally.failures.most_common(30)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__)
    parser.add_argument("n", type=int, nargs="?", default=2000, help="cases to run")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed")
    parser.add_argument("--save", type=Path, default=None, help="save failing cases here")
    parser.add_argument("--worst", action="store_true",
                        help="time the largest accepted specs instead of fuzzing")
    args = parser.parse_args(argv)
    if args.worst:
        from benchmarks.fuzz_worst import main as worst

        return worst()
    start = time.perf_counter()
    tally = campaign(args.n, args.seed, args.save)
    print(report(tally, time.perf_counter() - start))
    return 1 if any(tally.outcomes.get(k) for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
