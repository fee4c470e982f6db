"""Static checks of the Ansible tree: syntax-check, ansible-lint (production profile),
yamllint, Jinja parsing, and the validate-inventory play against good and bad inventories.

The tools come with ``pip install -e .[test]``. Where one is missing the test skips, except
under ``CI=true``, where a skip would hide a broken pipeline: there it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from tests.tooling import require_tool

REPO = Path(__file__).resolve().parents[2]
ANSIBLE = REPO / "ansible"
SAMPLE_INVENTORY = REPO / "tests" / "lab" / "sample-inventory"


def _is_bcm(path: Path) -> bool:
    """BCM pieces have their own owner and need a collection that is not installed here."""
    return "bcm" in path.name.lower()


def _playbooks() -> list[Path]:
    found = []
    for path in sorted(ANSIBLE.glob("*.yml")):
        if _is_bcm(path):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, list) and all(
            isinstance(p, dict)
            and ({"hosts", "import_playbook", "ansible.builtin.import_playbook"} & p.keys())
            for p in data
        ):
            found.append(path)
    return found


def _roles() -> list[Path]:
    return sorted(p for p in (ANSIBLE / "roles").iterdir() if p.is_dir() and not _is_bcm(p))


PLAYBOOKS = _playbooks()
ROLES = _roles()


def _tool(name: str) -> str:
    return require_tool(name)


def _run(cmd: list[str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "NO_COLOR": "1", "ANSIBLE_FORCE_COLOR": "0"}
    return subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def test_site_playbook_is_found() -> None:
    names = [p.name for p in PLAYBOOKS]
    assert {"site.yml", "validate.yml", "acceptance.yml"} <= set(names), names


@pytest.mark.parametrize("playbook", PLAYBOOKS, ids=[p.name for p in PLAYBOOKS])
def test_syntax_check(playbook: Path) -> None:
    exe = _tool("ansible-playbook")
    r = _run([exe, "--syntax-check", "-i", str(SAMPLE_INVENTORY), str(playbook)])
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_ansible_lint_production_profile() -> None:
    exe = _tool("ansible-lint")
    targets = [str(p.relative_to(REPO)) for p in PLAYBOOKS + ROLES]
    r = _run([exe, "--nocolor", *targets], timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Profile 'production' was required, and it passed" in r.stdout + r.stderr


def test_yamllint() -> None:
    exe = _tool("yamllint")
    targets = [str(p.relative_to(REPO)) for p in PLAYBOOKS + ROLES]
    targets += ["tests/lab", ".ansible-lint", ".yamllint"]
    r = _run([exe, "--strict", *targets])
    assert r.returncode == 0, r.stdout + r.stderr


def test_ansible_lint_config_is_offline_production() -> None:
    config = yaml.safe_load((REPO / ".ansible-lint").read_text(encoding="utf-8"))
    assert config["profile"] == "production"
    assert config["offline"] is True
    assert not config.get("skip_list"), "silence findings locally with '# noqa' instead"


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_role_craft(role: Path) -> None:
    """Every role documents its inputs and keeps its variables behind its prefix."""
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
    options = specs["argument_specs"]["main"].get("options", {})
    defaults_file = role / "defaults" / "main.yml"
    defaults = (
        yaml.safe_load(defaults_file.read_text(encoding="utf-8")) if defaults_file.exists() else {}
    ) or {}
    undocumented = sorted(set(defaults) - set(options))
    assert not undocumented, f"{role.name}: defaults without an argument spec: {undocumented}"
    prefix = role.name + "_"
    # The slurm role also takes the inventory's slurm_* inputs, which share its prefix.
    stray = sorted(name for name in defaults if not name.startswith(prefix))
    assert not stray, f"{role.name}: defaults without the role prefix: {stray}"


def test_templates_parse() -> None:
    env = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
    templates = sorted(ANSIBLE.glob("roles/*/templates/**/*.j2"))
    assert templates
    for template in templates:
        env.parse(template.read_text(encoding="utf-8"))


# --- validate.yml: a good inventory passes, each kind of bad one fails clearly -------------


def _copy_inventory(tmp_path: Path) -> Path:
    inventory = tmp_path / "inventory"
    shutil.copytree(SAMPLE_INVENTORY, inventory)
    return inventory


def _edit(path: Path, change: Callable[[Any], None]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")


def _validate(inventory: Path) -> subprocess.CompletedProcess[str]:
    exe = _tool("ansible-playbook")
    return _run([exe, "-i", str(inventory), str(ANSIBLE / "validate.yml")])


def test_validate_accepts_the_sample_inventory(tmp_path: Path) -> None:
    r = _validate(_copy_inventory(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr


def _two_nodesets(inv: Path) -> None:
    def slurm(d: dict[str, Any]) -> None:
        extra = dict(d["slurm_nodesets"][0], name="gpu2", hosts=["gpu003"])
        d["slurm_nodesets"].append(extra)
        d["slurm_partitions"][0]["nodesets"].append("gpu2")

    def hosts(d: dict[str, Any]) -> None:
        compute = d["all"]["children"]["slurm_cluster"]["children"]["slurm_compute"]
        compute["children"]["slurm_nodeset_gpu2"] = {"hosts": {"gpu003": None}}

    _edit(inv / "group_vars" / "slurm_cluster" / "slurm.yml", slurm)
    _edit(inv / "hosts.yml", hosts)


def _gres_mismatch(inv: Path) -> None:
    _edit(
        inv / "group_vars" / "slurm_cluster" / "slurm.yml",
        lambda d: d["slurm_nodesets"][0].update(gpu_files="/dev/nvidia[0-3]"),
    )


def _no_gpu_type(inv: Path) -> None:
    _edit(
        inv / "group_vars" / "slurm_cluster" / "slurm.yml",
        lambda d: d["slurm_nodesets"][0].update(gpu_type=""),
    )


def _three_controllers(inv: Path) -> None:
    def slurm(d: dict[str, Any]) -> None:
        d["slurm_controller_hosts"].append("login01")

    def hosts(d: dict[str, Any]) -> None:
        ctl = d["all"]["children"]["slurm_cluster"]["children"]["slurm_controller"]
        ctl["hosts"]["login01"] = None

    _edit(inv / "group_vars" / "slurm_cluster" / "slurm.yml", slurm)
    _edit(inv / "hosts.yml", hosts)


def _no_login_group(inv: Path) -> None:
    _edit(
        inv / "hosts.yml",
        lambda d: d["all"]["children"]["slurm_cluster"]["children"].pop("slurm_login"),
    )


def _unknown_switch(inv: Path) -> None:
    _edit(
        inv / "group_vars" / "slurm_cluster" / "slurm.yml",
        lambda d: d["slurm_topology"][0].update(switches="su[1,9]"),
    )


def _bad_hostlist(inv: Path) -> None:
    _edit(
        inv / "group_vars" / "slurm_cluster" / "slurm.yml",
        lambda d: d["slurm_nodesets"][0].update(hosts="gpu[003-001]"),
    )


def _node_in_no_leaf_switch(inv: Path) -> None:
    def hosts(d: dict[str, Any]) -> None:
        leaves = d["all"]["children"]["slurm_cluster"]["children"]["slurm_switches"]
        leaves["children"]["slurm_switch_su1"]["hosts"].pop("gpu003")

    _edit(inv / "hosts.yml", hosts)


def _site_file_missing(inv: Path) -> None:
    """A site without Internet access names its own enroot package; the path is wrong."""
    (inv / "group_vars" / "all").mkdir(parents=True, exist_ok=True)
    (inv / "group_vars" / "all" / "site.yml").write_text(
        "enroot_pyxis_enroot_debs: [/nonexistent/site/enroot_3.5.0-1_amd64.deb]\n",
        encoding="utf-8",
    )


BAD_INVENTORIES = {
    "hostlist-malformed": (_bad_hostlist, "'gpu[003-001]' is not a Slurm hostlist expression"),
    "node-in-no-leaf-switch": (_node_in_no_leaf_switch, "in no leaf switch: gpu003"),
    "host-in-two-nodesets": (_two_nodesets, "exactly one of each"),
    "gres-count-mismatch": (_gres_mismatch, "must equal the number of files"),
    "gpu-type-missing": (_no_gpu_type, "needs gpu_type"),
    "three-controllers": (_three_controllers, "There must be 1 or 2 controllers"),
    "login-group-missing": (_no_login_group, "Inventory group 'slurm_login' is missing or empty"),
    "unknown-switch": (_unknown_switch, "may only name switches defined"),
    "site-file-missing": (
        _site_file_missing,
        "enroot_pyxis_enroot_debs: /nonexistent/site/enroot_3.5.0-1_amd64.deb",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INVENTORIES))
def test_validate_rejects_bad_inventory(case: str, tmp_path: Path) -> None:
    break_it, message = BAD_INVENTORIES[case]
    inventory = _copy_inventory(tmp_path)
    break_it(inventory)
    r = _validate(inventory)
    output = " ".join((r.stdout + r.stderr).split())
    assert r.returncode != 0, output
    assert message in output, output


def _generated_slurm_inventories(tmp_path: Path) -> list[Path]:
    """Inventories the project's generator writes for every Slurm example spec."""
    examples = [
        e
        for e in sorted((REPO / "examples").glob("*.yaml"))
        if "scheduler: bcm" not in e.read_text(encoding="utf-8")
    ]
    inventories = []
    for example in examples:
        out = tmp_path / example.stem
        r = _run(
            [
                sys.executable,
                "-c",
                "import sys; from generator.cli import main; sys.exit(main())",
                "plan",
                str(example.relative_to(REPO)),
                "--out",
                str(out),
            ]
        )
        assert r.returncode == 0, r.stdout + r.stderr
        inventories += [p.parent for p in sorted(out.glob("inventories/*/hosts.yml"))]
    return inventories


