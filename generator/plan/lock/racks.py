"""Racks of a locked plan: every device keeps its rack and U; new devices take free space.

Each device has a class: a GPU node of scalable unit n goes in a compute rack of SU n, the
leaves that serve SU n in a network rack of SU n, everything else in an infrastructure rack
(``layout.solve_layout`` decides the classes as for a fresh plan). A new device goes to the
first rack of its kind (in name order) already holding its class, at the lowest free U that
fits, under the same rules as a fresh plan: compute racks at most the servers per rack the
power budget allows, mounted at or below ``mount_below_u``; network and infrastructure
racks keep their reserve of U and power and no more devices than their out-of-band switch
has ports. When no rack has room a new rack is added, named after the last one and standing
at the first free floor position (row by row; new infrastructure racks at the free positions
nearest the old ones); a new infrastructure rack holds room for a front-end leaf pair of its
own (``zones``). A rack left empty goes; a rack keeps its
PDUs (more when its load needs them).

A locked device that no longer fits its slot is an error naming it (fewer
``facility.rack_units``, a hand-edited lock); nothing is moved silently. The one exception is
a device the design replaces by another model (a larger storage back-end switch): the new
box goes where there is room, and the plan notes say where.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from generator.errors import PodplanError, Problem
from generator.plan.facility.racks import EPS, Budget, Device, RackLayout
from generator.plan.lock.model import Lock
from generator.plan.lock.text import natural

Class = tuple[str, int]  # (rack kind, group)


class _Rack:
    """A rack being filled: its layout, the classes it holds and the U it has taken."""

    def __init__(self, layout: RackLayout) -> None:
        self.layout = layout
        self.classes: set[Class] = set()
        self.taken: list[tuple[int, int]] = []  # (first U, last U)

    def free_u(self, height: int, top: int) -> int | None:
        u = 1
        for first, last in sorted(self.taken):
            if u + height - 1 < first:
                break
            u = max(u, last + 1)
        return u if u + height - 1 <= top else None

    def add(self, dev: Device, u: int, cls: Class) -> None:
        dev.u, dev.rack = u, self.layout.name
        self.layout.devices.append(dev)
        self.taken.append((u, u + dev.height_u - 1))
        self.classes.add(cls)


class LockedPlacer:
    """Places devices for a locked plan (see the module docstring)."""

    def __init__(
        self,
        lock: Lock,
        budget: Budget,
        oob: Device,
        per_compute_rack: int,
        max_devices: int,
        pdus_for: Callable[[RackLayout], int],
        hold: tuple[int, float, int] = (0, 0.0, 0),
    ) -> None:
        self.lock, self.budget, self.oob = lock, budget, oob
        self.prefer: dict[str, str] = {}
        self.hold = hold
        self.per_compute_rack, self.max_devices, self.pdus_for = (
            per_compute_rack,
            max_devices,
            pdus_for,
        )

    def place_groups(
        self,
        groups: list[tuple[list[Device], list[Device]]],
        infra: list[Device],
        prefer: dict[str, str],
    ) -> list[RackLayout]:
        """Place the devices of ``layout.solve_layout``: per scalable unit its GPU nodes and
        its network rack's leaves, then the infrastructure; ``prefer``: device -> the rack
        it goes to when it has room (a zone's leaves, ``zones``)."""
        devices: list[tuple[Device, Class]] = []
        for g, (nodes, net) in enumerate(groups):  # an SU's network rack right after its nodes
            devices += [(d, ("compute", g + 1)) for d in nodes]
            devices += [(d, ("network", g + 1)) for d in net]
        devices += [(d, ("infrastructure", 0)) for d in infra]
        self.prefer = prefer
        return self.place(devices)

    def place(self, devices: list[tuple[Device, Class]]) -> list[RackLayout]:
        racks = {name: _Rack(RackLayout(name, kind=r.kind)) for name, r in self.lock.racks.items()}
        new: list[tuple[Device, Class]] = []
        swapped: list[tuple[Device, Class]] = []
        for dev, cls in devices:
            spot = self.lock.devices.get(dev.name)
            if spot is None or spot.rack not in racks:
                new.append((dev, cls))
            elif dev.model and dev.model != spot.model:
                swapped.append((dev, cls))
            else:
                self._pin(racks[spot.rack], dev, spot.u, cls)
        self._check_limits(racks)
        for dev, cls in swapped:  # another model now: its old slot if it fits there
            spot = self.lock.devices[dev.name]
            if not self._pin(racks[spot.rack], dev, spot.u, cls):
                new.append((dev, cls))
        for dev, cls in new:
            self._fit(racks, dev, cls)
        return self._finish(racks)

    def _check_limits(self, racks: dict[str, _Rack]) -> None:
        """Racks of devices already built within today's power budget and reserve."""
        for name in sorted(racks, key=natural):
            layout = racks[name].layout
            kw = layout.power_kw
            room = self._room_kw(layout.kind) + self.oob.power_kw
            top = max((u for _, u in racks[name].taken), default=0)
            limit = self._top(layout.kind, Device("", "", 1, 0.0))
            if kw <= room + EPS and top <= limit:
                continue
            field = "facility.rack_power_kw" if kw > room + EPS else "facility.rack_units"
            what = f"{kw:.1f} kW" if kw > room + EPS else f"devices up to U{top}"
            allowed = f"{room:.1f} kW" if kw > room + EPS else f"U{limit}"
            raise PodplanError(
                "racks already built do not fit today's facility settings",
                problems=[
                    Problem(
                        path=field,
                        message=(
                            f"{name} ({layout.kind}) holds {what} of devices already built; "
                            f"the settings leave {allowed} (with the reserve of "
                            "infrastructure racks)"
                        ),
                        hint=(
                            "keep facility.rack_power_kw, rack_units, reserve_u and "
                            "reserve_power_fraction as planned, or plan with --fresh to lay "
                            "out every rack again"
                        ),
                    )
                ],
            )

    def _top(self, kind: str, dev: Device) -> int:
        b = self.budget
        top = b.units - self.oob.height_u - (b.reserve_u if kind != "compute" else 0)
        return min(top, dev.mount_below_u or top)

    def _room_kw(self, kind: str) -> float:
        b = self.budget
        if kind == "compute":
            return b.power_kw - self.oob.power_kw
        return b.power_kw * (1.0 - b.reserve_fraction) - self.oob.power_kw

    def _pin(self, rack: _Rack, dev: Device, u: int, cls: Class) -> bool:
        """Put ``dev`` back in its locked slot; False when it is now another model that no
        longer fits there (it is placed like a new device)."""
        top = self.budget.units - self.oob.height_u
        last = u + dev.height_u - 1
        clash = any(not (last < a or u > b) for a, b in rack.taken)
        limit = min(top, dev.mount_below_u or top)
        d = self.lock.devices[dev.name]
        swapped = bool(dev.model) and dev.model != d.model
        if swapped:  # a new box: within the rack's limits for new devices, or elsewhere
            kw = rack.layout.power_kw + dev.power_kw
            if clash or last > self._top(cls[0], dev) or kw > self._room_kw(rack.layout.kind) + EPS:
                return False
        if last > limit or clash:
            why = "overlaps another device" if clash else f"would reach U{last}, above U{limit}"
            raise PodplanError(
                "a device already built no longer fits its rack slot",
                self.lock.path,
                [
                    Problem(
                        path=f"devices.{dev.name}.u",
                        line=d.line,
                        message=f"{dev.name} ({dev.height_u}U) in {rack.layout.name} at U{u} {why}",
                        hint=(
                            "keep facility.rack_units and the server models the lock was "
                            "planned with, or plan with --fresh to lay out every rack again"
                        ),
                    )
                ],
            )
        rack.add(dev, u, cls)
        return True

    def _held(self, rack: _Rack) -> tuple[int, float, int]:
        """Room (U, kW, devices) a new infrastructure rack keeps for a zone's leaf pair
        (``zones``) until that pair is in it: held whether or not the rack becomes a zone,
        so where hosts go does not depend on the zones (and the layout converges)."""
        layout = rack.layout
        if layout.kind != "infrastructure" or layout.name in self.lock.racks:
            return (0, 0.0, 0)
        u, kw, n = self.hold
        if not n:
            return (0, 0.0, 0)
        placed = sum(1 for d in layout.devices if self.prefer.get(d.name) == layout.name)
        left = max(0, n - placed)
        return (u * left // n, kw * left / n, left)

    def _room(self, rack: _Rack, dev: Device, count: int) -> int | None:
        """The U for a zone's leaf in its zone's rack when ``count`` leaves like it (the
        rest of its pair) fit there too (the held room is for them)."""
        layout = rack.layout
        if len(layout.devices) + count > self.max_devices:
            return None
        if layout.power_kw + count * dev.power_kw > self._room_kw(layout.kind) + EPS:
            return None
        return rack.free_u(count * dev.height_u, self._top(layout.kind, dev))

    def _fit_zone_leaf(self, racks: dict[str, _Rack], dev: Device, cls: Class) -> None:
        """A zone's leaf into its zone's rack with the rest of its pair; when the pair does
        not fit there (a rack built full), the pair goes into a new rack together, which
        stands at the next free position beside the zone's new racks."""
        rack = racks[self.prefer[dev.name]]
        name = rack.layout.name
        placed = {d.name for d in rack.layout.devices}
        pair = [n for n, r in self.prefer.items() if r == name and n not in placed]
        u = self._room(rack, dev, len(pair))
        if u is None:
            rack = _Rack(RackLayout(self._new_name(racks), kind=cls[0]))
            racks[rack.layout.name] = rack
            for n in pair:
                self.prefer[n] = rack.layout.name
            u = rack.free_u(dev.height_u, self._top(cls[0], dev))
            assert u is not None
        rack.add(dev, u, cls)

    def _fits(self, rack: _Rack, dev: Device, cls: Class) -> int | None:
        kind = cls[0]
        layout = rack.layout
        if layout.kind != kind or (rack.classes and cls not in rack.classes):
            return None
        held_u, held_kw, held_n = self._held(rack)
        count = len(layout.devices) + held_n
        if count >= (self.per_compute_rack if kind == "compute" else self.max_devices):
            return None
        if layout.power_kw - (layout.oob.power_kw if layout.oob else 0.0) + dev.power_kw > (
            self._room_kw(kind) - held_kw + EPS
        ):
            return None
        return rack.free_u(dev.height_u, self._top(kind, dev) - held_u)

    def _fit(self, racks: dict[str, _Rack], dev: Device, cls: Class) -> None:
        if self.prefer.get(dev.name) in racks:  # a zone's leaf: with its hosts, any class
            self._fit_zone_leaf(racks, dev, cls)
            return
        for name in sorted(racks, key=natural):
            u = self._fits(racks[name], dev, cls)
            if u is not None:
                racks[name].add(dev, u, cls)
                return
        rack = _Rack(RackLayout(self._new_name(racks), kind=cls[0]))
        racks[rack.layout.name] = rack
        u = rack.free_u(dev.height_u, self._top(cls[0], dev))
        if u is None:
            raise PodplanError(
                "the racks cannot hold the plan",
                problems=[Problem(path="facility.rack_units", message=f"no room for {dev.name}")],
            )
        rack.add(dev, u, cls)

    def _new_name(self, racks: dict[str, _Rack]) -> str:
        names = [*racks, *(n[4:] for n in self.lock.retired if n.startswith("oob-"))]
        numbers = [int(n[1:]) for n in names if n[:1] == "r" and n[1:].isdigit()]
        width = max((len(n) - 1 for n in self.lock.racks), default=2)
        return f"r{max(numbers, default=0) + 1:0{width}d}"

    def _finish(self, racks: dict[str, _Rack]) -> list[RackLayout]:
        out = []
        units = self.budget.units
        for name in sorted(racks, key=natural):
            layout = racks[name].layout
            if not layout.devices:
                continue
            layout.devices.sort(key=lambda d: d.u)
            layout.oob = Device(
                f"oob-{name}",
                "switch",
                self.oob.height_u,
                self.oob.power_kw,
                rack=name,
                u=units - self.oob.height_u + 1,
            )
            locked = self.lock.racks.get(name)
            count = max(self.pdus_for(layout), locked.pdus if locked else 0)
            layout.pdus = [f"{name}-pdu-{chr(ord('a') + k)}" for k in range(count)]
            out.append(layout)
        return out


def floor_positions(
    lock: Lock, racks: list[tuple[str, str]], per_row: int, pitch: tuple[float, float],
    anchor: Mapping[str, str] | None = None,
) -> dict[str, tuple[int, int]]:
    """Locked racks where they stand; new racks at free positions.

    ``racks``: (name, kind). New infrastructure racks take the free positions nearest the
    locked infrastructure racks (``pitch``: rack width and row pitch, m), so new storage or
    management servers stay within reach of the front-end leaves there (a 100G host cable
    reaches 30 m); a new compute rack with an ``anchor`` (the built network rack its nodes
    plug into: ``lock.reach``) takes the free position nearest that rack; the other new
    racks then take the first free positions, row by row.
    """
    out = {n: (lock.racks[n].row, lock.racks[n].position) for n, _ in racks if n in lock.racks}
    used = set(out.values())
    infra = [out[n] for n, kind in racks if kind == "infrastructure" and n in out]
    new = [n for n, _ in racks if n not in out]
    rows = max((r for r, _ in used), default=0) + len(new) // per_row + 2
    free = [(r, p) for r in range(1, rows + 1) for p in range(1, per_row + 1) if (r, p) not in used]
    if infra:
        cr = sum(r for r, _ in infra) / len(infra)
        cp = sum(p for _, p in infra) / len(infra)
        for name in (n for n, kind in racks if kind == "infrastructure" and n in new):
            out[name] = _nearest(free, used, (cr, cp), pitch)
    for name in new:
        home = (anchor or {}).get(name)
        if home in out and name not in out:
            out[name] = _nearest(free, used, out[home], pitch)
    spots = iter(s for s in free if s not in used)
    for name in new:
        if name not in out:
            spot = next(spots)
            while spot in used:
                spot = next(spots)
            out[name] = spot
            used.add(spot)
    return out


def _nearest(
    free: list[tuple[int, int]], used: set[tuple[int, int]], at: tuple[float, float],
    pitch: tuple[float, float],
) -> tuple[int, int]:
    """The free position nearest ``at`` (row, position) along the trays; taken."""
    width, row_pitch = pitch
    spot = min((s for s in free if s not in used),
               key=lambda s: (abs(s[0] - at[0]) * row_pitch + abs(s[1] - at[1]) * width, s))
    used.add(spot)
    return spot
