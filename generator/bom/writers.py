"""BOM writers: a fixed-width table (``podplan bom``), CSV, JSON and Markdown.

Writers only serialize the ``BillOfMaterials``; every figure is decided in ``bom.build``.
Each format carries the provenance: Markdown and the table in a header, JSON in
``generated_by``/``regenerate`` keys, CSV in two last columns of the same names, so the file
stays plain CSV (its first line is the column names) for ``csv.DictReader`` and spreadsheets.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from generator.bom.models import BillOfMaterials, BomLine
from generator.bom.order import order_rows
from generator.render.files import header_lines, regenerate_command

CSV_COLUMNS = [
    "category",
    "part",
    "part_number",
    "catalog_id",
    "quantity",
    "unit",
    "unit_usd",
    "extended_usd",
    "estimate",
    "source",
    "note",
    "generated_by",
    "regenerate",
]
PRICE_WARNING = (
    "Prices are rough estimates or street quotes, not Dell/NVIDIA list prices: re-quote "
    "before use (override with the spec's `prices:` file)."
)


def _usd(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def money(x: float) -> str:
    """'4.50', '108', '590,568': cents only where they change a small figure."""
    return f"{x:,.2f}" if abs(x) < 10_000 and abs(x - round(x)) >= 0.005 else f"{x:,.0f}"


def _line_usd(x: float | None) -> str:
    """A BOM line's unit or extended price: cents where they matter (a $4.50 cable shown as
    '4' read 24 x 4 = 108 to purchasing)."""
    return "n/a" if x is None else money(x)


def _line_dict(line: BomLine) -> dict[str, Any]:
    return line.model_dump()


def bom_document(bom: BillOfMaterials) -> dict[str, Any]:
    """The ``bom.json`` document."""
    return {
        "generated_by": f"podplan from {bom.spec_file}",
        "regenerate": regenerate_command(bom.spec_file),
        "name": bom.name,
        "price_book": bom.price_book,
        "summary": bom.summary,
        "lines": [_line_dict(line) for line in bom.lines],
        "totals": {
            "hardware_usd": bom.hardware_usd,
            "capex_usd": bom.capex_usd,
            "unpriced_lines": bom.unpriced_lines,
            "power_usd_per_month": bom.power_usd_per_month,
        },
        "cloud": [c.model_dump() for c in bom.cloud],
        "notes": [PRICE_WARNING, *bom.notes],
    }


def _sorted(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _sorted(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [_sorted(x) for x in obj]
    return obj


def to_json(bom: BillOfMaterials) -> str:
    """Sorted keys, except the provenance keys, which come first (JSON has no comments)."""
    doc = bom_document(bom)
    head = {k: doc.pop(k) for k in ("generated_by", "regenerate")}
    return json.dumps({**head, **_sorted(doc)}, indent=2, ensure_ascii=False) + "\n"


def _cell(value: Any) -> Any:
    """CSV cell: empty for None, ``true``/``false`` for booleans (as the total row)."""
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else value


def to_csv(bom: BillOfMaterials) -> str:
    """Plain CSV: the column names, one row per line, a ``total`` row; provenance columns."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    made = {"generated_by": f"podplan from {bom.spec_file}",
            "regenerate": regenerate_command(bom.spec_file)}
    for line in bom.lines:
        d = _line_dict(line)
        w.writerow({**{c: _cell(d.get(c)) for c in CSV_COLUMNS}, **made})
    w.writerow({"category": "total", "part": "capex", "extended_usd": f"{bom.capex_usd:.2f}",
                "estimate": "true", "source": bom.price_book, **made})
    return buf.getvalue()


def _inband_text(summary: dict[str, Any]) -> str:
    ib = summary["inband_management"]
    return (
        f"VLAN {ib['mgmt_vlan']} (untagged, PXE via LACP fallback) beside the front-end VLAN "
        f"{ib['frontend_vlan']} on the front-end leaves; no switches of its own, shares the "
        f"{ib['shared_front_end_cables']:,} front-end host cables"
    )


def _site_text(summary: dict[str, Any]) -> str:
    words = {"frontend": "front end", "oob": "out of band"}
    ups = summary.get("site_uplinks") or {}
    return "; ".join(
        f"{u['count']} x {u['speed_gbps']}GbE ({words.get(net, net)})" for net, u in ups.items()
    ) or "none"


def _serving_only(s: dict[str, Any]) -> bool:
    """No training run to time: "0.0 h wall-clock" and "0 USD per run" would read as free."""
    return not s["time_hours"] and not s["compute_hours"]


def _run_text(s: dict[str, Any], sep: str) -> str:
    if _serving_only(s):
        return "none (serving only: no training run to time; see the monthly figures)"
    return f"{s['time_hours']:,.1f} h wall-clock{sep} goodput {s['goodput']:.3f}"


def _per_run(s: dict[str, Any], usd: float | None) -> str:
    return "n/a" if _serving_only(s) else _usd(usd)


def _nodes(n: int) -> str:
    return "1 node" if n == 1 else f"{n:,} nodes"


def _compute_text(s: dict[str, Any]) -> str:
    """Counts as the BOM lines give them: the spares' GPUs and NICs are on those lines too."""
    spare: dict[str, int] = s.get("in_spares") or {}

    def extra(key: str) -> str:
        return f" (+{spare[key]:,} in the spares)" if spare.get(key) else ""

    return (f"{_nodes(s['compute_nodes'])} + {s['spare_nodes']:,} spare, {s['gpus']:,} GPUs"
            f"{extra('gpus')}, {s['east_west_nics']:,} GPU-fabric NICs{extra('east_west_nics')}")


