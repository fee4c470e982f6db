"""The workload-manager layout (Slurm, directly or under BCM) derived from the plan.

* Controllers are the two head nodes (primary, backup); slurmdbd runs on the first.
* One node set ``gpu`` of the compute nodes with the node shape of the spec
  (``hardware.node_shape``) or, field by field, the server catalog (``RealMemory`` = 95 %
  of RAM: the kernel keeps part of the installed memory, and a node that reports less than
  ``RealMemory`` goes INVALID) and the GPU type from the GPU catalog's ``slurm_gres_type``;
  hot spares form a second set ``spare`` in a non-default partition so they are configured
  identically but take no jobs until swapped in.
* Capacity for the OS and the node daemons (slurmd/slurmstepd, DCGM, persistenced, munge,
  the NFS client, IPoIB): one core per socket (``CoreSpecCount``) and 2 % of ``RealMemory``
  between 2 and 32 GiB (``MemSpecLimit``). Jobs that ask for nothing get the node's remaining
  cores and memory divided by its GPUs (``DefCpuPerGPU`` in whole cores, ``DefMemPerGPU``),
  so a 1-GPU job without ``--mem`` no longer takes the whole node and eight such jobs fit.
* Partitions have a ``DefaultTime`` (backfill needs limits) and a finite ``MaxTime``.
* Topology (``topology.conf`` tree): in a rail-optimized fabric a node has a NIC on every
  rail leaf, so a node has no single leaf switch. The first level is therefore the scalable
  unit (``su<N>`` over that SU's nodes: one hop per rail inside it), then the pod spine
  groups (three tiers), then the top (``spine`` for one or two tiers, ``core`` for three).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from generator.catalog.models import Gpu, Server
from generator.plan.models import NodeSet, Partition, SchedulerPlan, TopologySwitch
from generator.plan.network.fabric import FabricShape
from generator.spec.models import NodeShape

MEMORY_FRACTION = 0.95
# Kept for the OS and daemons: a core per socket, 2 % of RealMemory within [2, 32] GiB.
CORE_SPEC_PER_SOCKET = 1
MEM_SPEC_FRACTION = 0.02
MEM_SPEC_MIN_MB = 2048
MEM_SPEC_MAX_MB = 32768
# Partition limits: jobs without --time get DEFAULT_TIME; none may run past MAX_TIME (a
# training run checkpoints and resubmits; see the plan's checkpoint interval).
DEFAULT_TIME = "01:00:00"
MAX_TIME = "7-00:00:00"


@dataclass(frozen=True)
class Shape:
    """The compute node's CPUs and memory: the spec's values over the catalog's."""

    sockets: int
    cores_per_socket: int
    threads_per_core: int
    memory_gb: float

    @classmethod
    def of(cls, server: Server, spec: NodeShape | None = None) -> Shape:
        given = spec or NodeShape()
        return cls(
            sockets=given.sockets or server.cpu_sockets,
            cores_per_socket=given.cores_per_socket or server.cores_per_socket,
            threads_per_core=given.threads_per_core or server.threads_per_core,
            memory_gb=given.memory_gb or server.memory_gb,
        )

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def real_memory_mb(self) -> int:
        return int(self.memory_gb * 1024 * MEMORY_FRACTION)

    @property
    def core_spec_count(self) -> int:
        """Reserved cores; always leaves at least one core for jobs."""
        return max(0, min(self.sockets * CORE_SPEC_PER_SOCKET, self.cores - 1))

    @property
    def mem_spec_limit_mb(self) -> int:
        share = int(self.real_memory_mb * MEM_SPEC_FRACTION)
        return min(max(share, MEM_SPEC_MIN_MB), MEM_SPEC_MAX_MB, self.real_memory_mb // 2)


def nodeset(name: str, hosts: list[str], shape: Shape, tag: str, gpu: Gpu, gpus: int) -> NodeSet:
    return NodeSet(
        name=name,
        hosts=hosts,
        cpus=shape.cores * shape.threads_per_core,
        sockets=shape.sockets,
        cores_per_socket=shape.cores_per_socket,
        threads_per_core=shape.threads_per_core,
        real_memory_mb=shape.real_memory_mb,
        gpu_type=gpu.slurm_gres_type,
        gpu_count=gpus,
        gpu_files=f"/dev/nvidia[0-{gpus - 1}]" if gpus > 1 else "/dev/nvidia0",
        features=[tag, gpu.slurm_gres_type],
        core_spec_count=shape.core_spec_count,
        mem_spec_limit_mb=shape.mem_spec_limit_mb,
        memory_gb=shape.memory_gb,
    )


def partition(name: str, shape: Shape, gpus: int, default: bool) -> Partition:
    """A partition over one node set, with per-GPU defaults from the node shape.

    DefCpuPerGPU is counted in whole cores so that ``gpus`` one-GPU jobs fit on a node;
    it is left out when the node has fewer free cores than GPUs.
    """
    cores_per_gpu = (shape.cores - shape.core_spec_count) // max(gpus, 1)
    mem_per_gpu = (shape.real_memory_mb - shape.mem_spec_limit_mb) // max(gpus, 1)
    return Partition(
        name=name,
        nodesets=[name],
        default=default,
        max_time=MAX_TIME,
        default_time=DEFAULT_TIME,
        def_cpu_per_gpu=cores_per_gpu * shape.threads_per_core if cores_per_gpu else None,
        def_mem_per_gpu_mb=mem_per_gpu if gpus else None,
    )


def topology(nodes_su: list[tuple[str, int]], shape: FabricShape) -> list[TopologySwitch]:
    """SU switches first, then pod spine groups (3 tiers), then the top switch."""
    by_su: dict[int, list[str]] = defaultdict(list)
    for name, su in nodes_su:
        by_su[su].append(name)
    sus = sorted(by_su)
    out = [TopologySwitch(switch=f"su{su}", nodes=by_su[su]) for su in sus]
    if shape.style == "clos3":
        sus_per_pod = max(1, (shape.radix // 2) // max(1, shape.rails))
        pods: dict[int, list[str]] = defaultdict(list)
        for su in sus:
            pods[(su - 1) // sus_per_pod + 1].append(f"su{su}")
        out += [TopologySwitch(switch=f"pod{p}", switches=pods[p]) for p in sorted(pods)]
        out.append(TopologySwitch(switch="core", switches=[f"pod{p}" for p in sorted(pods)]))
    elif sus:
        out.append(TopologySwitch(switch="spine", switches=[f"su{su}" for su in sus]))
    return out


def plan_scheduler(
    kind: str,
    cluster: str,
    heads: list[str],
    login: list[str],
    compute: list[tuple[str, int]],
    spares: list[tuple[str, int]],
    server: Server,
    gpu: Gpu,
    gpus_per_node: int,
    shape: FabricShape,
    node_shape: NodeShape | None = None,
) -> SchedulerPlan:
    """Controllers, node sets, partitions and the topology tree."""
    node = Shape.of(server, node_shape)
    sets = [nodeset("gpu", [n for n, _ in compute], node, server.id, gpu, gpus_per_node)]
    parts = [partition("gpu", node, gpus_per_node, default=True)]
    if spares:
        hosts = [n for n, _ in spares]
        sets.append(nodeset("spare", hosts, node, server.id, gpu, gpus_per_node))
        parts.append(partition("spare", node, gpus_per_node, default=False))
    return SchedulerPlan(
        kind=kind,  # type: ignore[arg-type]
        cluster_name=cluster,
        controllers=heads[:2],
        dbd_host=heads[0],
        login=login,
        nodesets=sets,
        partitions=parts,
        topology=topology([*compute, *spares], shape),
    )
