"""Hostlist expressions from generator to roles: the filter plugin, and real renderings.

The generator folds node lists into Slurm hostlist expressions (``generator.emit.hostlist``)
and writes leaf switches as inventory groups; the roles read them through
``ansible/filter_plugins/podplan_hostlist.py``. Here: the filters on their own, a round trip
generator -> filters, and the slurm role's real templates rendered by ``ansible-playbook``
from the generated (golden) inventories, compared with the plan node for node.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import pipeline
from generator.emit.hostlist import expand, fold
from tests.tooling import require_tool

REPO = Path(__file__).resolve().parents[2]
ANSIBLE = REPO / "ansible"
GOLDEN = REPO / "tests" / "golden"
SAMPLE_INVENTORY = REPO / "tests" / "lab" / "sample-inventory"
RENDER = Path(__file__).parent / "playbooks" / "render_slurm_conf.yml"


def _plugin() -> ModuleType:
    path = ANSIBLE / "filter_plugins" / "podplan_hostlist.py"
    spec = importlib.util.spec_from_file_location("podplan_hostlist", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hl = _plugin()


# --- the filters --------------------------------------------------------------------------


def test_expand_and_fold_take_expressions_lists_and_nothing() -> None:
    assert hl.hostlist_expand("gpu[001-003],login01") == ["gpu001", "gpu002", "gpu003", "login01"]
    assert hl.hostlist_expand(["gpu[1-2]", "gpu3"]) == ["gpu1", "gpu2", "gpu3"]
    assert hl.hostlist_expand(None) == [] and hl.hostlist_expand("") == []
    assert hl.hostlist_fold(["gpu0003", "gpu0001", "gpu0002", "head01"]) == "gpu[0001-0003],head01"
    # Zero padding is part of the name: gpu998..gpu1000 unpadded, gpu01 beside gpu1.
    assert hl.hostlist_fold(["gpu998", "gpu999", "gpu1000"]) == "gpu[998-1000]"
    assert sorted(hl.hostlist_expand(hl.hostlist_fold(["gpu01", "gpu1"]))) == ["gpu01", "gpu1"]
    assert hl.hostlist_count("/dev/nvidia[0-7]") == 8 and hl.hostlist_count("/dev/nvidia0") == 1


@pytest.mark.parametrize(
    "bad",
    ["gpu[3-1]", "gpu[1-", "gpu1]", "@compute", "gpu[1-4]!gpu2", "gpu[1-9/2]", "gpu1 gpu2", 7],
)
def test_non_slurm_expressions_are_refused_with_the_expression(bad: Any) -> None:
    from ansible.errors import AnsibleFilterError

    with pytest.raises(AnsibleFilterError, match=r"hostlist expression|list of names"):
        hl.hostlist_expand(bad)


def test_leaf_switches_come_from_groups_then_topology_entries_in_natural_order() -> None:
    groups = {
        "all": ["gpu1", "gpu2", "gpu3"],
        "slurm_switch_su10": ["gpu3"],
        "slurm_switch_su2": ["gpu2", "gpu1"],
        "slurm_switch_empty": [],
    }
    topology = [{"switch": "su1", "nodes": ["gpu9"]}, {"switch": "spine", "switches": "su[1-2,10]"}]
    assert hl.leaf_switches(groups, topology) == [
        {"switch": "su1", "nodes": "gpu9"},
        {"switch": "su2", "nodes": "gpu[1-2]"},
        {"switch": "su10", "nodes": "gpu3"},
    ]
    assert hl.upper_switches(topology) == [{"switch": "spine", "switches": "su[1-2,10]"}]


@settings(max_examples=40, deadline=None)
@given(
    st.sets(
        st.tuples(st.sampled_from(["gpu", "login", "spare", "r1n"]), st.integers(0, 3000)),
        max_size=60,
    ),
    st.sampled_from([1, 2, 4]),
)
def test_generator_expressions_expand_to_the_same_names_in_the_roles(
    names: set[tuple[str, int]], width: int
) -> None:
    hosts = sorted(f"{prefix}{n:0{width}d}" for prefix, n in names)
    expression = fold(hosts)
    assert sorted(hl.hostlist_expand(expression)) == hosts
    assert sorted(expand(expression)) == hosts
    assert hl.hostlist_fold(hosts) == expression


# --- the slurm role's templates, rendered by ansible-playbook ----------------------------


def _render(inventory: Path, out: Path) -> dict[str, str]:
    exe = require_tool("ansible-playbook")
    out.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "ANSIBLE_ROLES_PATH": str(ANSIBLE / "roles"),
        "ANSIBLE_FILTER_PLUGINS": str(ANSIBLE / "filter_plugins"),
        "ANSIBLE_NOCOLOR": "1",
    }
    r = subprocess.run(
        [exe, "-i", str(inventory), str(RENDER), "-e", f"render_dir={out}",
         "-e", f"role_templates={ANSIBLE / 'roles' / 'slurm' / 'templates'}"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return {
        name: (out / name).read_text(encoding="utf-8")
        for name in ("slurm.conf", "gres.conf", "topology.conf")
    }


def _fields(line: str) -> dict[str, str]:
    return dict(field.split("=", 1) for field in line.split())


def _check_against_plan(example: str, conf: dict[str, str]) -> None:
    """Every node set and switch Slurm will read names exactly the plan's hosts."""
    plan = pipeline.plan(pipeline.load_checked(f"examples/{example}.yaml"))
    sets = [
        _fields(line) for line in conf["slurm.conf"].splitlines() if line.startswith("NodeSet=")
    ]
    got_sets = {f["NodeSet"]: sorted(expand(f["Nodes"])) for f in sets}
    assert got_sets == {ns.name: sorted(ns.hosts) for ns in plan.scheduler.nodesets}
    tree = [
        _fields(line) for line in conf["topology.conf"].splitlines() if line.startswith("Switch")
    ]
    got = {
        f["SwitchName"]: (sorted(expand(f.get("Nodes", ""))), sorted(expand(f.get("Switches", ""))))
        for f in tree
    }
    want = {
        sw.switch: (sorted(sw.nodes or []), sorted(sw.switches or []))
        for sw in plan.scheduler.topology
    }
    assert got == want
    assert "TopologyPlugin=topology/tree" in conf["slurm.conf"]


