"""The floor: where every rack stands, and how long a cable between two ports must be.

Racks stand in rows of ``facility.racks_per_row``, ``facility.rack_width_m`` apart, rows
``facility.row_pitch_m`` apart (centre to centre, aisle included). Compute racks fill the
rows in name order; the infrastructure and network racks (switches, management, storage)
stand in the middle of the compute rows, so the longest runs to the spines are about half
the floor, not all of it. The site network's patch point is at the head of the first row.

Cable routing: inside one rack, the vertical distance between the two devices plus 0.5 m
to the cable managers; between racks, up from each device to the top of its rack, up to the
overhead tray (``facility.tray_height_m``), along the trays (rows and cross-aisles, so the
Manhattan distance) and down again. Every cable gets ``facility.slack_m`` plus
``facility.slack_fraction`` of its routed length as slack; the medium's stocked length is
the next one up (``media``).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.spec.site import Facility

U_M = 0.04445  # one rack unit (EIA-310)
FLOOR_TO_U1_M = 0.1
IN_RACK_MANAGER_M = 0.5
SITE = "site-network"


@dataclass(frozen=True)
class Spot:
    """A device's place: its rack's floor coordinates and its height above the floor."""

    rack: str
    x: float
    y: float
    height: float
    top: float


@dataclass(frozen=True)
class Floor:
    """Rack positions (row, position) and the geometry needed for cable lengths."""

    positions: dict[str, tuple[int, int]]
    facility: Facility
    rack_top_m: float

    def xy(self, rack: str) -> tuple[float, float]:
        row, pos = self.positions[rack]
        f = self.facility
        return (pos - 1) * f.rack_width_m, (row - 1) * f.row_pitch_m

    def spot(self, rack: str, u: int, height_u: int) -> Spot:
        x, y = self.xy(rack)
        mid = FLOOR_TO_U1_M + (u - 1 + height_u / 2) * U_M
        return Spot(rack, x, y, mid, self.rack_top_m)

    def site_spot(self) -> Spot:
        return Spot(SITE, -self.facility.rack_width_m, 0.0, self.rack_top_m, self.rack_top_m)

    def length(self, a: Spot, b: Spot) -> float:
        """Routed length plus slack (m), before rounding to a stocked length."""
        f = self.facility
        if a.rack == b.rack:
            routed = abs(a.height - b.height) + IN_RACK_MANAGER_M
        else:
            up = (a.top - a.height) + (b.top - b.height) + 2 * f.tray_height_m
            routed = up + abs(a.x - b.x) + abs(a.y - b.y)
        return routed * (1 + f.slack_fraction) + f.slack_m


def place_racks(compute: list[str], infra: list[str], facility: Facility, units: int) -> Floor:
    """Rows of racks: compute racks in order, the infrastructure block in their middle."""
    half = (len(compute) + 1) // 2
    order = [*compute[:half], *infra, *compute[half:]]
    per_row = facility.racks_per_row
    positions = {name: (i // per_row + 1, i % per_row + 1) for i, name in enumerate(order)}
    return Floor(positions, facility, FLOOR_TO_U1_M + units * U_M)
