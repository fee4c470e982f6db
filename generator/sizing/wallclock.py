"""Wall-clock time of a training run: compute, evaluation, checkpoints and failures.

This is the one function that computes it: ``podplan size`` (the estimate's
``wall_clock_hours``), the deadline check in the planner and ``podplan plan``'s reliability
section all call ``wall_clock``, with the checkpoint bandwidth of the storage plan and the
failure rate of the reliability data (``RunEnvironment``, built by the plan stage).

Productive time T = compute + evaluation. A job on G GPUs sees interruptions at rate
``r x G`` (mean time between them M = 1 / (r x G)); a checkpoint takes delta = size /
write bandwidth; a restart costs R = relaunch overhead + reading the checkpoint back.

* Young/Daly interval tau = sqrt(2 x delta x M);
* wasted share: delta / tau (writing checkpoints) + (tau / 2 + R) / M (lost work, restarts);
* wall-clock = T / (1 - waste), split into T, the checkpoint share and the failure share.

A run no longer than one interval (T <= tau) writes no periodic checkpoint: Young/Daly's
delta / tau share charged it a fraction of one it never writes. It is charged its final
checkpoint once (delta: the trained state is saved at the end), and an interruption loses
the work since the start, T / 2 on average, plus the relaunch (no checkpoint to read back):
wall-clock = (T + delta) / (1 - (T / 2 + relaunch) / M).

Without a storage plan (``checkpoint_write_gbps`` = 0) checkpoints cost nothing and the
lost work per interruption is only the restart: the caller says so in a note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIN_GOODPUT = 0.05
"""Floor on goodput so a hopeless configuration still yields a finite wall-clock."""


@dataclass(frozen=True, slots=True)
class RunEnvironment:
    """What a run's wall-clock needs beyond the sizing."""

    checkpoint_write_gbps: float
    """GB/s the shared storage writes a checkpoint at (0: no storage plan)."""
    checkpoint_read_gbps: float
    failures_per_gpu_hour: float
    restart_overhead_hours: float
    """Relaunch cost per interruption beyond reading the checkpoint back."""

    @property
    def has_storage(self) -> bool:
        return self.checkpoint_write_gbps > 0


@dataclass(frozen=True, slots=True)
class WallClock:
    """Hours of one training run, by cause, and the checkpointing that produced them."""

    compute_h: float
    evaluation_h: float
    checkpoint_h: float
    failures_h: float
    interval_h: float
    """Young/Daly checkpoint interval (0 without a storage plan)."""
    checkpoint_write_s: float
    restart_h: float
    interruptions: float
    final_only: bool = False
    """The run is shorter than one interval: only its final checkpoint is written."""

    @property
    def total_h(self) -> float:
        return self.compute_h + self.evaluation_h + self.checkpoint_h + self.failures_h


def wall_clock(
    compute_h: float, evaluation_h: float, gpus: int, checkpoint_gb: float, env: RunEnvironment
) -> WallClock:
    """The run's wall-clock (see the module docstring for the model)."""
    productive = compute_h + evaluation_h
    rate = env.failures_per_gpu_hour * gpus
    if productive <= 0 or rate <= 0:
        return WallClock(compute_h, evaluation_h, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    mtbf = 1.0 / rate
    write = env.checkpoint_write_gbps
    read = env.checkpoint_read_gbps
    delta = checkpoint_gb / write / 3600.0 if write > 0 else 0.0
    restart = env.restart_overhead_hours + (checkpoint_gb / read / 3600.0 if read > 0 else 0.0)
    tau = math.sqrt(2.0 * delta * mtbf)
    if 0 < productive <= tau:
        return _final_checkpoint_only(compute_h, evaluation_h, rate, delta, tau, env)
    writing = delta / tau if tau > 0 else 0.0
    losing = (tau / 2.0 + restart) / mtbf
    goodput = max(MIN_GOODPUT, 1.0 - writing - losing)
    total = productive / goodput
    waste = total - productive
    share = writing / (writing + losing) if writing + losing > 0 else 0.0
    return WallClock(
        compute_h=compute_h, evaluation_h=evaluation_h, checkpoint_h=waste * share,
        failures_h=waste * (1.0 - share), interval_h=tau, checkpoint_write_s=delta * 3600.0,
        restart_h=restart, interruptions=rate * total,
    )


def _final_checkpoint_only(
    compute_h: float, evaluation_h: float, rate: float, delta: float, tau: float,
    env: RunEnvironment,
) -> WallClock:
    """A run within one checkpoint interval: one final write, restarts from the start."""
    productive = compute_h + evaluation_h
    restart = env.restart_overhead_hours
    losing = (productive / 2.0 + restart) * rate
    total = (productive + delta) / max(MIN_GOODPUT, 1.0 - losing)
    total = min(total, productive / MIN_GOODPUT)  # the goodput floor, as for longer runs
    checkpoint = min(delta, total - productive)
    return WallClock(
        compute_h=compute_h, evaluation_h=evaluation_h, checkpoint_h=checkpoint,
        failures_h=total - productive - checkpoint, interval_h=tau,
        checkpoint_write_s=delta * 3600.0, restart_h=restart, interruptions=rate * total,
        final_only=True,
    )
