"""The Slurm workload manager as BCM sets it up: ``cm-wlm-setup`` plus the bcm110 WLM modules.

BCM creates a WLM only through ``cm-wlm-setup`` (Administrator Manual 7.3), so the WLM data is
one bundle: the exact CLI arguments, then the ``slurm_wlm_cluster`` settings, GPU overlays and
job queues applied afterwards. Both the Ansible group_vars and the reports read this bundle.
"""

from __future__ import annotations

from typing import Any

from generator.emit.bcm.common import GPU_OVERLAY, GPU_OVERLAY_PRIORITY, LOGIN_CATEGORY
from generator.plan.models import ClusterPlan, NodeSet


def _gres(ns: NodeSet) -> dict[str, Any]:
    """A node set's GPU GRES as a Slurm client role ``genericResources`` entry."""
    return {"name": "gpu", "type": ns.gpu_type, "count": str(ns.gpu_count),
            "file": ns.gpu_files}


def gpu_overlays(plan: ClusterPlan) -> list[dict[str, Any]]:
    """GPU WLM client overlays (``bcm110.configuration_overlay``): GRES gpu with the type.

    ``cm-wlm-setup --nvidia-gpus`` takes one type:count, so node sets whose GRES agree share
    the overlay it creates (``slurm-client-gpu``); any other GRES gets its own overlay.
    """
    groups: dict[tuple[str, int, str], list[NodeSet]] = {}
    for ns in plan.scheduler.nodesets:
        groups.setdefault((ns.gpu_type, ns.gpu_count, ns.gpu_files), []).append(ns)
    out: list[dict[str, Any]] = []
    for i, sets in enumerate(groups.values()):
        role: dict[str, Any] = {
            "name": "slurmclient",
            "wlmCluster": plan.scheduler.cluster_name,
            "genericResources": [_gres(sets[0])],
        }
        features = sorted({f for ns in sets for f in ns.features})
        if features:
            role["features"] = features
        out.append({
            "name": GPU_OVERLAY if i == 0 else f"{GPU_OVERLAY}-{sets[0].name}",
            "priority": GPU_OVERLAY_PRIORITY,
            "categories": [ns.name for ns in sets],
            "roles_SlurmClientRole": [role],
        })
    return out


def job_queues(plan: ClusterPlan) -> list[dict[str, Any]]:
    """One ``bcm110.slurm_job_queue`` per plan partition, with exactly its node sets' hosts."""
    hosts = {ns.name: ns.hosts for ns in plan.scheduler.nodesets}
    out: list[dict[str, Any]] = []
    for order, p in enumerate(plan.scheduler.partitions):
        out.append({
            "name": p.name,
            "wlmCluster": plan.scheduler.cluster_name,
            "computeNodes": sorted({h for ns in p.nodesets for h in hosts.get(ns, [])}),
            "defaultQueue": p.default,
            "maxTime": "UNLIMITED" if p.max_time == "INFINITE" else p.max_time,
            "ordering": order,
            "state": "UP",
        })
    return out


def topology(plan: ClusterPlan) -> list[dict[str, Any]]:
    """The plan's Slurm tree, unchanged (the design reference for BCM's topology.conf)."""
    return [t.model_dump(exclude_none=True) for t in plan.scheduler.topology]


def setup_args(plan: ClusterPlan) -> list[str]:
    """``cm-wlm-setup`` CLI arguments (options of the BCM 11 Administrator Manual, 7.3.1)."""
    s = plan.scheduler
    args = ["--setup", "--wlm", "slurm", "--wlm-cluster-name", s.cluster_name,
            "--server-nodes", ",".join(s.controllers), "--server-primary", s.controllers[0]]
    if plan.nodes_with_role("login"):
        args += ["--submit-categories", LOGIN_CATEGORY]
    overlays = gpu_overlays(plan)
    if overlays:
        gres = overlays[0]["roles_SlurmClientRole"][0]["genericResources"][0]
        args += ["--gpu-client-categories", ",".join(overlays[0]["categories"]),
                 "--nvidia-gpus", f"{gres['type']}:{gres['count']}"]
    return [*args, "--with-pyxis", "--on-error-action", "abort", "--json",
            "--yes-i-really-mean-it"]


def wlm(plan: ClusterPlan) -> dict[str, Any]:
    """The Slurm WLM: cm-wlm-setup arguments, slurm_wlm_cluster settings, overlays, queues."""
    s = plan.scheduler
    fabric = sorted(sw.name for sw in plan.switches if sw.network == "compute")
    return {
        "cluster_name": s.cluster_name,
        "server_nodes": list(s.controllers),
        "dbd_host": s.dbd_host,
        "pyxis": True,
        "setup_args": setup_args(plan),
        "cluster": {
            "name": s.cluster_name,
            "primaryServer": s.controllers[0],
            "gresTypes": ["gpu"],
            "selectType": "select/cons_tres",
            "accountingStorageTRES": ["gres/gpu"],
            "cgroups": {"constrainCores": True, "constrainDevices": True,
                        "constrainRAMSpace": True},
            "topologySettings": {
                "topologyPlugin": "TREE",
                "topologySource": "INTERNAL",
                "params": {"switchAsNodeRank": True},
                "treeSettings": {"topologySwitches": fabric},
            },
        },
        "gpu_overlays": gpu_overlays(plan),
        "queues": job_queues(plan),
        "topology": topology(plan),
    }


def wlm_answers(w: dict[str, Any]) -> dict[str, Any]:
    """The cm-wlm-setup answers keyed by the documented CLI option names."""
    answers: dict[str, Any] = {}
    args = list(w["setup_args"])
    i = 0
    while i < len(args):
        key = args[i].removeprefix("--")
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            answers[key] = args[i + 1]
            i += 2
        else:
            answers[key] = True
            i += 1
    return {"cm_wlm_setup": answers, "gpu_overlays": w["gpu_overlays"], "queues": w["queues"]}

