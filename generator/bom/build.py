"""Plan -> priced bill of materials. Quantities come only from the plan's devices and links.

Lines, in order: compute nodes (the actual GPU, NIC count and configuration, priced without
their fabric NICs), management servers, storage nodes, GPU-fabric NICs (unless built into
the system, e.g. DGX), north-south NICs, switches (compute fabric, front end, storage back
end, out of band), transceivers and cables by exact part number (counted from the plan's
links: splitters and twin-port modules once per cage), racks and PDUs, spares (the spec's
spares policy), software (BCM path: NVIDIA AI Enterprise, first year), installation/support
uplift. A part the price book does not price is listed with no unit price, counted in
``unpriced_lines`` and named in the summary's ``unpriced``.
"""

from __future__ import annotations

import re
from collections import Counter

from generator.bom.cables import optic_lines, spare_lines
from generator.bom.lines import make_line
from generator.bom.models import BillOfMaterials, BomLine
from generator.bom.prices import PriceBook
from generator.bom.summary import cloud_costs, summary, unpriced
from generator.catalog.names import model_label
from generator.gcpause import gc_paused
from generator.plan.compute import whole_server_note
from generator.plan.models import ClusterPlan

NIC_ID = "cx7-osfp-1x400"
RACK_ID = "rack-42u"
RACK_UNITS = 42
"""The height of RACK_ID."""
SOFTWARE_ID = "nvaie-per-gpu-year"
UPLIFT_ID = "support-installation-uplift"
PDU_ID = "pdu-3ph-415v-32a"
SWITCH_CATEGORY = {
    "compute": "compute fabric",
    "frontend": "front-end network",
    "storage": "storage back-end network",
    "oob": "out-of-band network",
}
ROLE_CATEGORY = {
    "compute": "compute",
    "spare": "compute",
    "head": "management",
    "mgmt": "management",
    "login": "management",
    "ufm": "management",
    "storage": "storage",
}


def _server_price_id(book: PriceBook, model: str, gpu: str | None) -> str:
    """Price id of a server: ``<model>-<gpu family>`` (e.g. xe9680-h100-sxm), else ``<model>``."""
    if gpu:
        family = gpu.rsplit("-", 1)[0]  # h100-sxm-80gb -> h100-sxm
        if book.get(f"{model}-{family}") is not None:
            return f"{model}-{family}"
        if book.get(model) is None:
            return f"{model}-{family}"  # a gap, listed and flagged under this id
    return model


DELL_CONFIGS = {"xe9680": {8: "Dell configuration 1", 4: "Dell configuration 2"}}


def _compute_part(plan: ClusterPlan, book: PriceBook, model: str, item_id: str) -> str:
    """The compute line's name: system, GPUs, fabric NICs and configuration."""
    node = next(n for n in plan.nodes if n.model == model and n.role in ("compute", "spare"))
    item = book.get(item_id)
    name, _ = book.servers.get(model, (model, 0.0))
    base = re.split(r",| \(", item.name, maxsplit=1)[0] if item else name
    rails = plan.fabric.rails
    gpu_name = model_label(node.gpu or "")
    text = f"{base.strip()}, {node.gpus}x {gpu_name}"
    if not rails:
        return text + ", no GPU-fabric NICs"
    nic = book.nics.get(plan.east_west_nic, plan.east_west_nic)
    share = "one per GPU" if rails == node.gpus else f"one per {node.gpus // rails} GPUs"
    config = DELL_CONFIGS.get(model, {}).get(rails)
    how = "built in" if plan.east_west_built_in else "on their own line"
    detail = "; ".join(x for x in (f"{config}, {share}" if config else share, how) if x)
    return text + f", {rails}x {nic} ({detail})"


