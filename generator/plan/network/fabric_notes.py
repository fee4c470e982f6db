"""Plain-language reasoning behind the compute fabric, for ``fabric.design_notes``."""

from __future__ import annotations

from dataclasses import replace

from generator.plan.heads import Management
from generator.plan.network.fabric import FabricGraph, FabricShape, shape_fabric
from generator.plan.network.fabric_need import NO_NICS
from generator.plan.network.fabric_parts import FabricParts
from generator.spec.models import Spec

SUPERPOD = "DGX SuperPOD RA (S24)"
NDR_MEDIA = (
    "Cables and optics per link from the two cages and the routed length (media.yaml): "
    "copper splitters/DACs up to 3 m, active copper to 5 m, multimode SR4 optics to 50 m, "
    "single-mode DR4 to 100 m, 2xFR4 beyond; lengths and part numbers in cabling.csv."
)
NIC_WORDS = {"NDR": "ConnectX-7", "HDR": "ConnectX-6 HDR"}
"""How the notes name a fabric HCA of each generation."""
HDR_MEDIA = (
    "Cables per link from the two QSFP56 cages and the routed length (media.yaml): HDR "
    "passive copper (MCP1650-H) up to 2 m, HDR active optical cables (MFS1S00-H, optics "
    "built in) to 100 m; lengths and part numbers in cabling.csv."
)


def _uplinks(s: FabricShape) -> str:
    if s.leaf_up == s.leaf_down:
        return "as many uplinks"
    return f"{s.leaf_up} uplinks, rounded up to a multiple of the spines"


def _shape_note(s: FabricShape, nodes: int) -> str:
    d, r, k = s.designed_nodes, s.rails, s.radix
    if s.style == "pair":
        return (
            f"{d * r} NIC ports plus the subnet manager exceed one {k}-port switch, so the "
            f"rails are split over two leaves ({s.rails_per_leaf} rails, {s.leaf_down} node "
            f"ports each) joined back to back by {s.leaf_up} inter-switch links, one per node "
            "port: non-blocking between the halves."
        )
    if not s.su_layout:
        return (
            f"{d} nodes fit one partial SU; instead of a full SU ({r} leaves + spines) the "
            f"rails are collapsed onto {s.leaves} leaves ({s.rails_per_leaf} rail(s) each, "
            f"{s.leaf_down} node ports, {_uplinks(s)}) and {s.spines} spine(s), every leaf "
            "reaching every spine with the same number of cables (non-blocking)."
        )
    su = s.su_nodes
    text = (
        f"Rail-optimized fat tree: {s.scalable_units} SU of {su} nodes, one leaf per rail "
        f"per SU ({r} rails -> {s.leaves} leaves, {su} node ports down and {k // 2} up); "
    )
    if s.tiers == 2 and s.lock_note:
        text += (f"two tiers with {s.spines} spines, {s.leaf_up // s.spines} uplinks from "
                 "each leaf to each.")
    elif s.tiers == 2:
        text += (
            f"two tiers with {s.spines} spines (the smallest count that divides the {k // 2} "
            "leaf uplinks and takes them all"
            + (", like the RA's 16 spines for 3 SU)." if k == 64 else ").")
        )
    else:
        text += (
            f"{d * r} endpoints exceed two tiers ({k * k // 2}), so three: {s.pods} pods of "
            f"{k // 2} leaves with {s.spines_per_pod} spines each, and {s.cores_per_plane} core "
            f"switch(es) in each of the {s.spines_per_pod} core planes ({s.cores} cores)."
        )
    if nodes <= (s.scalable_units - 1) * su:
        text += f" {nodes} of its {s.scalable_units * su} node slots are used now."
    elif nodes < s.scalable_units * su:
        text += (
            f" The last SU is built in full (leaves and leaf-spine cables) although only "
            f"{nodes - (s.scalable_units - 1) * su} of its {su} slots are used "
            f"now ({SUPERPOD} build rule)."
        )
    return text


def _dell_note(s: FabricShape, sm_ports: int) -> str | None:
    if s.su_layout or s.style == "none":
        return None
    base = (
        "Dell's 8-node validated design (seed 004: 8x XE9680, 8 or 4 ConnectX-7 each) uses "
        "2x QM9790 for both configurations."
    )
    if s.style == "pair":
        return base + " podplan arrives at the same two switches here, cabled back to back."
    return base


def _switches(s: FabricShape) -> int:
    return s.leaves + s.spines + s.cores


