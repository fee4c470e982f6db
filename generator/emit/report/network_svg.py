"""Draw a grouped network (``graph.NetworkView``) as SVG: tiers as rows, bundles as lines.

Rows from the top: core, spine, leaf, then the endpoints (nodes, appliances, other networks'
switches, PDUs). Every box says what it holds in words ("SU 1–4", "32 × QM9790") and every
bundle its link count, so the drawing reads without colour; line width grows with the count.
Dense row pairs (more bundles than can be labelled) get one total instead of a label per line.
"""

from __future__ import annotations

import math
from collections import defaultdict

from generator.emit.report.graph import Box, NetworkView
from generator.emit.report.labels import model_label
from generator.emit.report.svg import esc, num, rect, svg_root, text

WIDTH = 1180.0
LEFT = 70.0
BOX_H = 50.0
ROW_GAP = 70.0
GAP_X = 6.0
MAX_BOX_W = 170.0
MAX_LABELS = 12
ROW_NAME = {0: "endpoints", 1: "leaf", 2: "spine", 3: "core"}


def _detail(box: Box) -> str:
    if len(box.models) == 1:
        (model,) = box.models
        return f"{box.members:,} × {model_label(model)}"
    return f"{box.members:,} devices"


def _layout(view: NetworkView) -> tuple[dict[int, tuple[float, float, float]], list[int], float]:
    rows = sorted({b.row for b in view.boxes}, reverse=True)
    pos: dict[int, tuple[float, float, float]] = {}
    for r_index, row in enumerate(rows):
        y = 10 + r_index * (BOX_H + ROW_GAP)
        members = [i for i, b in enumerate(view.boxes) if b.row == row]
        avail = WIDTH - LEFT - 10
        w = min(MAX_BOX_W, (avail - (len(members) - 1) * GAP_X) / len(members))
        start = LEFT + (avail - (len(members) * w + (len(members) - 1) * GAP_X)) / 2
        for j, i in enumerate(members):
            pos[i] = (start + j * (w + GAP_X), y, w)
    height = 10 + len(rows) * (BOX_H + ROW_GAP) - ROW_GAP + 10
    return pos, rows, height


def _fit(label: str, width: float, bold: bool) -> tuple[str, str]:
    """The label and its size class, cut with an ellipsis if even the smallest is too wide."""
    per_char = 0.64 if bold else 0.58
    for cls, size in (("", 12.0 if bold else 10.5), (" s", 10.0 if bold else 8.5),
                      (" xs", 8.5 if bold else 7.5)):
        if len(label) * size * per_char <= width - 4:
            return label, cls
    keep = max(3, int((width - 4) / (7.5 * per_char)) - 1)
    return label[:keep] + "…", " xs"


def _detail_fit(box: Box, width: float) -> tuple[str, str]:
    """``128 × XE9680``, or just ``128`` when the box is too narrow for the model."""
    full = _detail(box)
    text_, cls = _fit(full, width, False)
    if text_ == full:
        return text_, cls
    return _fit(f"{box.members:,}", width, False)


def _box(box: Box, x: float, y: float, w: float, inner: int) -> str:
    cx = x + w / 2
    label, lcls = _fit(box.label, w, True)
    detail, dcls = _detail_fit(box, w)
    parts = [
        f"<title>{esc(box.label)}: {esc(_detail(box))}</title>",
        rect(x, y, w, BOX_H, f"nb r{box.row}", ' rx="4"'),
        text(cx, y + 17, label, "bl" + lcls, "middle"),
        text(cx, y + 31, detail, "bd" + dcls, "middle"),
    ]
    if inner:
        within, icls = _fit(f"↔ {inner:,} within", w, False)
        parts.append(text(cx, y + 44, within, "bd" + icls, "middle"))
    return f'<g class="box" data-row="{box.row}">{"".join(parts)}</g>'


