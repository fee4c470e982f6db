"""ansible/bcm.yml against the generated inventory, in check mode, on the TEST-ONLY stand-in.

What this proves: every task's arguments pass validation against the documented argument
specs declared by tests/bcm_standin (unknown names, wrong types and bad choices fail), the
head_node role's parameters pass its argument_specs, the input checks refuse missing MACs
and a missing vault, and ansible-lint is clean. What it cannot prove: anything CMDaemon or
the real installer would do (there is no BCM head node here).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from generator.emit import bcm
from tests.bcm.helpers import (
    FIXTURE,
    PLANS,
    REPO,
    STANDIN,
    ansible_env,
    load_plan,
    run_playbook,
    task_items,
    tool,
    write,
)

pytestmark = pytest.mark.slow

VAULT_PASSWORD = "podplan-test-only"

# Empties the entity lists before the node task, for tests about physical_node only.
NODES_ONLY = ["-e", json.dumps({k: [] for k in (
    "bcm_networks", "bcm_racks", "bcm_software_images", "bcm_categories", "bcm_switches")})]


def _site_file(tmp: Path, plan_name: str, *, macs: bool) -> Path:
    """The site file a site would write from bcm-site.example.yml."""
    example = tmp / "reports" / plan_name / "bcm" / "bcm-site.example.yml"
    site = yaml.safe_load(example.read_text(encoding="utf-8"))
    site["bcm_site_installer"].update({
        "license": {"country": "NL", "state": "Noord-Holland", "locality": "Amsterdam",
                    "organization": "podplan", "organizational_unit": "tests"},
        "install_medium_dvd_path": "/root/bcm-11.0-rocky9u6.iso",
        "management_interface": "eno1",
        "external_interface": "eno2",
    })
    site["bcm_site_frontend_interface"] = "ens1f0np0"
    site["bcm_site_license_mac"] = "02:00:00:00:00:01"
    if macs:
        site["bcm_site_node_macs"] = {
            h: f"02:00:00:00:{i // 256:02x}:{i % 256:02x}"
            for i, h in enumerate(site["bcm_site_node_macs"], start=16)}
    else:
        site.pop("bcm_site_node_macs")
    path = tmp / "site.yml"
    path.write_text(yaml.safe_dump(site), encoding="utf-8")
    return path


def _vault(tmp: Path) -> list[str]:
    """An encrypted vault with every variable podplan references; the -e/password args."""
    secrets = {v: f"test-{v}" for v in bcm.VAULT_VARIABLES}
    secrets["vault_bcm_product_key"] = "TEST00-TEST00-TEST00-TEST00-TEST00"
    vault = tmp / "bcm-vault.yml"
    vault.write_text(yaml.safe_dump(secrets), encoding="utf-8")
    pw = tmp / "vault-pass"
    pw.write_text(VAULT_PASSWORD, encoding="utf-8")
    r = subprocess.run([tool("ansible-vault"), "encrypt", str(vault), "--vault-password-file",
                        str(pw)], capture_output=True, text=True, check=False,
                       env=ansible_env(tmp))
    assert r.returncode == 0, r.stderr
    assert vault.read_text(encoding="utf-8").startswith("$ANSIBLE_VAULT;")
    return ["-e", f"@{vault}", "--vault-password-file", str(pw)]


# The fixture and the first BCM example run the whole playbook (about a minute each on a
# loaded machine); the other examples differ only in data the emitter tests already cover.
@pytest.mark.parametrize("name", PLANS[:2])
def test_every_task_passes_argument_validation(name: str, tmp_path: Path) -> None:
    plan = load_plan(name)
    inv = write(plan, tmp_path)
    site = _site_file(tmp_path, plan.name, macs=True)
    r = run_playbook(inv, tmp_path, "-e", f"@{site}", *_vault(tmp_path), "-e",
                     "bcm_ha_done=true")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "failed=0" in out and "unreachable=0" in out
    # the stand-in role validated its parameters, then reported that it installed nothing
    assert "Validating arguments against arg spec 'main'" in out
    assert "arguments valid, nothing installed" in out
    gv_nodes = [n.name for n in plan.nodes_with_role("compute", "spare", "login")]
    counts = {
        "Define the networks": 3 + len(plan.network.rail_cidrs),
        "Define the racks": len(plan.racks),
        "Define the switches": len(plan.switches),
        "Define one physical node": len(gv_nodes),
        "Define one job queue": len(plan.scheduler.partitions),
        "Set GRES gpu": len(bcm.gpu_overlays(plan)),
    }
    for task, n in counts.items():
        assert len(task_items(out, task)) == n, task
    assert "Set the Slurm cluster's GRES, cgroups and fabric topology" in out


def test_refuses_to_run_without_node_macs(tmp_path: Path) -> None:
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    site = _site_file(tmp_path, plan.name, macs=False)
    r = run_playbook(inv, tmp_path, "-e", f"@{site}", *_vault(tmp_path), "--tags",
                     "bcm_cluster")
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "No MAC address for login01, gpu001" in out
    assert "Define the networks" not in out


def test_allow_unfilled_macs_creates_nodes_without_mac(tmp_path: Path) -> None:
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    site = _site_file(tmp_path, plan.name, macs=False)
    r = run_playbook(inv, tmp_path, "-e", f"@{site}", *_vault(tmp_path), "--tags",
                     "bcm_cluster", "-e", "bcm_allow_unfilled_macs=true", *NODES_ONLY)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert len(task_items(out, "Define one physical node")) == 6


def test_wlm_waits_for_the_passive_head_node(tmp_path: Path) -> None:
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    site = _site_file(tmp_path, plan.name, macs=True)
    r = run_playbook(inv, tmp_path, "-e", f"@{site}", *_vault(tmp_path), "--tags", "bcm_wlm")
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "run cmha-setup on the primary first" in out
    assert "Look up the Slurm clusters" not in out


def test_refuses_to_run_without_the_vault(tmp_path: Path) -> None:
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    site = _site_file(tmp_path, plan.name, macs=True)
    r = run_playbook(inv, tmp_path, "-e", f"@{site}", "--tags", "bcm_cluster")
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "vault_bcm_product_key is undefined: create the vault" in out


def test_refuses_fill_in_left_in_head_node_settings(tmp_path: Path) -> None:
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    r = run_playbook(inv, tmp_path, *_vault(tmp_path), "--tags", "bcm_install")
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "Head-node settings still contain FILL-IN" in out


def test_local_install_medium_needs_no_dvd_path(tmp_path: Path) -> None:
    """install_medium local: the DVD placeholder is ignored and the role's own
    install_medium_local_repo_path, given in the site file, is validated."""
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    site_path = _site_file(tmp_path, plan.name, macs=True)
    site = yaml.safe_load(site_path.read_text(encoding="utf-8"))
    site["bcm_site_installer"]["install_medium"] = "local"
    site["bcm_site_installer"]["install_medium_dvd_path"] = "FILL-IN"
    site["install_medium_local_repo_path"] = ["/root/cm.repo"]
    site_path.write_text(yaml.safe_dump(site), encoding="utf-8")
    r = run_playbook(inv, tmp_path, "-e", f"@{site_path}", *_vault(tmp_path), "--tags",
                     "bcm_install")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "arguments valid, nothing installed" in out


def test_an_undocumented_key_in_the_inventory_fails_validation(tmp_path: Path) -> None:
    """Nested options are validated too: an interface key the module does not document
    (here the plan's HCA device name) makes the node task fail."""
    plan = load_plan(FIXTURE)
    inv = write(plan, tmp_path)
    nodes_file = inv / "group_vars" / "bcm_headnodes" / "nodes.yml"
    data = yaml.safe_load(nodes_file.read_text(encoding="utf-8"))
    data["bcm_nodes"][1]["interfaces_NetworkPhysicalInterface"][2]["device"] = "mlx5_0"
    nodes_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    site = _site_file(tmp_path, plan.name, macs=True)
    r = run_playbook(inv, tmp_path, "-e", f"@{site}", *_vault(tmp_path), "--tags",
                     "bcm_cluster", *NODES_ONLY)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "Unsupported parameters" in out and "device" in out
    assert "login01" in out  # the first node passed; gpu001 (the changed one) failed


NEGATIVE = """---
- name: The stand-in rejects what the documented interfaces reject
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Unknown parameter (camelCase matters)
      brightcomputing.bcm110.physical_node:
        hostname: gpu001
        hostName: gpu001
      register: unknown_param
      ignore_errors: true
    - name: Unknown option inside a nested list
      brightcomputing.bcm110.physical_node:
        hostname: gpu001
        interfaces_NetworkPhysicalInterface:
          - name: ib0
            netmask: 255.255.0.0
      register: unknown_nested
      ignore_errors: true
    - name: Value outside the documented choices
      brightcomputing.bcm110.switch:
        hostname: leaf01
        kind: OMNIPATH
      register: bad_choice
      ignore_errors: true
    - name: Wrong type
      brightcomputing.bcm110.network:
        name: ibnet0
        netmaskBits: twenty-two
      register: bad_type
      ignore_errors: true
    - name: Missing required option
      brightcomputing.bcm110.category:
        notes: no name
      register: missing_required
      ignore_errors: true
    - name: A documented call passes
      brightcomputing.bcm110.network:
        name: ibnet0
        type: INTERNAL
        baseAddress: 10.200.0.0
        netmaskBits: 19
      register: good
    - name: Every bad call failed for the expected reason
      ansible.builtin.assert:
        that:
          - unknown_param is failed and 'Unsupported parameters' in unknown_param.msg
          - "'hostName' in unknown_param.msg"
          - unknown_nested is failed and 'netmask' in unknown_nested.msg
          - bad_choice is failed and 'must be one of' in bad_choice.msg
          - bad_type is failed and 'netmaskBits' in bad_type.msg
          - missing_required is failed and 'missing required arguments' in missing_required.msg
          - good is succeeded and good.standin
"""

NEGATIVE_ROLE = """---
- name: The stand-in role rejects an undocumented parameter
  hosts: localhost
  gather_facts: false
  roles:
    - role: brightcomputing.installer110.head_node
      product_key: TEST00-TEST00-TEST00-TEST00-TEST00
      license: {country: NL}
      db_cmd_password: x
      ldap_root_pass: x
      ldap_readonly_pass: x
      slurm_user_pass: x
      management_interface: eno1
      install_medium: dvd
      install_medum_dvd_path: /root/typo.iso
"""


def test_standin_rejects_unknown_names_types_and_choices(tmp_path: Path) -> None:
    pb = tmp_path / "negative.yml"
    pb.write_text(NEGATIVE, encoding="utf-8")
    r = run_playbook(Path("localhost,"), tmp_path, playbook=pb)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]  # the final assert passed: each bad call failed
    assert out.count("...ignoring") == 5


