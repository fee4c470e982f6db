"""The summary section: what the cluster is, how long the run takes, what it costs to buy,
power and rent, and when buying pays off."""

from __future__ import annotations

from typing import Any

from generator.bom import BillOfMaterials
from generator.emit.report.blocks import Card, Cards, Notes, Para, Section
from generator.emit.report.labels import model_label
from generator.emit.report.tables import hours
from generator.plan.compute import whole_server_note
from generator.plan.models import ClusterPlan
from generator.sizing.report import slo_misses


def uncertainty_text(estimate: Any) -> str:
    """" (−12 %/+18 %, 14 similar measurements)" when the sizing gives a band, else "".

    Outside every calibrated regime the band is the spread of a whole stage's errors, not of
    similar measurements: it says "outside calibration", as ``podplan size`` does."""
    band = getattr(estimate, "uncertainty_pct", None)
    if band is None:
        return ""
    fields = band if isinstance(band, dict) else vars(band)
    low, high = fields.get("low"), fields.get("high")
    similar = fields.get("similar_measurements")
    if low is None or high is None:
        return ""
    tail = f", {similar} similar measurements" if similar is not None else ""
    calibrated = getattr(getattr(estimate, "uncertainty", None), "calibrated", None)
    if fields.get("calibrated") is False or calibrated is False:
        tail = ", outside calibration"
    return f" (−{abs(float(low)):g} %/+{abs(float(high)):g} %{tail})"


def _time_card(plan: ClusterPlan) -> Card | None:
    training = plan.sizing.training
    if not training:
        return None
    rel = plan.reliability
    band = uncertainty_text(training[0]) if len(training) == 1 else ""
    # the band belongs to the time: after the interruptions it read as theirs
    n = rel.expected_interruptions
    detail = (f"compute {hours(rel.compute_hours)}{band}, goodput {rel.goodput:.1%}, "
              f"{f'{n:.3g}' if n >= 0.001 else 'under 0.001'} expected interruptions")
    return Card("Run time (wall-clock)", hours(rel.wallclock_hours), detail, "wallclock_hours",
                rel.wallclock_hours)


def _cloud_cards(bom: BillOfMaterials) -> list[Card]:
    if not bom.cloud:
        return []
    cheapest = min(bom.cloud, key=lambda c: (c.usd_per_hour, c.provider))
    # serving only: no run to price ("$0 per run" would read as free)
    per_run = f", ${cheapest.usd_per_run:,.0f} per run" if bom.summary["compute_hours"] else ""
    cards = [Card("Cloud equivalent", f"${cheapest.usd_per_hour:,.0f}/h",
                  f"{cheapest.count} × {cheapest.instance} ({cheapest.provider}){per_run}",
                  "cloud_usd_per_hour", cheapest.usd_per_hour)]
    even = sorted((c.break_even_months, c.provider) for c in bom.cloud
                  if c.break_even_months is not None)
    if even:
        (months, first), others = even[0], even[1:]
        rest = "; ".join(f"{m:.1f} against {p}" for m, p in others)
        cards.append(Card("Break-even", f"{months:.1f} months",
                          f"buying beats renting {first} 24×7 after this" +
                          (f" ({rest})" if rest else ""), "break_even_months", months))
    return cards


def _fabric_text(plan: ClusterPlan) -> str:
    f = plan.fabric
    if not f.tiers:  # "0-tier none fabric, 0/0/0 leaf/spine/core" said nothing
        why = f.absent_because or "no east-west NICs"
        return f"Ethernet and out-of-band only; no GPU fabric ({why})"
    return (f"{f.tiers}-tier {f.switch_model} fabric, {f.leaf_switches}/{f.spine_switches}/"
            f"{f.core_switches} leaf/spine/core")


def summary_section(plan: ClusterPlan, bom: BillOfMaterials) -> Section:
    """Headline figures as cards, then the sizing notes."""
    sz, power = plan.sizing, plan.power
    compute = plan.nodes_with_role("compute")
    spares = plan.nodes_with_role("spare")
    gpus = sum(n.gpus for n in compute)
    cards = [
        Card("GPUs", f"{gpus:,}", f"{model_label(sz.gpu)} in {model_label(sz.server)}", "gpus",
             gpus),
        Card("Nodes", f"{len(compute):,}",
             f"GPU nodes + {len(spares)} spare; {len(plan.nodes):,} servers in all",
             "compute_nodes", len(compute)),
        Card("Racks", f"{len(plan.racks):,}",
             f"{plan.racks[0].units if plan.racks else 0} U, "
             f"{plan.racks[0].power_budget_kw if plan.racks else 0:g} kW budget each",
             "racks", len(plan.racks)),
        Card("Switches", f"{len(plan.switches):,}", _fabric_text(plan), "switches",
             len(plan.switches)),
    ]
    time_card = _time_card(plan)
    if time_card:
        cards.append(time_card)
    cards.append(Card("Capex", f"${bom.capex_usd:,.0f}",
                      f"{len(bom.lines)} BOM lines, {bom.unpriced_lines} without a price",
                      "capex_usd", bom.capex_usd))
    cards.append(Card("IT power", f"{power.it_kw:,.1f} kW",
                      f"facility {power.facility_kw:,.1f} kW at PUE {power.pue:g}, "
                      f"{power.btu_per_hour:,.0f} BTU/h", "it_kw", power.it_kw))
    if sz.training:
        # energy at the typical draw, as the plan costs it (the maximum sizes feeds and cooling)
        draw = power.it_typical_kw * power.pue if power.it_typical_kw else power.facility_kw
        kwh = draw * plan.reliability.wallclock_hours
        cards.append(Card("Energy per run", f"{kwh:,.0f} kWh",
                          f"${kwh * power.usd_per_kwh:,.0f} at ${power.usd_per_kwh:g}/kWh; "
                          f"${power.usd_per_month:,.0f} per month at typical draw",
                          "energy_kwh", kwh))
    cards += _cloud_cards(bom)
    blocks: list[Any] = [
        Para(f"{plan.name}: {len(sz.workloads)} workload(s) on {gpus:,} GPUs, planned from "
             f"{plan.spec_file}. Every figure below comes from the same plan as plan.yaml, "
             "the BOM, the inventory and the stack configs."),
        Cards(cards),
    ]
    misses = slo_misses(sz)
    if misses:  # headline: the capex above buys latency the workloads do not get
        blocks.append(Notes([f"Latency SLO missed: {m}; its notes under Workloads say why "
                             "and what would meet them." for m in misses]))
    # the sizing already says when the GPUs are not whole servers; the plan's own line for
    # it (kept in plan.yaml and on the BOM's compute line) would say it twice
    rounding = whole_server_note(sz)
    notes = [*sz.notes, *(n for n in plan.notes if n != rounding)]
    if notes:
        blocks.append(Notes(notes))
    return Section("summary", "Summary", blocks)
