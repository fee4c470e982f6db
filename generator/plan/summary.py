"""The plan's roll-ups and prose: power totals, the fabric summary and the plan notes.

Everything here is derived from decisions and objects already made; nothing feeds back into
them. Kept apart from ``devices`` (which builds the objects) because this is what reports
read first, and its wording is reviewed separately from the object construction.
"""

from __future__ import annotations

from generator.plan import ethernet
from generator.plan.compute import whole_server_note
from generator.plan.fabric_notes import design_notes
from generator.plan.models import FabricSummary, Node, PowerSummary, Switch
from generator.plan.parts import IB_MODEL, Parts
from generator.spec.models import Spec

BTU_PER_KW = 3412.142
HOURS_PER_MONTH = 730.0


def power_summary(spec: Spec, nodes: list[Node], switches: list[Switch]) -> PowerSummary:
    """IT load from the planning maximum of every device, then facility load and cost."""
    fac = spec.facility
    it_kw = round(sum(n.power_kw for n in nodes) + sum(s.power_kw for s in switches), 3)
    facility_kw = round(it_kw * fac.pue, 3)
    return PowerSummary(
        it_kw=it_kw,
        btu_per_hour=round(it_kw * BTU_PER_KW, 1),
        facility_kw=facility_kw,
        pue=fac.pue,
        usd_per_kwh=fac.power_usd_per_kwh,
        usd_per_month=round(facility_kw * HOURS_PER_MONTH * fac.power_usd_per_kwh, 2),
    )


def fabric_summary(p: Parts) -> FabricSummary:
    """Counts of the compute fabric's switches and links, with the reasoning behind its shape."""
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
        design_notes=design_notes(
            p.shape, p.graph, p.spec, len(p.nodes.compute), len(p.nodes.spares), p.mgmt
        ),
    )


def plan_notes(p: Parts, extra_notes: list[str]) -> list[str]:
    """Plan-level notes (spares, rack density, estimates), then ``extra_notes`` appended."""
    notes = [n for n in [whole_server_note(p.sizing)] if n]
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
    return notes + extra_notes


def _rack_notes(p: Parts) -> list[str]:
    """Why a compute rack holds as many nodes as it does, and what would fit more."""
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
