"""Every device's management, BMC/OOB, front-end and fabric addresses, assigned in one pass.

``addressing`` holds the pool primitives; this module decides the order hosts take addresses
in, which is part of the output contract (goldens, inventories, BCM): management -> heads,
login, compute, spares, UFM; front end -> heads, login, compute, spares, storage; OOB ->
every server, then every switch. Fabric addresses follow the host's position on each rail.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan._construct import builder
from generator.plan.models import FabricAddress
from generator.plan.network import addressing
from generator.plan.network.ethernet import FrontendGraph
from generator.plan.network.fabric import FabricGraph
from generator.plan.parts import Parts

_FabricAddress = builder(FabricAddress)


@dataclass
class AddressTable:
    """Addresses by host name, per network, plus the derived rail CIDRs and gateway."""

    mgmt: dict[str, str]
    oob: dict[str, str]
    frontend: dict[str, str]
    fabric: dict[str, list[FabricAddress]]
    rail_cidrs: list[str]
    mgmt_gateway: str
    ranges: addressing.Ranges


def assign_addresses(p: Parts) -> AddressTable:
    """Draw every host's addresses from the plan's ranges, in the documented order."""
    n, m = p.nodes, p.mgmt
    fabric_hosts = [*n.compute, *n.spares]
    mgmt_hosts = [*m.heads, *m.login, *fabric_hosts, *m.ufm, *m.service]
    fe_hosts = [*m.heads, *m.login, *fabric_hosts, *p.storage_names, *m.service]
    servers = [*m.heads, *m.login, *fabric_hosts, *m.ufm, *p.storage_names, *m.service]
    switches = [*_ib_switch_names(p.graph), *_fe_switch_names(p.frontend)]
    switches += [r.oob.name for r in p.racks if r.oob]
    switches += [n for n, _, _ in (*p.backend.switches, *p.oob_agg.switches)]
    oob_hosts = [*servers, *switches]
    rails = p.shape.rails
    counts = {
        "oob": len(oob_hosts),
        "mgmt": len(mgmt_hosts),
        "frontend": len(fe_hosts),
        "fabric": len(fabric_hosts),
    }
    net = addressing.plan_ranges(p.spec.network, counts, rails)
    mgmt_pool = addressing.Pool(net.mgmt, "network.mgmt_cidr", len(mgmt_hosts))
    oob_pool = addressing.Pool(net.oob, "network.oob_cidr", len(oob_hosts))
    fe_pool = addressing.Pool(net.frontend, "network.frontend_cidr", len(fe_hosts))
    cidrs = addressing.rail_cidrs(net.fabric, rails, len(fabric_hosts))
    pools = [addressing.Pool(c, "network.fabric_cidr", len(fabric_hosts)) for c in cidrs]
    first = addressing.RESERVED + 1
    fabric = {
        h: [
            _FabricAddress(rail=r, device=f"mlx5_{r}", address=pools[r].with_prefix(first + i))
            for r in range(rails)
        ]
        for i, h in enumerate(fabric_hosts)
    }
    return AddressTable(
        mgmt={h: mgmt_pool.take() for h in mgmt_hosts},
        oob={h: oob_pool.take() for h in oob_hosts},
        frontend={h: fe_pool.take() for h in fe_hosts},
        fabric=fabric,
        rail_cidrs=cidrs,
        mgmt_gateway=mgmt_pool.text(addressing.GATEWAY_OFFSET),
        ranges=net,
    )


def _ib_switch_names(g: FabricGraph) -> list[str]:
    return [*g.leaf_names, *g.spine_names, *g.core_names]


def _fe_switch_names(g: FrontendGraph) -> list[str]:
    return [*g.leaf_names, *g.spine_names, *g.core_names]