def _fabric_text(f: dict[str, Any]) -> str:
    """'none, 0 tier(s), 0 leaf / 0 spine / 0 core' told purchasing nothing: say why."""
    if not f["tiers"]:
        return f"none ({f.get('none_because') or 'no east-west NICs'})"
    return (f"{f['switch_model']}, {f['tiers']} tier(s), {f['leaf_switches']} leaf / "
            f"{f['spine_switches']} spine / {f['core_switches']} core")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _order_markdown(bom: BillOfMaterials) -> list[str]:
    """The order list: one row per part with its total quantity (spares included)."""
    out = [
        "## Order list",
        "",
        "One row per part, spares included (the lines above split them by use and budget).",
        "",
        "| Part number | Part | Qty | Of which spares | Unit USD | Extended USD |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in order_rows(bom):
        out.append(
            f"| {_md_escape(r.part_number or 'per quote')} | {_md_escape(r.part)} | "
            f"{r.quantity:,} | {r.spares:,} | {_line_usd(r.unit_usd)} | "
            f"{_line_usd(r.extended_usd)} |"
        )
    return out


def to_markdown(bom: BillOfMaterials) -> str:
    s = bom.summary
    head = "".join(f"{line}\n" for line in header_lines(bom.spec_file))
    out = [f"<!--\n{head}-->", f"# Bill of materials: {bom.name}", ""]
    f, st = s["fabric"], s["storage"]
    out += [
        f"- Compute: {_compute_text(s)}",
        f"- Fabric: {_fabric_text(f)}",
        f"- Storage: {st['model']} x {st['nodes']}, {st['usable_tb']:g} TB usable, "
        f"{st['write_gbps']:g} GB/s write (estimate)",
        f"- In-band management: {_inband_text(s)}",
        f"- Site uplinks: {_site_text(s)}",
        f"- Racks: {s['racks']}, IT power {s['power_kw']:,.1f} kW "
        f"({s['btu_per_hour']:,.0f} BTU/h), power cost {_usd(s['power_usd_per_month'])} USD/month",
        f"- Run: {_run_text(s, ' at')}",
        f"- **Capex: {_usd(bom.capex_usd)} USD** ({bom.unpriced_lines} line(s) without a price)",
        *(f"- Without a price (quote these): {name}" for name in s["unpriced"]),
        *(f"- **Price book warning:** {_md_escape(note)}" for note in bom.notes),
        "",
        "| Category | Part | Part number | Qty | Unit USD | Extended USD | Source | Note |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for line in bom.lines:
        out.append(
            f"| {line.category} | {_md_escape(line.part)} | "
            f"{_md_escape(line.part_number or 'per quote')} | {line.quantity:,} | "
            f"{_line_usd(line.unit_usd)} | {_line_usd(line.extended_usd)} | "
            f"{_md_escape(line.source)} | {_md_escape(line.note)} |"
        )
    out += ["", *_order_markdown(bom)]
    out += [
        "",
        "## Cloud equivalent",
        "",
        "| Provider | Instance | Count | USD/hour | USD per run | USD/month (24x7) "
        "| Break-even months |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for c in bom.cloud:
        be = "never" if c.break_even_months is None else f"{c.break_even_months:g}"
        out.append(
            f"| {c.provider} | {c.instance} | {c.count:,} | {_usd(c.usd_per_hour)} | "
            f"{_per_run(s, c.usd_per_run)} | {_usd(c.usd_per_month)} | {be} |"
        )
    out += ["", f"_{PRICE_WARNING}_", ""]
    return "\n".join(out)


def to_table(bom: BillOfMaterials) -> str:
    rows = [("CATEGORY", "PART", "PART NUMBER", "QTY", "UNIT USD", "EXTENDED USD")]
    for line in bom.lines:
        part = line.part if len(line.part) <= 64 else line.part[:61] + "..."
        rows.append(
            (
                line.category,
                part,
                line.part_number or "per quote",
                f"{line.quantity:,}",
                _line_usd(line.unit_usd),
                _line_usd(line.extended_usd),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    out = []
    for i, r in enumerate(rows):
        out.append(
            f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  "
            f"{r[3]:>{widths[3]}}  {r[4]:>{widths[4]}}  {r[5]:>{widths[5]}}".rstrip()
        )
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    s = bom.summary
    out += [
        "",
        f"capex: {_usd(bom.capex_usd)} USD ({bom.unpriced_lines} line(s) without a price)",
        *(f"without a price (quote these): {name}" for name in s["unpriced"]),
        *(f"price book warning: {note}" for note in bom.notes),
        f"in-band management: {_inband_text(s)}",
        f"site uplinks: {_site_text(s)}",
        f"power: {s['power_kw']:,.1f} kW IT, {s['facility_kw']:,.1f} kW facility, "
        f"{_usd(s['power_usd_per_month'])} USD/month",
        f"run: {_run_text(s, ',')}",
    ]
    for c in bom.cloud:
        be = "never" if c.break_even_months is None else f"{c.break_even_months:g} months"
        out.append(
            f"cloud {c.provider}: {c.count} x {c.instance}, {_usd(c.usd_per_hour)} USD/h, "
            f"{_per_run(s, c.usd_per_run)} USD per run, break-even {be}"
        )
    out += [f"price book: {bom.price_book}", PRICE_WARNING, ""]
    return "\n".join(out)


def format_bom(bom: BillOfMaterials, fmt: str = "table") -> str:
    """Render ``bom`` as ``table`` | ``csv`` | ``json`` | ``md``."""
    writers = {"table": to_table, "csv": to_csv, "json": to_json, "md": to_markdown}
    if fmt not in writers:
        raise ValueError(f"unknown BOM format {fmt!r}; expected one of {', '.join(writers)}")
    return writers[fmt](bom)
