"""Generated inventories parse with the real ``ansible-inventory`` and match the plan."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator import pipeline
from generator.emit.hostlist import expand
from generator.render.write import write_tree
from tests.conftest import EXAMPLES, REPO
from tests.tooling import require_tool

# The 2,048-node example is left out: ansible-inventory needs minutes for 2,000+ host_vars files,
# and the small examples exercise the same emitter code.
SLURM_EXAMPLES = [
    e
    for e in EXAMPLES
    if "scheduler: bcm" not in e.read_text(encoding="utf-8") and "2048" not in e.stem
]


def ansible_inventory(inventory: Path) -> dict[str, Any]:
    exe = require_tool("ansible-inventory")
    r = subprocess.run(
        [exe, "-i", str(inventory), "--list"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ANSIBLE_INVENTORY_UNPARSED_WARNING": "1"},
    )
    assert "WARNING" not in r.stderr, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def group_hosts(inv: dict[str, Any], group: str) -> set[str]:
    """Hosts of a group including its children, as Ansible resolves them."""
    entry = inv.get(group, {})
    hosts = set(entry.get("hosts", []))
    for child in entry.get("children", []):
        hosts |= group_hosts(inv, child)
    return hosts


@pytest.mark.parametrize("example", SLURM_EXAMPLES, ids=[e.stem for e in SLURM_EXAMPLES])
def test_slurm_inventory_matches_plan(example: Path, tmp_path: Path) -> None:
    loaded = pipeline.load_checked(example.relative_to(REPO).as_posix())
    out = pipeline.outputs(loaded)
    write_tree(tmp_path, out.files)
    plan = pipeline.plan(loaded)
    inv = ansible_inventory(tmp_path / "inventories" / plan.name)

    sched = plan.scheduler
    assert group_hosts(inv, "slurm_controller") == set(sched.controllers)
    assert group_hosts(inv, "slurm_dbd") == {sched.dbd_host}
    assert group_hosts(inv, "slurm_login") == set(sched.login)
    compute = {h for ns in sched.nodesets for h in ns.hosts}
    assert group_hosts(inv, "slurm_compute") == compute
    assert group_hosts(inv, "slurm_cluster") == compute | set(sched.controllers) | set(sched.login)

    hostvars = inv["_meta"]["hostvars"]
    by_name = {n.name: n for n in plan.nodes}
    for host in compute | set(sched.controllers):
        node = by_name[host]
        assert hostvars[host]["ansible_host"] == (node.addresses.mgmt or "").split("/")[0]
        assert hostvars[host]["slurm_cluster_name"] == sched.cluster_name
    # Node lists reach every host as expressions; leaf switches are groups listing each node.
    nodesets = hostvars[sorted(compute)[0]]["slurm_nodesets"]
    assert {ns["name"]: sorted(expand(ns["hosts"])) for ns in nodesets} == {
        ns.name: sorted(ns.hosts) for ns in sched.nodesets
    }
    leaves = {sw.switch: set(sw.nodes) for sw in sched.topology if sw.nodes}
    assert {name: group_hosts(inv, f"slurm_switch_{name}") for name in leaves} == leaves
    any_compute = sorted(compute)[0]
    rails = hostvars[any_compute].get("podplan_fabric_addresses", [])
    assert len(rails) == plan.fabric.rails  # a single node has no fabric (smallest fabric rule)


GROUP_VARS_LIMIT_BYTES = 8000


@pytest.mark.parametrize("example", SLURM_EXAMPLES + [e for e in EXAMPLES if "2048" in e.stem])
def test_group_vars_hold_no_node_lists(example: Path) -> None:
    """Every host receives every group_vars value: they must not grow with the node count.

    The 2,048-node example included (no ansible run needed); its group_vars once held 52 KB of
    node names, which ``ansible-inventory --list`` copied into each of 2,050 hosts.
    """
    out = pipeline.outputs(pipeline.load_checked(example.relative_to(REPO).as_posix()))
    group_vars = {f.path: f.content for f in out.files if "/group_vars/" in f.path}
    assert group_vars
    assert sum(len(text) for text in group_vars.values()) < GROUP_VARS_LIMIT_BYTES, {
        path: len(text) for path, text in group_vars.items()
    }


def test_an_hdr_dgx_a100_inventory_groups_nodes_by_scalable_units_of_20(tmp_path: Path) -> None:
    """The real ansible-inventory on a 45-node DGX A100 plan: its HDR fabric has SUs of 20
    (DGX A100 SuperPOD RA), so Slurm's topology groups are 20 + 20 + 5 nodes, not 32 + 13,
    and every node carries its 8 HDR rails."""
    spec = tmp_path / "a100.yaml"
    spec.write_text(
        "name: a100-hdr\nworkloads:\n  - {name: ft, kind: lora, model: llama2-7b, steps: 10}\n"
        "hardware: {server: dgx-a100, gpu: a100-sxm-80gb, gpus: 360}\n", encoding="utf-8")
    loaded = pipeline.load_checked(str(spec))
    write_tree(tmp_path, pipeline.outputs(loaded).files)
    plan = pipeline.plan(loaded)
    assert plan.fabric.switch_model == "QM8790" and plan.fabric.su_nodes == 20
    inv = ansible_inventory(tmp_path / "inventories" / plan.name)
    su = {sw.switch: set(sw.nodes) for sw in plan.scheduler.topology if sw.nodes}
    assert sorted(len(v) for v in su.values()) == [5, 20, 20]
    assert {name: group_hosts(inv, f"slurm_switch_{name}") for name in su} == su
    hostvars = inv["_meta"]["hostvars"]
    first = sorted(su["su1"])[0]
    assert [r["device"] for r in hostvars[first]["fabric_rails"]] == [
        f"mlx5_{r}" for r in range(8)]
    assert len(hostvars[first]["podplan_fabric_addresses"]) == 8
