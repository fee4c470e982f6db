"""Front-end Ethernet, side networks and rack layout.

The front end carries the hosts only (the OOB switches uplink to their own aggregation
pair), so it is designed once. Racks and OOB aggregation depend on each other: every rack
gets an out-of-band switch, the aggregation pairs are sized by the OOB switch count, and
the pairs need rack space. ``solve_layout`` guesses the rack count, sizes the aggregation,
lays out the racks and repeats until the rack count stops changing (in practice one or two
rounds; ``MAX_LAYOUT_ROUNDS`` only guards against a bug).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from generator.catalog.models import Server
from generator.plan.catalog_models import PlanCatalog
from generator.plan.compute import ComputeNodes
from generator.plan.facility.racks import (
    Budget,
    Device,
    RackLayout,
    layout_racks,
    servers_per_rack,
)
from generator.plan.heads import HEAD_MODEL, UFM_MODEL, Management
from generator.plan.lock.frontend import built_backend, locked_frontend, locked_oob_pairs
from generator.plan.lock.model import Lock
from generator.plan.lock.racks import LockedPlacer
from generator.plan.lock.zones import Zones, far_hosts
from generator.plan.network import ethernet
from generator.plan.network.ethernet import Endpoint, FrontendGraph, design_frontend
from generator.plan.network.fabric import FabricGraph
from generator.plan.network.side_networks import SideNet, oob_aggregation, storage_backend
from generator.plan.storage import STORAGE_MODEL
from generator.spec.models import Spec

GPU_FE_GBPS = 100
MGMT_FE_GBPS = 25
MAX_LAYOUT_ROUNDS = 32
PDU_MODEL = "pdu-3ph-415v-32a"


C19_ABOVE_W = 1600  # a PSU above this draws through a C19/C20 cord, else C13/C14 (E)
MAX_C13_PDUS_PER_FEED = 2  # 42 1U devices need at most two 36-outlet PDUs per feed


def pdus_per_rack(pc: PlanCatalog, budget_kw: float) -> int:
    """The most PDUs a rack can get: A and B feeds, each able to carry the whole budget
    alone, or as many as a rack full of 1U devices needs for outlets."""
    pdu = pc.pdus[PDU_MODEL]
    by_power = math.ceil(budget_kw / pdu.capacity_kw - 1e-9)
    return 2 * max(1, by_power, MAX_C13_PDUS_PER_FEED)


def outlets_of(psus: int | None, psu_w: float | None) -> tuple[int, int]:
    """(C13, C19) cords per feed of a device with ``psus`` PSUs split over A and B."""
    per_feed = math.ceil((psus or 2) / 2)
    return (0, per_feed) if (psu_w or 0) > C19_ABOVE_W else (per_feed, 0)


def pdu_sizer(pc: PlanCatalog, budget: Budget) -> Callable[[RackLayout], int]:
    """PDUs of a placed rack: per feed, enough to carry the rack's planned maximum alone
    (infrastructure racks: plus their power reserve, so the reserve can be used) and to
    give every power cord an outlet; A and B feeds alike."""
    pdu = pc.pdus[PDU_MODEL]

    def count(rack: RackLayout) -> int:
        kw = rack.power_kw
        if rack.kind != "compute":
            kw = min(budget.power_kw, kw + budget.power_kw * budget.reserve_fraction)
        devices = [*rack.devices, *([rack.oob] if rack.oob else [])]
        c13 = sum(d.outlets[0] for d in devices)
        c19 = sum(d.outlets[1] for d in devices)
        feed = max(
            1,
            math.ceil(kw / pdu.capacity_kw - 1e-9),
            math.ceil(c13 / pdu.outlets_c13),
            math.ceil(c19 / pdu.outlets_c19) if pdu.outlets_c19 else 0,
        )
        return 2 * feed

    return count


def solve_layout(
    spec: Spec,
    pc: PlanCatalog,
    server: Server,
    nodes: ComputeNodes,
    mgmt: Management,
    graph: FabricGraph,
    storage_names: list[str],
    lock: Lock | None = None,
) -> tuple[FrontendGraph, SideNet, SideNet, list[RackLayout]]:
    """Front end, storage back end, OOB aggregation and racks (iterated to a fixed point);
    with a plan lock, locked hosts keep their leaf ports and locked devices their racks, and
    new hosts racked too far from the leaves they would join get a leaf pair in their own
    rack (``lock.zones``)."""
    zones = Zones()
    infra_hosts = {*mgmt.heads, *mgmt.service, *mgmt.login, *mgmt.ufm, *storage_names}
    for _ in range(MAX_LAYOUT_ROUNDS):
        fe, backend, agg, racks = _layout(
            spec, pc, server, nodes, mgmt, graph, storage_names, lock, zones
        )
        if lock is None:
            return fe, backend, agg, racks
        if not zones.grow(far_hosts(lock, fe, racks, spec.facility, infra_hosts)):
            return fe, backend, agg, racks
    raise AssertionError("rack layout did not converge")


def _layout(
    spec: Spec,
    pc: PlanCatalog,
    server: Server,
    nodes: ComputeNodes,
    mgmt: Management,
    graph: FabricGraph,
    storage_names: list[str],
    lock: Lock | None,
    zones: Zones,
) -> tuple[FrontendGraph, SideNet, SideNet, list[RackLayout]]:
    fac = spec.facility
    pdus = pdus_per_rack(pc, fac.rack_power_kw)
    oob_model = pc.switches[ethernet.OOB_MODEL]
    oob = Device("oob", "switch", oob_model.rack_units, oob_model.power_kw)
    leaf_m, spine_m = pc.switches[ethernet.LEAF_MODEL], pc.switches[ethernet.SPINE_MODEL]
    endpoints = zones.apply(_endpoints(nodes, mgmt, storage_names, pc, server, spec, graph))
    fe = design_frontend(endpoints, leaf_m, spine_m, locked_frontend(lock) if lock else None)
    backend = storage_backend(storage_names, built_backend(lock) if lock else None)
    built_agg = locked_oob_pairs(lock) if lock else None
    compute = [
        Device(
            n,
            "node",
            server.rack_units,
            server.max_power_kw,
            server.mount_below_u,
            outlets=outlets_of(server.psu_count, server.psu_w),
            model=server.id,
        )
        for n in nodes.fabric_slots
        if n
    ]
    groups = _su_groups(compute, graph, fe, pc, len(nodes.fabric_slots))
    budget = Budget(fac.rack_power_kw, fac.rack_units, fac.reserve_u, fac.reserve_power_fraction)
    n_oob = len(lock.racks) if lock else 1
    width = max(2, len(str(n_oob)))
    oob_names = [f"oob-r{i:0{width}d}" for i in range(1, n_oob + 1)]
    for _ in range(MAX_LAYOUT_ROUNDS):
        agg = oob_aggregation(oob_names, built_agg)
        infra = _infra_devices(pc, mgmt, storage_names, graph, fe, [backend, agg])
        in_groups = {d.name for _, net in groups for d in net}
        infra = [d for d in infra if d.name not in in_groups]
        if lock is None:
            racks = layout_racks(
                groups,
                server.name,
                infra,
                oob,
                budget,
                pdus,
                oob_model.ports,
                pdu_sizer(pc, budget),
            )
        else:
            per = _per_compute_rack(groups, server.name, budget, oob, oob_model.ports - pdus)
            hold = (2 * leaf_m.rack_units, 2 * leaf_m.power_kw, 2)  # a zone's leaf pair
            placer = LockedPlacer(
                lock, budget, oob, per, oob_model.ports - pdus, pdu_sizer(pc, budget), hold
            )
            racks = placer.place_groups(groups, infra, zones.leaf_racks(fe))
        got = [r.oob.name for r in racks if r.oob]
        final = oob_aggregation(got, built_agg)
        if final.switches == agg.switches:  # the aggregation switches placed are the ones used
            return fe, backend, final, racks
        oob_names = got
    raise AssertionError("rack layout did not converge")


def _per_compute_rack(
    groups: list[tuple[list[Device], list[Device]]],
    label: str,
    budget: Budget,
    oob: Device,
    max_devices: int,
) -> int:
    """GPU servers per compute rack, as ``layout_racks`` counts them."""
    first = next((c[0] for c, _ in groups if c), None)
    if first is None:
        return 1
    per = servers_per_rack(first, label, budget.power_kw, budget.units, oob.power_kw, oob.height_u)
    return min(per, max_devices)


def _su_groups(
    compute: list[Device], graph: FabricGraph, fe: FrontendGraph, pc: PlanCatalog, slots: int
) -> list[tuple[list[Device], list[Device]]]:
    """Per scalable unit: its GPU nodes and the leaves that serve them (its network rack).

    Clusters of one partial SU keep every switch in the infrastructure racks: one group.
    ``slots``: GPU node slots (nodes and the free slots of removed ones).
    """
    su_nodes = graph.shape.su_nodes
    if slots <= su_nodes:
        return [(compute, [])]
    ib = pc.switches[graph.switch_model]
    leaf = pc.switches[ethernet.LEAF_MODEL]
    out = []
    by_su: dict[int, list[Device]] = {}
    for d in compute:
        by_su.setdefault(graph.node_su.get(d.name, 1), []).append(d)
    for g in range((slots + su_nodes - 1) // su_nodes):
        nodes = by_su.get(g + 1, [])
        net = [
            Device(n, "switch", ib.rack_units, ib.power_kw, model=ib.id)
            for n, su in zip(graph.leaf_names, graph.leaf_su, strict=True)
            if su == g + 1
        ]
        net += [
            Device(n, "switch", leaf.rack_units, leaf.power_kw, model=leaf.id)
            for n in fe.leaf_names
            if fe.leaf_group.get(n) == g + 1
        ]
        out.append((nodes, net))
    return out


def north_south_nic(spec: Spec, server: Server) -> str:
    """The GPU nodes' front-end NIC: the spec's choice, else the server's default."""
    return spec.ethernet.north_south_nic or server.north_south_nic_default or "cx6-dx-2x100"


