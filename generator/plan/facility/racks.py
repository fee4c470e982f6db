"""Rack layout: every node and switch gets a rack and a U position within power and space.

Rules:

* **Compute racks** hold GPU servers only, bottom-up from U1, each at most
  ``floor((rack_power_kw - OOB switch) / server max kW)`` and never above the server's
  ``mount_below_u`` (XE9680: 6U, 12.5 kW, below 24U -> at most 4 per rack), plus one
  out-of-band switch (N3248TE-ON) at the top U.
* **Infrastructure racks** hold management/login/UFM/storage servers (bottom) and the
  fabric, Ethernet, storage back-end and OOB aggregation switches (above), packed in order
  under the power budget less ``facility.reserve_power_fraction`` and the U count less
  ``facility.reserve_u`` (room for the cable bundles that converge there and for later
  devices), one OOB switch at the top U, and no more devices than the OOB switch has ports
  (with PDUs). Compute racks are filled to the budget at the servers' nameplate maximum,
  which is itself well above their typical draw.
* Every rack gets its PDUs (zero-U, rear): A and B feeds, each able to carry the rack's
  planned load alone with an outlet for each power cord (``layout.pdu_sizer``).
* A budget or U count that cannot take one device is an error naming
  ``facility.rack_power_kw`` or ``facility.rack_units``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from generator.errors import PodplanError, Problem

EPS = 1e-9


@dataclass
class Device:
    """Something that takes rack space: a server or a switch."""

    name: str
    kind: str  # node | switch
    height_u: int
    power_kw: float
    mount_below_u: int | None = None
    rack: str = ""
    u: int = 0
    outlets: tuple[int, int] = (1, 0)  # (C13, C19) cords per power feed
    model: str = ""  # catalog id (a plan lock re-racks a device replaced by a taller model)


@dataclass(frozen=True)
class Budget:
    """A rack's power and space, and the reserve infrastructure racks keep free."""

    power_kw: float
    units: int
    reserve_u: int = 0
    reserve_fraction: float = 0.0


@dataclass
class RackLayout:
    name: str
    devices: list[Device] = field(default_factory=list)
    oob: Device | None = None
    pdus: list[str] = field(default_factory=list)
    kind: str = "compute"

    @property
    def power_kw(self) -> float:
        return sum(d.power_kw for d in self.devices) + (self.oob.power_kw if self.oob else 0.0)


def _error(path: str, message: str, hint: str | None = None) -> PodplanError:
    return PodplanError(
        "the racks cannot hold the plan", problems=[Problem(path=path, message=message, hint=hint)]
    )


def servers_per_rack(
    server: Device, label: str, budget_kw: float, rack_units: int, oob_kw: float, oob_u: int
) -> int:
    """How many GPU servers one compute rack takes (power, space, mounting height)."""
    by_power = int((budget_kw - oob_kw + EPS) // server.power_kw)
    top = rack_units - oob_u
    if server.mount_below_u is not None:
        top = min(top, server.mount_below_u)
    by_space = top // server.height_u
    if by_power < 1:
        raise _error(
            "facility.rack_power_kw",
            f"a {budget_kw:g} kW rack cannot take one {label} "
            f"({server.power_kw:g} kW) plus its out-of-band switch ({oob_kw:g} kW)",
            hint=f"set facility.rack_power_kw to at least {server.power_kw + oob_kw:g}",
        )
    if by_space < 1:
        raise _error(
            "facility.rack_units",
            f"{rack_units} U leave no room for a {server.height_u}U {label}",
        )
    return min(by_power, by_space)


def _rack_name(i: int, width: int) -> str:
    return f"r{i:0{width}d}"


def layout_racks(
    groups: list[tuple[list[Device], list[Device]]],
    compute_label: str,
    infra: list[Device],
    oob_template: Device,
    budget: Budget,
    pdus_per_rack: int,
    oob_ports: int,
    pdus_for: Callable[[RackLayout], int] | None = None,
) -> list[RackLayout]:
    """Place devices into racks; returns the racks in order (compute first).

    ``pdus_per_rack`` is the most PDUs a rack can need (it bounds the devices per rack, since
    every PDU takes an OOB port); ``pdus_for(rack)`` the PDUs a placed rack gets (default:
    the most)."""
    budget_kw, rack_units = budget.power_kw, budget.units
    racks: list[RackLayout] = []
    first = next((c[0] for c, _ in groups if c), None)
    per = 1
    if first is not None:
        per = servers_per_rack(
            first,
            compute_label,
            budget_kw,
            rack_units,
            oob_template.power_kw,
            oob_template.height_u,
        )
        per = min(per, oob_ports - pdus_per_rack)
    for compute, network in groups:
        for start in range(0, len(compute), per):
            rack = RackLayout("")
            u = 1
            for dev in compute[start : start + per]:
                dev.u = u
                u += dev.height_u
                rack.devices.append(dev)
            racks.append(rack)
        for rack in _pack_infra(network, oob_template, budget, pdus_per_rack, oob_ports):
            rack.kind = "network"
            racks.append(rack)
    racks.extend(_pack_infra(infra, oob_template, budget, pdus_per_rack, oob_ports))
    width = max(2, len(str(len(racks))))
    for i, rack in enumerate(racks, start=1):
        rack.name = _rack_name(i, width)
        for dev in rack.devices:
            dev.rack = rack.name
        rack.oob = Device(
            f"oob-{rack.name}",
            "switch",
            oob_template.height_u,
            oob_template.power_kw,
            rack=rack.name,
            u=rack_units - oob_template.height_u + 1,
        )
        count = pdus_for(rack) if pdus_for else pdus_per_rack
        rack.pdus = [f"{rack.name}-pdu-{chr(ord('a') + k)}" for k in range(count)]
    return racks


def _pack_infra(
    infra: list[Device],
    oob: Device,
    budget: Budget,
    pdus: int,
    oob_ports: int,
) -> list[RackLayout]:
    budget_kw, rack_units = budget.power_kw, budget.units
    top = rack_units - oob.height_u - budget.reserve_u
    room_kw = budget_kw * (1.0 - budget.reserve_fraction) - oob.power_kw
    max_devices = oob_ports - pdus
    out: list[RackLayout] = []
    rack: RackLayout | None = None
    u, kw = 1, 0.0
    for dev in infra:
        limit = min(top, dev.mount_below_u or top)
        if dev.power_kw > room_kw + EPS:
            raise _error(
                "facility.rack_power_kw",
                f"a {budget_kw:g} kW rack cannot take {dev.name} ({dev.power_kw:g} kW) "
                f"plus its out-of-band switch ({oob.power_kw:g} kW)",
            )
        if dev.height_u > limit:
            raise _error("facility.rack_units", f"{rack_units} U leave no room for {dev.name}")
        fits = (
            rack is not None
            and u + dev.height_u - 1 <= limit
            and kw + dev.power_kw <= room_kw + EPS
            and len(rack.devices) < max_devices
        )
        if not fits:
            rack = RackLayout("", kind="infrastructure")
            out.append(rack)
            u, kw = 1, 0.0
        assert rack is not None
        dev.u = u
        u += dev.height_u
        kw += dev.power_kw
        rack.devices.append(dev)
    return out
