"""Periodic evaluation: forward-only passes over held-out samples during training.

Published time-to-train (MLPerf's among them) includes evaluation, and a spec may say so:
``evaluation: {every_samples: N, samples: M}``. A training run of S samples evaluates
floor(S / N) times; each pass pushes M samples through the model forward only, on the
training layout: ceil(M / (d x b)) micro-batches per pipeline plus the p - 1 fill of the
pipeline, each ``steptime.forward_time`` long.
"""

from __future__ import annotations

import math

from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, Layout
from generator.sizing.training.steptime import forward_time


def evaluation_passes(job: Job) -> int:
    """Evaluations during the run: one every ``every_samples`` training samples."""
    if job.evaluation is None:
        return 0
    return job.steps * job.global_batch // job.evaluation.every_samples


def pass_seconds(job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency) -> float:
    """One evaluation pass over ``samples`` on this layout."""
    if job.evaluation is None:
        return 0.0
    microbatches = math.ceil(job.evaluation.samples / (lay.dp * lay.mbs))
    return (microbatches + lay.pp - 1) * forward_time(job, lay, device, node, eff)


def evaluation_seconds(
    job: Job, lay: Layout, device: Device, node: Node, eff: Efficiency
) -> float:
    """All evaluation passes of the run."""
    passes = evaluation_passes(job)
    return passes * pass_seconds(job, lay, device, node, eff) if passes else 0.0
