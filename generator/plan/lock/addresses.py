"""Locked addresses: every device keeps its address; retired addresses stay out of use.

An address is kept as an offset from its network's base, so it survives a range that only
widened on the same base (a default grown with the cluster, or a user's ``/20`` made a
``/19``). When the plan's range no longer contains a locked address (the user changed a
CIDR, or the IPoIB rails were split differently) nothing is renumbered silently: the plan
stops with an error naming the field and the devices, and ``--fresh`` renumbers everything.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from generator.errors import PodplanError, Problem
from generator.plan.lock.model import Lock
from generator.plan.network.addressing import RESERVED
from generator.spec.site import Network

NETWORK_FIELD = {
    "oob": "network.oob_cidr",
    "mgmt": "network.mgmt_cidr",
    "frontend": "network.frontend_cidr",
    "fabric": "network.fabric_cidr",
}
SHOWN = 5


@dataclass(frozen=True)
class Pinned:
    """One network's locked hosts (host -> offset) and every offset the lock holds."""

    hosts: dict[str, int]
    taken: frozenset[int]


def extra_addresses(lock: Lock, hosts: dict[str, list[str]]) -> dict[str, int]:
    """Per network, addresses the lock holds for devices not in ``hosts`` (retired or
    removed now): the range must have room for them too."""
    out = {}
    for key, names in hosts.items():
        here = set(names)
        owners = [n for n, d in lock.devices.items() if key in d.addresses and n not in here]
        owners += [n for n, a in lock.retired.items() if key in a]
        out[key] = len(owners)
    return out


def _owners(lock: Lock, key: str) -> list[tuple[str, str, str]]:
    """(owner, address, lock path of the entry) of every locked address on ``key``."""
    out = [
        (n, d.addresses[key], f"devices.{n}") for n, d in lock.devices.items() if key in d.addresses
    ]
    out += [(n, a[key], f"retired.{n}") for n, a in lock.retired.items() if key in a]
    return out


def pin(lock: Lock, net: Network, ranges: dict[str, str], rails: list[str]) -> dict[str, Pinned]:
    """Offsets of the locked addresses in the plan's ranges (``fabric``: rail 0's subnet)."""
    if rails and lock.rails:
        _check_rails(lock, rails)
    out = {}
    for key, cidr in {**ranges, "fabric": rails[0] if rails else ""}.items():
        if not cidr:
            continue
        subnet = ipaddress.IPv4Network(cidr)
        base, size = int(subnet.network_address), subnet.num_addresses
        hosts: dict[str, int] = {}
        taken = set()
        bad = []
        for owner, address, entry in _owners(lock, key):
            a, b, c, d = map(int, address.split("."))  # checked when the lock was read
            off = ((a << 24) | (b << 16) | (c << 8) | d) - base
            if not RESERVED < off < size - 1:
                bad.append((owner, address, entry))
                continue
            taken.add(off)
            hosts[owner] = off  # a retired switch the design brings back gets its own back
        if bad:
            raise _outside(lock, net, key, cidr, bad)
        out[key] = Pinned(hosts, frozenset(taken))
    return out


def _outside(
    lock: Lock, net: Network, key: str, cidr: str, bad: list[tuple[str, str, str]]
) -> PodplanError:
    field = NETWORK_FIELD[key]
    shown = ", ".join(f"{o} {a}" for o, a, _ in bad[:SHOWN]) + (" ..." if len(bad) > SHOWN else "")
    message = (
        f"{len(bad)} address(es) of the plan lock are outside {cidr}"
        f"{' (rail 0)' if key == 'fabric' else ''}: {shown}"
    )
    if f"{key}_cidr" in net.model_fields_set:
        hint = (
            f"keep {field} at {lock.networks.get(key)} (the lock's range, or a wider one "
            "that contains it), or plan with --fresh to renumber every device"
        )
        return PodplanError(
            "the plan would renumber devices already built",
            problems=[Problem(path=field, message=message, hint=hint)],
        )
    entry = bad[0][2]
    return PodplanError(
        "the plan lock has an address outside its network",
        lock.path,
        [
            Problem(
                path=f"{entry}.{key}",
                message=message,
                line=lock.line_of(entry),
                hint="restore the lock from git, or plan with --fresh to renumber every device",
            )
        ],
    )


def _check_rails(lock: Lock, rails: list[str]) -> None:
    """The IPoIB subnet of every rail both plans have must not move."""
    for r, (old, new) in enumerate(zip(lock.rails, rails, strict=False)):
        if old != new:
            raise PodplanError(
                "the plan would renumber devices already built",
                problems=[
                    Problem(
                        path="network.fabric_cidr",
                        message=(
                            f"the IPoIB subnet of rail {r} would move from {old} (plan lock) "
                            f"to {new}, renumbering every GPU node's fabric addresses (the "
                            f"fabric range is split into {len(rails)} rails"
                            + (
                                f", the lock has {len(lock.rails)}"
                                if len(rails) != len(lock.rails)
                                else ""
                            )
                            + ")"
                        ),
                        hint=(
                            "keep hardware.east_west_nics_per_node and network.fabric_cidr "
                            f"({lock.networks.get('fabric')} in the lock) as they were, or "
                            "plan with --fresh to renumber every device"
                        ),
                    )
                ],
            )
