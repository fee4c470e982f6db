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

import math
from collections import Counter
from typing import Any

from generator.bom.models import BillOfMaterials, BomLine, CloudCost
from generator.bom.prices import PriceBook
from generator.plan._construct import gc_paused
from generator.plan.models import ClusterPlan
from generator.plan.network.cabling import part_counts

HOURS_PER_MONTH = 730.0
NIC_ID = "cx7-osfp-1x400"
RACK_ID = "rack-42u"
SOFTWARE_ID = "nvaie-per-gpu-year"
UPLIFT_ID = "support-installation-uplift"
PDU_ID = "pdu-3ph-415v-32a"
PSU_ID = "psu-spare-2800w"
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


def _line(
    book: PriceBook,
    category: str,
    item_id: str,
    qty: int,
    part: str = "",
    unit: str = "",
    unit_usd: float | None = None,
    note: str = "",
    source: str | None = None,
) -> BomLine:
    item = book.get(item_id)
    if unit_usd is None and item is not None:
        unit_usd = item.usd
    if source is None:
        source = book.source(item_id) if item is not None else "not in the price book (gap)"
    return BomLine(
        category=category,
        part=part or (item.name if item else item_id),
        catalog_id=item_id,
        quantity=qty,
        unit=unit or (item.unit if item else "unit"),
        unit_usd=round(unit_usd, 2) if unit_usd is not None else None,
        extended_usd=round(unit_usd * qty, 2) if unit_usd is not None else None,
        source=source,
        estimate=item.estimate if item else True,
        note=note,
    )


def _server_price_id(book: PriceBook, model: str, gpu: str | None) -> str:
    """Price id of a server: ``<model>-<gpu family>`` (e.g. xe9680-h100-sxm), else ``<model>``."""
    if gpu:
        family = gpu.rsplit("-", 1)[0]  # h100-sxm-80gb -> h100-sxm
        if book.get(f"{model}-{family}") is not None:
            return f"{model}-{family}"
        if book.get(model) is None:
            return f"{model}-{family}"  # a gap, listed and flagged under this id
    return model


def _compute_part(plan: ClusterPlan, book: PriceBook, model: str, item_id: str) -> str:
    """The compute line's name: server, GPUs, fabric NICs and configuration."""
    node = next(n for n in plan.nodes if n.model == model and n.role in ("compute", "spare"))
    item = book.get(item_id)
    base = (item.name.split(",")[0] if item else model).strip()
    rails = plan.fabric.rails
    gpu_name = (node.gpu or "").upper().replace("-", " ")
    text = f"{base}, {node.gpus}x {gpu_name}"
    if rails:
        nic = book.nics.get(plan.east_west_nic, plan.east_west_nic)
        how = "built in" if plan.east_west_built_in else "on their own line"
        config = (
            "Dell configuration 1, one per GPU"
            if rails == node.gpus
            else f"Dell configuration 2, one per {node.gpus // max(1, rails)} GPUs"
        )
        text += f", {rails}x {nic} ({config}; {how})"
    else:
        text += ", no GPU-fabric NICs"
    return text


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
        line = _line(book, cat, item_id, qty, part=part)
        if line.unit_usd is None:
            line = line.model_copy(update={"note": "no price: quote this configuration"})
        out.append(line)
    return out


