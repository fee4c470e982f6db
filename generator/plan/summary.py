"""The plan's roll-ups and prose: power totals, the fabric summary and the plan notes.

Everything here is derived from decisions and objects already made; nothing feeds back into
them. Kept apart from ``devices`` (which builds the objects) because this is what reports
read first, and its wording is reviewed separately from the object construction.
"""

from __future__ import annotations

from generator.plan.compute import whole_server_note
from generator.plan.models import FabricSummary, Link, PowerSummary, Rack
from generator.plan.network import ethernet
from generator.plan.network.fabric_notes import design_notes
from generator.plan.parts import Parts
from generator.spec.models import Spec

BTU_PER_KW = 3412.142
HOURS_PER_MONTH = 730.0


def power_summary(spec: Spec, racks: list[Rack], air_limit_kw: float) -> PowerSummary:
    """Site power at maximum and typical draw, heat, airflow, weight and the energy cost.

    Energy is costed on the typical draw (what the cluster pulls while training), times PUE,
    730 h a month and ``facility.utilization``; the maximum sizes feeds, PDUs and cooling.
    """
    fac = spec.facility
    it_kw = round(sum(r.power_kw for r in racks), 3)
    typical = round(sum(r.power_typical_kw for r in racks), 3)
    facility_kw = round(it_kw * fac.pue, 3)
    hot = [r.name for r in racks if r.power_kw > air_limit_kw]
    assumption = (
        f"energy = {typical:,.1f} kW typical IT draw x PUE {fac.pue:g} x 730 h x "
        f"{fac.utilization:g} utilization x {fac.power_usd_per_kwh:g} USD/kWh; feeds, PDUs and "
        f"cooling are sized for the {it_kw:,.1f} kW maximum"
    )
    notes = []
    if hot:
        notes.append(
            f"{len(hot)} rack(s) pass the {air_limit_kw:g} kW air-cooling limit at maximum draw "
            f"({', '.join(hot[:4])}{' ...' if len(hot) > 4 else ''}): plan containment with "
            "rear-door heat exchangers or liquid cooling."
        )
    return PowerSummary(
        it_kw=it_kw,
        btu_per_hour=round(it_kw * BTU_PER_KW, 1),
        facility_kw=facility_kw,
        pue=fac.pue,
        usd_per_kwh=fac.power_usd_per_kwh,
        usd_per_month=round(
            typical * fac.pue * HOURS_PER_MONTH * fac.utilization * fac.power_usd_per_kwh, 2
        ),
        it_typical_kw=typical,
        btu_per_hour_typical=round(typical * BTU_PER_KW, 1),
        airflow_cfm=round(sum(r.airflow_cfm for r in racks), 1),
        weight_kg=round(sum(r.weight_kg for r in racks), 1),
        energy_assumption=assumption,
        notes=notes,
    )


def fabric_summary(p: Parts) -> FabricSummary:
    """Counts of the compute fabric's switches and links, with the reasoning behind its shape."""
    g, s = p.graph, p.shape
    return FabricSummary(
        switch_model=g.switch_model.upper() if s.rails else "none",
        tiers=s.tiers,
        rails=s.rails,
        su_nodes=s.su_nodes,
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
            p.shape, p.graph, p.spec, len(p.nodes.compute), len(p.nodes.spares), p.mgmt,
            p.fabric_absent, p.fabric,
        ),
        absent_because=p.fabric_absent[0] if p.fabric_absent else "",
    )


def site_uplinks(links: list[Link]) -> dict[str, tuple[int, int, int]]:
    """Per network (``frontend``, ``oob``): (uplinks, speed Gb/s, switches) to the site."""
    out: dict[str, tuple[int, int, int]] = {}
    switches: dict[str, set[str]] = {}
    for lk in links:
        if lk.network != "site":
            continue
        net = lk.b_port.rsplit("-", 1)[0]
        n, _, _ = out.get(net, (0, 0, 0))
        switches.setdefault(net, set()).add(lk.a)
        out[net] = (n + 1, lk.speed_gbps, len(switches[net]))
    return out


def site_note(links: list[Link], per_switch: int) -> str | None:
    """The site uplinks, counted and with their speed (``ethernet.site_uplinks_per_switch``)."""
    ups = site_uplinks(links)
    if not ups:
        return None
    words = {"frontend": "top-tier front-end", "oob": "out-of-band"}
    parts = [
        f"{n} x {speed}GbE from {sw} {words.get(net, net)} switches"
        for net, (n, speed, sw) in sorted(ups.items())
    ]
    return (
        f"Site uplinks, {per_switch} per switch (ethernet.site_uplinks_per_switch): "
        + "; ".join(parts)
        + ". Each comes with a transceiver or cable end for the site's switch."
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
    per_rack = max(
        sum(1 for d in r.devices if d.kind == "node") for r in p.racks if r.kind == "compute"
    ) if any(r.kind == "compute" for r in p.racks) else 0
    oob = p.pc.switches[ethernet.OOB_MODEL]
    top = min(fac.rack_units - oob.rack_units, server.mount_below_u or fac.rack_units)
    by_space = top // server.rack_units
    # what a rack can take, not what this plan happens to put in it: a 2-node plan is not
    # "power-bound at 2 per rack" when the budget holds 13
    by_power = int((fac.rack_power_kw - oob.power_kw + 1e-9) // server.max_power_kw)
    fits = min(by_power, by_space)
    filled = f" (this plan fills {per_rack})" if per_rack < fits else ""
    out = [
        f"{fits} {server.name} per compute rack at {fac.rack_power_kw:g} kW{filled}: "
        f"{server.max_power_kw:g} kW planning maximum each, mounted at or below U{top}, plus "
        f"one {oob.name.split(' (')[0]} ({oob.power_kw:g} kW)."
    ]
    if by_power < by_space:
        need = by_space * server.max_power_kw + oob.power_kw
        out.append(
            f"Compute racks are power-bound: {by_space} would fit in the space with "
            f"facility.rack_power_kw >= {need:g}."
        )
    return out
