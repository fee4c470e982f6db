"""Compute nodes: how many, their names, and hot spares.

The node count is the sizing's (``SizingResult.nodes``): whole servers, rounded up when the
sized GPU count is not a multiple of the server's GPUs (a note says so). Hot spares
(``hardware.hot_spares``) are a number, or 'auto': enough for the nodes expected to be in
hardware repair at the same time (``reliability.auto_spares``). Spares are racked, cabled
and configured like compute nodes but kept out of the default partition.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan.catalog_models import FailureStats
from generator.plan.reliability import auto_spares
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

COMPUTE_PREFIX = "gpu"


@dataclass(frozen=True)
class ComputeNodes:
    """Compute and spare node names; ``slots`` is their order in the fabric and the compute
    racks, with ``None`` where a removed node left a slot free (a locked plan only)."""

    compute: list[str]
    spares: list[str]
    spares_auto: bool
    slots: list[str | None] | None = None

    @property
    def fabric_slots(self) -> list[str | None]:
        return self.slots if self.slots is not None else [*self.compute, *self.spares]


def whole_server_note(sizing: SizingResult) -> str | None:
    """When the sized GPU count is not whole servers: the plan (and the BOM) buys whole
    servers, and says how many GPU slots that leaves idle."""
    slots = sizing.nodes * sizing.gpus_per_node
    if slots == sizing.gpus:
        return None
    return (f"The sizing uses {sizing.gpus} GPUs; the plan and bill of materials round up to "
            f"{sizing.nodes} whole {sizing.server} server{'s' if sizing.nodes != 1 else ''} "
            f"({slots} GPUs, {slots - sizing.gpus} idle).")


def plan_compute(spec: Spec, sizing: SizingResult, stats: FailureStats) -> ComputeNodes:
    """Names of the compute nodes and spares (``gpu001`` ..., spares numbered after)."""
    n = sizing.nodes
    want = spec.hardware.hot_spares
    spares = auto_spares(n, sizing.gpus_per_node, stats) if want == "auto" else int(want)
    total = n + spares
    width = max(3, len(str(total)))
    names = [f"{COMPUTE_PREFIX}{i:0{width}d}" for i in range(1, total + 1)]
    return ComputeNodes(names[:n], names[n:], want == "auto")