def test_lab_inventory_renders_expressions_slurm_reads(tmp_path: Path) -> None:
    conf = _render(GOLDEN / "slurm-lab" / "inventories" / "slurm-lab", tmp_path)
    assert re.search(r"^NodeName=gpu\[001-003\] CPUs=", conf["slurm.conf"], re.M)
    assert "\nNodeSet=gpu Nodes=gpu[001-003]\n" in conf["slurm.conf"]
    assert "\nNodeName=gpu[001-003] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n" in conf["gres.conf"]
    lines = [line for line in conf["topology.conf"].splitlines() if line.startswith("Switch")]
    assert lines == ["SwitchName=su1 Nodes=gpu[001-003]", "SwitchName=spine Switches=su1"]
    _check_against_plan("slurm-lab", conf)


@pytest.mark.slow
def test_2048_node_inventory_renders_ranges_equal_to_the_plan(tmp_path: Path) -> None:
    conf = _render(GOLDEN / "llama31-405b-2048" / "inventories" / "llama31-405b-2048", tmp_path)
    assert "\nNodeSet=gpu Nodes=gpu[0001-2048]\n" in conf["slurm.conf"]
    topo = conf["topology.conf"]
    assert "SwitchName=su64 Nodes=gpu[2017-2048]" in topo
    assert "SwitchName=pod1 Switches=su[1-4]" in topo
    assert "SwitchName=core Switches=pod[1-16]" in topo
    switches = [line for line in topo.splitlines() if line.startswith("Switch")]
    assert len(switches) == 64 + 16 + 1
    assert max(len(line) for line in switches) < 60, "ranges, not lists of names"
    _check_against_plan("llama31-405b-2048", conf)


def test_hand_written_lists_render_the_same_files(tmp_path: Path) -> None:
    """A hand-written inventory may keep lists and leaf entries in slurm_topology."""
    listed = tmp_path / "listed"
    shutil.copytree(SAMPLE_INVENTORY, listed)
    slurm_yml = listed / "group_vars" / "slurm_cluster" / "slurm.yml"
    data = yaml.safe_load(slurm_yml.read_text(encoding="utf-8"))
    data["slurm_nodesets"][0]["hosts"] = ["gpu003", "gpu001", "gpu002"]
    data["slurm_topology"] = [
        {"switch": "su1", "nodes": ["gpu001", "gpu002", "gpu003"]},
        {"switch": "spine", "switches": ["su1"]},
    ]
    slurm_yml.write_text(yaml.safe_dump(data), encoding="utf-8")
    hosts_yml = listed / "hosts.yml"
    tree = yaml.safe_load(hosts_yml.read_text(encoding="utf-8"))
    tree["all"]["children"]["slurm_cluster"]["children"].pop("slurm_switches")
    hosts_yml.write_text(yaml.safe_dump(tree), encoding="utf-8")
    assert _render(listed, tmp_path / "a") == _render(SAMPLE_INVENTORY, tmp_path / "b")
