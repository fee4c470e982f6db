"""The plan's large object lists: nodes, switches, links and rack elevations.

These lists hold tens of thousands of objects for a 2,048-node plan, so they are built with
``_construct.builder`` (no per-object validation) from values that were validated or derived
upstream; ``build.build_plan`` pauses the cyclic GC around the whole build. The order of
every list is part of the output contract: heads, service, login, compute, spares, UFM,
storage for nodes; compute fabric, front end, storage back end, OOB for switches; links by
network in the same order, site uplinks last.
"""

from __future__ import annotations

from typing import Any

from generator.plan._construct import builder
from generator.plan.catalog_models import SwitchModel
from generator.plan.facility.floor import Floor, Spot, place_racks
from generator.plan.facility.layout import north_south_nic
from generator.plan.facility.racks import Device
from generator.plan.heads import HEAD_MODEL, UFM_MODEL
from generator.plan.lock.ports import PortSpace, reconcile
from generator.plan.lock.racks import floor_positions
from generator.plan.lock.reach import anchors, check_reach, host_leaves
from generator.plan.models import Addresses, Link, Node, Switch
from generator.plan.network import cabling, ethernet
from generator.plan.network.address_table import AddressTable
from generator.plan.network.fabric import reserved_ports, switch_port
from generator.plan.network.media import RawLink, choose_media
from generator.plan.network.side_networks import OOB_UPLINK_PORTS
from generator.plan.parts import Parts
from generator.plan.storage import STORAGE_MODEL

_Addresses = builder(Addresses)
_Node = builder(Node)
_Switch = builder(Switch)
_Link = builder(Link)


def placements(p: Parts) -> dict[str, Device]:
    """Rack placement of every device by name, OOB switches included."""
    out: dict[str, Device] = {}
    for rack in p.racks:
        for dev in rack.devices:
            out[dev.name] = dev
        if rack.oob:
            out[rack.oob.name] = rack.oob
    return out


def _typical(p: Parts, model: str) -> float:
    if model in p.pc.servers:
        return p.pc.servers[model].typical_power_kw
    if model in p.pc.storage:
        st = p.pc.storage[model]
        return (st.power_typical_w or st.power_w * 0.6) / 1000.0
    return 0.0


def build_nodes(p: Parts, a: AddressTable) -> list[Node]:
    """Every server with its role, model, rack position and addresses."""
    place = placements(p)
    su = p.graph.node_su
    su_nodes = p.shape.su_nodes
    slot = {n: i % su_nodes + 1 for i, n in enumerate(p.nodes.fabric_slots) if n}
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
            typical_kw=_typical(p, model if model != UFM_MODEL else HEAD_MODEL),
            addresses=addrs,
            gpus=extra.get("gpus", 0),
            gpu=extra.get("gpu"),
            su=extra.get("su"),
            slot=slot.get(name) if "su" in extra else None,
        )

    m = p.mgmt
    out = [node(n, "head", m.head_model) for n in m.heads]
    out += [node(n, "mgmt", m.head_model) for n in m.service]
    out += [node(n, "login", HEAD_MODEL) for n in m.login]
    out += [
        node(n, "compute", server, gpus=gpus, gpu=gpu, su=su.get(n, 1)) for n in p.nodes.compute
    ]
    out += [node(n, "spare", server, gpus=gpus, gpu=gpu, su=su.get(n, 1)) for n in p.nodes.spares]
    out += [node(n, "ufm", UFM_MODEL) for n in m.ufm]
    out += [node(n, "storage", STORAGE_MODEL) for n in p.storage_names]
    return out


def switch_models(p: Parts) -> dict[str, tuple[SwitchModel, str, str]]:
    """Every switch name -> (model, network, tier), in the plan's switch order."""
    g, fe, sw = p.graph, p.frontend, p.pc.switches
    ib = sw[g.switch_model]
    leaf_m, spine_m = sw[ethernet.LEAF_MODEL], sw[ethernet.SPINE_MODEL]
    out: dict[str, tuple[SwitchModel, str, str]] = {}
    out.update({n: (ib, "compute", "leaf") for n in g.leaf_names})
    out.update({n: (ib, "compute", "spine") for n in g.spine_names})
    out.update({n: (ib, "compute", "core") for n in g.core_names})
    out.update({n: (leaf_m, "frontend", "leaf") for n in fe.leaf_names})
    out.update({n: (spine_m, "frontend", "spine") for n in fe.spine_names})
    out.update({n: (spine_m, "frontend", "core") for n in fe.core_names})
    out.update({n: (sw[model], "storage", tier) for n, model, tier in p.backend.switches})
    oob_m = sw[ethernet.OOB_MODEL]
    out.update({r.oob.name: (oob_m, "oob", "leaf") for r in p.racks if r.oob})
    out.update({n: (sw[model], "oob", tier) for n, model, tier in p.oob_agg.switches})
    return out


