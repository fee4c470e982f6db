"""Addresses from the spec's CIDRs: deterministic, unique, inside their subnets.

Every subnet keeps its first ``RESERVED`` host addresses for the site: ``.1`` the gateway,
``.2`` the deployment host (the test lab's Ansible control node uses it, so it must stay
free), ``.3`` a service address (the PowerScale SmartConnect IP on the front-end network, a
floating head-node address on the management network), the rest spare. Hosts are numbered
after them in plan order: head nodes, login nodes, compute nodes, spares, UFM appliances,
storage; switches follow on the out-of-band network. The GPU fabric CIDR is split into one
equal subnet per rail (IPoIB), and every node keeps the same host number on every rail.

Ranges (``plan_ranges``): a range the user set under ``network:`` is kept as written and
checked (too small is an error naming the field). A range left at its default is sized from
the plan with room to grow: the default (a /20, the fabric's /16) while it holds
``GROWTH`` times the plan's hosts, else the smallest larger prefix on the same base address
that does, so no existing address moves when the range grows. A grown default that would
overlap another range is an error asking for explicit ranges.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field

from generator.errors import PodplanError, Problem
from generator.spec.site import Network

RESERVED = 9
GATEWAY_OFFSET = 1
DEPLOY_HOST_OFFSET = 2
SERVICE_OFFSET = 3
GROWTH = 2  # a default range holds this many times the plan's hosts


class Pool:
    """Hands out host addresses of one subnet in order, after the reserved block.

    ``taken``: offsets already held (a plan lock's addresses, retired ones included), which
    ``take`` skips; ``needed`` counts them too."""

    def __init__(
        self, cidr: str, field: str, needed: int, taken: frozenset[int] = frozenset()
    ) -> None:
        self.net = ipaddress.ip_network(cidr)
        self.field = field
        self.prefix = self.net.prefixlen
        self.base = int(self.net.network_address)
        self.v4 = self.net.version == 4
        usable = self.net.num_addresses - (2 if self.v4 and self.prefix < 31 else 0)
        room = usable - RESERVED
        if needed > room:
            bits = math.ceil(math.log2(needed + RESERVED + 2))
            raise PodplanError(
                f"{field} is too small for this cluster",
                problems=[
                    Problem(
                        path=field,
                        message=(
                            f"{cidr} has room for {max(room, 0)} addresses after the "
                            f"{RESERVED} reserved at its start; the plan needs {needed}"
                        ),
                        allowed=f"a /{self.net.max_prefixlen - bits} or larger",
                        hint=f"or leave {field} unset: podplan then sizes it from the plan",
                    )
                ],
            )
        self.next = RESERVED + 1
        self.taken = taken

    def text(self, offset: int) -> str:
        """Address at ``offset`` from the network address, without prefix."""
        x = self.base + offset
        if self.v4:
            return f"{x >> 24}.{(x >> 16) & 255}.{(x >> 8) & 255}.{x & 255}"
        return str(ipaddress.ip_address(x))

    def with_prefix(self, offset: int) -> str:
        return f"{self.text(offset)}/{self.prefix}"

    def take(self) -> str:
        """The next free host address, with its prefix length."""
        while self.next in self.taken:
            self.next += 1
        out = self.with_prefix(self.next)
        self.next += 1
        return out


def rail_cidrs(fabric_cidr: str, rails: int, hosts: int) -> list[str]:
    """Split the fabric CIDR into one subnet per rail (power-of-two split)."""
    if rails == 0:
        return []
    net = ipaddress.ip_network(fabric_cidr)
    extra = max(0, math.ceil(math.log2(rails)))
    if net.prefixlen + extra > net.max_prefixlen - 2:
        raise PodplanError(
            "network.fabric_cidr is too small to split per rail",
            problems=[
                Problem(path="network.fabric_cidr", message=f"{fabric_cidr} for {rails} rails")
            ],
        )
    subnets = list(net.subnets(prefixlen_diff=extra))[:rails]
    for s in subnets:  # checks room in every rail subnet
        Pool(str(s), "network.fabric_cidr", hosts)
    return [str(s) for s in subnets]


@dataclass(frozen=True)
class Ranges:
    """The address ranges the plan draws from, and a note per default range it grew."""

    oob: str
    mgmt: str
    frontend: str
    fabric: str
    notes: list[str] = field(default_factory=list)


def _bits_for(hosts: int) -> int:
    """Host bits a subnet needs for ``hosts`` after the reserved block (IPv4 net/broadcast)."""
    return max(2, math.ceil(math.log2(hosts + RESERVED + 2)))


def _rail_split(rails: int) -> int:
    return max(0, math.ceil(math.log2(rails))) if rails else 0


def _grown(name: str, default: str, bits: int) -> str:
    """``default`` widened to ``bits`` host bits on the same base address, if it needs to."""
    net = ipaddress.ip_network(default)
    if net.max_prefixlen - net.prefixlen >= bits:
        return default
    prefix = net.max_prefixlen - bits
    grown = ipaddress.ip_network(f"{net.network_address}/{prefix}", strict=False)
    if grown.network_address != net.network_address:
        raise PodplanError(
            f"the default network.{name} cannot grow to this cluster",
            problems=[
                Problem(
                    path=f"network.{name}",
                    message=(
                        f"the plan needs a /{prefix} (with room to grow) but the default "
                        f"{default} cannot widen without moving its base address"
                    ),
                    hint=f"set network.{name} to a /{prefix} or larger",
                )
            ],
        )
    return str(grown)


def _fits(cidr: str, hosts: int, rails: int) -> bool:
    net = ipaddress.ip_network(cidr)
    return net.max_prefixlen - net.prefixlen - _rail_split(rails) >= _bits_for(hosts)


def plan_ranges(
    net: Network, hosts: dict[str, int], rails: int, locked: dict[str, str] | None = None
) -> Ranges:
    """The plan's ranges: the user's as set, defaults sized to ``GROWTH`` x ``hosts``.

    ``hosts`` counts addresses per network (``oob``, ``mgmt``, ``frontend``; ``fabric`` per
    rail). Ranges the user set are checked where the pools are drawn (``Pool``). A range a
    plan lock holds (``locked``) and the user did not set stays as long as it holds the
    plan's hosts, so growth within it changes nothing; beyond, it widens on its base address
    like a default.
    """
    given = net.model_fields_set
    out: dict[str, str] = {}
    notes = []
    for key in ("oob", "mgmt", "frontend", "fabric"):
        name = f"{key}_cidr"
        default = current = str(getattr(net, name))
        if name in given:
            out[key] = current
            continue
        if locked and key in locked:
            current = locked[key]
        if current != default or locked:
            fits = _fits(current, hosts[key], rails if key == "fabric" else 0)
        else:
            fits = False  # a fresh default: sized with room to grow below
        if fits:
            out[key] = current
        else:
            bits = _bits_for(GROWTH * hosts[key])
            if key == "fabric":
                bits += _rail_split(rails)
            out[key] = _grown(name, current, bits)
        if out[key] == default:
            continue
        base = ipaddress.ip_network(out[key]).network_address
        if base == ipaddress.ip_network(default).network_address:
            notes.append(
                f"network.{name} is not set: its default {default} is too small for "
                f"{hosts[key]:,} addresses{' per rail' if key == 'fabric' else ''} with room "
                f"to grow ({GROWTH}x), so the plan uses {out[key]} (same base address; a "
                "plan lock keeps it while it holds the plan). Set network: to choose the "
                "ranges yourself."
            )
        else:
            notes.append(f"network.{name} is not set: the plan keeps {out[key]} (plan lock).")
    _check_overlap(out, given)
    return Ranges(out["oob"], out["mgmt"], out["frontend"], out["fabric"], notes)


def _check_overlap(ranges: dict[str, str], given: set[str]) -> None:
    nets = {k: ipaddress.ip_network(v) for k, v in ranges.items()}
    keys = list(nets)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if nets[a].overlaps(nets[b]):
                grown = a if f"{a}_cidr" not in given else b
                other = b if grown == a else a
                raise PodplanError(
                    "address ranges overlap",
                    problems=[
                        Problem(
                            path=f"network.{grown}_cidr",
                            message=(
                                f"sized for this cluster, {ranges[grown]} overlaps "
                                f"network.{other}_cidr ({ranges[other]})"
                            ),
                            hint="set every range under network: explicitly",
                        )
                    ],
                )
