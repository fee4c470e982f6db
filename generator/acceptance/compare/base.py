"""What a comparison produces: checks (one measurement against one expected value) and
shortfalls (a named node, rail, link or run that falls short, in words an admin acts on)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from generator.sizing.acceptance import Expectation

Status = Literal["pass", "fail", "error"]
"""``error``: nothing to compare (the tool did not run to the end, or its output is
unreadable); it fails the run like a shortfall does."""


@dataclass(frozen=True)
class Check:
    """One measurement of one subject (a node, a GPU, a rail between two nodes, a run)."""

    rung: str
    exp: Expectation
    subject: str
    measured: float | None
    status: Status
    nodes: tuple[str, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class Shortfall:
    """A named thing that falls short. ``drain``: the nodes it is pinned on (empty when
    the fault cannot be placed on one node, e.g. a slow link seen from both ends only)."""

    rung: str
    subject: str
    what: str
    drain: tuple[str, ...] = ()
    reason: str = ""
    """A few words for Slurm's drain reason (``what`` when empty)."""


def check(rung: str, exp: Expectation, subject: str, measured: float | None,
          nodes: tuple[str, ...] = (), detail: str = "") -> Check:
    """A check of ``measured`` against ``exp`` (None: nothing was measured -> error)."""
    if measured is None:
        return Check(rung, exp, subject, None, "error", nodes, detail or "not measured")
    return Check(rung, exp, subject, measured, "pass" if exp.passes(measured) else "fail",
                 nodes, detail)


def fmt(x: float) -> str:
    """Compact number for sentences: 3 significant figures, no trailing zeros."""
    if x == 0 or abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def gpu_list(indices: list[int]) -> str:
    """``0-3,6``: GPU indices as ranges."""
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
