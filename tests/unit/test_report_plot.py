"""The report's SVG charts (``emit/report/plot`` and ``charts``): ticks, room for labels,
legends that fit, and the same bytes for the same numbers."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from generator.emit.report.charts import Series, Stack, labelled_bars, lines, scatter, stacked_bars
from generator.emit.report.plot import DPI, SMALL, nice_ticks, pow2_ticks, text_width

SVG = "{http://www.w3.org/2000/svg}"


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0, 25_600) == [0, 5000, 10_000, 15_000, 20_000, 25_000]
    assert nice_ticks(0, 6.3) == [0, 2, 4, 6]
    assert nice_ticks(0, 5.3) == [0, 1, 2, 3, 4, 5]
    assert nice_ticks(-0.25, 5.3) == [0, 1, 2, 3, 4, 5]
    flat = nice_ticks(2.5, 2.5)  # an empty range still gets an axis
    assert len(flat) >= 2 and all(2.5 <= t <= 3.5 for t in flat)


def test_log2_ticks_are_powers_of_two_and_thin_out() -> None:
    assert pow2_ticks(6, 300) == [8, 16, 32, 64, 128, 256]
    assert pow2_ticks(1, 4096) == [1, 4, 16, 64, 256, 1024, 4096]


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed XML, or this raises


def test_bar_labels_fit_inside_the_chart() -> None:
    """The value written after the longest bar ends before the chart's right edge."""
    items = [("compute", 690.6), ("compute fabric", 72.3), ("optics", 51.1)]
    root = _parse(labelled_bars("c", "Capex", "million USD", items, "{:,.1f}"))
    width = float(root.attrib["width"])
    for t in root.iter(f"{SVG}text"):
        if t.text and t.text.endswith("million USD") and t.text[0].isdigit():
            assert float(t.attrib["x"]) + text_width(t.text, SMALL) <= width


def test_long_legends_wrap_to_fewer_columns() -> None:
    names = ["on-prem (capex + power)", "aws p5.48xlarge", "azure Standard_ND96isr_H100_v5"]
    svg = lines("c", "Cost", "months", "million USD",
                [Series(n, ((0.0, float(i)), (12.0, 2.0 * i + 1))) for i, n in enumerate(names)])
    root = _parse(svg)
    width = float(root.attrib["width"])
    for t in root.iter(f"{SVG}text"):
        if t.text in names:
            assert float(t.attrib["x"]) + text_width(t.text, SMALL) <= width


def test_charts_are_deterministic_titled_and_hatched() -> None:
    bars = [Stack("pretrain", (("weights", 6.0), ("gradients", 12.0), ("activations", 30.0)))]
    first = stacked_bars("chart-mem", "Memory per GPU", "GiB", bars)
    assert first == stacked_bars("chart-mem", "Memory per GPU", "GiB", bars)
    root = _parse(first)
    assert root.find(f"{SVG}title").text == "Memory per GPU"  # type: ignore[union-attr]
    assert "weights 6.0 GiB" in root.find(f"{SVG}desc").text  # type: ignore[union-attr,operator]
    patterns = re.findall(r'<pattern id="(chart-mem-h\d+)"', first)
    assert len(patterns) == 2  # the first segment is plain colour, the others hatched
    assert all(f"url(#{p})" in first for p in patterns)
    assert float(root.attrib["width"]) == 7.2 * DPI


def test_log_axis_limits_and_marks_are_drawn() -> None:
    series = [Series("h100", ((8.0, 900.0), (64.0, 120.0), (512.0, 20.0)))]
    svg = lines("s", "Time", "GPUs", "hours", series, log_x=True, hline=(100.0, "deadline"))
    assert ">deadline<" in svg and 'stroke-dasharray="4 3"' in svg
    assert [t for t in ("8", "64", "512") if f">{t}<" in svg] == ["8", "64", "512"]
    cost = scatter("k", "Cost", "hours", "USD", series, marks=[(64.0, 120.0, "cheapest")],
                   vline=(100.0, "deadline"))
    _parse(cost)
    assert ">cheapest<" in cost and cost.count("<circle") == 3


def test_every_segment_of_a_nine_cause_chart_looks_different() -> None:
    """The step chart stacks nine causes; the palette has eight colours, so the ninth must
    differ from the first by its hatch (it was solid blue like 'compute')."""
    from generator.emit.report.charts import segment_style

    styles = [segment_style(i) for i in range(9)]
    assert len(set(styles)) == 9
    assert styles[8][0] == styles[0][0] and styles[8][1] != styles[0][1]
