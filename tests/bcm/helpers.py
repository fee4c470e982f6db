"""Shared helpers of the BCM tests: the plans to test, the stand-in, running ansible."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import yaml

from generator.emit.bcm import emit_bcm
from generator.plan.models import ClusterPlan
from generator.render.write import write_tree
from tests.bcm.plan_fixture import fixture_plan
from tests.conftest import EXAMPLES, REPO
from tests.tooling import require_tool

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"
STANDIN = REPO / "tests" / "bcm_standin"
PLAYBOOK = REPO / "ansible" / "bcm.yml"

FIXTURE = "bcm-fixture"


def bcm_examples() -> list[str]:
    """Example specs whose provisioning.scheduler is bcm (by file stem)."""
    out = []
    for path in EXAMPLES:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if (data.get("provisioning") or {}).get("scheduler") == "bcm":
            out.append(path.stem)
    return out


PLANS = [FIXTURE, *bcm_examples()]


@functools.cache
def load_plan(name: str) -> ClusterPlan:
    """The fixture plan, or an example's plan from the real pipeline."""
    if name == FIXTURE:
        return fixture_plan()
    from generator import pipeline

    return pipeline.plan(pipeline.load_checked(f"examples/{name}.yaml"))


def files_of(plan: ClusterPlan) -> dict[str, str]:
    return {f.path: f.content for f in emit_bcm(plan)}


def write(plan: ClusterPlan, out: Path) -> Path:
    """Write the BCM files under ``out``; returns the inventory directory."""
    write_tree(out, emit_bcm(plan))
    return out / "inventories" / plan.name


def group_vars(plan: ClusterPlan) -> dict[str, object]:
    """Every variable the generated group_vars define, merged."""
    merged: dict[str, object] = {}
    for f in emit_bcm(plan):
        if "/group_vars/" in f.path:
            merged.update(yaml.safe_load(f.content) or {})
    return merged


def tool(name: str) -> str:
    """A CLI next to this Python (a venv's ansible), else on PATH; skip (fail in CI) if none."""
    return require_tool(name)


def ansible_env(tmp: Path) -> dict[str, str]:
    """Environment that puts ONLY the test stand-in on the collections path."""
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": str(STANDIN),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_CONFIG": str(REPO / "ansible" / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_LOCAL_TEMP": str(tmp / ".ansible-tmp"),
        "ANSIBLE_REMOTE_TEMP": str(tmp / ".ansible-remote-tmp"),
        "ANSIBLE_RETRY_FILES_ENABLED": "false",
    })
    return env


LOCAL = [
    "-e", "ansible_connection=local",
    "-e", f"ansible_python_interpreter={sys.executable}",
    "-e", "ansible_become=false",
]


def run_playbook(inventory: Path, tmp: Path, *args: str,
                 playbook: Path = PLAYBOOK) -> subprocess.CompletedProcess[str]:
    """ansible-playbook --check on localhost (connection local) against the stand-in."""
    cmd = [tool("ansible-playbook"), "-i", str(inventory), str(playbook), "--check",
           *LOCAL, *args]
    return subprocess.run(cmd, cwd=tmp, env=ansible_env(tmp), capture_output=True, text=True,
                          timeout=600, check=False)


def task_items(output: str, task: str) -> list[str]:
    """Lines ``ok: [host] => (item=...)`` printed under the task named ``task``."""
    sections = output.split("TASK [")
    for sec in sections:
        if sec.startswith(task):
            return [ln for ln in sec.splitlines() if ln.startswith("ok: [") and "(item=" in ln]
    return []
