"""The spec's ``hardware:`` section: which server and GPU, a fixed size, the node shape.

Split from ``spec.models`` (which re-exports both) because it stands alone: no workload
field refers to it, and the planner reads it apart (``plan.scheduler`` takes the node shape).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from generator.spec.base import SpecModel

NODE_NAME = re.compile(r"[a-z][a-z0-9-]{0,62}")


class NodeShape(SpecModel):
    """The compute node's CPUs and memory as installed; unset fields come from the catalog.

    Slurm's node definition (and what a job may ask for) follows this shape, and the
    Ansible pre-flight play compares it with ``slurmd -C`` on every node before deploying.
    """

    sockets: int | None = Field(default=None, ge=1, le=8, description="CPU sockets.")
    cores_per_socket: int | None = Field(
        default=None, ge=1, le=512, description="Physical cores per socket."
    )
    threads_per_core: int | None = Field(
        default=None, ge=1, le=8, description="Hardware threads per core (2 with SMT on)."
    )
    memory_gb: float | None = Field(
        default=None, gt=0, description="Installed memory (GB, as ordered: 1024 for 1 TB)."
    )


class Hardware(SpecModel):
    """Which server and GPU to build from, and optionally a fixed size."""

    server: str = Field(default="xe9680", description="Catalog server id.")
    gpu: str = Field(default="h100-sxm-80gb", description="Catalog GPU id.")
    east_west_nics_per_node: int | None = Field(
        default=None, ge=0,
        description="GPU-fabric NICs per node, one the server offers (XE9680: 8 or 4, Dell "
                    "configs 1 and 2); default: the server's standard count.",
    )
    gpus: int | None = Field(
        default=None, gt=0,
        description="Fix the GPU count (what-if mode), whole servers or not (the bill of "
                    "materials rounds up to whole servers); otherwise sized.",
    )
    login_nodes: int = Field(default=1, ge=0, le=8, description="R660 login nodes.")
    hot_spares: int | Literal["auto"] = Field(
        default=0,
        description="Spare compute nodes: a number, or 'auto' from the reliability model.",
    )
    node_shape: NodeShape = Field(
        default_factory=NodeShape,
        description="Compute node sockets, cores, threads and memory; catalog defaults otherwise.",
    )

    remove_nodes: list[str] = Field(
        default_factory=list,
        max_length=4096,
        description=(
            "Compute or spare nodes of the locked plan to take out (e.g. [gpu007]): they are "
            "removed and their names and addresses retired. A smaller cluster otherwise loses "
            "its highest-numbered nodes; with the size unchanged, new nodes replace them."
        ),
    )

    @field_validator("hot_spares")
    @classmethod
    def _non_negative(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 0:
            raise ValueError("hot_spares must be >= 0 or 'auto'")
        return v

    @field_validator("remove_nodes")
    @classmethod
    def _node_names(cls, v: list[str]) -> list[str]:
        bad = [n for n in v if not NODE_NAME.fullmatch(n)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a node name (like gpu007)")
        dup = sorted({n for n in v if v.count(n) > 1})
        if dup:
            raise ValueError(f"nodes are listed more than once: {', '.join(dup)}")
        return v