@pytest.mark.slow
def test_validate_accepts_every_generated_slurm_inventory(tmp_path: Path) -> None:
    """The contract between generator and roles: what podplan writes, site.yml accepts."""
    pytest.importorskip("generator.cli")
    inventories = _generated_slurm_inventories(tmp_path)
    assert inventories, "no Slurm example produced an inventory"
    for inventory in inventories:
        r = _validate(inventory)
        assert r.returncode == 0, f"{inventory}:\n{r.stdout}{r.stderr}"


def _plays(name: str) -> list[dict[str, Any]]:
    """The plays of a playbook, with imported playbooks expanded in place."""
    plays: list[dict[str, Any]] = []
    for play in yaml.safe_load((ANSIBLE / name).read_text(encoding="utf-8")):
        imported = play.get("ansible.builtin.import_playbook") or play.get("import_playbook")
        plays += _plays(imported) if imported else [play]
    return plays


def test_site_runs_slurm_daemons_in_upgrade_order_and_rolls_slurmd() -> None:
    """slurmdbd, then the controllers one at a time, then slurmd a batch at a time, then the
    clients; the pre-flight check before anything changes, acceptance last."""
    plays = _plays("site.yml")
    hosts = [p["hosts"] for p in plays]
    daemons = [
        h for h in hosts if h in ("slurm_dbd", "slurm_controller", "slurm_compute", "slurm_login")
    ]
    assert daemons[-4:] == ["slurm_dbd", "slurm_controller", "slurm_compute", "slurm_login"]
    by_hosts = {p["hosts"]: p for p in plays if p["hosts"] in daemons}
    assert by_hosts["slurm_controller"]["serial"] == 1
    assert "slurm_rolling_batch" in str(by_hosts["slurm_compute"]["serial"])
    assert by_hosts["slurm_compute"]["max_fail_percentage"] == 0
    names = [p["name"] for p in plays]
    assert names.index("Compare every compute node with the plan") < names.index(
        "Prepare every cluster host"
    )
    assert names[-1] == "Accept the cluster" and plays[-1]["tags"] == ["acceptance"]
    assert all(p.get("become") is True for p in plays if p["hosts"] != "localhost"), [
        p["name"] for p in plays if p["hosts"] != "localhost" and not p.get("become")
    ]


