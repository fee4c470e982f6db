"""Every artifact says the same thing: parsed back from the generated text, the BOM, cabling,
rack elevation, inventory and stack configs agree with the one plan they came from."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import pipeline
from generator.plan.models import ClusterPlan
from tests.conftest import EXAMPLES, REPO

SMALL = [e for e in EXAMPLES if "2048" not in e.stem]


def _csv(text: str) -> list[dict[str, str]]:
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    return list(csv.DictReader(io.StringIO(body)))


def _render(example: Path) -> tuple[ClusterPlan, dict[str, str]]:
    loaded = pipeline.load_checked(example.relative_to(REPO).as_posix())
    files = {f.path: f.content for f in pipeline.outputs(loaded).files}
    return pipeline.plan(loaded), files


@pytest.fixture(scope="module", params=SMALL, ids=[e.stem for e in SMALL])
def rendered(request: pytest.FixtureRequest) -> tuple[ClusterPlan, dict[str, str]]:
    return _render(request.param)


def test_bom_counts_match_plan(rendered: tuple[ClusterPlan, dict[str, str]]) -> None:
    plan, files = rendered
    summary = json.loads(files[f"reports/{plan.name}/bom.json"])["summary"]
    compute = plan.nodes_with_role("compute")
    assert summary["compute_nodes"] == len(compute)
    assert summary["gpus"] == sum(n.gpus for n in plan.nodes_with_role("compute", "spare"))
    assert summary["fabric"]["leaf_switches"] == plan.fabric.leaf_switches
    assert summary["racks"] == len(plan.racks)


def test_cabling_is_the_fabric_graph(rendered: tuple[ClusterPlan, dict[str, str]]) -> None:
    plan, files = rendered
    rows = _csv(files[f"reports/{plan.name}/cabling.csv"])
    assert len(rows) == len(plan.links)
    gpu_nodes = {n.name for n in plan.nodes if n.gpus}
    node_ports = Counter(r["a"] for r in rows if r["network"] == "compute" and r["a"] in gpu_nodes)
    if not plan.fabric.rails:  # smallest fabric rule: a single node has no fabric
        assert not node_ports and plan.fabric.leaf_switches == 0
        return
    assert set(node_ports) == gpu_nodes
    assert set(node_ports.values()) == {plan.fabric.rails}


def test_every_device_is_racked_once(rendered: tuple[ClusterPlan, dict[str, str]]) -> None:
    plan, files = rendered
    rows = _csv(files[f"reports/{plan.name}/racks.csv"])
    racked = Counter(r["device"] for r in rows if r["kind"] in ("node", "switch"))
    expected = {n.name for n in plan.nodes} | {s.name for s in plan.switches}
    assert set(racked) == expected
    assert set(racked.values()) == {1}


def test_inventory_matches_plan(rendered: tuple[ClusterPlan, dict[str, str]]) -> None:
    plan, files = rendered
    hosts = yaml.safe_load(files[f"inventories/{plan.name}/hosts.yml"])
    text = json.dumps(hosts)
    for name in plan.scheduler.controllers:
        assert f'"{name}"' in text
    if plan.scheduler_kind == "slurm":
        compute: dict[str, Any] = hosts["all"]["children"]["slurm_cluster"]["children"][
            "slurm_compute"
        ]["children"]
        in_inventory = {h for group in compute.values() for h in group["hosts"]}
        assert in_inventory == {h for ns in plan.scheduler.nodesets for h in ns.hosts}
        assert {n.name for n in plan.nodes_with_role("compute")} <= in_inventory


def test_stack_configs_match_cloud_plan(rendered: tuple[ClusterPlan, dict[str, str]]) -> None:
    plan, files = rendered
    stacks = {p: yaml.safe_load(c) for p, c in files.items() if p.startswith("stacks/")}
    assert len(stacks) == len(plan.cloud)
    for ce in plan.cloud:
        config = stacks[f"stacks/{ce.provider}/Pulumi.{plan.name}.yaml"]["config"]
        ns = f"podplan-{ce.provider}"
        assert config[f"{ns}:nodeCount"] == ce.count
        assert config[f"{ns}:instanceType"] == ce.instance_type
        assert config[f"{ns}:clusterName"] == plan.name
