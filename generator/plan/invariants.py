"""Checks every generated plan must pass; returns human-readable problems (empty = fine).

Used by the unit tests on every plan they build, and usable by any caller that wants to
assert a plan is sound before emitting from it:

* every GPU-fabric NIC of every compute/spare node has exactly one fabric link;
* no device port carries two cables and no switch has more cables than ports;
* every compute-fabric switch below the top tier has at least as many ports toward the
  tier above (or its back-to-back peer) as toward GPU nodes -- a subnet-manager port that
  took the place of an uplink in an otherwise full fabric counts with the uplinks;
* every node and switch sits in exactly one rack slot, inside the rack's U range, below its
  ``mount_below_u``, without overlap, and every rack is within its power budget;
* the storage pool has at least the model's minimum node count;
* every address is unique on its network, inside its CIDR, and the reserved block
  (gateway .1, deployment host .2, ...) is left free;
* every link's medium fits both cages (plugs accepted by the cage types, ``media.yaml``),
  runs at the link's speed, and its length is a stocked length within the medium's reach,
  with the part number of that length;
* every twin-port cage (QM9790 ``<cage>/<port>``, DGX twin-port adapter) holds one plug:
  its links share one transceiver part, or one shared cable (splitter, twin DAC);
* every infrastructure and network rack keeps its reserve of U and power free.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict

from generator.catalog.load import Catalog
from generator.plan.catalog_models import MediaModel, StorageModel
from generator.plan.models import ClusterPlan
from generator.plan.network.addressing import RESERVED
from generator.plan.network.cabling import SWITCH_MGMT_PORT

TIER_RANK = {"leaf": 0, "spine": 1, "core": 2}
EPS = 1e-6


def _nic_problems(plan: ClusterPlan) -> list[str]:
    rails = plan.fabric.rails
    ports: dict[str, Counter[str]] = defaultdict(Counter)
    for link in plan.links:
        if link.network == "compute":
            ports[link.a][link.a_port] += 1
    out = []
    for node in plan.nodes_with_role("compute", "spare"):
        got = ports.get(node.name, Counter())
        want = {f"mlx5_{r}" for r in range(rails)}
        if set(got) != want or any(v != 1 for v in got.values()):
            out.append(f"{node.name}: fabric links {dict(got)} != one per rail {sorted(want)}")
    return out


def _port_problems(plan: ClusterPlan) -> list[str]:
    ends: Counter[tuple[str, str]] = Counter()
    per_switch: Counter[str] = Counter()
    for link in plan.links:
        ends[(link.a, link.a_port)] += 1
        ends[(link.b, link.b_port)] += 1
        for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if port != SWITCH_MGMT_PORT:  # the management port is not a data port
                per_switch[dev] += 1
    out = [f"{d} port {p} carries {n} cables" for (d, p), n in ends.items() if n > 1]
    out += [
        f"{s.name}: {per_switch[s.name]} cables on {s.ports} ports"
        for s in plan.switches
        if per_switch[s.name] > s.ports
    ]
    return out


def _uplink_problems(plan: ClusterPlan) -> list[str]:
    tier = {s.name: s.tier for s in plan.switches if s.network == "compute"}
    roles = {n.name: n.role for n in plan.nodes}
    up: Counter[str] = Counter()
    down: Counter[str] = Counter()
    for link in plan.links:
        if link.network != "compute":
            continue
        a, b = link.a, link.b
        if a in roles:  # node or SM device -> switch
            if roles[a] in ("compute", "spare"):
                down[b] += 1
            else:
                up[b] += 1  # subnet-manager port standing in for an uplink
            continue
        ra, rb = TIER_RANK[tier[a]], TIER_RANK[tier[b]]
        if ra == rb:  # back-to-back pair
            up[a] += 1
            up[b] += 1
        else:
            lo, hi = (a, b) if ra < rb else (b, a)
            up[lo] += 1
            down[hi] += 1
    top = max((TIER_RANK[t] for t in tier.values()), default=0)
    out = []
    for name, t in tier.items():
        if TIER_RANK[t] == top and plan.fabric.leaf_to_leaf_links == 0:
            continue
        if up[name] < down[name]:
            out.append(f"{name}: {up[name]} up < {down[name]} down")
    return out


def _rack_problems(plan: ClusterPlan, catalog: Catalog) -> list[str]:
    out = []
    placed: Counter[str] = Counter()
    where: dict[str, tuple[str, int]] = {}
    for rack in plan.racks:
        used: set[int] = set()
        for slot in rack.slots:
            placed[slot.device] += 1
            where[slot.device] = (rack.name, slot.u)
            if slot.kind == "pdu":
                continue
            span = set(range(slot.u, slot.u + slot.height_u))
            if slot.u < 1 or slot.u + slot.height_u - 1 > rack.units:
                out.append(f"{rack.name}: {slot.device} at U{slot.u} outside 1..{rack.units}")
            if span & used:
                out.append(f"{rack.name}: {slot.device} overlaps at U{slot.u}")
            used |= span
        if rack.power_kw > rack.power_budget_kw + EPS:
            out.append(f"{rack.name}: {rack.power_kw} kW over {rack.power_budget_kw} kW")
    servers = catalog.servers
    devices = [
        *((n.name, n.rack, n.u, n.model, n.height_u) for n in plan.nodes),
        *((s.name, s.rack, s.u, s.model, s.height_u) for s in plan.switches),
    ]
    for name, rack_name, u, model, height in devices:
        if placed[name] != 1:
            out.append(f"{name}: in {placed[name]} rack slots")
        elif where[name] != (rack_name, u):
            out.append(f"{name}: says {rack_name}/U{u}, elevation says {where[name]}")
        limit = servers[model].mount_below_u if model in servers else None
        if limit is not None and u + height - 1 > limit:
            out.append(f"{name}: top at U{u + height - 1}, above U{limit}")
    return out


def _address_problems(plan: ClusterPlan) -> list[str]:
    nets = {
        "mgmt": plan.network.mgmt_cidr,
        "bmc": plan.network.oob_cidr,
        "frontend": plan.network.frontend_cidr,
    }
    seen: dict[str, list[str]] = defaultdict(list)
    for n in plan.nodes:
        for key in nets:
            value = getattr(n.addresses, key)
            if value:
                seen[key].append(value)
        for fa in n.addresses.fabric:
            seen[f"rail{fa.rail}"].append(fa.address)
    for s in plan.switches:
        if s.mgmt_address:
            seen["bmc"].append(s.mgmt_address)
    cidrs = dict(nets)
    cidrs.update({f"rail{r}": c for r, c in enumerate(plan.network.rail_cidrs)})
    out = []
    for key, addrs in seen.items():
        net = ipaddress.ip_network(cidrs[key])
        reserved = {net.network_address + k for k in range(RESERVED + 1)}
        hosts = [ipaddress.ip_interface(a) for a in addrs]
        dup = [a for a, c in Counter(str(h.ip) for h in hosts).items() if c > 1]
        out += [f"{key}: {a} assigned twice" for a in dup]
        for h in hosts:
            if h.network != net:
                out.append(f"{key}: {h} not in {net}")
            if h.ip in reserved:
                out.append(f"{key}: {h} is in the reserved block")
    return out


def _media_problems(plan: ClusterPlan, catalog: Catalog) -> list[str]:
    media = catalog.family("media", MediaModel)
    accepts = catalog.raw("media")["cage_accepts"]["cages"]
    out = []
    for lk in plan.links:
        m = media.get(lk.media)
        where = f"{lk.a} {lk.a_port} - {lk.b} {lk.b_port}"
        if m is None:
            out.append(f"{where}: unknown medium {lk.media!r}")
            continue
        straight = m.a_plug in accepts.get(lk.a_cage, []) and m.b_plug in accepts.get(lk.b_cage, [])
        crossed = m.b_plug in accepts.get(lk.a_cage, []) and m.a_plug in accepts.get(lk.b_cage, [])
        if not (straight or crossed):
            out.append(f"{where}: {m.id} does not fit {lk.a_cage} / {lk.b_cage}")
        if m.speed_gbps != lk.speed_gbps:
            out.append(f"{where}: {m.id} runs at {m.speed_gbps}G, link at {lk.speed_gbps}G")
        if lk.length_m > m.reach_m or m.lengths_m.get(lk.length_m) != lk.part_number:
            out.append(f"{where}: {lk.length_m} m / {lk.part_number} not a stocked {m.id}")
    return out


def _cage_problems(plan: ClusterPlan, catalog: Catalog) -> list[str]:
    media = catalog.family("media", MediaModel)
    plugs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for lk in plan.links:
        for dev, port, cage, part in (
            (lk.a, lk.a_port, lk.a_cage, lk.a_part),
            (lk.b, lk.b_port, lk.b_cage, lk.b_part),
        ):
            if "/" in port and not port.startswith("1/1/"):
                key = (dev, port.split("/", 1)[0])
            elif port.startswith("mlx5_") and cage.endswith("-TWIN"):
                key = (dev, f"osfp{int(port[5:]) // 2}")
            else:
                continue
            m = media.get(lk.media)
            shared = m is not None and m.per_cable != 1
            plugs[key].add(part or (f"cable {lk.media}" if shared else f"cable {lk.a}-{lk.b}"))
    return [f"{d} cage {c}: {sorted(p)} in one cage" for (d, c), p in plugs.items() if len(p) > 1]


def _reserve_problems(plan: ClusterPlan) -> list[str]:
    heights = {
        s.name: (s.u, s.height_u) for s in plan.switches if s.network == "oob" and s.tier == "leaf"
    }
    out = []
    for rack in plan.racks:
        if rack.kind == "compute":
            continue
        tops = [
            x.u + x.height_u - 1 for x in rack.slots if x.kind != "pdu" and x.device not in heights
        ]
        oob_u = min((x.u for x in rack.slots if x.device in heights), default=rack.units + 1)
        if tops and max(tops) > oob_u - 1 - rack.reserve_u:
            out.append(
                f"{rack.name}: devices up to U{max(tops)} eat the {rack.reserve_u} U reserve"
            )
        if rack.power_kw > rack.power_budget_kw - rack.reserve_kw + EPS:
            out.append(f"{rack.name}: {rack.power_kw} kW eats the {rack.reserve_kw} kW reserve")
    return out


def plan_problems(plan: ClusterPlan, catalog: Catalog) -> list[str]:
    """Everything wrong with ``plan`` (empty list when it is sound)."""
    out = _nic_problems(plan) + _port_problems(plan) + _uplink_problems(plan)
    out += _media_problems(plan, catalog) + _cage_problems(plan, catalog)
    out += _reserve_problems(plan)
    out += _rack_problems(plan, catalog) + _address_problems(plan)
    storage = catalog.family("storage", StorageModel).get(plan.storage.model)
    stored = len(plan.nodes_with_role("storage"))
    if storage is not None and plan.storage.nodes < storage.min_nodes:
        out.append(f"storage: {plan.storage.nodes} nodes < minimum {storage.min_nodes}")
    if stored != plan.storage.nodes:
        out.append(f"storage: {stored} storage nodes in the plan, {plan.storage.nodes} sized")
    return out
