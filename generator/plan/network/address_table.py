"""Every device's management, BMC/OOB, front-end and fabric addresses, assigned in one pass.

``addressing`` holds the pool primitives; this module decides the order hosts take addresses
in, which is part of the output contract (goldens, inventories, BCM): management -> heads,
login, compute, spares, UFM; front end -> heads, login, compute, spares, storage; OOB ->
every server, then every switch. Fabric addresses follow the host's position on each rail.
With a plan lock (``lock.addresses``) that order only applies to new hosts: locked hosts keep
their addresses and new ones take the lowest addresses neither locked nor retired.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan._construct import builder
from generator.plan.lock import addresses as lock_addresses
from generator.plan.lock.addresses import Pinned
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
    """Draw every host's addresses from the plan's ranges, in the documented order; with a
    plan lock, locked hosts keep theirs and new hosts take the first free ones."""
    n, m = p.nodes, p.mgmt
    fabric_hosts = [*n.compute, *n.spares]
    servers = [*m.heads, *m.login, *fabric_hosts, *m.ufm, *p.storage_names, *m.service]
    switches = [*_ib_switch_names(p.graph), *_fe_switch_names(p.frontend)]
    switches += [r.oob.name for r in p.racks if r.oob]
    switches += [n for n, _, _ in (*p.backend.switches, *p.oob_agg.switches)]
    hosts = {
        "oob": [*servers, *switches],
        "mgmt": [*m.heads, *m.login, *fabric_hosts, *m.ufm, *m.service],
        "frontend": [*m.heads, *m.login, *fabric_hosts, *p.storage_names, *m.service],
        "fabric": fabric_hosts,
    }
    rails = p.shape.rails
    extra = lock_addresses.extra_addresses(p.lock, hosts) if p.lock else {}
    counts = {k: len(v) + extra.get(k, 0) for k, v in hosts.items()}
    locked = p.lock.networks if p.lock else None
    net = addressing.plan_ranges(p.spec.network, counts, rails, locked)
    cidrs = addressing.rail_cidrs(net.fabric, rails, counts["fabric"])
    ranges = {"oob": net.oob, "mgmt": net.mgmt, "frontend": net.frontend}
    pins = lock_addresses.pin(p.lock, p.spec.network, ranges, cidrs) if p.lock else {}
    out: dict[str, dict[str, str]] = {}
    for key, cidr in ranges.items():
        pool = _pool(cidr, f"network.{key}_cidr", counts[key], pins.get(key))
        out[key] = _draw(pool, hosts[key], pins.get(key))
    gateway = addressing.Pool(net.mgmt, "network.mgmt_cidr", 0).text(addressing.GATEWAY_OFFSET)
    return AddressTable(
        mgmt=out["mgmt"],
        oob=out["oob"],
        frontend=out["frontend"],
        fabric=_fabric(cidrs, fabric_hosts, counts["fabric"], pins.get("fabric")),
        rail_cidrs=cidrs,
        mgmt_gateway=gateway,
        ranges=net,
    )


def _pool(cidr: str, field: str, needed: int, pinned: Pinned | None) -> addressing.Pool:
    return addressing.Pool(cidr, field, needed, pinned.taken if pinned else frozenset())


def _draw(pool: addressing.Pool, hosts: list[str], pinned: Pinned | None) -> dict[str, str]:
    """Locked hosts at their offsets, the others from the pool in ``hosts`` order."""
    if pinned is None:
        return {h: pool.take() for h in hosts}
    at = pinned.hosts
    return {h: pool.with_prefix(at[h]) if h in at else pool.take() for h in hosts}


def _fabric(
    cidrs: list[str], hosts: list[str], needed: int, pinned: Pinned | None
) -> dict[str, list[FabricAddress]]:
    """One address per rail, the same host number on every rail."""
    if not cidrs:
        return {}
    pools = [addressing.Pool(c, "network.fabric_cidr", needed) for c in cidrs]
    taken = pinned.taken if pinned else frozenset()
    numbers = addressing.Pool(cidrs[0], "network.fabric_cidr", needed, taken)
    at = pinned.hosts if pinned else {}
    out = {}
    for h in hosts:
        if h in at:
            host = at[h]
        else:
            while numbers.next in numbers.taken:
                numbers.next += 1
            host = numbers.next
            numbers.next += 1
        out[h] = [
            _FabricAddress(rail=r, device=f"mlx5_{r}", address=pools[r].with_prefix(host))
            for r in range(len(cidrs))
        ]
    return out


def _ib_switch_names(g: FabricGraph) -> list[str]:
    return [*g.leaf_names, *g.spine_names, *g.core_names]


def _fe_switch_names(g: FrontendGraph) -> list[str]:
    return [*g.leaf_names, *g.spine_names, *g.core_names]
