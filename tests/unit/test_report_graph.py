"""The grouped network drawings: every link and switch accounted for, rows stay readable."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from generator import pipeline
from generator.emit.report.graph import (
    MAX_BOXES,
    endpoint_devices,
    links_by_network,
    network_view,
)
from generator.emit.report.network_svg import draw_network
from generator.plan.models import ClusterPlan

SPEC = """\
name: graph-{nodes}
workloads:
  - name: pretrain
    kind: pretrain
    model: llama2-7b
    steps: 10
hardware: {{gpus: {gpus}}}
facility: {{rack_power_kw: 52}}
"""


@cache
def _plan(nodes: int, tmp: str) -> ClusterPlan:
    path = Path(tmp) / f"graph-{nodes}.yaml"
    path.write_text(SPEC.format(nodes=nodes, gpus=8 * nodes), encoding="utf-8")
    return pipeline.plan(pipeline.load_checked(str(path)))


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("graph"))


@pytest.mark.parametrize("nodes", [1, 2, 8, 33, 128, 200])
def test_every_link_and_switch_is_in_the_drawing(nodes: int, tmp: str) -> None:
    plan = _plan(nodes, tmp)
    for network, links in links_by_network(plan).items():
        view = network_view(plan, network, links)
        assert sum(view.bundles.values()) + sum(view.inner.values()) == len(links)
        per_row = Counter(b.row for b in view.boxes)
        assert max(per_row.values()) <= MAX_BOXES + 6, per_row  # SU chunks + a few kinds
        tiers = Counter(s.tier for s in plan.switches if s.network == network)
        ends = {n for link in links for n in (link.a, link.b)}
        # Cable ends outside the plan (the site's own network) are drawn above, by name.
        outside = ends - endpoint_devices(plan).keys()
        drawn = Counter()
        for box in view.boxes:
            if box.row > 0 and box.kind not in {o.replace("-", " ") for o in outside}:
                drawn[box.kind] += box.members
        assert drawn == tiers
        assert sum(b.members for b in view.boxes if b.row > 0) == sum(tiers.values()) + len(
            outside)
        endpoints = ends - outside - {s.name for s in plan.switches if s.network == network}
        assert sum(b.members for b in view.boxes if b.row == 0) == len(endpoints)


def test_scalable_units_line_up_across_rows(tmp: str) -> None:
    plan = _plan(200, tmp)  # 7 SUs, two tiers
    compute = [x for x in plan.links if x.network == "compute"]
    view = network_view(plan, "compute", compute)
    nodes = [b.label for b in view.boxes if b.row == 0 and b.label.startswith("SU")]
    leaves = [b.label for b in view.boxes if b.row == 1]
    assert nodes == leaves == [f"SU {i}" for i in range(1, plan.fabric.scalable_units + 1)]
    assert [b.label for b in view.boxes if b.row == 2] == ["spine"]


def test_drawing_names_the_bundles_and_has_a_title(tmp: str) -> None:
    plan = _plan(8, tmp)
    view = network_view(plan, "compute", [x for x in plan.links if x.network == "compute"])
    svg = draw_network(view, "t", "Compute fabric", "words")
    assert svg.startswith('<svg class="net"') and "<title id=\"t-t\">Compute fabric</title>" in svg
    assert "× Quantum-2 QM9790" in svg
    for n in view.bundles.values():
        assert f">{n:,}<" in svg
