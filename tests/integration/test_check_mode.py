"""``--check --diff``, an admin's preview of a run, must not fail a healthy cluster.

Found in the lab (usertrial5): ``site.yml --check --diff`` on a converged cluster changed
nothing on any host, then ended in ``Acceptance failed`` (rc 2): in check mode the ladder's
commands do not run, so every rung read "fail". The ladder now skips itself in check mode
and says so; this runs the real acceptance playbook in check mode against a generated
inventory (local connection: nothing in the skipped ladder needs a host).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from generator import pipeline
from generator.render.update import apply, prepare
from tests.conftest import REPO
from tests.tooling import require_tool


def test_acceptance_in_check_mode_skips_the_ladder_and_says_so(tmp_path: Path) -> None:
    got = pipeline.outputs(pipeline.load_checked("examples/slurm-lab.yaml"))
    apply(prepare(tmp_path, got.files, got.manifest))
    inventory = tmp_path / "inventories" / "slurm-lab"
    r = subprocess.run(
        [require_tool("ansible-playbook"), "-i", str(inventory),
         str(REPO / "ansible" / "acceptance.yml"), "--check", "--diff",
         "-e", "ansible_connection=local", "-e", "ansible_become=false"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "Check mode: the acceptance ladder runs jobs, so it is skipped" in out, out[-4000:]
    assert not (inventory / ".acceptance").exists(), "a preview writes no report"
