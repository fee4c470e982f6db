"""The plan's large object lists: nodes, switches, cables and rack elevations.

These lists hold tens of thousands of objects for a 2,048-node plan, so they are built with
``_construct.builder`` (no per-object validation) from values that were validated or derived
upstream; ``build.build_plan`` pauses the cyclic GC around the whole build. The order of
every list is part of the output contract: heads, login, compute, spares, UFM, storage for
nodes; compute fabric, then front end, then OOB for switches.
"""

from __future__ import annotations

from typing import Any

from generator.plan._construct import builder
from generator.plan.facility.racks import Device
from generator.plan.heads import HEAD_MODEL, UFM_MODEL
from generator.plan.models import Addresses, Link, Node, Rack, RackSlot, Switch
from generator.plan.network import cabling, ethernet
from generator.plan.network.address_table import AddressTable
from generator.plan.parts import IB_MODEL, Parts
from generator.plan.storage import STORAGE_MODEL

_Addresses = builder(Addresses)
_Node = builder(Node)
_Switch = builder(Switch)
_RackSlot = builder(RackSlot)
_Rack = builder(Rack)


def _placements(p: Parts) -> dict[str, Device]:
    """Rack placement of every device by name, OOB switches included."""
    out: dict[str, Device] = {}
    for rack in p.racks:
        for dev in rack.devices:
            out[dev.name] = dev
        if rack.oob:
            out[rack.oob.name] = rack.oob
    return out


def build_nodes(p: Parts, a: AddressTable) -> list[Node]:
    """Every server with its role, model, rack position and addresses."""
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


def build_switches(p: Parts, a: AddressTable) -> list[Switch]:
    """Every switch of the three networks with its tier, rack position and OOB address."""
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


def build_links(p: Parts) -> list[Link]:
    """Every cable: compute fabric, front end, then each rack's OOB drops (BMCs, switch
    management ports, PDUs)."""
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


def build_racks(p: Parts, budget_kw: float, units: int) -> list[Rack]:
    """Rack elevations: PDUs first (zero-U), then devices bottom-up."""
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
