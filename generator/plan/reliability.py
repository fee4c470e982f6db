"""Reliability-aware run time: interruptions, the Young/Daly checkpoint interval, goodput.

Failure rate: Llama 3 405B pre-training saw 466 interruptions in 54 days on 16,384 H100
(``reliability.yaml``), i.e. ``466 / (16,384 x 54 x 24)`` = 2.2e-5 per GPU-hour. A job on G
GPUs therefore sees a mean time between interruptions ``M = 1 / (rate x G)``.

Each training run's wall-clock (compute + evaluation, plus checkpoints written every
Young/Daly interval and the work lost to interruptions and restarts) is
``generator.sizing.wallclock.wall_clock``: the one function ``podplan size`` uses too, fed
here with the storage plan's write/read bandwidth (``run_env.run_environment`` builds the
same inputs for the sizing), so ``size`` and ``plan`` always agree.

Hot spares ('auto'): nodes out for hardware repair at the same time, at 99 % confidence
(Poisson), from the GPU/HBM failure rate (the failures that need a node swap) and a repair
turnaround. The relaunch overhead and repair time are podplan planning assumptions (E).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generator.plan.catalog_models import FailureStats, PlanCatalog
from generator.plan.models import Reliability
from generator.sizing.result import SizingResult
from generator.sizing.wallclock import RunEnvironment, wall_clock

FAILURE_STATS = "llama3-405b-pretraining"

#: Relaunch overhead per interruption beyond reading the checkpoint (detection, scheduler
#: requeue, container start, NCCL init), hours. Planning assumption (E): with 6 minutes and
#: Llama 3's few-second checkpoints, a 16,384-GPU run lands at ~93 % goodput, in line with
#: the ">90 % effective training time" Meta reports for that run.
RESTART_OVERHEAD_HOURS = 0.1
#: Turnaround of a node sent for hardware repair, hours. Planning assumption (E).
REPAIR_HOURS = 72.0
#: Confidence that enough spares are on hand.
SPARE_CONFIDENCE = 0.99


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


def environment(stats: FailureStats, write_gbps: float, read_gbps: float) -> RunEnvironment:
    """What the wall-clock needs from the plan: checkpoint bandwidth and failure rate."""
    return RunEnvironment(
        checkpoint_write_gbps=write_gbps,
        checkpoint_read_gbps=read_gbps,
        failures_per_gpu_hour=failures_per_gpu_hour(stats),
        restart_overhead_hours=RESTART_OVERHEAD_HOURS,
    )


def failure_stats(pc: PlanCatalog) -> FailureStats:
    """The failure statistics the spares and reliability model use (first one as fallback)."""
    if FAILURE_STATS in pc.reliability:
        return pc.reliability[FAILURE_STATS]
    return next(iter(pc.reliability.values()))


def plan_reliability(
    sizing: SizingResult,
    stats: FailureStats,
    write_gbps: float,
    read_gbps: float,
    spares: int,
) -> Reliability:
    """Interruptions, checkpoint interval, goodput and wall-clock over all training runs,
    each from ``sizing.wallclock.wall_clock`` exactly as the sizing computed it."""
    env = environment(stats, write_gbps, read_gbps)
    runs = [
        wall_clock(t.time_hours, t.evaluation_hours, t.gpus, t.checkpoint_gb, env)
        for t in sizing.training
        if t.time_hours > 0 and t.gpus > 0
    ]
    if not runs:
        return Reliability(
            failures_per_gpu_hour=env.failures_per_gpu_hour,
            expected_interruptions=0.0,
            checkpoint_write_s=0.0,
            checkpoint_interval_hours=0.0,
            restart_hours=RESTART_OVERHEAD_HOURS,
            goodput=1.0,
            compute_hours=0.0,
            wallclock_hours=0.0,
            spares=spares,
        )
    main = max(runs, key=lambda r: r.total_h)
    productive = sum(r.compute_h + r.evaluation_h for r in runs)
    wall = sum(r.total_h for r in runs)
    return Reliability(
        failures_per_gpu_hour=env.failures_per_gpu_hour,
        expected_interruptions=round(sum(r.interruptions for r in runs), 3),
        checkpoint_write_s=round(main.checkpoint_write_s, 1),
        checkpoint_interval_hours=round(main.interval_h, 3),
        restart_hours=round(main.restart_h, 3),
        goodput=round(productive / wall, 4),
        compute_hours=round(sum(r.compute_h for r in runs), 3),
        wallclock_hours=round(wall, 3),
        spares=spares,
        checkpoint_hours=round(sum(r.checkpoint_h for r in runs), 6),
        final_checkpoint_only=main.final_only,
    )


def reliability_note(rel: Reliability, runs: Sequence[str] = ()) -> str | None:
    """Where the training time goes, in one sentence (None without a training run).

    ``runs``: the training workloads timed. With more than one, the interval and write time
    are the longest run's while the checkpoint and interruption shares cover them all, so
    the sentence says which is which instead of speaking of "the run".
    """
    if rel.wallclock_hours <= 0:
        return None
    tau = rel.checkpoint_interval_hours
    ckpt = rel.checkpoint_hours / rel.wallclock_hours
    rest = max(0.0, 1.0 - rel.goodput - ckpt)
    n = rel.expected_interruptions
    restart = f"{rel.restart_hours * 60:.0f} min each"
    several = len(runs) > 1
    over = f" over the {len(runs)} training runs ({', '.join(runs)})" if several else ""
    run = "the longest run" if several else "the run"
    lost = (f"about {n:.3g} interruptions cost {rest:.1%} in lost work and restarts ({restart})"
            if n >= 1 else
            f"{f'{n:.2g}' if n >= 0.001 else 'under 0.001'} interruptions are expected (most "
            f"likely none); on average they cost "
            f"{rest:.1%} in lost work and restarts ({restart})")
    write = f"{rel.checkpoint_write_s:.0f}" if rel.checkpoint_write_s >= 10 else (
        f"{rel.checkpoint_write_s:.2g}")
    when = (f"{run} is shorter than one checkpoint interval ({tau * 60:.0f} min, "
            f"Young/Daly), so it writes only its final checkpoint, {write} s"
            if rel.final_checkpoint_only else
            f"the longest run checkpoints every {tau * 60:.0f} min (Young/Daly), {write} s each"
            if several else
            f"checkpoints every {tau * 60:.0f} min (Young/Daly) take {write} s each")
    share = (f"; checkpoints take {ckpt:.1%} of the {len(runs)} runs' time" if several else
             f" ({ckpt:.1%} of the time)")
    return (
        f"Goodput {rel.goodput:.3f}{over}: {when}{share}; {lost}. Faster "
        "checkpoint storage or asynchronous checkpointing raise goodput."
    )
