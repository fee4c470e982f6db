"""The BOM section: every line in a sortable, filterable table with totals, the cabling by
part number, and the cloud equivalent with break-even."""

from __future__ import annotations

from collections import Counter, defaultdict

from generator.bom import BillOfMaterials
from generator.emit.report.graph import network_title
from generator.emit.report.tables import Column, Table, count, number, plain, usd
from generator.plan.models import ClusterPlan


def bom_table(bom: BillOfMaterials) -> Table:
    """One row per BOM line; the footer totals hardware and capex."""
    columns = [
        Column("Category"), Column("Part"), Column("Part number", nowrap=True), Column("Qty", True),
        Column("Unit"), Column("Unit USD", True), Column("Extended USD", True),
        Column("Estimate"), Column("Source"), Column("Note"),
    ]
    rows = [
        [
            plain(line.category), plain(line.part), plain(line.part_number or "per quote"),
            count(line.quantity), plain(line.unit), usd(line.unit_usd),
            usd(line.extended_usd), plain("yes" if line.estimate else "no"),
            plain(line.source), plain(line.note),
        ]
        for line in bom.lines
    ]
    blank = [plain("")] * 5
    foot = [
        [plain("Shown lines"), *blank, usd(sum(x.extended_usd or 0.0 for x in bom.lines)),
         *[plain("")] * 3],
        [plain("Hardware"), *blank, usd(bom.hardware_usd), *[plain("")] * 3],
        [plain("Capex (all lines)"), *blank, usd(bom.capex_usd),
         plain(f"{bom.unpriced_lines} unpriced"), plain(""), plain("")],
    ]
    return Table("bom-table", f"Bill of materials: {len(rows)} lines", columns, rows, foot,
                 sortable=True, filterable=True)


def _bom_units(bom: BillOfMaterials) -> tuple[dict[str, int], dict[str, str]]:
    """Units ordered (spares apart) and name per cabling-table key: the part number of a
    cable or an optic (its name where it has none: Dell optics are quoted per order).

    Looked up by catalog id, every cable row (keyed by part number) found no line and the
    optic rows found the spares line last (34 switch optics read '1')."""
    units: dict[str, int] = defaultdict(int)
    names: dict[str, str] = {}
    for line in bom.lines:
        if line.category not in ("cables", "optics"):
            continue
        key = line.part_number or line.part
        units[key] += line.quantity
        names.setdefault(key, line.part)
    return dict(units), names


def _optic_keys(bom: BillOfMaterials) -> dict[str, str]:
    """Optic catalog id -> what the cabling table names it by (its part number)."""
    return {x.catalog_id: x.part_number or x.part for x in bom.lines
            if x.category == "optics"}


def cabling_table(plan: ClusterPlan, bom: BillOfMaterials) -> Table:
    """Cables and optics per part number, per network, beside the BOM's unit count."""
    cables: Counter[tuple[str, str]] = Counter()
    ends: Counter[tuple[str, str]] = Counter()
    metres: dict[str, float] = defaultdict(float)
    optic_key = _optic_keys(bom)
    for link in plan.links:
        part = link.part_number or link.cable
        cables[(part, link.network)] += 1
        metres[part] += link.length_m
        for end in (link.a_part, link.b_part):
            if end:
                ends[(optic_key.get(end, end), link.network)] += 1
    nets = list(dict.fromkeys([*(s.network for s in plan.switches),
                               *sorted({net for _, net in cables})]))
    uses: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for (part, net), n in cables.items():
        uses[(part, "cable")][net] += n
    for (end, net), n in ends.items():
        uses[(end, "optic / connector")][net] += n
    units, names = _bom_units(bom)
    columns = [Column("Part number", nowrap=True), Column("What"), Column("Used as"),
               *[Column(network_title(n), True) for n in nets], Column("Link ends", True),
               Column("BOM units", True), Column("Length (m)", True)]
    rows = []
    for (part, role), per_net in sorted(uses.items()):
        rows.append([
            plain(part), plain(names.get(part, "")), plain(role),
            *[count(per_net.get(n, 0)) for n in nets], count(sum(per_net.values())),
            count(units[part]) if part in units else plain(""),
            number(metres[part], 0) if role == "cable" else plain(""),
        ])
    caption = (f"Cabling by part: {len(plan.links):,} links; optics are counted per link end "
               "(twin-port switch optics serve two ends, so the BOM has fewer units)")
    return Table("cabling-table", caption, columns, rows, sortable=True)


def cloud_table(bom: BillOfMaterials) -> Table:
    """The cloud equivalent per provider, with break-even against buying."""
    columns = [Column("Provider"), Column("Instance"), Column("Count", True),
               Column("USD per hour", True), Column("USD per run", True),
               Column("USD per month (24×7)", True), Column("Break-even (months)", True)]
    rows = [
        [plain(c.provider), plain(c.instance), count(c.count), usd(c.usd_per_hour),
         usd(c.usd_per_run) if bom.summary["compute_hours"] else plain("n/a"),
         usd(c.usd_per_month),
         number(c.break_even_months, 1) if c.break_even_months is not None
         else plain("never")]
        for c in bom.cloud
    ]
    return Table("cloud-table", "Cloud equivalent (GPU instances on demand + file system)",
                 columns, rows, sortable=True)
