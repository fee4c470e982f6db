"""Compare one ladder run with the plan: ``compare(run, model) -> Comparison``.

Rungs in ladder order; each yields checks and named shortfalls. The verdict fails on any
failed or unreadable measurement; rungs that did not run (nothing idle, a tool missing, an
optional rung off) are listed as not measured, which does not fail the run but is said.
Nodes to drain are those a node-level shortfall names, each with one short reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.acceptance.compare import collectives, fabric, gpu
from generator.acceptance.compare.base import Check, Shortfall
from generator.acceptance.results import Run
from generator.sizing.acceptance import AcceptanceModel

RUNGS = (gpu.RUNG_GPU, gpu.RUNG_DCGM, gpu.RUNG_HBM, fabric.RUNG, collectives.RUNG_NCCL,
         collectives.RUNG_TRAIN)
"""Performance rungs, cheapest first (their task files in the ladder role)."""
LOST = "collected by the ladder, but the results hold no output of it"
REASON_MAX = 120
"""Slurm keeps a drain reason as free text; keep it to one readable line."""


@dataclass
class Comparison:
    run: Run
    model: AcceptanceModel
    checks: list[Check] = field(default_factory=list)
    shortfalls: list[Shortfall] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status != "pass"]

    @property
    def verdict(self) -> str:
        return "fail" if self.failed or self.shortfalls else "pass"

    @property
    def measured_rungs(self) -> list[str]:
        return [r for r in RUNGS if any(c.rung == r for c in self.checks)]

    @property
    def not_measured(self) -> dict[str, str]:
        """Rungs without a measurement, with the ladder's word on why (if it said)."""
        out = {}
        for r in RUNGS:
            if r in self.measured_rungs:
                continue
            entry = self.run.rungs.get(r, {})
            why = entry.get("detail") or entry.get("status") or "no output in the run"
            why = "; ".join(map(str, why)) if isinstance(why, list) else str(why)
            out[r] = LOST if entry.get("status") == "collected" else why
        return out

    def drain(self) -> dict[str, str]:
        """Node -> reason, for every node a shortfall is pinned on."""
        reasons: dict[str, list[str]] = {}
        for s in self.shortfalls:
            for node in s.drain:
                reasons.setdefault(node, []).append(s.reason or f"{s.rung}: {s.what}")
        head = f"podplan-accept {self.run.id}: "
        return {n: (head + "; ".join(r))[:REASON_MAX] for n, r in sorted(reasons.items())}


def compare(run: Run, model: AcceptanceModel) -> Comparison:
    """Every rung's checks and shortfalls, in ladder order."""
    cmp = Comparison(run, model)
    for rung in (gpu.gpu_health, gpu.dcgm, gpu.hbm, fabric.ib_write_bw):
        checks, shorts = rung(run, model)
        cmp.checks += checks
        cmp.shortfalls += shorts
    named = {n for s in cmp.shortfalls for n in s.drain}
    for checks, shorts in (collectives.nccl(run, model, named),
                           collectives.train_step(run, model)):
        cmp.checks += checks
        cmp.shortfalls += shorts
    cmp.shortfalls += [Shortfall(r, "run", f"{LOST}: incomplete results, not a pass")
                       for r, why in cmp.not_measured.items() if why == LOST]
    return cmp