def node_link_gbytes(spec: Spec, pc: PlanCatalog, server: Server) -> float:
    """What a GPU node's front-end bond carries (GB/s): ports used x their speed / 8."""
    nic = pc.nics[north_south_nic(spec, server)]
    return min(2, nic.ports) * min(GPU_FE_GBPS, nic.port_speed_gbps) / 8.0


def _endpoints(
    nodes: ComputeNodes,
    mgmt: Management,
    storage_names: list[str],
    pc: PlanCatalog,
    server: Server,
    spec: Spec,
    graph: FabricGraph,
) -> list[Endpoint]:
    """Every host on the front-end network, with its port count and speed."""
    sm = pc.storage[STORAGE_MODEL]
    nic = pc.nics[north_south_nic(spec, server)]
    gpu_gbps = min(GPU_FE_GBPS, nic.port_speed_gbps)
    eps = [
        Endpoint(n, 2, MGMT_FE_GBPS) for n in (*mgmt.heads, *mgmt.service, *mgmt.login, *mgmt.ufm)
    ]
    eps += [Endpoint(n, min(2, sm.frontend_ports_per_node), GPU_FE_GBPS) for n in storage_names]
    slots = nodes.fabric_slots
    su_nodes = graph.shape.su_nodes
    grouped = len(slots) > su_nodes
    su_of = graph.node_su
    eps += [
        Endpoint(
            n,
            min(2, nic.ports),
            gpu_gbps,
            (su_of.get(n) or i // su_nodes + 1) if grouped else 0,
        )
        for i, n in enumerate(slots)
        if n
    ]
    return eps


def _infra_devices(
    pc: PlanCatalog,
    mgmt: Management,
    storage_names: list[str],
    graph: FabricGraph,
    fe: FrontendGraph,
    side: list[SideNet],
) -> list[Device]:
    """Everything racked besides compute nodes and OOB switches, in placement order."""
    head = pc.servers[mgmt.head_model]
    login = pc.servers[HEAD_MODEL]
    st = pc.storage[STORAGE_MODEL]
    ib = pc.switches[graph.switch_model]
    leaf, spine = pc.switches[ethernet.LEAF_MODEL], pc.switches[ethernet.SPINE_MODEL]
    head_cords = outlets_of(head.psu_count, head.psu_w)
    login_cords = outlets_of(login.psu_count, login.psu_w)
    out = [
        Device(n, "node", head.rack_units, head.max_power_kw, outlets=head_cords, model=head.id)
        for n in (*mgmt.heads, *mgmt.service)
    ]
    out += [
        Device(n, "node", login.rack_units, login.max_power_kw, outlets=login_cords, model=model)
        for names, model in ((mgmt.login, login.id), (mgmt.ufm, UFM_MODEL))
        for n in names
    ]
    out += [
        Device(n, "node", st.rack_units, st.power_w / 1000.0, model=st.id) for n in storage_names
    ]
    out += [
        Device(n, "switch", ib.rack_units, ib.power_kw, model=ib.id)
        for n in (*graph.core_names, *graph.spine_names, *graph.leaf_names)
    ]
    out += [
        Device(n, "switch", spine.rack_units, spine.power_kw, model=spine.id)
        for n in (*fe.core_names, *fe.spine_names)
    ]
    out += [
        Device(n, "switch", leaf.rack_units, leaf.power_kw, model=leaf.id) for n in fe.leaf_names
    ]
    for net in side:
        for name, model, _ in net.switches:
            m = pc.switches[model]
            out.append(Device(name, "switch", m.rack_units, m.power_kw, model=m.id))
    return out
