"""The report's deploy commands are the runbook an admin follows: the pre-flight check
before site.yml, the Ansible settings the README uses, and the two files the admin writes
first (without accounts.yml every ordinary user's job is refused). BCM plans keep theirs."""

from __future__ import annotations

from generator import pipeline


def _report(example: str) -> str:
    got = pipeline.outputs(pipeline.load_checked(example))
    (html,) = [f for f in got.files if f.path.endswith("/report.html")]
    return html.content


def test_slurm_runbook_names_preflight_config_and_the_admins_files() -> None:
    html = _report("examples/slurm-lab.yaml")
    order = ["export ANSIBLE_CONFIG=ansible/ansible.cfg",
             "ansible-playbook -i inventories/slurm-lab ansible/preflight.yml",
             "ansible-playbook -i inventories/slurm-lab ansible/site.yml",
             "ansible-playbook -i inventories/slurm-lab ansible/acceptance.yml"]
    at = [html.index(line) for line in order]
    assert at == sorted(at), at
    assert "inventories/slurm-lab/group_vars/slurm_cluster/accounts.yml" in html
    assert "inventories/slurm-lab/group_vars/all/site.yml" in html


def test_bcm_runbook_has_no_slurm_steps() -> None:
    html = _report("examples/dell-8node-config1.yaml")
    assert "ansible/bcm.yml" in html
    assert "preflight.yml" not in html and "accounts.yml" not in html
