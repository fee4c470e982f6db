"""Matplotlib figures as deterministic, inline-ready SVG.

Why matplotlib: it is the best-kept plotting library in the Python ecosystem, renders SVG with
no browser and no network, and, with a fixed ``svg.hashsalt`` and no date in the metadata,
writes the same bytes for the same figure, which golden trees need. Text stays ``<text>``
(``svg.fonttype: none``) so it is small, selectable and read by screen readers.

Only the SVG backend is used (no pyplot, no GUI); figures are built with ``Figure`` directly.
The output is post-processed to sit inline in one HTML page: no XML prolog or metadata,
unreferenced structural ids dropped and referenced ones prefixed with the chart's key (several
charts share a page), coordinates in tags cut to one decimal, a ``<title>``/``<desc>`` added.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from generator.emit.report.svg import esc

#: Okabe-Ito, readable by people with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: Hatches so stacked segments differ without colour (line hatches only: dots are large SVG).
HATCHES = ("", "//", "\\\\", "xx", "--", "||", "++", "-")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

_RC: Any = {
    "svg.hashsalt": "podplan",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "hatch.linewidth": 0.6,
    "legend.frameon": False,
}
_REF = re.compile(r'(?:url\(#|href="#)([^")]+)')
_ID = re.compile(r' id="([^"]+)"')
_DECIMALS = re.compile(r"(\d+\.\d)\d+")


#: Width of one character of the 9-point tick labels, inches (DejaVu Sans is ~0.6 em wide;
#: rounded up so labels are never clipped).
CHAR_IN = 0.08


@dataclass(frozen=True)
class Margins:
    """Space around the axes, inches: tick labels, axis labels and legends live there."""

    left: float
    bottom: float = 0.45
    top: float = 0.12
    right: float = 0.15


def text_margin(labels: Iterable[str], extra: float = 0.15) -> float:
    """Inches for a column of tick labels (longest label) plus ``extra``."""
    return max((len(t) for t in labels), default=1) * CHAR_IN + extra


@contextmanager
def figure(width_in: float, height_in: float, margins: Margins) -> Iterator[Any]:
    """A matplotlib ``Figure`` under podplan's fixed style (imports matplotlib lazily).

    Margins are computed from the labels rather than by matplotlib's constrained layout,
    which lays out every text several times and took a third of the charts' time.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width_in, height_in))
        fig.subplots_adjust(left=margins.left / width_in, right=1 - margins.right / width_in,
                            top=1 - margins.top / height_in, bottom=margins.bottom / height_in)
        yield fig


def to_svg(fig: Any, key: str, title: str, desc: str) -> str:
    """The figure as an inline ``<svg class="chart">`` with a title and a text description."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        FigureCanvasSVG(fig).print_svg(  # type: ignore[no-untyped-call]
            buf, metadata={"Date": None, "Creator": None}
        )
    return _inline(buf.getvalue(), key, title, desc)


def _short(m: re.Match[str]) -> str:
    return m[1].rstrip("0").rstrip(".")


def _inline(raw: str, key: str, title: str, desc: str) -> str:
    body = raw[raw.index("<svg") :]
    body = re.sub(r"<metadata>.*?</metadata>", "", body, flags=re.S)
    body = re.sub(r"<style[^>]*>.*?</style>", "", body, flags=re.S)
    body = re.sub(r"\s*\n\s*", " ", body)
    body = re.sub(r">\s+<", "><", body).replace("<defs></defs>", "")
    refs = set(_REF.findall(body))
    body = _ID.sub(lambda m: f' id="{key}-{m[1]}"' if m[1] in refs else "", body)
    body = _REF.sub(lambda m: m[0].replace("#" + m[1], f"#{key}-{m[1]}"), body)
    body = re.sub(r"<[^>]*>", lambda tag: _DECIMALS.sub(_short, tag[0]), body)
    body = re.sub(r' transform="rotate\(-?0 [\d.]+ [\d.]+\)"', "", body)
    body = body.replace("font-family: 'DejaVu Sans'; ", "")
    head_end = body.index(">") + 1
    size = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', body[:head_end])
    assert size is not None
    w, h = size[1], size[2]
    head = (
        f'<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
        f'aria-labelledby="{key}-t {key}-d" xmlns="http://www.w3.org/2000/svg" '
        f'xmlns:xlink="http://www.w3.org/1999/xlink">'
        f'<title id="{key}-t">{esc(title)}</title><desc id="{key}-d">{esc(desc)}</desc>'
    )
    return head + body[head_end:].strip()