@pytest.mark.parametrize("name", ["site.yml", "preflight.yml", "slurm-daemons.yml",
                                  "acceptance.yml"])
def test_every_playbook_an_admin_runs_loads_the_site_overrides_first(name: str) -> None:
    """The README runs these on their own too: without the import, a generated variable the
    site overrides in group_vars/all/site.yml (fabric_rails' device names, say) would be
    the generated one in preflight.yml and the override in site.yml."""
    first = yaml.safe_load((ANSIBLE / name).read_text(encoding="utf-8"))[0]
    assert first.get("ansible.builtin.import_playbook") == "site_overrides.yml", first


def _tasks(node: Any) -> list[dict[str, Any]]:
    """Every task in a task list, blocks opened (with the block's ``when`` carried down)."""
    found: list[dict[str, Any]] = []
    for task in node or []:
        if "block" in task:
            inner = _tasks(task["block"])
            for t in inner:
                t.setdefault("_outer_when", []).append(task.get("when"))
            found += inner
        else:
            found.append(task)
    return found


def test_no_retry_loop_runs_blind_in_check_mode() -> None:
    """A retry loop on a command that check mode skips retried 30 times, then failed: found
    in the lab, where every ``site.yml --check --diff`` with a slurm.conf change ended at
    'Wait until this slurmctld answers'. Each loop either reads for real in check mode
    (``check_mode: false``) or is skipped there (a ``when`` on ``ansible_check_mode``)."""
    ladder = yaml.safe_load((ANSIBLE / "roles/slurm_acceptance/tasks/main.yml").read_text())
    gated = [t for t in ladder if "block" in t and t.get("when") == "not ansible_check_mode"]
    assert gated, "the acceptance ladder (its rungs poll) must be skipped in check mode"
    loose = []
    for path in sorted((ANSIBLE / "roles").glob("*/tasks/**/*.yml")):
        if "slurm_acceptance" in path.parts:
            continue  # included only from the gated block above
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if "until" not in task or task.get("check_mode") is False:
                continue
            whens = [task.get("when"), *task.get("_outer_when", [])]
            if "ansible_check_mode" not in yaml.safe_dump(whens):
                loose.append(f"{path.relative_to(ANSIBLE)}: {task.get('name')}")
    assert not loose, loose
