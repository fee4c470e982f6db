"""The parsed lock: devices, racks, cables, retired devices and the last change.

Plain frozen dataclasses, built by ``read.parse_lock`` from a file it has checked line by
line; each entry keeps its line so a later conflict (an address outside a changed range, a
slot that no longer fits) can point at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import NamedTuple

from generator.plan.models import FreedDevice

ADDRESS_KEYS = ("oob", "mgmt", "frontend", "fabric")
"""Networks a device can have an address on; ``fabric`` is the rail-0 IPoIB address."""
RACK_KINDS = ("compute", "network", "infrastructure")
NODE_ROLES = ("compute", "spare", "head", "mgmt", "login", "ufm", "storage")
SWITCH_ROLES = tuple(
    f"{net}-{tier}"
    for net in ("compute", "frontend", "storage", "oob")
    for tier in ("leaf", "spine", "core")
)
LOCK_FORMAT = 1


@dataclass(frozen=True)
class LockedRack:
    name: str
    kind: str
    row: int
    position: int
    pdus: int
    line: int = 0


@dataclass(frozen=True)
class LockedDevice:
    """A node or switch as built: ``role`` is a node role or ``<network>-<tier>``."""

    name: str
    role: str
    model: str
    rack: str
    u: int
    addresses: dict[str, str] = field(default_factory=dict)
    su: int | None = None
    line: int = 0
    slot: int | None = None  # GPU nodes: position in the scalable unit, 1-32

    @property
    def is_switch(self) -> bool:
        return self.role in SWITCH_ROLES


class Cable(NamedTuple):
    """One cable by its ends; ``b`` is the switch (or the site network) it plugs into.
    (A named tuple: a 2,048-node lock holds 64,000 of them.)"""

    a: str
    a_port: str
    b: str
    b_port: str
    line: int = 0


@dataclass
class Lock:
    """A plan lock as read from ``path``."""

    path: str
    cluster: str
    networks: dict[str, str]
    rails: list[str]
    racks: dict[str, LockedRack]
    devices: dict[str, LockedDevice]
    cables: list[Cable]
    retired: dict[str, dict[str, str]]
    changes: list[str]
    lines: dict[str, int] = field(default_factory=dict)
    gpu: str = ""
    """The GPU the cluster was built with (empty in a lock written before it was kept)."""
    storage_drive_tb: float = 0.0
    """The drive size of the built storage nodes (0: not recorded)."""
    freed: list[FreedDevice] = field(default_factory=list)
    """The hardware the last change freed (``lock.freed``)."""

    @cached_property
    def cable_keys(self) -> set[tuple[str, str, str, str]]:
        """Every cable as (a, a_port, b, b_port)."""
        return set(map(itemgetter(0, 1, 2, 3), self.cables))

    def with_role(self, *roles: str) -> list[LockedDevice]:
        return [d for d in self.devices.values() if d.role in roles]

    def line_of(self, key: str) -> int | None:
        """Line of a top-level section (``networks``) or a section entry (``devices.gpu001``)."""
        return self.lines.get(key)
