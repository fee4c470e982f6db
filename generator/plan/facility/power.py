"""Facility figures per rack and for the site: power, heat, airflow, weight, PDUs.

* Power: planning maximum (nameplate / PSU-derived) and typical draw of every device.
* Heat: 3,412 BTU/h per kW. Airflow: the catalogued CFM of a device where known (XE9680:
  ~1,200 CFM, S9), else the sensible-heat formula CFM = BTU/h / (1.08 x delta-T) with the
  catalog's delta-T (20 F, E).
* A rack whose maximum draw passes the catalog's air-cooling limit (40 kW) gets a note: it
  needs containment with rear-door heat exchangers or liquid cooling.
* Weight: devices + empty rack + PDUs (+ 10 kg of cabling, E); floor loading over the
  rack's footprint, with a note when the rack passes its static load rating.
* PDUs: A and B feeds, each able to carry the whole budget (``layout.pdus_per_rack``).
"""

from __future__ import annotations

from generator.plan._construct import builder
from generator.plan.catalog_models import PlanCatalog
from generator.plan.facility.floor import Floor
from generator.plan.facility.layout import PDU_MODEL
from generator.plan.models import Node, Rack, RackSlot, Switch
from generator.plan.parts import Parts

BTU_PER_KW = 3412.142
CABLING_KG_PER_RACK = 10.0

_RackSlot = builder(RackSlot)
_Rack = builder(Rack)


def _weight(pc: PlanCatalog, model: str) -> float:
    if model in pc.servers:
        return pc.servers[model].weight_kg or 20.0
    if model in pc.switches:
        return pc.switches[model].weight_kg or 10.0
    if model in pc.storage:
        return pc.storage[model].weight_kg or 20.0
    return 20.0  # UFM appliance: a 1U server (E)


def _cfm(pc: PlanCatalog, model: str, kw: float) -> float:
    cfm = None
    if model in pc.servers:
        cfm = pc.servers[model].airflow_cfm
    elif model in pc.switches:
        cfm = pc.switches[model].airflow_cfm
    if cfm is None:
        cfm = kw * BTU_PER_KW / (1.08 * pc.floor.air_delta_t_f)
    return cfm


def build_racks(p: Parts, floor: Floor, nodes: list[Node], switches: list[Switch]) -> list[Rack]:
    """Rack elevations (PDUs zero-U, then devices bottom-up) with their facility figures."""
    pc, fac = p.pc, p.spec.facility
    rack_m = pc.rack
    pdu = pc.pdus[PDU_MODEL]
    devices = {n.name: (n.model, n.power_kw, n.typical_kw) for n in nodes}
    devices.update({s.name: (s.model, s.power_kw, s.typical_kw) for s in switches})
    out = []
    for rack in p.racks:
        assert rack.oob is not None
        slots = [_RackSlot(u=0, height_u=0, device=x, kind="pdu") for x in rack.pdus]
        placed = sorted([*rack.devices, rack.oob], key=lambda d: d.u)
        slots += [_RackSlot(u=d.u, height_u=d.height_u, device=d.name, kind=d.kind) for d in placed]
        kw = sum(devices[d.name][1] for d in placed)
        typ = sum(devices[d.name][2] for d in placed)
        cfm = sum(_cfm(pc, devices[d.name][0], devices[d.name][1]) for d in placed)
        kg = sum(_weight(pc, devices[d.name][0]) for d in placed)
        kg += rack_m.empty_weight_kg + len(rack.pdus) * pdu.weight_kg + CABLING_KG_PER_RACK
        infra = rack.kind != "compute"
        row, pos = floor.positions[rack.name]
        notes = []
        if kw > pc.floor.air_cooling_limit_kw:
            notes.append(
                f"{kw:.1f} kW maximum passes the {pc.floor.air_cooling_limit_kw:g} kW air-cooling "
                "limit: hot/cold-aisle containment with rear-door heat exchangers or liquid "
                "cooling needed"
            )
        if kg > rack_m.static_load_kg:
            notes.append(f"{kg:.0f} kg passes the rack's {rack_m.static_load_kg:g} kg static load")
        out.append(
            _Rack(
                name=rack.name,
                units=fac.rack_units,
                power_budget_kw=fac.rack_power_kw,
                power_kw=round(kw, 3),
                slots=slots,
                kind=rack.kind,
                row=row,
                position=pos,
                power_typical_kw=round(typ, 3),
                reserve_u=fac.reserve_u if infra else 0,
                reserve_kw=round(fac.rack_power_kw * fac.reserve_power_fraction, 3)
                if infra
                else 0.0,
                btu_per_hour=round(kw * BTU_PER_KW, 1),
                airflow_cfm=round(cfm, 1),
                weight_kg=round(kg, 1),
                floor_kg_per_m2=round(kg / (rack_m.width_m * rack_m.depth_m), 1),
                pdu_model=pdu.id,
                pdu_capacity_kw=round(pdu.capacity_kw, 2),
                notes=notes,
            )
        )
    return out