def build_switches(p: Parts, a: AddressTable) -> list[Switch]:
    """Every switch of every network with its tier, rack position and OOB address."""
    place = placements(p)
    g = p.graph
    rail_of = dict(zip(g.leaf_names, g.leaf_rails, strict=True))
    su_of = dict(zip(g.leaf_names, g.leaf_su, strict=True))
    out = []
    for name, (model, network, tier) in switch_models(p).items():
        d = place[name]
        out.append(
            _Switch(
                name=name,
                network=network,
                tier=tier,
                model=model.id,
                ports=model.ports + model.uplink_ports,
                rail=rail_of.get(name),
                su=su_of.get(name),
                rack=d.rack,
                u=d.u,
                height_u=d.height_u,
                power_kw=d.power_kw,
                typical_kw=model.typical_kw,
                mgmt_address=a.oob.get(name),
                ports_per_cage=model.ports_per_cage,
            )
        )
    return out


def floor_of(p: Parts) -> Floor:
    """Where every rack stands (SU racks in order, infrastructure in the middle); with a
    plan lock, locked racks where they stand and new ones at the first free positions."""
    compute = [r.name for r in p.racks if r.kind != "infrastructure"]
    infra = [r.name for r in p.racks if r.kind == "infrastructure"]
    floor = place_racks(compute, infra, p.spec.facility, p.spec.facility.rack_units)
    if p.lock is None:
        return floor
    per_row = p.spec.facility.racks_per_row
    fac = p.spec.facility
    pitch = (fac.rack_width_m, fac.row_pitch_m)
    near = anchors(p.lock, p.racks, host_leaves(p))
    positions = floor_positions(p.lock, [(r.name, r.kind) for r in p.racks], per_row, pitch,
                                near)
    return Floor(positions, floor.facility, floor.rack_top_m)


def _site_uplinks(p: Parts, models: dict[str, tuple[SwitchModel, str, str]]) -> list[RawLink]:
    """Each top-tier front-end switch and each OOB aggregation switch to the site network."""
    n = p.spec.ethernet.site_uplinks_per_switch
    fe = p.frontend
    top = fe.core_names or fe.spine_names or fe.leaf_names
    used: dict[str, set[int]] = {}
    for a, ap, b, bp in (*fe.vlt_links, *fe.up_links, *fe.core_links):
        used.setdefault(a, set()).add(ap)
        used.setdefault(b, set()).add(bp)
    for _, _, leaf, port, _ in fe.host_links:
        used.setdefault(leaf, set()).add(port)
    ports: list[tuple[str, int]] = []
    for sw in top:
        model = models[sw][0]
        last = model.ports + model.uplink_ports
        free = [q for q in range(last, 0, -1) if q not in used.get(sw, set())]
        if not fe.spine_names:  # a leaf pair: the site takes 400G uplink ports, not host ports
            free = [q for q in free if q > model.ports]
        ports += [(sw, q) for q in sorted(free[:n])]
    if p.oob_agg.switches:
        oob_ports = [(sw, 49 + k) for sw, _, _ in p.oob_agg.switches for k in range(n)]
    else:  # a few racks: each OOB switch straight to the site (side_networks)
        oob_ports = [(r.oob.name, q) for r in p.racks if r.oob for q in OOB_UPLINK_PORTS[:n]]

    def cage(sw: str, port: int) -> str:
        return models[sw][0].cage_of_port(port).cage

    def speed(sw: str, port: int) -> int:
        return models[sw][0].cage_of_port(port).speed_gbps

    out = cabling.site_raw(ports, cage, speed, "frontend")
    out += cabling.site_raw(oob_ports, cage, speed, "oob")
    for lk in out:
        lk.network = "site"
    return out