def _storage_line(plan: ClusterPlan, book: PriceBook, qty: int) -> BomLine:
    st = plan.storage
    item = book.get(st.model)
    raw_per_node = st.raw_tb / st.nodes
    model = item.name.split(",")[0] if item else st.model
    part = f"{model}, {raw_per_node:g} TB raw ({st.drive_tb:g} TB drives)"
    unit = None
    note = ""
    if item is not None and item.usd_per_raw_tb is not None:
        unit = item.usd_per_raw_tb * raw_per_node
        note = f"{item.usd_per_raw_tb:g} USD per raw TB x {raw_per_node:g} TB"
    return _line(book, "storage", st.model, qty, part=part, unit_usd=unit, note=note)


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
            _line(
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
        out.append(_line(book, "compute fabric", NIC_ID, in_heads, part=f"{name} (head, opensm)"))
    gpu_nodes = len(plan.nodes_with_role("compute", "spare"))
    if gpu_nodes and plan.north_south_nic:
        built = plan.north_south_built_in
        ns = plan.north_south_nic
        out.append(
            _line(
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
        _line(book, SWITCH_CATEGORY[net], model, qty)
        for (net, model), qty in sorted(
            groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
        )
    ]


def cable_price(book: PriceBook, media: str, length_m: float) -> float | None:
    """Base + per-metre price of one cable of ``media`` at ``length_m`` (None = unpriced)."""
    item = book.get(media)
    if item is None:
        return None
    if item.usd_base is not None:
        return item.usd_base + (item.usd_per_m or 0.0) * length_m
    return item.usd


def _optic_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    """Transceivers by optic id, cables and fibres by exact part number (length)."""
    per_cable = {k: m.per_cable for k, m in book.media.items()}
    optics, cables = part_counts(plan.links, book.shared_parts, per_cable)
    out = []
    for part, qty in sorted(optics.items()):
        optic = book.optics.get(part)
        name = f"{optic.name} ({optic.opn})" if optic else part
        out.append(_line(book, "optics", part, qty, part=name, unit="module"))
    for (media, pn, length), qty in sorted(cables.items()):
        m = book.media.get(media)
        name = f"{pn}: {m.name if m else media}, {length:g} m"
        out.append(
            _line(
                book,
                "cables",
                media,
                qty,
                part=name,
                unit="cable",
                unit_usd=cable_price(book, media, length),
            )
        )
    return out


def _rack_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    pdus = sum(1 for r in plan.racks for s in r.slots if s.kind == "pdu")
    out = [_line(book, "racks", RACK_ID, len(plan.racks))]
    if pdus:
        cap = plan.racks[0].pdu_capacity_kw
        item = book.get(PDU_ID)
        name = item.name if item else PDU_ID
        out.append(
            _line(
                book,
                "racks",
                PDU_ID,
                pdus,
                part=f"{name}, {cap:g} kW continuous each (A+B feeds)",
                unit="pdu",
            )
        )
    return out


def _spare_lines(plan: ClusterPlan, book: PriceBook, lines: list[BomLine]) -> list[BomLine]:
    """The spares policy: % of optics and cables, switches per model, % of server PSUs."""
    pol = plan.spares_policy
    out = []
    for line in lines:
        pct = {"optics": pol.get("optics_percent", 0.0), "cables": pol.get("cables_percent", 0.0)}
        share = pct.get(line.category)
        if share:
            qty = math.ceil(line.quantity * share / 100.0 - 1e-9)
            if qty:
                out.append(
                    line.model_copy(
                        update={
                            "category": "spares",
                            "quantity": qty,
                            "extended_usd": None
                            if line.unit_usd is None
                            else round(line.unit_usd * qty, 2),
                            "note": f"{share:g} % spares of {line.quantity:,}",
                        }
                    )
                )
    per_model = int(pol.get("switches_per_model", 0))
    if per_model:
        for model in sorted({s.model for s in plan.switches}):
            out.append(
                _line(book, "spares", model, per_model, note="cold-spare switch (spares policy)")
            )
    psus = sum(book.psus.get(n.model, 0) for n in plan.nodes)
    share = pol.get("psus_percent", 0.0)
    if psus and share:
        qty = math.ceil(psus * share / 100.0 - 1e-9)
        out.append(_line(book, "spares", PSU_ID, qty, note=f"{share:g} % of {psus:,} server PSUs"))
    return out


def _extra_lines(plan: ClusterPlan, book: PriceBook, hardware: float) -> list[BomLine]:
    out = []
    if plan.scheduler_kind == "bcm" and book.get(SOFTWARE_ID) is not None:
        gpus = sum(n.gpus for n in plan.nodes)
        out.append(
            _line(
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
            _line(
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


def _cloud(plan: ClusterPlan, capex: float) -> list[CloudCost]:
    out = []
    power = plan.power.usd_per_month
    for c in plan.cloud:
        fs = c.filesystem.usd_per_month
        monthly = round(c.usd_per_hour * HOURS_PER_MONTH + (fs or 0.0), 2)
        saving = monthly - power
        out.append(
            CloudCost(
                provider=c.provider,
                instance=c.instance_type,
                count=c.count,
                usd_per_hour=c.usd_per_hour,
                usd_per_run=c.usd_per_run,
                filesystem_usd_per_month=fs,
                usd_per_month=monthly,
                break_even_months=round(capex / saving, 1) if saving > 0 else None,
            )
        )
    return out


def summary(
    plan: ClusterPlan, capex: float, cloud: list[CloudCost], unpriced: list[str] | None = None
) -> dict[str, Any]:
    """The cluster figures of ``bom.json``'s summary."""
    f, st = plan.fabric, plan.storage
    compute = plan.nodes_with_role("compute")
    names = {n.name for n in compute}
    nics = sum(1 for link in plan.links if link.network == "compute" and link.a in names)
    return {
        "compute_nodes": len(compute),
        "spare_nodes": len(plan.nodes_with_role("spare")),
        "gpus": sum(n.gpus for n in compute),
        "east_west_nics": nics,
        "fabric": {
            "switch_model": f.switch_model,
            "tiers": f.tiers,
            "rails": f.rails,
            "scalable_units": f.scalable_units,
            "leaf_switches": f.leaf_switches,
            "spine_switches": f.spine_switches,
            "core_switches": f.core_switches,
            "node_to_leaf_links": f.node_to_leaf_links,
            "leaf_to_spine_links": f.leaf_to_spine_links,
            "spine_to_core_links": f.spine_to_core_links,
            "leaf_to_leaf_links": f.leaf_to_leaf_links,
            "subnet_manager": f.subnet_manager,
        },
        "storage": {
            "model": st.model.replace("powerscale-", "").upper(),
            "nodes": st.nodes,
            "usable_tb": st.usable_tb,
            "write_gbps": st.write_gbps,
            "read_gbps": st.read_gbps,
        },
        "racks": len(plan.racks),
        "power_kw": plan.power.it_kw,
        "power_typical_kw": plan.power.it_typical_kw,
        "airflow_cfm": plan.power.airflow_cfm,
        "weight_kg": plan.power.weight_kg,
        "energy_assumption": plan.power.energy_assumption,
        "facility_kw": plan.power.facility_kw,
        "btu_per_hour": plan.power.btu_per_hour,
        "power_usd_per_month": plan.power.usd_per_month,
        "capex_usd": round(capex, 2),
        "unpriced": list(unpriced or []),
        "time_hours": plan.reliability.wallclock_hours,
        "compute_hours": plan.reliability.compute_hours,
        "goodput": plan.reliability.goodput,
        "expected_interruptions": plan.reliability.expected_interruptions,
        "cloud": [
            {
                "provider": c.provider,
                "instance": c.instance,
                "count": c.count,
                "usd_per_hour": c.usd_per_hour,
                "usd_per_run": c.usd_per_run,
                "usd_per_month": c.usd_per_month,
                "break_even_months": c.break_even_months,
            }
            for c in cloud
        ],
    }


def _unpriced(lines: list[BomLine]) -> list[str]:
    """Parts without a price, once each, in line order (the summary names them)."""
    return list(dict.fromkeys(f"{x.part} ({x.catalog_id})" for x in lines if x.unit_usd is None))


def build_bom(plan: ClusterPlan, book: PriceBook) -> BillOfMaterials:
    """Every line of the bill of materials, capex, power cost and cloud break-even."""
    with gc_paused():
        return _build_bom(plan, book)


def _build_bom(plan: ClusterPlan, book: PriceBook) -> BillOfMaterials:
    lines = [
        *_node_lines(plan, book),
        *_nic_lines(plan, book),
        *_switch_lines(plan, book),
        *_optic_lines(plan, book),
        *_rack_lines(plan, book),
    ]
    lines += _spare_lines(plan, book, lines)
    hardware = round(sum(line.extended_usd or 0.0 for line in lines), 2)
    lines += _extra_lines(plan, book, hardware)
    capex = round(sum(line.extended_usd or 0.0 for line in lines), 2)
    cloud = _cloud(plan, capex)
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
        summary=summary(plan, capex, cloud, _unpriced(lines)),
    )
