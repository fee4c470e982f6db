"""The BOM section: where the money goes, every line, cabling by part, cloud and break-even."""

from __future__ import annotations

from collections import defaultdict

from generator.bom import BillOfMaterials
from generator.emit.report.blocks import Block, Figure, Notes, Para, Section
from generator.emit.report.bom import bom_table, cabling_table, cloud_table
from generator.emit.report.charts import Series, labelled_bars, lines
from generator.plan.models import ClusterPlan

HORIZON_MONTHS = 36


def capex_chart(bom: BillOfMaterials) -> Figure:
    """Capex by BOM category."""
    usd: dict[str, float] = defaultdict(float)
    for line in bom.lines:
        usd[line.category] += line.extended_usd or 0.0
    scale, unit = (1e6, "million USD") if max(usd.values(), default=0) >= 1e7 else (1e3, "k USD")
    items = [(k, v / scale) for k, v in usd.items() if v > 0]
    svg = labelled_bars("chart-capex", "Capex by category", unit, items,
                        "{:,.1f}" if scale == 1e6 else "{:,.0f}")
    return Figure(svg, f"Where the ${bom.capex_usd:,.0f} of capex go, by BOM category.")


def cost_chart(bom: BillOfMaterials) -> Figure | None:
    """Cumulative cost of owning (capex + power) against renting each cloud 24×7."""
    if not bom.cloud:
        return None
    evens = [c.break_even_months for c in bom.cloud if c.break_even_months is not None]
    horizon = max(HORIZON_MONTHS, int(1.3 * max(evens, default=0)) + 1)
    months = [float(m) for m in range(0, horizon + 1, max(1, horizon // 12))]
    series = [Series("on-prem (capex + power)", tuple(
        (m, (bom.capex_usd + bom.power_usd_per_month * m) / 1e6) for m in months))]
    marks = []
    for c in bom.cloud:
        series.append(Series(f"{c.provider} {c.instance}", tuple(
            (m, c.usd_per_month * m / 1e6) for m in months)))
        if c.break_even_months is not None:
            m = c.break_even_months
            marks.append((m, c.usd_per_month * m / 1e6, f"{c.provider}: {m:.1f} mo"))
    svg = lines("chart-cost", "Cumulative cost: buy or rent", "months", "million USD", series,
                marks=marks)
    return Figure(svg, "Owning (capex, then power every month) against renting the cloud "
                       "equivalent around the clock; labels mark the break-even months.")


def bom_section(plan: ClusterPlan, bom: BillOfMaterials) -> Section:
    """Charts, the BOM table, cabling and the cloud comparison."""
    blocks: list[Block] = [
        Para(f"Price book: {bom.price_book}. Prices are estimates or street quotes, not "
             "Dell/NVIDIA list prices: re-quote before ordering. Click a column heading to "
             "sort; type in the box to filter; the footer totals the lines shown."),
        *([Notes([f"Price book warning: {n}" for n in bom.notes])] if bom.notes else []),
        capex_chart(bom),
        bom_table(bom),
        cabling_table(plan, bom),
        cloud_table(bom),
    ]
    cost = cost_chart(bom)
    if cost:
        blocks.append(cost)
    return Section("bom", "Bill of materials and cost", blocks)