def raw_links(p: Parts) -> list[RawLink]:
    """Every link before media: compute fabric, front end, storage back end, OOB, site."""
    pc = p.pc
    models = switch_models(p)
    roles = _host_roles(p)
    ns_nic = pc.nics[north_south_nic(p.spec, p.server)]
    head_nic = pc.nics[pc.servers[HEAD_MODEL].north_south_nic_default or "cx6-lx-2x25"]
    st = pc.storage[STORAGE_MODEL]

    def switch_cage(sw: str, port: int) -> str:
        return models[sw][0].cage_of_port(port).cage

    hca_cage = p.fabric.host_hca.cable_cage if p.fabric else "OSFP-RHS"

    def node_cage(dev: str) -> str:
        return p.server.east_west_cage if roles[dev] in ("compute", "spare") else hca_cage

    def host_cage(dev: str) -> str:
        role = roles[dev]
        if role in ("compute", "spare"):
            return ns_nic.cage
        return st.frontend_cage if role == "storage" else head_nic.cage

    ib = pc.switches[p.graph.switch_model]
    out = cabling.fabric_raw(
        p.graph, node_cage, ib.ports_per_cage, ib.port_speed_gbps, ib.cage_type
    )
    def nic_field(dev: str) -> str:
        return "ethernet.north_south_nic" if roles[dev] in ("compute", "spare") else ""

    out += cabling.frontend_raw(p.frontend, host_cage, switch_cage, nic_field)
    out += cabling.side_raw(p.backend, "storage", lambda _: st.backend_cage, switch_cage, 100)
    members = []
    for rack in p.racks:
        assert rack.oob is not None
        ports = [
            (d.name, cabling.BMC_PORT if d.kind == "node" else cabling.SWITCH_MGMT_PORT)
            for d in rack.devices
        ]
        ports += [(pdu, cabling.PDU_PORT) for pdu in rack.pdus]
        members.append((rack.oob.name, ports))
    out += cabling.oob_raw(members)
    out += cabling.side_raw(p.oob_agg, "oob", lambda _: "SFP+", switch_cage, 10)
    out += _site_uplinks(p, models)
    return out


def _host_roles(p: Parts) -> dict[str, str]:
    m = p.mgmt
    roles = {n: "head" for n in m.heads}
    roles.update({n: "mgmt" for n in m.service})
    roles.update({n: "login" for n in m.login})
    roles.update({n: "compute" for n in p.nodes.compute})
    roles.update({n: "spare" for n in p.nodes.spares})
    roles.update({n: "ufm" for n in m.ufm})
    roles.update({n: "storage" for n in p.storage_names})
    return roles


def build_links(p: Parts, floor: Floor) -> list[Link]:
    """Every link with its cages, medium, stocked length and length-specific part number."""
    place = placements(p)
    spots: dict[str, Spot] = {}
    for name, d in place.items():
        spots[name] = floor.spot(d.rack, d.u, d.height_u)
    for rack in p.racks:
        top = rack.oob
        assert top is not None
        for pdu in rack.pdus:  # zero-U, rear, about mid-height
            spots[pdu] = floor.spot(rack.name, p.spec.facility.rack_units // 2, 1)
    spots[cabling.SITE] = floor.site_spot()
    raws = raw_links(p)
    if p.lock is not None:
        models = {name: m for name, (m, _, _) in switch_models(p).items()}
        ib = p.pc.switches[p.graph.switch_model]
        reserved = frozenset(
            (leaf, switch_port(port, ib.ports_per_cage))
            for leaf, port in reserved_ports(p.graph, p.nodes.fabric_slots)
        )
        if "compute" in reconcile(raws, p.lock, PortSpace(models), reserved):
            isl = {(a, b) for a, _, b, _ in p.graph.isl_links}
            cabling.regroup_fabric(raws, set(p.graph.switch_names), isl)
    for lk in raws:
        lk.need_m = floor.length(spots[lk.a], spots[lk.b])
    if p.lock is not None:  # a new rack's cables to its built network rack (lock.reach)
        rack_of = {name: spot.rack for name, spot in spots.items()}
        check_reach(p.pc, raws, rack_of, anchors(p.lock, p.racks, host_leaves(p)),
                    floor.positions)
    choose_media(p.pc, raws)
    return [
        _Link(
            network=lk.network,
            a=lk.a,
            a_port=lk.a_port,
            b=lk.b,
            b_port=lk.b_port,
            speed_gbps=lk.speed_gbps,
            a_cage=lk.a_cage,
            b_cage=lk.b_cage,
            media=lk.media,
            length_m=lk.length_m,
            part_number=lk.part_number,
            a_part=lk.a_part,
            b_part=lk.b_part,
            cable=lk.media,
        )
        for lk in raws
    ]
