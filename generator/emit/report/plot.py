"""Plot primitives for the report's charts, drawn straight to SVG from the numbers.

Why not a plotting library: the report draws six small charts of a few dozen values each, and
matplotlib cost a ``plan`` more than half a second of CPU (a third of a second to import,
a fifth to draw), a quarter of the command on 2,048 nodes. The charts need little: a frame
with nice ticks (linear, or powers of two), bars, lines, markers, a legend, hatches, labels.
Output is deterministic by construction (no ids from hashes, no dates, one decimal per
coordinate); text stays ``<text>`` (small, selectable, read by screen readers) and is set in
the page's DejaVu Sans, whose advance (~0.6 em a character) sizes the margins.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from generator.emit.report.svg import esc, num

#: Okabe-Ito, readable by people with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: Hatches so stacked segments differ without colour: line directions in a pattern tile.
HATCHES = ("", "//", "\\\\", "xx", "--", "||", "++", "..")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DPI = 72.0
"""User units per inch: 1 unit = 1 pt, the size fonts are given in."""
FONT = 9.0
SMALL = 8.0
EM = 0.64
"""DejaVu Sans's advance per character, em (~0.6 on average; rounded up so labels are never
clipped)."""
INK = "#262626"
GRID = "#cccccc"
LIMIT = "#555555"

_HATCH_LINES = {
    "//": ("M0,8 L8,0",), "\\\\": ("M0,0 L8,8",), "xx": ("M0,8 L8,0", "M0,0 L8,8"),
    "--": ("M0,4 L8,4",), "||": ("M4,0 L4,8",), "++": ("M0,4 L8,4", "M4,0 L4,8"),
    "..": ("M1,1 L2,1", "M5,5 L6,5"),
}


def text_width(text: str, size: float = FONT) -> float:
    """Estimated width of ``text`` in user units."""
    return len(text) * EM * size


def text_margin(labels: Iterable[str], extra: float = 0.15) -> float:
    """Inches for a column of tick labels (longest label) plus ``extra``."""
    return max((len(t) for t in labels), default=1) * EM * FONT / DPI + extra


@dataclass(frozen=True)
class Margins:
    """Space around the axes, inches: tick labels, axis labels and legends live there."""

    left: float
    bottom: float = 0.45
    top: float = 0.12
    right: float = 0.15


def nice_ticks(lo: float, hi: float, most: int = 7) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^k steps) covering ``lo..hi``, at most ``most``."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, most - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    out = []
    k = first
    while k * step <= hi + step * 1e-9:
        out.append(round(k * step, 10) + 0.0)
        k += 1
    return out


def pow2_ticks(lo: float, hi: float) -> list[float]:
    """Powers of two within ``lo..hi`` (every other one when there are more than nine)."""
    first, last = math.ceil(math.log2(lo) - 1e-9), math.floor(math.log2(hi) + 1e-9)
    every = 1 if last - first < 9 else 2
    return [2.0**k for k in range(first, last + 1, every)]


def tick_label(v: float) -> str:
    """A tick value in plain digits with thousands separators (no exponent notation)."""
    if v == int(v):
        return f"{v:,.0f}"
    return f"{v:,.6g}"


@dataclass(frozen=True)
class Scale:
    """A data axis mapped onto ``a..b`` user units, linear or log2."""

    lo: float
    hi: float
    a: float
    b: float
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            lo, hi, v = math.log2(self.lo), math.log2(self.hi), math.log2(max(v, 1e-300))
        else:
            lo, hi = self.lo, self.hi
        span = (hi - lo) or 1.0
        return self.a + (v - lo) / span * (self.b - self.a)


def padded(values: Sequence[float], pad: float = 0.05, log: bool = False,
           zero: bool = False) -> tuple[float, float]:
    """A data range around ``values`` with ``pad`` of it free on each side (from 0 if
    ``zero``); multiplicative on a log axis."""
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if log:
        lo, hi = max(lo, 1e-300), max(hi, 1e-300)
        f = (hi / lo) ** pad if hi > lo else 2.0
        return lo / f, hi * f
    if zero:
        lo = min(lo, 0.0)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    return (lo if zero and lo == 0 else lo - pad * span), hi + pad * span


@dataclass
class Canvas:
    """One chart: its size (inches), the frame the margins leave, and the SVG parts drawn."""

    key: str
    width_in: float
    height_in: float
    margins: Margins
    parts: list[str] = field(default_factory=list)
    defs: list[str] = field(default_factory=list)

    @property
    def w(self) -> float:
        return self.width_in * DPI

    @property
    def h(self) -> float:
        return self.height_in * DPI

    @property
    def left(self) -> float:
        return self.margins.left * DPI

    @property
    def right(self) -> float:
        return self.w - self.margins.right * DPI

    @property
    def top(self) -> float:
        return self.margins.top * DPI

    @property
    def bottom(self) -> float:
        return self.h - self.margins.bottom * DPI

    def add(self, *parts: str) -> None:
        self.parts.extend(parts)

    def hatch_fill(self, colour: str, hatch: str) -> str:
        """A ``fill`` value: the colour, or a pattern of white lines over it."""
        if not hatch:
            return colour
        pid = f"{self.key}-h{len(self.defs)}"
        lines = "".join(f'<path d="{d}"/>' for d in _HATCH_LINES[hatch])
        self.defs.append(
            f'<pattern id="{pid}" width="8" height="8" patternUnits="userSpaceOnUse">'
            f'<rect width="8" height="8" fill="{colour}"/>'
            f'<g stroke="#ffffff" stroke-width="0.8">{lines}</g></pattern>'
        )
        return f"url(#{pid})"

    def svg(self, title: str, desc: str) -> str:
        """The chart as an inline ``<svg class="chart">`` with a title and a description."""
        w, h, key = num(self.w), num(self.h), self.key
        defs = f"<defs>{''.join(self.defs)}</defs>" if self.defs else ""
        return (
            f'<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
            f'aria-labelledby="{key}-t {key}-d" xmlns="http://www.w3.org/2000/svg">'
            f'<title id="{key}-t">{esc(title)}</title><desc id="{key}-d">{esc(desc)}</desc>'
            f'{defs}<g font-size="{num(FONT)}" fill="{INK}">{"".join(self.parts)}</g></svg>'
        )


def label(x: float, y: float, content: str, size: float = FONT, anchor: str = "",
          extra: str = "") -> str:
    """A ``<text>`` whose ``y`` is its vertical middle."""
    anc = f' text-anchor="{anchor}"' if anchor else ""
    fs = "" if size == FONT else f' font-size="{num(size)}"'
    return (f'<text x="{num(x)}" y="{num(y + 0.35 * size)}"{anc}{fs}{extra}>'
            f"{esc(content)}</text>")


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = INK, width: float = 0.8,
         dash: str = "") -> str:
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
            f'stroke="{stroke}" stroke-width="{num(width)}"{d}/>')


def x_axis(c: Canvas, sx: Scale, ticks: Sequence[float], title: str,
           fmt: Callable[[float], str] = tick_label, grid: bool = False) -> None:
    """Bottom spine, ticks with labels (and grid lines), and the axis title."""
    c.add(line(c.left, c.bottom, c.right, c.bottom))
    for t in ticks:
        x = sx(t)
        if grid:
            c.add(line(x, c.top, x, c.bottom, GRID, 0.3))
        c.add(line(x, c.bottom, x, c.bottom + 3.5),
              label(x, c.bottom + 3.5 + FONT * 0.9, fmt(t), anchor="middle"))
    c.add(label((c.left + c.right) / 2, c.bottom + 3.5 + FONT * 2.2, title, anchor="middle"))


def y_axis(c: Canvas, sy: Scale, ticks: Sequence[float], title: str,
           fmt: Callable[[float], str] = tick_label, grid: bool = False) -> None:
    """Left spine, ticks with labels (and grid lines), and the rotated axis title."""
    c.add(line(c.left, c.top, c.left, c.bottom))
    widest = 0.0
    for t in ticks:
        y = sy(t)
        if grid:
            c.add(line(c.left, y, c.right, y, GRID, 0.3))
        text = fmt(t)
        widest = max(widest, text_width(text))
        c.add(line(c.left - 3.5, y, c.left, y), label(c.left - 5.5, y, text, anchor="end"))
    if title:
        x, y = c.left - 9 - widest - FONT * 0.6, (c.top + c.bottom) / 2
        c.add(f'<text x="{num(x)}" y="{num(y)}" text-anchor="middle" '
              f'transform="rotate(-90 {num(x)} {num(y)})">{esc(title)}</text>')


def category_axis(c: Canvas, labels: Sequence[str], centre: Callable[[int], float]) -> None:
    """Left spine with one label per bar (top to bottom, as given)."""
    c.add(line(c.left, c.top, c.left, c.bottom))
    for i, text in enumerate(labels):
        y = centre(i)
        c.add(line(c.left - 3.5, y, c.left, y), label(c.left - 5.5, y, text, anchor="end"))


def marker(kind: str, x: float, y: float, colour: str, r: float = 2.8) -> str:
    """One point marker (the shapes of ``MARKERS``) centred on ``x, y``."""
    if kind == "o":
        return f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" fill="{colour}"/>'
    shapes = {
        "s": ((-1, -1), (1, -1), (1, 1), (-1, 1)),
        "^": ((0, -1.2), (1.1, 0.8), (-1.1, 0.8)),
        "v": ((0, 1.2), (1.1, -0.8), (-1.1, -0.8)),
        "D": ((0, -1.3), (1, 0), (0, 1.3), (-1, 0)),
        "P": ((-0.4, -1.2), (0.4, -1.2), (0.4, -0.4), (1.2, -0.4), (1.2, 0.4), (0.4, 0.4),
              (0.4, 1.2), (-0.4, 1.2), (-0.4, 0.4), (-1.2, 0.4), (-1.2, -0.4), (-0.4, -0.4)),
        "X": ((-1, -1.3), (0, -0.3), (1, -1.3), (1.3, -1), (0.3, 0), (1.3, 1), (1, 1.3),
              (0, 0.3), (-1, 1.3), (-1.3, 1), (-0.3, 0), (-1.3, -1)),
        "*": tuple((math.sin(k * math.pi / 5) * (1.3 if k % 2 == 0 else 0.55),
                    -math.cos(k * math.pi / 5) * (1.3 if k % 2 == 0 else 0.55))
                   for k in range(10)),
    }
    pts = " ".join(f"{num(x + dx * r)},{num(y + dy * r)}" for dx, dy in shapes[kind])
    return f'<polygon points="{pts}" fill="{colour}"/>'


@dataclass(frozen=True)
class Key:
    """One legend entry: a name and how its swatch is drawn."""

    name: str
    fill: str
    marker: str = ""
    stroke: bool = False


def legend(c: Canvas, keys: Sequence[Key], columns: int, x: float, y: float) -> float:
    """Legend entries in ``columns`` from ``x, y`` (top left); returns its height."""
    col_w = max(text_width(k.name, SMALL) for k in keys) + 28
    row_h = SMALL * 1.7
    for i, k in enumerate(keys):
        kx, ky = x + (i % columns) * col_w, y + (i // columns) * row_h + row_h / 2
        if k.stroke:
            c.add(line(kx, ky, kx + 16, ky, k.fill, 1.5))
            if k.marker:
                c.add(marker(k.marker, kx + 8, ky, k.fill))
        elif k.marker:
            c.add(marker(k.marker, kx + 8, ky, k.fill))
        else:
            c.add(f'<rect x="{num(kx)}" y="{num(ky - 5)}" width="16" height="10" '
                  f'fill="{k.fill}" stroke="#ffffff" stroke-width="0.5"/>')
        c.add(label(kx + 21, ky, k.name, SMALL))
    return ((len(keys) + columns - 1) // columns) * row_h


def legend_width(keys: Sequence[Key], columns: int) -> float:
    return min(len(keys), columns) * (max(text_width(k.name, SMALL) for k in keys) + 28)


def legend_columns(keys: Sequence[Key], width: float, most: int = 3) -> int:
    """Columns for the legend: up to ``most``, fewer when long names would not fit ``width``."""
    return next((n for n in range(min(most, len(keys)), 1, -1)
                 if legend_width(keys, n) <= width), 1)
