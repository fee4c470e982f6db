"""The scheduler's part of the ClusterPlan: node sets, partitions, the topology tree.

Split from ``plan.models`` (which re-exports every name here) along the emitters' seam: the
Slurm inventory and BCM emitters read these, and nothing in them refers back to the rest of
the plan. Frozen like every plan model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NodeSet(Frozen):
    """A homogeneous group of compute nodes as the scheduler sees it."""

    name: str
    hosts: list[str]
    cpus: int
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    real_memory_mb: int
    gpu_type: str
    gpu_count: int
    gpu_files: str
    features: list[str] = Field(default_factory=list)
    core_spec_count: int = Field(
        default=0, description="Cores per node kept for the OS and daemons (CoreSpecCount)."
    )
    mem_spec_limit_mb: int = Field(
        default=0, description="Memory per node kept for the OS and daemons (MemSpecLimit)."
    )
    memory_gb: float = Field(
        default=0, description="Installed memory the plan assumes (the pre-flight check's basis)."
    )


class Partition(Frozen):
    name: str
    nodesets: list[str]
    default: bool = False
    max_time: str = "INFINITE"
    default_time: str | None = Field(
        default=None, description="DefaultTime: the limit of a job that asks for none."
    )
    def_cpu_per_gpu: int | None = Field(
        default=None, description="DefCpuPerGPU: CPUs a job gets per GPU unless it asks."
    )
    def_mem_per_gpu_mb: int | None = Field(
        default=None, description="DefMemPerGPU: memory a job gets per GPU unless it asks."
    )


class TopologySwitch(Frozen):
    """One line of a Slurm topology tree: a switch above nodes or above switches."""

    switch: str
    nodes: list[str] | None = None
    switches: list[str] | None = None


class SchedulerPlan(Frozen):
    """Workload manager layout derived from the nodes and the fabric graph."""

    kind: Literal["slurm", "bcm"]
    cluster_name: str
    controllers: list[str] = Field(description="Primary first; two when HA.")
    dbd_host: str
    login: list[str]
    nodesets: list[NodeSet]
    partitions: list[Partition]
    topology: list[TopologySwitch] = Field(description="Scalable units first, then upper tiers.")