def test_standin_role_rejects_an_undocumented_parameter(tmp_path: Path) -> None:
    pb = tmp_path / "negative-role.yml"
    pb.write_text(NEGATIVE_ROLE, encoding="utf-8")
    r = run_playbook(Path("localhost,"), tmp_path, playbook=pb)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "install_medum_dvd_path" in out and "Supported parameters include" in out


def test_ansible_lint_is_clean_with_the_standin_on_the_path(tmp_path: Path) -> None:
    r = subprocess.run([tool("ansible-lint"), "--offline", "ansible/bcm.yml",
                        "ansible/requirements.yml"], cwd=REPO, env=ansible_env(tmp_path),
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]


def test_requirements_pin_both_collections() -> None:
    req = yaml.safe_load((REPO / "ansible" / "requirements.yml").read_text(encoding="utf-8"))
    pins = {c["name"]: c["version"] for c in req["collections"]}
    assert set(pins) == {"brightcomputing.installer110", "brightcomputing.bcm110"}
    assert all(pins.values())


def test_standin_is_clearly_test_only() -> None:
    for path in STANDIN.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".yml", ".md"}:
            text = path.read_text(encoding="utf-8")
            assert "TEST-ONLY" in text or "stand-in" in text, path


def test_inventory_parses_with_ansible_inventory(tmp_path: Path) -> None:
    inv = write(load_plan(FIXTURE), tmp_path)
    r = subprocess.run([tool("ansible-inventory"), "-i", str(inv), "--graph"],
                       capture_output=True, text=True, env=ansible_env(tmp_path), check=False)
    assert r.returncode == 0, r.stderr
    assert "@bcm_primary:" in r.stdout and "head01" in r.stdout
    assert "@bcm_secondary:" in r.stdout and "head02" in r.stdout
