"""Pick the inventory emitter for the plan's scheduler (Slurm via Ansible, or BCM)."""

from __future__ import annotations

from generator.plan.models import ClusterPlan
from generator.render.files import OutFile


def emit_inventory(plan: ClusterPlan) -> list[OutFile]:
    """``inventories/<name>/`` for the plan's scheduler."""
    if plan.scheduler_kind == "bcm":
        from generator.emit.bcm import emit_bcm

        return emit_bcm(plan)
    from generator.emit.slurm import emit_slurm_inventory

    return emit_slurm_inventory(plan)
