"""The workload-manager layout (Slurm, directly or under BCM) derived from the plan.

* Controllers are the two head nodes (primary, backup); slurmdbd runs on the first.
* One node set ``gpu`` of the compute nodes with CPU and memory from the server catalog
  (``RealMemory`` = 95 % of RAM, leaving room for the OS) and the GPU type from the GPU
  catalog's ``slurm_gres_type``; hot spares form a second set ``spare`` in a non-default
  partition so they are configured identically but take no jobs until swapped in.
* Topology (``topology.conf`` tree): in a rail-optimized fabric a node has a NIC on every
  rail leaf, so a node has no single leaf switch. The first level is therefore the scalable
  unit (``su<N>`` over that SU's nodes: one hop per rail inside it), then the pod spine
  groups (three tiers), then the top (``spine`` for one or two tiers, ``core`` for three).
"""

from __future__ import annotations

from collections import defaultdict

from generator.catalog.models import Gpu, Server
from generator.plan.models import NodeSet, Partition, SchedulerPlan, TopologySwitch
from generator.plan.network.fabric import FabricShape

MEMORY_FRACTION = 0.95


def nodeset(name: str, hosts: list[str], server: Server, gpu: Gpu, gpus: int) -> NodeSet:
    return NodeSet(
        name=name,
        hosts=hosts,
        cpus=server.cpu_sockets * server.cores_per_socket * server.threads_per_core,
        sockets=server.cpu_sockets,
        cores_per_socket=server.cores_per_socket,
        threads_per_core=server.threads_per_core,
        real_memory_mb=int(server.memory_gb * 1024 * MEMORY_FRACTION),
        gpu_type=gpu.slurm_gres_type,
        gpu_count=gpus,
        gpu_files=f"/dev/nvidia[0-{gpus - 1}]" if gpus > 1 else "/dev/nvidia0",
        features=[server.id, gpu.slurm_gres_type],
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
) -> SchedulerPlan:
    """Controllers, node sets, partitions and the topology tree."""
    sets = [nodeset("gpu", [n for n, _ in compute], server, gpu, gpus_per_node)]
    parts = [Partition(name="gpu", nodesets=["gpu"], default=True)]
    if spares:
        sets.append(nodeset("spare", [n for n, _ in spares], server, gpu, gpus_per_node))
        parts.append(Partition(name="spare", nodesets=["spare"], default=False))
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
