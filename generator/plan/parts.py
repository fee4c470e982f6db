"""The decided-but-not-yet-built pieces of a plan, shared by the assembly modules.

``build.build_plan`` first makes every decision (node names, fabric shape and graph, storage,
front-end graph, rack layout) and only then builds the frozen plan objects. The builders
(``address_table``, ``devices``, ``summary``) read those decisions from one ``Parts`` record;
it lives here, not in ``build``, so they can import it without importing the composition
root that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.models import Gpu, Server
from generator.plan.catalog_models import PlanCatalog
from generator.plan.compute import ComputeNodes
from generator.plan.facility.racks import RackLayout
from generator.plan.heads import Management
from generator.plan.lock.model import Lock
from generator.plan.models import StoragePlan
from generator.plan.network.ethernet import FrontendGraph
from generator.plan.network.fabric import FabricGraph, FabricShape
from generator.plan.network.fabric_parts import FabricParts
from generator.plan.network.side_networks import SideNet
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

IB_MODEL = "qm9790"


@dataclass
class Parts:
    """Everything decided before the plan objects are built."""

    spec: Spec
    sizing: SizingResult
    pc: PlanCatalog
    server: Server
    gpu: Gpu
    nodes: ComputeNodes
    mgmt: Management
    shape: FabricShape
    graph: FabricGraph
    storage: StoragePlan
    storage_names: list[str]
    frontend: FrontendGraph
    racks: list[RackLayout]
    backend: SideNet
    oob_agg: SideNet
    lock: Lock | None = None
    fabric_absent: tuple[str, str] | None = None
    """(short reason, design note) when no compute fabric is bought (``fabric_need``)."""
    fabric: FabricParts | None = None
    """The fabric's switch model, node NIC and subnet-manager HCA (``fabric_parts``)."""
