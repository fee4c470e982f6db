"""The figures of ``bom.json``'s summary and the cloud break-even, from plan and lines."""

from __future__ import annotations

from typing import Any

from generator.bom.models import BomLine, CloudCost
from generator.plan.models import ClusterPlan
from generator.plan.summary import site_uplinks

HOURS_PER_MONTH = 730.0


def cloud_costs(plan: ClusterPlan, capex: float) -> list[CloudCost]:
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
    spares = plan.nodes_with_role("spare")
    spare_names = {n.name for n in spares}
    # the BOM's NIC and server lines include the spares: the summary said 2,048 NICs beside a
    # line of 2,080, which purchasing queries
    in_spares = {
        "gpus": sum(n.gpus for n in spares),
        "east_west_nics": sum(1 for link in plan.links
                              if link.network == "compute" and link.a in spare_names),
    } if spares else None
    return {
        "compute_nodes": len(compute),
        "spare_nodes": len(plan.nodes_with_role("spare")),
        "gpus": sum(n.gpus for n in compute),
        "east_west_nics": nics,
        **({"in_spares": in_spares} if in_spares else {}),
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
            **({"none_because": f.absent_because} if f.absent_because else {}),
        },
        "storage": {
            "model": st.model.replace("powerscale-", "").upper(),
            "nodes": st.nodes,
            "usable_tb": st.usable_tb,
            "write_gbps": st.write_gbps,
            "read_gbps": st.read_gbps,
            "required_write_gbps": st.required_write_gbps,
            "required_read_gbps": st.required_read_gbps,
            "sized_by": st.sized_by,
        },
        "inband_management": _inband(plan),
        "site_uplinks": {
            net: {"count": n, "speed_gbps": speed, "switches": sw}
            for net, (n, speed, sw) in sorted(site_uplinks(plan.links).items())
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


def unpriced(lines: list[BomLine]) -> list[str]:
    """Parts without a price, once each, in line order (the summary names them)."""
    return list(dict.fromkeys(f"{x.part} ({x.catalog_id})" for x in lines if x.unit_usd is None))


def _inband(plan: ClusterPlan) -> dict[str, Any]:
    """How in-band management is carried: no switches or cables of its own in this design."""
    ib = plan.network.inband
    return {
        "design": ib.design,
        "mgmt_vlan": ib.mgmt_vlan,
        "frontend_vlan": ib.frontend_vlan,
        "switches": ib.switches,
        "shared_front_end_cables": ib.host_links,
        "lacp_fallback_hosts": ib.bonded_hosts,
    }