def _bundle_lines(view: NetworkView, pos: dict[int, tuple[float, float, float]]) -> str:
    per_pair: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
    for (a, b), n in sorted(view.bundles.items()):
        ra, rb = view.boxes[a].row, view.boxes[b].row
        lo, hi = (a, b) if ra < rb else (b, a)
        per_pair[(view.boxes[lo].row, view.boxes[hi].row)].append((lo, hi, n))
    lines, labels = [], []
    for (_, _), items in sorted(per_pair.items()):
        dense = len(items) > MAX_LABELS
        uppers = sorted({hi for _, hi, _ in items})
        for lo, hi, n in items:
            if view.boxes[lo].row == view.boxes[hi].row:
                lines_, label = _same_row(pos, lo, hi, n)
                lines.append(lines_)
                labels.append(label)
                continue
            xl, yl, wl = pos[lo]
            xh, yh, wh = pos[hi]
            x1, y1, x2, y2 = xl + wl / 2, yl, xh + wh / 2, yh + BOX_H
            sw = 0.6 + math.log10(n + 1) * (0.6 if dense else 1.0)
            lines.append(
                f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
                f'stroke-width="{num(sw)}"/>'
            )
            if not dense:
                # Labels of lines from different upper boxes sit at different heights.
                t = 0.3 + 0.4 * uppers.index(hi) / max(1, len(uppers) - 1)
                lx, ly = x2 + (x1 - x2) * t, y2 + (y1 - y2) * t
                labels.append(text(lx, ly + 4, f"{n:,}", "lc", "middle"))
        if dense:
            lo, hi, _ = items[0]
            y = (pos[lo][1] + pos[hi][1] + BOX_H) / 2 + 4
            total = sum(n for _, _, n in items)
            labels.append(text(WIDTH - 12, y, f"{total:,} links in {len(items)} bundles",
                                "lc", "end"))
    return f'<g class="links">{"".join(lines)}</g>{"".join(labels)}'


def _same_row(pos: dict[int, tuple[float, float, float]], a: int, b: int, n: int
              ) -> tuple[str, str]:
    """Links between two boxes of one row (VLT pairs, back-to-back leaves): a side connector."""
    (xa, y, wa), (xb, _, _) = sorted((pos[a], pos[b]))
    x1, x2, ym = xa + wa, xb, y + BOX_H * 0.75
    line = (f'<line x1="{num(x1)}" y1="{num(ym)}" x2="{num(x2)}" y2="{num(ym)}" '
            f'stroke-width="{num(0.6 + math.log10(n + 1))}"/>')
    return line, text((x1 + x2) / 2, y + BOX_H + 12, f"{n:,}", "lc", "middle")


def _row_name(view: NetworkView, row: int) -> str:
    """Tier names; the site uplink network's upper row is the site's own network."""
    if view.network == "site" and row == 1:
        return "site"
    return ROW_NAME.get(row, f"tier {row}")


def draw_network(view: NetworkView, key: str, title: str, desc: str) -> str:
    """The network drawing as inline SVG."""
    pos, rows, height = _layout(view)
    parts = [_bundle_lines(view, pos)]
    for r_index, row in enumerate(rows):
        y = 10 + r_index * (BOX_H + ROW_GAP) + BOX_H / 2 + 4
        parts.append(text(4, y, _row_name(view, row), "rn"))
    for i, box in enumerate(view.boxes):
        x, y, w = pos[i]
        parts.append(_box(box, x, y, w, view.inner.get(i, 0)))
    return svg_root(key, WIDTH, height, title, desc, "".join(parts), "net")


def describe(view: NetworkView) -> str:
    """The drawing in words (its ``<desc>``): boxes per row and the largest bundles."""
    rows = sorted({b.row for b in view.boxes}, reverse=True)
    words = []
    for row in rows:
        boxes = [b for b in view.boxes if b.row == row]
        shown = ", ".join(f"{b.label} ({_detail(b)})" for b in boxes)
        words.append(f"{ROW_NAME.get(row, row)}: {shown}")
    words.append(f"{view.links:,} links in all")
    return "; ".join(words) + "."
