"""Front-end Ethernet and rack layout, solved together.

The two depend on each other: every rack gets an out-of-band switch, each OOB switch needs a
front-end uplink, and more front-end ports can mean more front-end switches to rack. So
``solve_layout`` guesses the rack count, designs the front end for that many OOB switches,
lays out the racks, and repeats until the rack count stops changing (in practice one or two
rounds; ``MAX_LAYOUT_ROUNDS`` only guards against a bug).
"""

from __future__ import annotations

from generator.catalog.models import Server
from generator.plan.catalog_models import PlanCatalog
from generator.plan.compute import ComputeNodes
from generator.plan.facility.racks import Device, RackLayout, layout_racks
from generator.plan.heads import HEAD_MODEL, Management
from generator.plan.network import ethernet
from generator.plan.network.ethernet import Endpoint, FrontendGraph, design_frontend
from generator.plan.network.fabric import FabricGraph
from generator.plan.parts import IB_MODEL
from generator.plan.storage import STORAGE_MODEL
from generator.spec.models import Spec

GPU_FE_GBPS = 100
MGMT_FE_GBPS = 25
MAX_LAYOUT_ROUNDS = 32


def solve_layout(
    spec: Spec,
    pc: PlanCatalog,
    server: Server,
    nodes: ComputeNodes,
    mgmt: Management,
    graph: FabricGraph,
    storage_names: list[str],
) -> tuple[FrontendGraph, list[RackLayout]]:
    """Front-end network and racks, iterated until the OOB switch count is stable."""
    fac = spec.facility
    rack = pc.rack
    pdus = (
        rack.pdus_per_rack_up_to_20kw if fac.rack_power_kw <= 20 else rack.pdus_per_rack_above_20kw
    )
    oob_model = pc.switches[ethernet.OOB_MODEL]
    oob = Device("oob", "switch", oob_model.rack_units, oob_model.power_kw)
    leaf_m, spine_m = pc.switches[ethernet.LEAF_MODEL], pc.switches[ethernet.SPINE_MODEL]
    hosts = _endpoints(nodes, mgmt, storage_names, pc)
    n_oob = 1
    for _ in range(MAX_LAYOUT_ROUNDS):
        width = max(2, len(str(n_oob)))
        oob_eps = [Endpoint(f"oob-r{i:0{width}d}", 1, 100) for i in range(1, n_oob + 1)]
        fe = design_frontend([*hosts, *oob_eps], leaf_m, spine_m)
        compute = [
            Device(n, "node", server.rack_units, server.max_power_kw, server.mount_below_u)
            for n in (*nodes.compute, *nodes.spares)
        ]
        infra = _infra_devices(pc, mgmt, storage_names, graph, fe)
        racks = layout_racks(
            compute,
            server.name,
            infra,
            oob,
            fac.rack_power_kw,
            fac.rack_units,
            pdus,
            oob_model.ports,
        )
        if len(racks) == n_oob:
            return fe, racks
        n_oob = len(racks)
    raise AssertionError("rack layout did not converge")


def _endpoints(
    nodes: ComputeNodes, mgmt: Management, storage_names: list[str], pc: PlanCatalog
) -> list[Endpoint]:
    """Every host on the front-end network, with its port count and speed."""
    sm = pc.storage[STORAGE_MODEL]
    eps = [Endpoint(n, 2, MGMT_FE_GBPS) for n in (*mgmt.heads, *mgmt.login, *mgmt.ufm)]
    eps += [Endpoint(n, min(2, sm.frontend_ports_per_node), GPU_FE_GBPS) for n in storage_names]
    eps += [Endpoint(n, 2, GPU_FE_GBPS) for n in (*nodes.compute, *nodes.spares)]
    return eps


def _infra_devices(
    pc: PlanCatalog,
    mgmt: Management,
    storage_names: list[str],
    graph: FabricGraph,
    fe: FrontendGraph,
) -> list[Device]:
    """Everything racked besides compute nodes and OOB switches, in placement order."""
    head = pc.servers[HEAD_MODEL]
    st = pc.storage[STORAGE_MODEL]
    ib = pc.switches[IB_MODEL]
    leaf, spine = pc.switches[ethernet.LEAF_MODEL], pc.switches[ethernet.SPINE_MODEL]
    out = [Device(n, "node", head.rack_units, head.max_power_kw) for n in mgmt.heads]
    out += [Device(n, "node", head.rack_units, head.max_power_kw) for n in mgmt.login]
    out += [Device(n, "node", head.rack_units, head.max_power_kw) for n in mgmt.ufm]
    out += [Device(n, "node", st.rack_units, st.power_w / 1000.0) for n in storage_names]
    out += [
        Device(n, "switch", ib.rack_units, ib.power_kw)
        for n in (*graph.core_names, *graph.spine_names, *graph.leaf_names)
    ]
    out += [
        Device(n, "switch", spine.rack_units, spine.power_kw)
        for n in (*fe.core_names, *fe.spine_names)
    ]
    out += [Device(n, "switch", leaf.rack_units, leaf.power_kw) for n in fe.leaf_names]
    return out
