"""Spec + sizing -> one resolved ``ClusterPlan``.

The order of decisions: compute nodes and spares -> management servers -> compute fabric ->
storage -> front-end Ethernet and racks (solved together: every rack adds an out-of-band
switch that needs a front-end uplink) -> addresses -> scheduler -> reliability -> cloud.
Each step lives in its own module; this one only wires them together and builds the frozen
plan objects. Objects in the large lists (nodes, switches, links) are built without
per-object validation (``_construct.builder``, a ``model_construct`` equivalent) from
already-validated inputs, with the cyclic GC paused: a 2,048-node plan takes well under a
second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.catalog.load import Catalog
from generator.catalog.models import Gpu, Server
from generator.errors import PodplanError
from generator.plan import addressing, cabling, ethernet
from generator.plan._construct import builder, gc_paused
from generator.plan.catalog_models import FailureStats, PlanCatalog
from generator.plan.cloud import plan_cloud
from generator.plan.compute import ComputeNodes, plan_compute
from generator.plan.ethernet import Endpoint, FrontendGraph, design_frontend
from generator.plan.fabric import FabricGraph, FabricShape, build_fabric, shape_fabric
from generator.plan.heads import HEAD_MODEL, UFM_MODEL, Management, plan_management
from generator.plan.models import (
    Addresses,
    ClusterPlan,
    FabricAddress,
    FabricSummary,
    Link,
    NetworkPlan,
    Node,
    PowerSummary,
    Rack,
    RackSlot,
    StoragePlan,
    Switch,
)
from generator.plan.racks import Device, RackLayout, layout_racks
from generator.plan.reliability import plan_reliability, reliability_note
from generator.plan.scheduler import plan_scheduler
from generator.plan.storage import STORAGE_MODEL, plan_storage
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

_FabricAddress = builder(FabricAddress)
_Addresses = builder(Addresses)
_Node = builder(Node)
_Switch = builder(Switch)
_RackSlot = builder(RackSlot)
_Rack = builder(Rack)

IB_MODEL = "qm9790"
FAILURE_STATS = "llama3-405b-pretraining"
BTU_PER_KW = 3412.142
HOURS_PER_MONTH = 730.0
GPU_FE_GBPS = 100
MGMT_FE_GBPS = 25
STORAGE_PREFIX = "pscale"
MAX_LAYOUT_ROUNDS = 32


@dataclass
class _Parts:
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


def build_plan(spec: Spec, spec_file: str, sizing: SizingResult, catalog: Catalog) -> ClusterPlan:
    """Resolve every node, switch, cable, rack slot and address for ``spec``."""
    try:
        with gc_paused():
            parts = _decide(spec, sizing, PlanCatalog(catalog))
            return _assemble(parts, spec_file)
    except PodplanError as err:
        if err.source is not None:
            raise
        raise PodplanError(err.summary, spec_file, err.problems) from None


def _rails(spec: Spec, server: Server) -> int:
    if not server.east_west_nic_options:
        return 0
    return spec.hardware.east_west_nics_per_node


def _decide(spec: Spec, sizing: SizingResult, pc: PlanCatalog) -> _Parts:
    server = pc.servers[spec.hardware.server]
    gpu = pc.gpus[spec.hardware.gpu]
    stats = _failure_stats(pc)
    nodes = plan_compute(spec, sizing, stats)
    rails = _rails(spec, server)
    mgmt = plan_management(spec, fabric=rails > 0)
    sm_hosts = mgmt.subnet_manager_hosts(spec.fabric.subnet_manager.value) if rails else []
    fabric_nodes = [*nodes.compute, *nodes.spares]
    designed = len(fabric_nodes) + spec.fabric.growth_nodes
    shape = shape_fabric(designed, rails, pc.switches[IB_MODEL].ports, len(sm_hosts))
    graph = build_fabric(shape, fabric_nodes, sm_hosts)
    storage_model = pc.storage[STORAGE_MODEL]
    nfs = addressing.Pool(spec.network.frontend_cidr, "network.frontend_cidr", 0).text(
        addressing.SERVICE_OFFSET
    )
    storage = plan_storage(spec, sizing, storage_model, nfs)
    storage_names = [f"{STORAGE_PREFIX}{i:02d}" for i in range(1, storage.nodes + 1)]
    frontend, racks = _layout(spec, pc, server, nodes, mgmt, graph, storage_names)
    return _Parts(
        spec,
        sizing,
        pc,
        server,
        gpu,
        nodes,
        mgmt,
        shape,
        graph,
        storage,
        storage_names,
        frontend,
        racks,
    )


def _failure_stats(pc: PlanCatalog) -> FailureStats:
    if FAILURE_STATS in pc.reliability:
        return pc.reliability[FAILURE_STATS]
    return next(iter(pc.reliability.values()))


def _endpoints(
    nodes: ComputeNodes, mgmt: Management, storage_names: list[str], pc: PlanCatalog
) -> list[Endpoint]:
    sm = pc.storage[STORAGE_MODEL]
    eps = [Endpoint(n, 2, MGMT_FE_GBPS) for n in (*mgmt.heads, *mgmt.login, *mgmt.ufm)]
    eps += [Endpoint(n, min(2, sm.frontend_ports_per_node), GPU_FE_GBPS) for n in storage_names]
    eps += [Endpoint(n, 2, GPU_FE_GBPS) for n in (*nodes.compute, *nodes.spares)]
    return eps


def _layout(
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


def _infra_devices(
    pc: PlanCatalog,
    mgmt: Management,
    storage_names: list[str],
    graph: FabricGraph,
    fe: FrontendGraph,
) -> list[Device]:
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


# ---------------------------------------------------------------- assembling the plan


def _assemble(p: _Parts, spec_file: str) -> ClusterPlan:
    spec = p.spec
    addr = _addresses(p)
    nodes = _nodes(p, addr)
    switches = _switches(p, addr)
    links = _links(p)
    racks = _racks(p, spec.facility.rack_power_kw, spec.facility.rack_units)
    it_kw = round(sum(n.power_kw for n in nodes) + sum(s.power_kw for s in switches), 3)
    facility_kw = round(it_kw * spec.facility.pue, 3)
    power = PowerSummary(
        it_kw=it_kw,
        btu_per_hour=round(it_kw * BTU_PER_KW, 1),
        facility_kw=facility_kw,
        pue=spec.facility.pue,
        usd_per_kwh=spec.facility.power_usd_per_kwh,
        usd_per_month=round(facility_kw * HOURS_PER_MONTH * spec.facility.power_usd_per_kwh, 2),
    )
    reliability = plan_reliability(
        p.sizing,
        _failure_stats(p.pc),
        p.storage.write_gbps,
        p.storage.read_gbps,
        len(p.nodes.spares),
    )
    su = p.graph.node_su
    scheduler = plan_scheduler(
        spec.provisioning.scheduler.value,
        spec.name,
        p.mgmt.heads,
        p.mgmt.login,
        [(n, su.get(n, 1)) for n in p.nodes.compute],
        [(n, su.get(n, 1)) for n in p.nodes.spares],
        p.server,
        p.gpu,
        p.sizing.gpus_per_node,
        p.shape,
    )
    cloud, cloud_notes = plan_cloud(
        [c.value for c in spec.provisioning.clouds],
        p.pc.cloud_instances(),
        p.pc.cloud_filesystems(),
        spec.hardware.gpu,
        p.sizing.gpus_per_node,
        len(p.nodes.compute),
        len(p.mgmt.login),
        p.storage,
        reliability.wallclock_hours,
    )
    network = NetworkPlan(
        oob_cidr=spec.network.oob_cidr,
        mgmt_cidr=spec.network.mgmt_cidr,
        frontend_cidr=spec.network.frontend_cidr,
        fabric_cidr=spec.network.fabric_cidr,
        rail_cidrs=addr.rail_cidrs,
        mgmt_gateway=addr.mgmt_gateway,
    )
    return ClusterPlan.model_construct(
        name=spec.name,
        spec_file=spec_file,
        scheduler_kind=spec.provisioning.scheduler.value,
        sizing=p.sizing,
        nodes=nodes,
        switches=switches,
        links=links,
        fabric=_fabric_summary(p),
        network=network,
        storage=p.storage,
        reliability=reliability,
        racks=racks,
        power=power,
        scheduler=scheduler,
        cloud=cloud,
        admin_cidr=spec.provisioning.admin_cidr,
        notes=_plan_notes(p, [*filter(None, [reliability_note(reliability)]), *cloud_notes]),
    )


@dataclass
class _Addr:
    mgmt: dict[str, str]
    oob: dict[str, str]
    frontend: dict[str, str]
    fabric: dict[str, list[FabricAddress]]
    rail_cidrs: list[str]
    mgmt_gateway: str


def _addresses(p: _Parts) -> _Addr:
    net = p.spec.network
    n, m = p.nodes, p.mgmt
    fabric_hosts = [*n.compute, *n.spares]
    mgmt_hosts = [*m.heads, *m.login, *fabric_hosts, *m.ufm]
    fe_hosts = [*m.heads, *m.login, *fabric_hosts, *p.storage_names]
    servers = [*m.heads, *m.login, *fabric_hosts, *m.ufm, *p.storage_names]
    switches = [*_ib_switch_names(p.graph), *_fe_switch_names(p.frontend)]
    switches += [r.oob.name for r in p.racks if r.oob]
    oob_hosts = [*servers, *switches]
    mgmt_pool = addressing.Pool(net.mgmt_cidr, "network.mgmt_cidr", len(mgmt_hosts))
    oob_pool = addressing.Pool(net.oob_cidr, "network.oob_cidr", len(oob_hosts))
    fe_pool = addressing.Pool(net.frontend_cidr, "network.frontend_cidr", len(fe_hosts))
    rails = p.shape.rails
    cidrs = addressing.rail_cidrs(net.fabric_cidr, rails, len(fabric_hosts))
    pools = [addressing.Pool(c, "network.fabric_cidr", len(fabric_hosts)) for c in cidrs]
    first = addressing.RESERVED + 1
    fabric = {
        h: [
            _FabricAddress(rail=r, device=f"mlx5_{r}", address=pools[r].with_prefix(first + i))
            for r in range(rails)
        ]
        for i, h in enumerate(fabric_hosts)
    }
    return _Addr(
        mgmt={h: mgmt_pool.take() for h in mgmt_hosts},
        oob={h: oob_pool.take() for h in oob_hosts},
        frontend={h: fe_pool.take() for h in fe_hosts},
        fabric=fabric,
        rail_cidrs=cidrs,
        mgmt_gateway=mgmt_pool.text(addressing.GATEWAY_OFFSET),
    )


def _ib_switch_names(g: FabricGraph) -> list[str]:
    return [*g.leaf_names, *g.spine_names, *g.core_names]


def _fe_switch_names(g: FrontendGraph) -> list[str]:
    return [*g.leaf_names, *g.spine_names, *g.core_names]


def _placements(p: _Parts) -> dict[str, Device]:
    out: dict[str, Device] = {}
    for rack in p.racks:
        for dev in rack.devices:
            out[dev.name] = dev
        if rack.oob:
            out[rack.oob.name] = rack.oob
    return out


def _nodes(p: _Parts, a: _Addr) -> list[Node]:
    place = _placements(p)
    su = p.graph.node_su
    gpus = p.sizing.gpus_per_node
    gpu = p.spec.hardware.gpu
    server = p.server.id

    def node(name: str, role: str, model: str, **extra: Any) -> Node:
        d = place[name]
        addrs = _Addresses(
            mgmt=a.mgmt.get(name),
            bmc=a.oob.get(name),
            frontend=a.frontend.get(name),
            fabric=a.fabric.get(name, []),
        )
        return _Node(
            name=name,
            role=role,
            model=model,
            rack=d.rack,
            u=d.u,
            height_u=d.height_u,
            power_kw=d.power_kw,
            addresses=addrs,
            gpus=extra.get("gpus", 0),
            gpu=extra.get("gpu"),
            su=extra.get("su"),
        )

    out = [node(n, "head", HEAD_MODEL) for n in p.mgmt.heads]
    out += [node(n, "login", HEAD_MODEL) for n in p.mgmt.login]
    out += [
        node(n, "compute", server, gpus=gpus, gpu=gpu, su=su.get(n, 1)) for n in p.nodes.compute
    ]
    out += [node(n, "spare", server, gpus=gpus, gpu=gpu, su=su.get(n, 1)) for n in p.nodes.spares]
    out += [node(n, "ufm", UFM_MODEL) for n in p.mgmt.ufm]
    out += [node(n, "storage", STORAGE_MODEL) for n in p.storage_names]
    return out


def _switches(p: _Parts, a: _Addr) -> list[Switch]:
    place = _placements(p)
    g, fe = p.graph, p.frontend
    ib = p.pc.switches[IB_MODEL]
    leaf_m = p.pc.switches[ethernet.LEAF_MODEL]
    spine_m = p.pc.switches[ethernet.SPINE_MODEL]
    oob_m = p.pc.switches[ethernet.OOB_MODEL]

    def sw(name: str, network: str, tier: str, model: Any, **extra: Any) -> Switch:
        d = place[name]
        return _Switch(
            name=name,
            network=network,
            tier=tier,
            model=model.id,
            ports=model.ports + model.uplink_ports,
            rail=extra.get("rail"),
            su=extra.get("su"),
            rack=d.rack,
            u=d.u,
            height_u=d.height_u,
            power_kw=d.power_kw,
            mgmt_address=a.oob.get(name),
        )

    out = [
        sw(n, "compute", "leaf", ib, rail=g.leaf_rails[i], su=g.leaf_su[i])
        for i, n in enumerate(g.leaf_names)
    ]
    out += [sw(n, "compute", "spine", ib) for n in g.spine_names]
    out += [sw(n, "compute", "core", ib) for n in g.core_names]
    out += [sw(n, "frontend", "leaf", leaf_m) for n in fe.leaf_names]
    out += [sw(n, "frontend", "spine", spine_m) for n in fe.spine_names]
    out += [sw(n, "frontend", "core", spine_m) for n in fe.core_names]
    out += [sw(r.oob.name, "oob", "leaf", oob_m) for r in p.racks if r.oob]
    return out


def _links(p: _Parts) -> list[Link]:
    ib = p.pc.switches[IB_MODEL]
    out = cabling.fabric_links(p.graph, p.pc.counting, ib.ports_per_cage)
    oob_names = {r.oob.name for r in p.racks if r.oob}
    out += cabling.frontend_links(p.frontend, oob_names)
    members = []
    for rack in p.racks:
        assert rack.oob is not None
        ports = [
            (d.name, cabling.BMC_PORT if d.kind == "node" else cabling.SWITCH_MGMT_PORT)
            for d in rack.devices
        ]
        ports += [(pdu, cabling.PDU_PORT) for pdu in rack.pdus]
        members.append((rack.oob.name, ports))
    out += cabling.oob_links(members)
    return out


def _racks(p: _Parts, budget_kw: float, units: int) -> list[Rack]:
    out = []
    for rack in p.racks:
        assert rack.oob is not None
        slots = [_RackSlot(u=0, height_u=0, device=pdu, kind="pdu") for pdu in rack.pdus]
        devices = sorted([*rack.devices, rack.oob], key=lambda d: d.u)
        slots += [
            _RackSlot(u=d.u, height_u=d.height_u, device=d.name, kind=d.kind) for d in devices
        ]
        out.append(
            _Rack(
                name=rack.name,
                units=units,
                power_budget_kw=budget_kw,
                power_kw=round(rack.power_kw, 3),
                slots=slots,
            )
        )
    return out


def _fabric_summary(p: _Parts) -> FabricSummary:
    g, s = p.graph, p.shape
    return FabricSummary(
        switch_model=IB_MODEL.upper() if s.rails else "none",
        tiers=s.tiers,
        rails=s.rails,
        su_nodes=32,
        scalable_units=s.scalable_units,
        designed_nodes=s.designed_nodes,
        leaf_switches=len(g.leaf_names),
        spine_switches=len(g.spine_names),
        core_switches=len(g.core_names),
        node_to_leaf_links=len(g.node_links),
        leaf_to_spine_links=len(g.up_links),
        spine_to_core_links=len(g.core_links),
        leaf_to_leaf_links=len(g.isl_links),
        subnet_manager=p.spec.fabric.subnet_manager.value,
        design_notes=_design_notes(p),
    )


def _design_notes(p: _Parts) -> list[str]:
    from generator.plan.fabric_notes import design_notes

    return design_notes(p.shape, p.graph, p.spec, len(p.nodes.compute), len(p.nodes.spares), p.mgmt)


def _plan_notes(p: _Parts, cloud_notes: list[str]) -> list[str]:
    notes = []
    if p.nodes.spares:
        how = (
            "from the reliability model (99 % cover of nodes in repair)"
            if p.nodes.spares_auto
            else "as requested"
        )
        notes.append(f"{len(p.nodes.spares)} hot spare node(s) {how}; partition 'spare'.")
    notes += _rack_notes(p)
    if p.mgmt.ufm:
        notes.append(
            "UFM appliance power and height are taken as a 1U R660-class server (estimate)."
        )
    return notes + cloud_notes


def _rack_notes(p: _Parts) -> list[str]:
    if not p.nodes.compute:
        return []
    fac, server = p.spec.facility, p.server
    per_rack = sum(1 for d in p.racks[0].devices if d.kind == "node")
    oob = p.pc.switches[ethernet.OOB_MODEL]
    top = min(fac.rack_units - oob.rack_units, server.mount_below_u or fac.rack_units)
    by_space = top // server.rack_units
    out = [
        f"{per_rack} {server.name} per compute rack at {fac.rack_power_kw:g} kW: "
        f"{server.max_power_kw:g} kW planning maximum each, mounted at or below U{top}, plus "
        f"one {oob.name.split(' (')[0]} ({oob.power_kw:g} kW)."
    ]
    if per_rack < by_space:
        need = by_space * server.max_power_kw + oob.power_kw
        out.append(
            f"Compute racks are power-bound: {by_space} would fit in the space with "
            f"facility.rack_power_kw >= {need:g}."
        )
    return out
