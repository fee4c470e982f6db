"""Addresses from the spec's CIDRs: deterministic, unique, inside their subnets.

Every subnet keeps its first ``RESERVED`` host addresses for the site: ``.1`` the gateway,
``.2`` the deployment host (the test lab's Ansible control node uses it, so it must stay
free), ``.3`` a service address (the PowerScale SmartConnect IP on the front-end network, a
floating head-node address on the management network), the rest spare. Hosts are numbered
after them in plan order: head nodes, login nodes, compute nodes, spares, UFM appliances,
storage; switches follow on the out-of-band network. The GPU fabric CIDR is split into one
equal subnet per rail (IPoIB), and every node keeps the same host number on every rail.
"""

from __future__ import annotations

import ipaddress
import math

from generator.errors import PodplanError, Problem

RESERVED = 9
GATEWAY_OFFSET = 1
DEPLOY_HOST_OFFSET = 2
SERVICE_OFFSET = 3


class Pool:
    """Hands out host addresses of one subnet in order, after the reserved block."""

    def __init__(self, cidr: str, field: str, needed: int) -> None:
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
                    )
                ],
            )
        self.next = RESERVED + 1

    def text(self, offset: int) -> str:
        """Address at ``offset`` from the network address, without prefix."""
        x = self.base + offset
        if self.v4:
            return f"{x >> 24}.{(x >> 16) & 255}.{(x >> 8) & 255}.{x & 255}"
        return str(ipaddress.ip_address(x))

    def with_prefix(self, offset: int) -> str:
        return f"{self.text(offset)}/{self.prefix}"

    def take(self) -> str:
        """The next host address, with its prefix length."""
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
