"""Shared storage (PowerScale F710) sized for capacity and checkpoint throughput.

* Required capacity (TB) = ``storage.dataset_tb`` + sum over training workloads of one
  checkpoint (from the sizing: weights + optimizer state for full training, adapters only for
  LoRA) x ``storage.checkpoint_keep``.
* Usable capacity of n nodes = raw x (1 - OneFS protection overhead for n nodes) x
  (1 - filesystem reserve); data reduction is planned at the catalog's ratio (1.0).
* Write throughput so the largest checkpoint is written within
  ``storage.checkpoint_write_seconds``: nodes >= checkpoint_GB / target_s / per-node write.
* At least the model's minimum pool (3 nodes). The smallest node count that meets both is
  chosen, then the smallest drive that gives the capacity.

Per-node throughput is a planning estimate (no Dell figure was found); the output says so.
"""

from __future__ import annotations

import math

from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import StorageModel
from generator.plan.models import StoragePlan
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

STORAGE_MODEL = "powerscale-f710"
MOUNT_POINT = "/shared"


def checkpoint_sizes_gb(sizing: SizingResult) -> list[float]:
    """One checkpoint per training workload (GB)."""
    return [t.checkpoint_gb for t in sizing.training]


def _usable_tb(model: StorageModel, nodes: int, drive_tb: float) -> float:
    raw = nodes * model.drives_per_node * drive_tb
    return (
        raw
        * (1.0 - model.protection_fraction(nodes))
        * (1.0 - model.filesystem_reserve_fraction)
        * model.data_reduction_ratio_planning
    )


def plan_storage(
    spec: Spec, sizing: SizingResult, model: StorageModel, nfs_server: str
) -> StoragePlan:
    """Node count, drives and throughput of the shared file system."""
    st = spec.storage
    ckpts = checkpoint_sizes_gb(sizing)
    largest = max(ckpts, default=0.0)
    required_tb = st.dataset_tb + sum(ckpts) * st.checkpoint_keep / 1000.0
    need_write = largest / st.checkpoint_write_seconds
    n = max(model.min_nodes, math.ceil(need_write / model.write_gbytes_per_s_per_node - 1e-9))
    drives = sorted(model.drive_tb_options)
    choice: tuple[int, float] | None = None
    while n <= model.max_nodes and choice is None:
        fits = [d for d in drives if _usable_tb(model, n, d) >= required_tb]
        if fits:
            choice = (n, fits[0])
        else:
            n += 1
    if choice is None:
        limit = _usable_tb(model, model.max_nodes, drives[-1])
        raise PodplanError(
            f"shared storage cannot hold {required_tb:.0f} TB in one {model.name} cluster",
            problems=[
                Problem(
                    path="storage.dataset_tb",
                    message=(
                        f"needs {required_tb:.0f} TB usable; {model.max_nodes} nodes of "
                        f"{drives[-1]} TB drives give {limit:.0f} TB"
                    ),
                    hint="reduce storage.dataset_tb or storage.checkpoint_keep",
                )
            ],
        )
    nodes, drive = choice
    raw = nodes * model.drives_per_node * drive
    write = nodes * model.write_gbytes_per_s_per_node
    read = nodes * model.read_gbytes_per_s_per_node
    prot = model.protection_fraction(nodes)
    why = (
        "capacity"
        if need_write <= model.min_nodes * model.write_gbytes_per_s_per_node
        else ("checkpoint write throughput")
    )
    notes = [
        f"Per-node throughput ({model.read_gbytes_per_s_per_node:g} GB/s read, "
        f"{model.write_gbytes_per_s_per_node:g} GB/s write) is a planning estimate "
        f"({model.citation('write_gbytes_per_s_per_node')}); no Dell figure was found. "
        "Measure before committing.",
        f"Required {required_tb:.1f} TB = dataset {st.dataset_tb:g} TB + "
        f"{st.checkpoint_keep} x checkpoints ({sum(ckpts):.0f} GB per set).",
        f"Usable = raw {raw:.1f} TB x (1 - {prot:.3f} protection) x "
        f"(1 - {model.filesystem_reserve_fraction:g} reserve); data reduction planned at "
        f"{model.data_reduction_ratio_planning:g}.",
        f"{nodes} nodes (minimum {model.min_nodes}; sized by {why}): the largest checkpoint "
        f"({largest:.0f} GB) writes in {largest / write:.0f} s against a target of "
        f"{st.checkpoint_write_seconds:g} s.",
        "The PowerScale back-end network (2x 100GbE per node) is quoted with the storage "
        "and is not part of this plan's switch count.",
    ]
    return StoragePlan(
        model=model.id,
        nodes=nodes,
        drive_tb=drive,
        raw_tb=round(raw, 2),
        usable_tb=round(_usable_tb(model, nodes, drive), 2),
        required_tb=round(required_tb, 2),
        read_gbps=round(read, 2),
        write_gbps=round(write, 2),
        checkpoint_gb=round(largest, 2),
        checkpoint_write_s=round(largest / write, 1),
        nfs_server=nfs_server,
        nfs_export=f"/ifs/{spec.name}",
        mount_point=MOUNT_POINT,
        notes=notes,
    )
