"""The fabric section: the compute fabric drawn by groups, then every other network (front
end, out of band, and any a later plan adds), storage and the address plan."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from generator.emit.report.blocks import (
    Block,
    Figure,
    Heading,
    Notes,
    Para,
    Section,
    facts_table,
)
from generator.emit.report.graph import (
    TIER_ROW,
    NetworkView,
    endpoint_devices,
    links_by_network,
    network_title,
    network_view,
)
from generator.emit.report.labels import model_label, part_label
from generator.emit.report.network_svg import describe, draw_network
from generator.emit.report.tables import Cell, Column, Table, count, number, plain
from generator.plan.models import ClusterPlan, Link


def switch_table(plan: ClusterPlan, networks: list[str]) -> Table:
    """Switches per network and tier: the counts the drawings group."""
    per: Counter[tuple[str, str, str]] = Counter()
    kw: dict[tuple[str, str, str], float] = defaultdict(float)
    ports: dict[tuple[str, str, str], int] = {}
    order = {n: i for i, n in enumerate(networks)}
    for s in plan.switches:
        key = (s.network, s.tier, s.model)
        per[key] += 1
        kw[key] += s.power_kw
        ports[key] = s.ports
    keys = sorted(per, key=lambda k: (order.get(k[0], 99), TIER_ROW.get(k[1], 9), k[2]))
    rows = [
        [Cell(network_title(n)), Cell(t), Cell(model_label(m)), count(per[(n, t, m)]),
         count(ports[(n, t, m)]), number(kw[(n, t, m)], 1, "kW")]
        for n, t, m in keys
    ]
    return Table("switch-table", f"Switches: {len(plan.switches):,} in all",
                 [Column("Network"), Column("Tier"), Column("Model"), Column("Count", True),
                  Column("Ports each", True), Column("Power", True)], rows, sortable=True)


def _pairs_table(view: NetworkView, key: str) -> Table:
    rows = [
        [plain(p.lower), plain(p.upper), count(p.links),
         plain(", ".join(f"{s:g} Gb/s" for s in p.speeds)),
         plain(", ".join(sorted({part_label(x) for x in p.parts})))]
        for p in view.pairs
    ]
    return Table(f"links-{key}", f"{network_title(view.network)}: {view.links:,} links",
                 [Column("From"), Column("To"), Column("Links", True), Column("Speed"),
                  Column("Part numbers")], rows)


def _compute_title(plan: ClusterPlan) -> str:
    f = plan.fabric
    nodes = len(plan.nodes_with_role("compute", "spare"))
    if not f.tiers:  # not "0-tier rail-optimized none fat tree, 0 rails"
        return f"Compute fabric: none ({nodes:,} node{'' if nodes == 1 else 's'})"
    return (f"Compute fabric: {f.tiers}-tier rail-optimized {f.switch_model} fat tree, "
            f"{f.rails} rails, {nodes:,} nodes in {f.scalable_units} scalable unit(s)")


def _network_blocks(
    plan: ClusterPlan, network: str, links: list[Link], title: str, base: dict[str, Any]
) -> list[Block]:
    key = f"net-{network}"
    if not links:
        return [Heading(title, key), Para(f"No {network_title(network)} links in this plan.")]
    view = network_view(plan, network, links, base)
    tiers = ", ".join(f"{n:,} {t}" for t, n in sorted(view.switches.items(),
                                                      key=lambda kv: TIER_ROW.get(kv[0], 9)))
    svg = draw_network(view, key, title, describe(view))
    return [
        Heading(title, key),
        Figure(svg, f"{title}. Switches: {tiers or 'none'}. Boxes group devices by scalable "
                    "unit or by wiring; numbers on lines are link counts per bundle."),
        _pairs_table(view, network),
    ]


def _storage_blocks(plan: ClusterPlan) -> list[Block]:
    st = plan.storage
    names = {n.name for n in plan.nodes_with_role("storage")}
    nets = sorted({link.network for link in plan.links if link.a in names or link.b in names})
    where = ", ".join(network_title(n) for n in nets) or "no network in this plan"
    return [
        Heading("Storage", "storage-plan"),  # "net-storage" is the back-end network's
        Para(f"{st.nodes} × {model_label(st.model)}: {st.usable_tb:,.1f} TB usable of "
             f"{st.required_tb:,.1f} TB required, {st.read_gbps:g} GB/s read and "
             f"{st.write_gbps:g} GB/s write; mounted at {st.mount_point} from "
             f"{st.nfs_server}:{st.nfs_export}. Storage nodes are cabled to: {where}."),
        facts_table("storage-facts", "Storage plan", st),
        *([Notes(st.notes)] if st.notes else []),
    ]


def fabric_section(plan: ClusterPlan) -> Section:
    """Drawings and link tables for every network, then storage and addressing."""
    by_net = links_by_network(plan)
    f = plan.fabric
    # without a fabric this read 'The compute fabric is built for 1 nodes ...; its subnet
    # manager runs on UFM' beside a BOM with neither
    fabric = (f"The compute fabric is built for {f.designed_nodes:,} node"
              f"{'s' if f.designed_nodes != 1 else ''} ({f.su_nodes} per scalable unit); its "
              f"subnet manager runs on {f.subnet_manager.upper()}." if f.tiers else
              f"There is no compute fabric ({f.absent_because or 'no east-west NICs'}).")
    blocks: list[Block] = [
        Para(f"{len(plan.switches):,} switches and {len(plan.links):,} cables. {fabric}"),
        switch_table(plan, list(by_net)),
    ]
    base = endpoint_devices(plan)
    blocks += _network_blocks(plan, "compute", by_net.get("compute", []), _compute_title(plan),
                              base)
    if f.design_notes:
        blocks.append(Notes(f.design_notes))
    for network, links in by_net.items():
        if network == "compute":
            continue
        title = f"{network_title(network).capitalize()} network"
        blocks += _network_blocks(plan, network, links, title, base)
    blocks += _storage_blocks(plan)
    blocks.append(Heading("Address plan", "net-addresses"))
    blocks.append(facts_table("address-facts", "Address plan", plan.network))
    rails = plan.network.rail_cidrs
    if rails:
        blocks.append(Para("Rail subnets (IPoIB): " + ", ".join(
            f"rail {i}: {c}" for i, c in enumerate(rails)) + "."))
    return Section("fabric", "Fabric and networks", blocks)

