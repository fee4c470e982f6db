"""Rack elevations: every rack drawn with each device at its U position, power and U used.

U 1 is at the bottom, as racks are numbered. Zero-U devices (PDUs) are drawn as strips on the
rack's sides. Each device is labelled with its name (and model and power when it is tall
enough); its colour repeats its role, which the label already says. A rack over its power or
space limit says so in words. The frame (outline and U numbers) is a ``<symbol>`` defined once
per rack height, so the 550 racks of a 2,048-node plan stay a small file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from generator.emit.report.graph import NETWORK_SHORT
from generator.emit.report.labels import model_label
from generator.emit.report.svg import esc, num, plural
from generator.plan.models import ClusterPlan, Rack

U_PX = 9.0
TOP = 38.0
BAR_X = 64.0
X0 = 32.0
INNER_W = 150.0
WIDTH = 196.0
KIND_CLASS = {
    "compute": "gpu", "spare": "gpu", "head": "mgt", "mgmt": "mgt", "login": "mgt", "ufm": "mgt",
    "storage": "sto",
}
ROLE_NAME = {
    "compute": "GPU node", "spare": "spare GPU node", "head": "head node", "login": "login node",
    "mgmt": "service node", "storage": "storage node", "ufm": "UFM appliance",
}
NET_CLASS = {"compute": "ib", "frontend": "eth", "oob": "oob"}
LEGEND = (
    ("gpu", "GPU node"), ("mgt", "head, login, UFM"), ("sto", "storage"),
    ("ib", "compute-fabric switch"), ("eth", "front-end switch"), ("oob", "out-of-band switch"),
    ("oth", "other"), ("pdu", "PDU (zero-U, on the sides)"),
)


@dataclass(frozen=True)
class DeviceInfo:
    """What a rack drawing needs to know about one device."""

    cls: str
    model: str
    power_kw: float
    what: str


def device_info(plan: ClusterPlan) -> dict[str, DeviceInfo]:
    """Drawing class, model, power and a short description per device name."""
    out = {
        n.name: DeviceInfo(KIND_CLASS.get(n.role, "oth"), n.model, n.power_kw,
                           ROLE_NAME.get(n.role, n.role))
        for n in plan.nodes
    }
    for s in plan.switches:
        net = NETWORK_SHORT.get(s.network, s.network)
        out[s.name] = DeviceInfo(NET_CLASS.get(s.network, "oth"), s.model, s.power_kw,
                                 f"{net} {s.tier} switch")
    return out


def frames(plan: ClusterPlan) -> str:
    """One hidden SVG with a frame symbol per rack height used in the plan."""
    symbols = []
    pdus: dict[int, set[int]] = {}
    for r in plan.racks:
        pdus.setdefault(r.units, set()).add(sum(1 for s in r.slots if s.height_u == 0))
    for units in sorted({r.units for r in plan.racks}):
        h = units * U_PX
        ticks = "".join(
            f'<text x="16" y="{num(TOP + h - (u - 0.5) * U_PX + 2.5)}">{u}</text>'
            for u in range(1, units + 1) if u == 1 or u % 5 == 0
        )
        bars = "".join(
            f'<rect class="bk" x="{num(X0 + BAR_X)}" y="{y}" width="{num(INNER_W - BAR_X)}" '
            'height="6"/>' for y in (16, 26)
        )
        symbols.append(
            f'<symbol id="frame-{units}" viewBox="0 0 {num(WIDTH)} {num(TOP + h + 4)}">'
            f'<rect class="fr" x="{num(X0)}" y="{num(TOP)}" width="{num(INNER_W)}" '
            f'height="{num(h)}"/>{bars}<g class="un">{ticks}</g></symbol>'
        )
        symbols += [_pdu_symbol(units, n) for n in sorted(pdus.get(units, ()))]
    heights = sorted({s.height_u for r in plan.racks for s in r.slots if s.height_u})
    symbols += [
        f'<symbol id="u{h}"><rect x="{num(X0 + 1)}" y="0.5" width="{num(INNER_W - 2)}" '
        f'height="{num(h * U_PX - 1)}"/></symbol>'
        for h in heights
    ]
    return f'<svg class="defs" aria-hidden="true">{"".join(symbols)}</svg>'


def _pdu_symbol(units: int, count: int) -> str:
    """``count`` zero-U PDU strips, alternating on the rack's two sides."""
    h = units * U_PX
    xs = (X0 - 11, X0 - 6, X0 + INNER_W + 3, X0 + INNER_W + 8)
    strips = "".join(
        f'<rect class="pdu" x="{num(xs[i % 4])}" y="{num(TOP + 4)}" width="3" '
        f'height="{num(h - 8)}"/>'
        for i in range(count)
    )
    return (f'<symbol id="pdu-{units}-{count}" viewBox="0 0 {num(WIDTH)} {num(TOP + h + 4)}">'
            f"{strips}</symbol>")


