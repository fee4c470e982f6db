"""The report's charts (SVG drawn from the numbers, see ``plot``): memory per GPU, run time,
capex, power, cost, and the sweep's time and cost.

Each function takes plain numbers decided elsewhere and returns inline SVG; every chart names
its values in text too (bar labels, a legend with hatches), so none is read by colour alone,
and the page shows the same numbers in a table beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.emit.report.plot import (
    DPI,
    HATCHES,
    LIMIT,
    MARKERS,
    PALETTE,
    SMALL,
    Canvas,
    Key,
    Margins,
    Scale,
    category_axis,
    label,
    legend,
    legend_columns,
    legend_width,
    line,
    marker,
    nice_ticks,
    padded,
    pow2_ticks,
    text_margin,
    text_width,
    x_axis,
    y_axis,
)
from generator.emit.report.svg import num

WIDTH_IN = 7.2
HALO = ' stroke="#ffffff" stroke-width="3" paint-order="stroke"'
"""A white outline under annotation text, so lines under it do not cross the letters."""
LEGEND_ROW_IN = 0.2


@dataclass(frozen=True)
class Stack:
    """One horizontal stacked bar: a label and named segments (value > 0 shown)."""

    label: str
    segments: tuple[tuple[str, float], ...]


def _room(c: Canvas, ends: Sequence[tuple[float, str]]) -> float:
    """The value axis's end: a fifth past the longest bar, and far enough that every bar's
    value label (``ends``: bar end, label) fits before the chart's right edge."""
    frame = c.right - c.left
    xmax = max((v for v, _ in ends), default=0.0) * 1.2
    for v, text in ends:
        room = frame + c.margins.right * DPI - 6 - text_width(text, SMALL)
        if v > 0 and room > 0:
            xmax = max(xmax, v * frame / room)
    return xmax if xmax > 0 else 1.0


def _bar_frame(c: Canvas, labels: Sequence[str], xmax: float, unit: str) -> tuple[Scale, float]:
    """Category axis (first label on top), the value axis from 0, and the bar slot height."""
    slot = (c.bottom - c.top) / max(1, len(labels))
    category_axis(c, labels, lambda i: c.top + slot * (i + 0.5))
    sx = Scale(0.0, xmax, c.left, c.right)
    x_axis(c, sx, [t for t in nice_ticks(0.0, xmax) if t <= xmax], unit)
    return sx, slot


def segment_style(i: int) -> tuple[str, str]:
    """Colour and hatch of the i-th segment name: past the palette's length the hatch shifts
    by one, so the ninth segment (the step chart has nine causes) never looks like the first."""
    return PALETTE[i % len(PALETTE)], HATCHES[(i + i // len(PALETTE)) % len(HATCHES)]


def stacked_bars(key: str, title: str, unit: str, bars: Sequence[Stack]) -> str:
    """Horizontal stacked bars with a hatch per segment name and the total at the bar's end."""
    names: list[str] = []
    for bar in bars:
        names += [n for n, _ in bar.segments if n not in names]
    columns = legend_columns([Key(n, "") for n in names], WIDTH_IN * DPI - 8)
    legend_rows = (len(names) + columns - 1) // columns if names else 0
    height = 0.9 + 0.42 * len(bars) + 0.22 * legend_rows
    c = Canvas(key, WIDTH_IN, height, Margins(left=text_margin(b.label for b in bars),
                                              top=0.12 + LEGEND_ROW_IN * legend_rows))
    totals = [sum(v for _, v in b.segments) for b in bars]
    xmax = _room(c, [(t, f"{t:,.1f} {unit}") for t in totals])
    fills = {n: c.hatch_fill(*segment_style(i)) for i, n in enumerate(names)}
    sx, slot = _bar_frame(c, [b.label for b in bars], xmax, unit)
    for i, bar in enumerate(bars):
        y, left = c.top + slot * (i + 0.1), 0.0
        for name, value in bar.segments:
            if value > 0:
                c.add(f'<rect x="{num(sx(left))}" y="{num(y)}" '
                      f'width="{num(sx(left + value) - sx(left))}" height="{num(slot * 0.8)}" '
                      f'fill="{fills[name]}" stroke="#ffffff" stroke-width="0.5"/>')
            left += value
        c.add(label(sx(left) + 4, y + slot * 0.4, f"{left:,.1f} {unit}", SMALL))
    keys = [Key(n, fills[n]) for n in names]
    if keys:
        legend(c, keys, columns, (c.left + c.right - legend_width(keys, columns)) / 2, 4.0)
    desc = "; ".join(
        f"{b.label}: " + ", ".join(f"{n} {v:,.1f} {unit}" for n, v in b.segments) for b in bars
    )
    return c.svg(title, desc)


def labelled_bars(key: str, title: str, unit: str, items: Sequence[tuple[str, float]],
                  fmt: str = "{:,.0f}") -> str:
    """Horizontal bars, largest first, each with its value written at its end."""
    ordered = sorted(items, key=lambda kv: (-kv[1], kv[0]))
    c = Canvas(key, WIDTH_IN, 0.7 + 0.3 * len(ordered),
               Margins(left=text_margin(k for k, _ in ordered)))
    xmax = _room(c, [(v, f"{fmt.format(v)} {unit}") for _, v in ordered])
    sx, slot = _bar_frame(c, [k for k, _ in ordered], xmax, unit)
    for i, (_, v) in enumerate(ordered):
        y = c.top + slot * (i + 0.1)
        c.add(f'<rect x="{num(sx(0))}" y="{num(y)}" width="{num(sx(v) - sx(0))}" '
              f'height="{num(slot * 0.8)}" fill="{PALETTE[0]}"/>',
              label(sx(v) + 4, y + slot * 0.4, f"{fmt.format(v)} {unit}", SMALL))
    desc = "; ".join(f"{k}: {fmt.format(v)} {unit}" for k, v in ordered)
    return c.svg(title, desc)


@dataclass(frozen=True)
class Series:
    """A named line of (x, y) points."""

    name: str
    points: tuple[tuple[float, float], ...]


def _xy_canvas(key: str, series: Sequence[Series], xlabel: str, ylabel: str, log_x: bool,
               stroke: bool, extra_y: Sequence[float] = ()) -> tuple[Canvas, Scale, Scale]:
    """A 7.2 x 3.4 in plot area (the legend, for two or more series, above it), gridded axes
    over the points' range."""
    keys = [Key(s.name, PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)], stroke)
            for i, s in enumerate(series)] if len(series) > 1 else []
    columns = legend_columns(keys, WIDTH_IN * DPI - 8) if keys else 1
    rows = (len(keys) + columns - 1) // columns
    c = Canvas(key, WIDTH_IN, 3.4 + LEGEND_ROW_IN * rows,
               Margins(left=0.75, top=0.12 + LEGEND_ROW_IN * rows))
    xs = [x for s in series for x, _ in s.points if x > 0 or not log_x]
    ys = [y for s in series for _, y in s.points] + list(extra_y)
    xlo, xhi = padded(xs, log=log_x)
    ylo, yhi = padded(ys)
    sx = Scale(xlo, xhi, c.left, c.right, log_x)
    sy = Scale(ylo, yhi, c.bottom, c.top)
    xt = pow2_ticks(xlo, xhi) if log_x else nice_ticks(xlo, xhi)
    x_axis(c, sx, [t for t in xt if xlo <= t <= xhi], xlabel, grid=True)
    y_axis(c, sy, [t for t in nice_ticks(ylo, yhi) if ylo <= t <= yhi], ylabel, grid=True)
    if keys:
        legend(c, keys, columns, min(c.left, c.w - 4 - legend_width(keys, columns)), 4.0)
    return c, sx, sy


