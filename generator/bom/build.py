"""Plan -> priced bill of materials. Quantities come only from the plan's devices and cables.

Lines, in order: compute nodes (by model), GPU-fabric NICs, management servers, storage
nodes, switches (compute fabric, front end, out of band), optics and cables (counted from
the plan's links: twin-port switch modules once per used cage), racks and PDUs, software
(BCM path: NVIDIA AI Enterprise, first year), installation/support uplift. A part the price
book does not price is listed with no unit price and counted in ``unpriced_lines``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.bom.models import BillOfMaterials, BomLine, CloudCost
from generator.bom.prices import PriceBook
from generator.plan._construct import gc_paused
from generator.plan.cabling import part_counts
from generator.plan.compute import whole_server_note
from generator.plan.models import ClusterPlan

HOURS_PER_MONTH = 730.0
NIC_ID = "cx7-osfp-1x400"
RACK_ID = "rack-42u"
SOFTWARE_ID = "nvaie-per-gpu-year"
UPLIFT_ID = "support-installation-uplift"
SWITCH_CATEGORY = {
    "compute": "compute fabric",
    "frontend": "front-end network",
    "oob": "out-of-band network",
}
ROLE_CATEGORY = {
    "compute": "compute",
    "spare": "compute",
    "head": "management",
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
    """Price id of a server: ``<model>-<n>x-<gpu>`` variants first, then ``<model>``."""
    if gpu:
        short = gpu.rsplit("-", 1)[0]  # h100-pcie-80gb -> h100-pcie
        for item_id in sorted(book.items):
            if item_id.startswith(f"{model}-") and item_id.endswith(short):
                return item_id
    return model


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
        note = (whole_server_note(plan.sizing) or "") if cat == "compute" else ""
        out.append(_line(book, cat, _server_price_id(book, model, gpu), qty, note=note))
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
    roles = {n.name: n for n in plan.nodes}
    in_gpu_nodes = 0
    in_heads = 0
    for link in plan.links:
        if link.network != "compute":
            continue
        node = roles.get(link.a)
        if node is None:
            continue
        if node.role in ("compute", "spare"):
            in_gpu_nodes += 1
        elif node.role == "head":
            in_heads += 1
    out = []
    nic = book.get(NIC_ID)
    gpu_models = {n.model for n in plan.nodes if n.role in ("compute", "spare")}
    included = any(
        (it := book.get(_server_price_id(book, m, plan.sizing.gpu))) is not None
        and "CX-7" in it.name
        for m in gpu_models
    )
    if in_gpu_nodes:
        out.append(
            _line(
                book,
                "compute fabric",
                NIC_ID,
                in_gpu_nodes,
                part=(nic.name if nic else NIC_ID) + " (GPU fabric NIC)",
                unit_usd=0.0 if included else None,
                note="included in the GPU node price" if included else "",
            )
        )
    if in_heads:
        out.append(
            _line(
                book,
                "compute fabric",
                NIC_ID,
                in_heads,
                part=(nic.name if nic else NIC_ID) + " (head node, opensm)",
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


def _optic_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    optics = book.optics
    counts = part_counts(plan.links, book.shared_parts)
    out = []
    for part, qty in sorted(counts.items()):
        optic = optics.get(part)
        cat = "cables" if optic is not None and optic.where == "cable" else "optics"
        if optic is None and "aoc" in part:
            cat = "cables"
        name = optic.name if optic else ""
        note = "" if optic else "not in the optics catalog"
        out.append(_line(book, cat, part, qty, part=name, note=note))
    return sorted(out, key=lambda line: (line.category != "optics", line.catalog_id))


def _rack_lines(plan: ClusterPlan, book: PriceBook) -> list[BomLine]:
    pdus = sum(1 for r in plan.racks for s in r.slots if s.kind == "pdu")
    rack = book.get(RACK_ID)
    out = [_line(book, "racks", RACK_ID, len(plan.racks))]
    if pdus:
        out.append(
            _line(
                book,
                "racks",
                "rack-pdu",
                pdus,
                part="Rack PDU (3-phase, switched/metered)",
                unit="pdu",
                unit_usd=0.0 if rack else None,
                note=f"included in {RACK_ID}" if rack else "",
                source=book.source(RACK_ID) if rack else None,
            )
        )
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


def summary(plan: ClusterPlan, capex: float, cloud: list[CloudCost]) -> dict[str, Any]:
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
        "facility_kw": plan.power.facility_kw,
        "btu_per_hour": plan.power.btu_per_hour,
        "power_usd_per_month": plan.power.usd_per_month,
        "capex_usd": round(capex, 2),
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
        summary=summary(plan, capex, cloud),
    )