def _bar(y: float, used: float, limit: float, label: str) -> str:
    """A label at the left, a bar filled to ``used / limit`` to its right."""
    share = min(used / limit, 1.0) if limit else 1.0
    over = used > limit + 1e-9
    cls = "bar over" if over else "bar"
    note = " OVER" if over else ""
    x, w = X0 + BAR_X, INNER_W - BAR_X
    return (
        f'<text class="bt" x="{num(X0)}" y="{num(y + 5.5)}">{esc(label)}{note}</text>'
        f'<rect class="{cls}" x="{num(x)}" y="{num(y)}" width="{num(w * share)}" height="6"/>'
    )


def _device(slot_u: int, height: int, name: str, info: DeviceInfo | None, units: int
            ) -> tuple[str, str]:
    """The device's shape and its label (the label's x comes from its group, to save bytes)."""
    y = TOP + (units - (slot_u + height - 1)) * U_PX
    cls = info.cls if info else "oth"
    label = esc(name)
    if info and height >= 2:
        label += f" · {esc(model_label(info.model))}"
    return (f'<use class="d {cls}" href="#u{height}" y="{num(y)}"/>',
            f'<text y="{num(y + 7)}">{label}</text>')


def used_units(rack: Rack) -> int:
    """Rack units taken by devices (zero-U PDUs take none)."""
    return sum(s.height_u for s in rack.slots)


def rack_contents(rack: Rack, info: dict[str, DeviceInfo]) -> str:
    """``4 compute, 1 oob leaf switch, 4 PDUs`` for a rack's description."""
    kinds: Counter[str] = Counter()
    for s in rack.slots:
        kinds[info[s.device].what if s.device in info else s.kind.upper()] += 1
    return ", ".join(plural(n, k) for k, n in sorted(kinds.items()))


def draw_rack(rack: Rack, info: dict[str, DeviceInfo]) -> str:
    """One rack elevation as inline SVG; its ``<title>`` says what it holds in words."""
    units = rack.units
    used = used_units(rack)
    pdus = sum(1 for s in rack.slots if s.height_u == 0)
    body = [f'<use href="#frame-{units}"/>',
            f'<text class="rk" x="{num(X0)}" y="10">{esc(rack.name)}</text>',
            _bar(16, rack.power_kw, rack.power_budget_kw,
                 f"{rack.power_kw:g}/{rack.power_budget_kw:g} kW"),
            _bar(26, used, units, f"{used}/{units} U")]
    if pdus:
        body.append(f'<use href="#pdu-{units}-{pdus}"/>')
    devices = [_device(s.u, s.height_u, s.device, info.get(s.device), units)
               for s in rack.slots if s.height_u]
    body += [shape for shape, _ in devices]
    body.append(f'<g transform="translate({num(X0 + 4)} 0)">'
                f'{"".join(label for _, label in devices)}</g>')
    title = (
        f"Rack {rack.name}: {rack_contents(rack, info)}; {rack.power_kw:g} of "
        f"{rack.power_budget_kw:g} kW; {used} of {units} U used"
    )
    return (
        f'<svg class="rack" id="rack-{esc(rack.name)}" viewBox="0 0 {num(WIDTH)} '
        f'{num(TOP + units * U_PX + 4)}" role="img"><title>{esc(title)}</title>'
        f'{"".join(body)}</svg>'
    )


def rack_signature(rack: Rack, info: dict[str, DeviceInfo]) -> tuple[object, ...]:
    """Racks with the same layout (device kinds and models at the same U) share a signature."""
    return (
        rack.units,
        rack.power_budget_kw,
        tuple(
            (s.u, s.height_u, info[s.device].model if s.device in info else s.kind)
            for s in rack.slots
        ),
    )