def _limits(c: Canvas, sx: Scale, sy: Scale, vline: tuple[float, str] | None,
            hline: tuple[float, str] | None) -> None:
    if vline is not None:
        x = sx(vline[0])
        c.add(line(x, c.top, x, c.bottom, LIMIT, 1, "4 3"), label(x + 3, c.top + 8, vline[1],
                                                                   SMALL))
    if hline is not None:
        y = sy(hline[0])
        c.add(line(c.left, y, c.right, y, LIMIT, 1, "4 3"), label(c.left + 3, y - 6, hline[1],
                                                                   SMALL))


def _annotate(c: Canvas, sx: Scale, sy: Scale, marks: Sequence[tuple[float, float, str]],
              xs: list[float]) -> None:
    """Label points, the text on the side of the plot's middle so it is never cut off."""
    middle = (min(xs) + max(xs)) / 2 if xs else 0.0
    for k, (x, y, text) in enumerate(sorted(marks)):
        right = x > middle
        px, py = sx(x), sy(y)
        tx, ty = px + (-10 if right else 10), py - 12 - 13 * k
        c.add(line(px, py, tx, ty, width=0.6),
              label(tx, ty - 4, text, SMALL, "end" if right else "", HALO))


def _desc(xlabel: str, ylabel: str, series: Sequence[Series]) -> str:
    desc = "; ".join(
        f"{s.name}: " + ", ".join(f"({x:,.4g}, {y:,.4g})" for x, y in s.points) for s in series
    )
    return f"{xlabel} against {ylabel}. {desc}"


def lines(key: str, title: str, xlabel: str, ylabel: str, series: Sequence[Series],
          log_x: bool = False, marks: Sequence[tuple[float, float, str]] = (),
          vline: tuple[float, str] | None = None,
          hline: tuple[float, str] | None = None) -> str:
    """Lines with a distinct marker per series; ``marks`` annotate points, ``vline``/``hline``
    draw a limit."""
    extra = [hline[0]] if hline else []
    c, sx, sy = _xy_canvas(key, series, xlabel, ylabel, log_x, True, extra)
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        pts = " ".join(f"{num(sx(x))},{num(sy(y))}" for x, y in s.points)
        c.add(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        c.add(*(marker(MARKERS[i % len(MARKERS)], sx(x), sy(y), colour) for x, y in s.points))
    _annotate(c, sx, sy, marks, [x for s in series for x, _ in s.points])
    _limits(c, sx, sy, vline, hline)
    return c.svg(title, _desc(xlabel, ylabel, series))


def scatter(key: str, title: str, xlabel: str, ylabel: str, series: Sequence[Series],
            marks: Sequence[tuple[float, float, str]] = (),
            vline: tuple[float, str] | None = None) -> str:
    """Points only (no lines), one marker shape per series."""
    c, sx, sy = _xy_canvas(key, series, xlabel, ylabel, False, False)
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        c.add(*(marker(MARKERS[i % len(MARKERS)], sx(x), sy(y), colour, 3.0)
                for x, y in s.points))
    _annotate(c, sx, sy, marks, [x for s in series for x, _ in s.points])
    _limits(c, sx, sy, vline, None)
    return c.svg(title, _desc(xlabel, ylabel, series))