def _node_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    groups: Counter[tuple[str, str, str | None]] = Counter()
    for n in plan.nodes:
        groups[(ROLE_CATEGORY[n.role], n.model, n.gpu)] += 1
    out = []
    order = list(dict.fromkeys(ROLE_CATEGORY.values()))
    for (cat, model, gpu), qty in sorted(
        groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
    ):
        if model == plan.storage.model:
            out.append(_storage_line(plan, book, qty))
            continue
        item_id = _server_price_id(book, model, gpu)
        part = _compute_part(plan, book, model, item_id) if cat == "compute" else ""
        if cat == "management":
            part = _management_part(plan, book, model, item_id)
        note = (whole_server_note(plan.sizing) or "") if cat == "compute" else ""
        line = make_line(book, cat, item_id, qty, part=part, note=note)
        if line.unit_usd is None:
            line = line.model_copy(update={"note": "; ".join(filter(None, [
                line.note, "no price: quote this configuration"]))})
        out.append(line)
    return out


ROLE_WORDS = {  # singular, plural
    "head": ("head node", "head nodes"),
    "mgmt": ("service node", "service nodes (Slurm, accounting, monitoring)"),
    "login": ("login node", "login nodes"),
    "ufm": ("UFM appliance", "UFM appliances"),
}


def _management_part(plan: ClusterPlan, book: PriceBook, model: str, item_id: str) -> str:
    """The price item's name and what the units of this model are for (heads, login ...)."""
    roles = Counter(n.role for n in plan.nodes if n.model == model and n.role in ROLE_WORDS)
    item = book.get(item_id)
    name = item.name if item else model
    uses = ", ".join(f"{k} {ROLE_WORDS[r][k > 1]}" for r, k in roles.items())
    return f"{name}: {uses}"


def _storage_line(plan: ClusterPlan, book: PriceBook, qty: int) -> BomLine:
    st = plan.storage
    item = book.get(st.model)
    raw_per_node = st.raw_tb / st.nodes
    model = item.name.split(",")[0] if item else st.model
    part = f"{model}, {raw_per_node:g} TB raw ({st.drive_tb:g} TB drives)"
    unit = item.usd_for_raw_tb(raw_per_node) if item is not None else None
    note = ""
    if item is not None and item.usd_per_raw_tb is not None:
        base = f"{item.usd_base:,g} USD per node + " if item.usd_base else ""
        note = f"{base}{item.usd_per_raw_tb:,g} USD per raw TB x {raw_per_node:g} TB"
    if st.model in book.warnings:  # the override set half of the price: say so on the line
        note = f"{note}; the prices file {book.warnings[st.model]}".lstrip("; ")
    return make_line(book, "storage", st.model, qty, part=part, unit_usd=unit, note=note)


def _nic_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    """GPU-fabric NICs (per fabric port of a GPU node), opensm head NICs, north-south NICs."""
    roles = {n.name: n.role for n in plan.nodes}
    in_gpu_nodes = in_heads = 0
    for link in plan.links:
        if link.network != "compute":
            continue
        role = roles.get(link.a)
        if role in ("compute", "spare"):
            in_gpu_nodes += 1
        elif role == "head":
            in_heads += 1
    out = []
    nic_id = plan.east_west_nic or NIC_ID
    name = book.nics.get(nic_id, nic_id)
    if in_gpu_nodes:
        built = plan.east_west_built_in
        out.append(
            make_line(
                book,
                "compute fabric",
                nic_id,
                in_gpu_nodes,
                part=f"{name} (GPU fabric NIC)",
                unit_usd=0.0 if built else None,
                note="built into the system, priced with it" if built else "",
            )
        )
    if in_heads:
        hca = plan.east_west_nic or NIC_ID  # the SM hosts' HCA is the nodes' (fabric_parts)
        out.append(make_line(book, "compute fabric", hca, in_heads,
                             part=f"{book.nics.get(hca, hca)} (head, opensm)"))
    gpu_nodes = len(plan.nodes_with_role("compute", "spare"))
    if gpu_nodes and plan.north_south_nic:
        built = plan.north_south_built_in
        ns = plan.north_south_nic
        out.append(
            make_line(
                book,
                "front-end network",
                ns,
                gpu_nodes,
                part=f"{book.nics.get(ns, ns)} (north-south NIC, one per GPU node)",
                unit_usd=0.0 if built else None,
                note="built into the system, priced with it" if built else "",
            )
        )
    return out


