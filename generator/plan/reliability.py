"""Reliability-aware run time: interruptions, the Young/Daly checkpoint interval, goodput.

Failure rate: Llama 3 405B pre-training saw 466 interruptions in 54 days on 16,384 H100
(``reliability.yaml``), i.e. ``466 / (16,384 x 54 x 24)`` = 2.2e-5 per GPU-hour. A job on G
GPUs therefore sees a mean time between interruptions ``M = 1 / (rate x G)``.

For each training workload with compute time T (from the sizing), checkpoint write time
delta (checkpoint size / storage write throughput) and restart cost R (relaunch overhead +
reading the checkpoint back):

* Young/Daly interval ``tau = sqrt(2 x delta x M)``;
* wasted fraction ``delta / tau`` (writing checkpoints) ``+ (tau / 2 + R) / M`` (lost work and
  restarts), goodput = 1 - waste, wall-clock = T / goodput;
* expected interruptions = rate x G x wall-clock.

Hot spares ('auto'): nodes out for hardware repair at the same time, at 99 % confidence
(Poisson), from the GPU/HBM failure rate (the failures that need a node swap) and a repair
turnaround. The relaunch overhead and repair time are podplan planning assumptions (E).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.plan.catalog_models import FailureStats
from generator.plan.models import Reliability
from generator.sizing.result import SizingResult

#: Relaunch overhead per interruption beyond reading the checkpoint (detection, scheduler
#: requeue, container start, NCCL init), hours. Planning assumption (E): with 6 minutes and
#: Llama 3's few-second checkpoints, a 16,384-GPU run lands at ~93 % goodput, in line with
#: the ">90 % effective training time" Meta reports for that run.
RESTART_OVERHEAD_HOURS = 0.1
#: Turnaround of a node sent for hardware repair, hours. Planning assumption (E).
REPAIR_HOURS = 72.0
#: Confidence that enough spares are on hand.
SPARE_CONFIDENCE = 0.99
#: Floor on goodput so a hopeless configuration still yields a finite wall-clock.
MIN_GOODPUT = 0.05


def failures_per_gpu_hour(stats: FailureStats) -> float:
    """All interruptions (planned + unexpected) per GPU-hour."""
    return stats.interruptions_per_gpu_hour


def _poisson_quantile(mean: float, confidence: float) -> int:
    k, term = 0, math.exp(-mean)
    total = term
    while total < confidence:
        k += 1
        term *= mean / k
        total += term
    return k


def auto_spares(nodes: int, gpus_per_node: int, stats: FailureStats) -> int:
    """Spare nodes to cover nodes in repair at the same time (at least one)."""
    rate = stats.gpu_or_hbm_interruptions_per_gpu_hour or failures_per_gpu_hour(stats)
    mean = nodes * gpus_per_node * rate * REPAIR_HOURS
    return max(1, _poisson_quantile(mean, SPARE_CONFIDENCE))


@dataclass(frozen=True)
class _Run:
    compute_h: float
    wall_h: float
    interruptions: float
    delta_s: float
    tau_h: float
    restart_h: float


def _one_run(
    hours: float, gpus: int, ckpt_gb: float, write_gbps: float, read_gbps: float, rate: float
) -> _Run:
    mtbf = 1.0 / (rate * gpus)
    delta_h = ckpt_gb / write_gbps / 3600.0 if write_gbps > 0 else 0.0
    restart_h = RESTART_OVERHEAD_HOURS + (ckpt_gb / read_gbps / 3600.0 if read_gbps > 0 else 0.0)
    tau = math.sqrt(2.0 * delta_h * mtbf)
    waste = (delta_h / tau if tau > 0 else 0.0) + (tau / 2.0 + restart_h) / mtbf
    goodput = max(MIN_GOODPUT, 1.0 - waste)
    wall = hours / goodput
    return _Run(hours, wall, rate * gpus * wall, delta_h * 3600.0, tau, restart_h)


def plan_reliability(
    sizing: SizingResult,
    stats: FailureStats,
    write_gbps: float,
    read_gbps: float,
    spares: int,
) -> Reliability:
    """Interruptions, checkpoint interval, goodput and wall-clock over all training runs."""
    rate = failures_per_gpu_hour(stats)
    runs = [
        _one_run(t.time_hours, t.gpus, t.checkpoint_gb, write_gbps, read_gbps, rate)
        for t in sizing.training
        if t.time_hours > 0 and t.gpus > 0
    ]
    if not runs:
        return Reliability(
            failures_per_gpu_hour=rate,
            expected_interruptions=0.0,
            checkpoint_write_s=0.0,
            checkpoint_interval_hours=0.0,
            restart_hours=RESTART_OVERHEAD_HOURS,
            goodput=1.0,
            compute_hours=0.0,
            wallclock_hours=0.0,
            spares=spares,
        )
    main = max(runs, key=lambda r: r.wall_h)
    compute = sum(r.compute_h for r in runs)
    wall = sum(r.wall_h for r in runs)
    return Reliability(
        failures_per_gpu_hour=rate,
        expected_interruptions=round(sum(r.interruptions for r in runs), 3),
        checkpoint_write_s=round(main.delta_s, 1),
        checkpoint_interval_hours=round(main.tau_h, 3),
        restart_hours=round(main.restart_h, 3),
        goodput=round(compute / wall, 4),
        compute_hours=round(compute, 3),
        wallclock_hours=round(wall, 3),
        spares=spares,
    )


def reliability_note(rel: Reliability) -> str | None:
    """Where the run's time goes, in one sentence (None without a training run)."""
    if rel.wallclock_hours <= 0:
        return None
    tau = rel.checkpoint_interval_hours
    ckpt = rel.checkpoint_write_s / 3600.0 / tau if tau > 0 else 0.0
    rest = max(0.0, 1.0 - rel.goodput - ckpt)
    return (
        f"Goodput {rel.goodput:.3f}: checkpoints every {tau * 60:.0f} min (Young/Daly) take "
        f"{rel.checkpoint_write_s:.0f} s each ({ckpt:.1%} of the time); about "
        f"{rel.expected_interruptions:.0f} interruptions cost {rest:.1%} in lost work and "
        f"restarts ({rel.restart_hours * 60:.0f} min each). Faster checkpoint storage or "
        "asynchronous checkpointing raise goodput."
    )
