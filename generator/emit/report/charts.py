"""The report's charts (matplotlib, see ``mpl``): memory per GPU, run time, capex, power, cost.

Each function takes plain numbers decided elsewhere and returns inline SVG; every chart names
its values in text too (bar labels, a legend with hatches), so none is read by colour alone,
and the page shows the same numbers in a table beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generator.emit.report.mpl import (
    HATCHES,
    MARKERS,
    PALETTE,
    Margins,
    figure,
    text_margin,
    to_svg,
)


@dataclass(frozen=True)
class Stack:
    """One horizontal stacked bar: a label and named segments (value > 0 shown)."""

    label: str
    segments: tuple[tuple[str, float], ...]


def stacked_bars(key: str, title: str, unit: str, bars: Sequence[Stack]) -> str:
    """Horizontal stacked bars with a hatch per segment name and the total at the bar's end."""
    names: list[str] = []
    for bar in bars:
        names += [n for n, _ in bar.segments if n not in names]
    legend_rows = (len(names) + 2) // 3
    height = 0.9 + 0.42 * len(bars) + 0.22 * legend_rows
    margins = Margins(left=text_margin(b.label for b in bars), top=0.12 + 0.2 * legend_rows)
    with figure(7.2, height, margins) as fig:
        ax = fig.add_subplot()
        labels = [b.label for b in reversed(bars)]
        for i, name in enumerate(names):
            widths = [dict(b.segments).get(name, 0.0) for b in reversed(bars)]
            lefts = [_left(b, name) for b in reversed(bars)]
            ax.barh(labels, widths, left=lefts, label=name, color=PALETTE[i % len(PALETTE)],
                    hatch=HATCHES[i % len(HATCHES)], edgecolor="white", linewidth=0.5)
        for y, bar in enumerate(reversed(bars)):
            total = sum(v for _, v in bar.segments)
            ax.annotate(f"{total:,.1f} {unit}", (total, y), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ax.set_xlabel(unit)
        # Room for the total written after the longest bar: stacked segments make every
        # segment's left edge sticky, so margins alone can leave that label cut at the frame.
        longest = max((sum(v for _, v in b.segments) for b in bars), default=0.0)
        ax.set_xlim(0, longest * 1.2 if longest > 0 else 1.0)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(names), 3),
                  fontsize=8)
        desc = "; ".join(
            f"{b.label}: " + ", ".join(f"{n} {v:,.1f} {unit}" for n, v in b.segments)
            for b in bars
        )
        return to_svg(fig, key, title, desc)


def _left(bar: Stack, name: str) -> float:
    total = 0.0
    for n, v in bar.segments:
        if n == name:
            return total
        total += v
    return total


def labelled_bars(key: str, title: str, unit: str, items: Sequence[tuple[str, float]],
                  fmt: str = "{:,.0f}") -> str:
    """Horizontal bars, largest first, each with its value written at its end."""
    ordered = sorted(items, key=lambda kv: (-kv[1], kv[0]))
    margins = Margins(left=text_margin(k for k, _ in ordered))
    with figure(7.2, 0.7 + 0.3 * len(ordered), margins) as fig:
        ax = fig.add_subplot()
        labels = [k for k, _ in reversed(ordered)]
        values = [v for _, v in reversed(ordered)]
        ax.barh(labels, values, color=PALETTE[0])
        for y, v in enumerate(values):
            ax.annotate(f"{fmt.format(v)} {unit}", (v, y), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ax.set_xlabel(unit)
        ax.margins(x=0.2)
        desc = "; ".join(f"{k}: {fmt.format(v)} {unit}" for k, v in ordered)
        return to_svg(fig, key, title, desc)


@dataclass(frozen=True)
class Series:
    """A named line of (x, y) points."""

    name: str
    points: tuple[tuple[float, float], ...]


def lines(key: str, title: str, xlabel: str, ylabel: str, series: Sequence[Series],
          log_x: bool = False, marks: Sequence[tuple[float, float, str]] = (),
          vline: tuple[float, str] | None = None,
          hline: tuple[float, str] | None = None) -> str:
    """Lines with a distinct marker per series; ``marks`` annotate points, ``vline``/``hline``
    draw a limit."""
    with figure(7.2, 3.4, Margins(left=0.75)) as fig:
        ax = fig.add_subplot()
        for i, s in enumerate(series):
            xs, ys = [p[0] for p in s.points], [p[1] for p in s.points]
            ax.plot(xs, ys, marker=MARKERS[i % len(MARKERS)], color=PALETTE[i % len(PALETTE)],
                    label=s.name, linewidth=1.5, markersize=5)
        _annotate(ax, marks, [x for s in series for x, _ in s.points])
        if vline is not None:
            ax.axvline(vline[0], color="#555555", linestyle="--", linewidth=1)
            ax.annotate(vline[1], (vline[0], 1.0), xycoords=("data", "axes fraction"),
                        xytext=(3, -10), textcoords="offset points", fontsize=8)
        if hline is not None:
            ax.axhline(hline[0], color="#555555", linestyle="--", linewidth=1)
            ax.annotate(hline[1], (0.0, hline[0]), xycoords=("axes fraction", "data"),
                        xytext=(3, 3), textcoords="offset points", fontsize=8)
        if log_x:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(_plain_formatter())
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, linewidth=0.3, color="#cccccc")
        if len(series) > 1:
            ax.legend(fontsize=8)
        desc = "; ".join(
            f"{s.name}: " + ", ".join(f"({x:,.4g}, {y:,.4g})" for x, y in s.points)
            for s in series
        )
        return to_svg(fig, key, title, f"{xlabel} against {ylabel}. {desc}")


def scatter(key: str, title: str, xlabel: str, ylabel: str, series: Sequence[Series],
            marks: Sequence[tuple[float, float, str]] = (),
            vline: tuple[float, str] | None = None) -> str:
    """Points only (no lines), one marker shape per series."""
    with figure(7.2, 3.4, Margins(left=0.75)) as fig:
        ax = fig.add_subplot()
        for i, s in enumerate(series):
            ax.scatter([p[0] for p in s.points], [p[1] for p in s.points],
                       marker=MARKERS[i % len(MARKERS)], color=PALETTE[i % len(PALETTE)],
                       label=s.name, s=28)
        _annotate(ax, marks, [x for s in series for x, _ in s.points])
        if vline is not None:
            ax.axvline(vline[0], color="#555555", linestyle="--", linewidth=1)
            ax.annotate(vline[1], (vline[0], 1.0), xycoords=("data", "axes fraction"),
                        xytext=(3, -10), textcoords="offset points", fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, linewidth=0.3, color="#cccccc")
        if len(series) > 1:
            ax.legend(fontsize=8)
        desc = "; ".join(
            f"{s.name}: " + ", ".join(f"({x:,.4g}, {y:,.4g})" for x, y in s.points)
            for s in series
        )
        return to_svg(fig, key, title, f"{xlabel} against {ylabel}. {desc}")


def _annotate(ax: Any, marks: Sequence[tuple[float, float, str]], xs: list[float]) -> None:
    """Label points, the text on the side of the plot's middle so it is never cut off."""
    middle = (min(xs) + max(xs)) / 2 if xs else 0.0
    for k, (x, y, label) in enumerate(sorted(marks)):
        right = x > middle
        ax.annotate(label, (x, y), xytext=(-10 if right else 10, 12 + 13 * k),
                    textcoords="offset points", fontsize=8, ha="right" if right else "left",
                    arrowprops={"arrowstyle": "-", "linewidth": 0.6})


def _plain_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:,.0f}")