def design_notes(
    s: FabricShape,
    g: FabricGraph,
    spec: Spec,
    compute: int,
    spares: int,
    mgmt: Management,
    absent: tuple[str, str] | None = None,
    parts: FabricParts | None = None,
) -> list[str]:
    """Why the fabric looks the way it does."""
    if s.style == "none":
        return [absent[1] if absent else NO_NICS]
    fabric_nodes = compute + spares
    notes = [_shape_note(s, fabric_nodes)]
    if parts is not None and parts.generation != "NDR":
        notes.insert(0, _generation_note(s, parts))
    if s.lock_note:
        notes.append(s.lock_note)
    if replace(s, lock_note="") != shape_fabric(s.designed_nodes, s.rails, s.radix, 0):
        # kept or grown from the plan lock: the growth and cost notes below are the rules'
        return notes + _common_notes(s, g, spec, mgmt, parts)
    if spec.fabric.growth_nodes:
        notes.append(
            f"Sized for {s.designed_nodes} nodes: {fabric_nodes} now + "
            f"{spec.fabric.growth_nodes} growth (fabric.growth_nodes); their leaf ports stay free."
        )
    if s.designed_nodes > compute:
        bare = shape_fabric(compute, s.rails, s.radix, len(g.sm_links))
        extra = _switches(s) - _switches(bare)
        if extra:
            notes.append(
                f"The {s.designed_nodes - compute} spare/growth node slot(s) cost {extra} "
                f"fabric switches: for the {compute} compute nodes alone the fabric would be "
                f"{bare.leaves} leaf / {bare.spines} spine / {bare.cores} core "
                f"({bare.tiers} tier(s))."
            )
    dell = _dell_note(s, len(g.sm_links))
    if dell:
        notes.append(dell)
    return notes + _common_notes(s, g, spec, mgmt, parts)


def _generation_note(s: FabricShape, parts: FabricParts) -> str:
    """Why an HDR fabric: the nodes' NIC, the switch it takes and the SU that follows."""
    nic, sw = parts.node_nic, parts.switch
    return (
        f"The fabric follows the GPU nodes' compute NIC: {nic.name} ({nic.opn}) runs "
        f"{parts.generation} at {nic.port_speed_gbps} Gb/s in a {nic.cable_cage} cage, so the "
        f"switches are {sw.name}: {sw.ports} x {sw.port_speed_gbps} Gb/s {sw.cage_type} ports, and "
        f"the cables are {parts.generation} parts. Radix {s.radix} makes a scalable unit "
        f"{s.su_nodes} nodes ({s.su_nodes} ports down, {s.su_nodes} up per leaf), as in the "
        "DGX A100 SuperPOD RA (S65)."
    )


def _common_notes(
    s: FabricShape, g: FabricGraph, spec: Spec, mgmt: Management,
    parts: FabricParts | None = None,
) -> list[str]:
    """Rails, subnet manager, stolen links and media: whatever decided the shape."""
    notes = []
    switch = g.switch_model.upper()
    managed = parts is not None and parts.switch.managed
    how = (f"{switch} has an on-board subnet manager (MLNX-OS), which podplan leaves off: "
           if managed else f"{switch} is externally managed: ")
    nic = NIC_WORDS.get(parts.generation if parts is not None else "NDR", "InfiniBand HCA")
    if s.rails < 8:
        notes.append(
            f"{s.rails} {nic} per node -> {s.rails} rails; each NIC serves "
            f"{8 // max(1, s.rails)} GPUs over PCIe (Dell configuration 2 style)."
        )
    sm_where = ", ".join(f"{d} -> {sw} port {port}" for d, sw, port in g.sm_links)
    if spec.fabric.subnet_manager.value == "ufm":
        extra = len(mgmt.ufm) - 2
        notes.append(
            how + "a UFM Enterprise HA pair runs the subnet manager"
            + (
                f", with {extra} SM-only UFM appliances as external standby SMs"
                if extra > 0
                else ""
            )
            + f", one fabric port each ({sm_where})."
        )
    else:
        notes.append(
            how + "opensm runs on the head nodes (master on "
            f"{mgmt.heads[0]}, standby on {mgmt.heads[1]}), each with one {nic} port on "
            f"the fabric ({sm_where})."
        )
    notes += g.notes
    hdr = parts is not None and parts.generation == "HDR"
    notes.append(HDR_MEDIA if hdr else NDR_MEDIA)
    return notes
