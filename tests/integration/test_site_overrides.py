"""Site overrides win over generated variables, proven with the real ``ansible-playbook``.

The documented home is ``inventories/<name>/group_vars/all/site.yml``, a file podplan never
writes. ``ansible/site.yml`` first imports ``site_overrides.yml``, which include_vars that
file; the test runs that same playbook, then a play that records what every host sees, for a
variable podplan generates at each level: ``group_vars/all`` (podplan_cluster_name),
``group_vars/slurm_cluster`` (nfs_client_mount_point) and ``host_vars`` (podplan_bmc_address).
It also shows why the include is needed: as plain `all` group vars (``ansible-inventory``),
the file loses to the generated child-group and host variables.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator import pipeline
from generator.render.update import apply, prepare
from tests.conftest import REPO
from tests.tooling import require_tool

SITE = {"podplan_cluster_name": "from-site", "nfs_client_mount_point": "/site-shared",
        "podplan_bmc_address": "192.0.2.1"}  # fmt: skip


def _write_tree(out: Path) -> Path:
    got = pipeline.outputs(pipeline.load_checked("examples/slurm-lab.yaml"))
    apply(prepare(out, got.files, got.manifest))
    return out / "inventories" / "slurm-lab"


def _what_hosts_see(inventory: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    record = tmp / "seen"
    record.mkdir(parents=True)
    play = tmp / "probe.yml"
    play.write_text(f"""---
- name: Site overrides, as site.yml loads them
  ansible.builtin.import_playbook: {REPO / "ansible" / "site_overrides.yml"}
- name: Record what each host sees
  hosts: all
  gather_facts: false
  tasks:
    - name: Write the variables
      ansible.builtin.copy:
        content: "{{{{ {{'name': podplan_cluster_name, 'mount': nfs_client_mount_point,
                      'bmc': podplan_bmc_address}} | to_json }}}}"
        dest: "{record}/{{{{ inventory_hostname }}}}.json"
        mode: "0644"
      delegate_to: localhost
""", encoding="utf-8")
    r = subprocess.run([require_tool("ansible-playbook"), "-i", str(inventory), str(play)],
                       capture_output=True, text=True, check=False, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in record.glob("*.json")}


@pytest.mark.slow
def test_site_yml_beats_generated_group_and_host_vars(tmp_path: Path) -> None:
    inventory = _write_tree(tmp_path / "out")
    before = _what_hosts_see(inventory, tmp_path / "a")
    assert before["gpu001"] == {"name": "slurm-lab", "mount": "/shared", "bmc": "169.254.78.13"}

    site = inventory / "group_vars" / "all" / "site.yml"
    site.write_text("---\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in SITE.items()),
                    encoding="utf-8")
    after = _what_hosts_see(inventory, tmp_path / "b")
    assert set(after) == set(before) and len(after) == 6  # every host, not just the first
    for host, seen in after.items():
        assert seen == {"name": "from-site", "mount": "/site-shared", "bmc": "192.0.2.1"}, host

    # Without the include, Ansible's inventory precedence lets generated child-group and host
    # variables win over group_vars/all: the reason site.yml loads the file again.
    r = subprocess.run([require_tool("ansible-inventory"), "-i", str(inventory), "--host",
                        "gpu001"], capture_output=True, text=True, check=True)
    plain = json.loads(r.stdout)
    assert plain["podplan_cluster_name"] == "from-site"  # site.yml sorts after podplan.yml
    assert plain["nfs_client_mount_point"] == "/shared"
    assert plain["podplan_bmc_address"] == "169.254.78.13"

    # Regenerating keeps the override file, byte for byte.
    text = site.read_bytes()
    _write_tree(tmp_path / "out")
    assert site.read_bytes() == text


def test_podplan_never_generates_the_override_file() -> None:
    for example in sorted((REPO / "examples").glob("*.yaml")):
        if "2048" in example.stem:
            continue
        got = pipeline.outputs(pipeline.load_checked(example.relative_to(REPO).as_posix()))
        assert not [f.path for f in got.files if f.path.endswith("/group_vars/all/site.yml")]


def test_a_misspelt_override_stops_the_run_with_a_did_you_mean(tmp_path: Path) -> None:
    """Ansible ignores a variable nothing reads: a typo in the admin's own files would change
    nothing and say nothing. The real site_overrides play stops and names each one; the
    site's own names (no podplan prefix) and the generated files pass."""
    inventory = _write_tree(tmp_path / "out")
    site = inventory / "group_vars" / "all" / "site.yml"
    site.write_text("---\nslurm_config_overides: {MinJobAge: 600}\nmy_site_ntp: pool.example\n"
                    "slurm_config_overrides: {MaxJobCount: 20000}\n", encoding="utf-8")
    accounts = inventory / "group_vars" / "slurm_cluster" / "accounts.yml"
    accounts.write_text("---\nslurm_acounts_list: []\n", encoding="utf-8")
    play = REPO / "ansible" / "site_overrides.yml"
    r = subprocess.run([require_tool("ansible-playbook"), "-i", str(inventory), str(play)],
                       capture_output=True, text=True, check=False, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert ("group_vars/all/site.yml: slurm_config_overides (did you mean "
            "slurm_config_overrides?)") in out
    assert ("group_vars/slurm_cluster/accounts.yml: slurm_acounts_list (did you mean "
            "slurm_accounts_list?)") in out
    assert "my_site_ntp" not in out and "MaxJobCount" not in out

    accounts.unlink()
    site.write_text("---\nmy_site_ntp: pool.example\nslurm_config_overrides: {MinJobAge: 600}\n",
                    encoding="utf-8")
    r = subprocess.run([require_tool("ansible-playbook"), "-i", str(inventory), str(play)],
                       capture_output=True, text=True, check=False, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
