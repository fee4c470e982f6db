"""Whether the plan buys a compute fabric, and why not when it does not.

A compute fabric (InfiniBand NDR, its switches, NIC cables and subnet manager) carries the
collectives of a job that spans nodes. A single node's GPUs talk over NVLink; a serving-only
cluster whose every replica fits one node has no traffic between nodes at all (each replica
answers requests on its own; requests arrive over the front end), so a fabric there is
capacity nobody uses. A multi-node replica (TP or PP across nodes) needs one, and so does any
training run. A user who wants one anyway (training later, disaggregated serving) pins
``hardware.east_west_nics_per_node`` or sets ``fabric.growth_nodes``; a cluster whose plan
lock already has a fabric keeps it (taking built switches out is not the planner's call).
"""

from __future__ import annotations

from generator.catalog.models import Server
from generator.plan.lock.model import Lock
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

SINGLE_NODE = (
    "Smallest fabric rule: no InfiniBand fabric for a single node; its 8 GPUs talk "
    "over NVLink/NVSwitch, so no fabric switch, NIC cable or subnet manager is "
    "bought. Two or more nodes get at least two fabric switches (Dell's validated "
    "design, seed 004), so one switch failure leaves every node on half its rails."
)
NO_NICS = "The server has no east-west NICs: no compute fabric; GPU traffic uses the front end."


def _replicas_in_node(sizing: SizingResult) -> str | None:
    """'chat TP2 on 8-GPU nodes' when the cluster only serves and no replica spans nodes."""
    if sizing.training or not sizing.inference:
        return None
    per_node = sizing.gpus_per_node
    if any(w.tp * w.pp > per_node for w in sizing.inference):
        return None
    layouts = ", ".join(f"{w.name}: TP{w.tp}" + (f" PP{w.pp}" if w.pp > 1 else "")
                        for w in sizing.inference)
    return f"{layouts} on {per_node}-GPU nodes"


def _locked_fabric(lock: Lock | None) -> bool:
    return lock is not None and bool(lock.with_role("compute-leaf"))


def fabric_absence(
    spec: Spec, server: Server, sizing: SizingResult, fabric_nodes: int, lock: Lock | None
) -> tuple[str, str] | None:
    """(short reason, design note) when the plan buys no compute fabric; None when it does."""
    if not server.east_west_nic_options:
        return "the server has no east-west NICs", NO_NICS
    if fabric_nodes + spec.fabric.growth_nodes <= 1:
        return "one node: its GPUs talk over NVLink", SINGLE_NODE
    asked = spec.hardware.east_west_nics_per_node is not None or spec.fabric.growth_nodes
    layouts = _replicas_in_node(sizing)
    if layouts is None or asked or _locked_fabric(lock):
        return None
    return (
        "serving only, every replica fits one node",
        f"No compute fabric: this cluster only serves and every replica fits one node "
        f"({layouts}), so no traffic crosses nodes; each replica answers its own requests, "
        "which arrive over the front end. No fabric switch, GPU-fabric NIC, NIC cable or "
        "subnet manager is bought. A replica across nodes (tp or pp beyond one node) or a "
        "training workload gets one; to buy one anyway (training later, disaggregated "
        "serving), set hardware.east_west_nics_per_node or fabric.growth_nodes.",
    )
