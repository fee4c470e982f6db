"""What one size's search collects (``Scan``) and the layouts it ranks (``Evaluated``)."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from generator.sizing.model.job import Layout
from generator.sizing.training.memory import MemoryTerms
from generator.sizing.training.steptime import StepTime

KEEP = 4


@dataclass(frozen=True, slots=True)
class Evaluated:
    """A layout with its memory and step time."""

    layout: Layout
    memory: MemoryTerms
    fits: bool
    step: StepTime

    @property
    def step_s(self) -> float:
        return self.step.total


@dataclass
class Scan:
    """What one size's search collects."""

    fitting: list[Evaluated] = field(default_factory=list)
    tightest: tuple[float, Layout] | None = None
    too_big: int = 0
    partial: list[tuple[float, int, float, int]] = field(default_factory=list)
    """Full-recompute layouts that partial recompute could speed up: (time bound, index in
    ``fitting``, state bytes, micro-batches)."""
    slower: int = 0
    """Variants skipped because a floor under their time was above the ranking's bar."""
    prune: bool = False
    """Branch and bound: layouts whose time is above the bar are not kept."""

    best: list[float] = field(default_factory=list)
    """The KEEP best step times so far, negated (a max-heap)."""

    def add(self, e: Evaluated) -> None:
        self.fitting.append(e)
        if len(self.best) < KEEP:
            heapq.heappush(self.best, -e.step_s)
        elif e.step_s < -self.best[0]:
            heapq.heapreplace(self.best, -e.step_s)

    def bar(self) -> float:
        """The ``KEEP``-th best step time so far (partial recompute only lowers it later,
        so a layout slower than it now can never rank); infinite until KEEP fit."""
        return -self.best[0] if len(self.best) >= KEEP else math.inf

    def note_tight(self, total: float, lay: Layout) -> None:
        if self.tightest is None or total < self.tightest[0]:
            self.tightest = (total, lay)