def _switch_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    groups: Counter[tuple[str, str]] = Counter((s.network, s.model) for s in plan.switches)
    order = list(SWITCH_CATEGORY)
    return [
        make_line(book, SWITCH_CATEGORY[net], model, qty)
        for (net, model), qty in sorted(
            groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
        )
    ]


def _rack_line(plan: ClusterPlan, book: PriceBook) -> BomLine:
    """The racks at the height the plan fills (facility.rack_units): 48U racks ordered as the
    price book's 42U part would not hold the elevation. A height the price book does not
    price is listed without a price (quote it), under the id a ``prices:`` file can set."""
    units = plan.racks[0].units if plan.racks else RACK_UNITS
    if units == RACK_UNITS:
        return make_line(book, "racks", RACK_ID, len(plan.racks))
    item_id = f"rack-{units}u"
    part = ("" if book.get(item_id) else
            f"{units}U rack (doors, side panels, cable management), without PDUs")
    return make_line(book, "racks", item_id, len(plan.racks), part=part, unit="rack")


def _rack_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    pdus = sum(1 for r in plan.racks for s in r.slots if s.kind == "pdu")
    out = [_rack_line(plan, book)]
    if pdus:
        cap = plan.racks[0].pdu_capacity_kw
        item = book.get(PDU_ID)
        name = item.name if item else PDU_ID
        out.append(
            make_line(
                book,
                "racks",
                PDU_ID,
                pdus,
                part=f"{name}, {cap:g} kW continuous each (A+B feeds)",
                unit="pdu",
            )
        )
    return out


def _extra_lines(plan: ClusterPlan, book: PriceBook, hardware: float) -> list[BomLine]:
    out = []
    if plan.scheduler_kind == "bcm" and book.get(SOFTWARE_ID) is not None:
        gpus = sum(n.gpus for n in plan.nodes)
        out.append(
            make_line(
                book,
                "software",
                SOFTWARE_ID,
                gpus,
                note="first year; includes the Base Command Manager entitlement",
            )
        )
    uplift = book.get(UPLIFT_ID)
    if uplift is not None and uplift.fraction_of_hardware:
        out.append(
            make_line(
                book,
                "services",
                UPLIFT_ID,
                1,
                unit="lot",
                unit_usd=hardware * uplift.fraction_of_hardware,
                note=f"{uplift.fraction_of_hardware:g} x hardware {hardware:,.0f} USD",
            )
        )
    return out


def build_bom(plan: ClusterPlan, book: PriceBook) -> BillOfMaterials:
    """Every line of the bill of materials, capex, power cost and cloud break-even."""
    with gc_paused():
        return _build_bom(plan, book)


def _build_bom(plan: ClusterPlan, book: PriceBook) -> BillOfMaterials:
    lines = [
        *_node_lines(plan, book),
        *_nic_lines(plan, book),
        *_switch_lines(plan, book),
        *optic_lines(plan, book),
        *_rack_lines(plan, book),
    ]
    lines += spare_lines(plan, book, lines)
    hardware = round(sum(line.extended_usd or 0.0 for line in lines), 2)
    lines += _extra_lines(plan, book, hardware)
    capex = round(sum(line.extended_usd or 0.0 for line in lines), 2)
    cloud = cloud_costs(plan, capex)
    return BillOfMaterials(
        name=plan.name,
        spec_file=plan.spec_file,
        price_book=book.description,
        lines=lines,
        hardware_usd=hardware,
        capex_usd=capex,
        unpriced_lines=sum(1 for line in lines if line.unit_usd is None),
        power_usd_per_month=plan.power.usd_per_month,
        cloud=cloud,
        summary=summary(plan, capex, cloud, unpriced(lines)),
        notes=book.notes,
    )
