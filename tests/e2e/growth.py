"""Growing and shrinking the running lab cluster the way an admin would (issue 9, point 4).

The spec is edited, ``podplan plan`` regenerates over its own previous output tree (the lock
file keeps every built device's name and address; the munge key in the inventory's
``.secrets/`` is the user's and survives), the new machines are racked (``lab.sh add``) and
``site.yml`` runs again. What each run changed on each existing host is read twice: from
Ansible's own output (task, and loop item for the Slurm configuration files) and from the hosts
themselves (every file under /etc and /usr/local, hashed before and after the run; the lines
that changed in the files that name nodes).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.e2e.labrun import REPO, Lab, group

CHANGED = re.compile(
    r"^changed: \[(?P<host>[^\]\s]+)[^\]]*\](?: => \(item=(?P<item>[^)]*)\))?", re.MULTILINE
)
SECTION = re.compile(r"^(?:TASK|RUNNING HANDLER) \[(?P<name>[^\]]+)\]", re.MULTILINE)
HOSTS_FILE = "cluster_hosts : Write every cluster host's management address to the hosts file."
CONF_FILES = "slurm : Write the Slurm configuration files."
RESTART_CTLD = (
    "slurm_controller : Restart slurmctld after a change (configuration, unit, key, package)."
)
RESTART_SLURMD = (
    "slurm_compute : Restart slurmd after a change"
    " (configuration, unit, key, package, spool, plugin)."
)
DRAIN = "slurm_retire : Drain the departing nodes that are not drained yet."
STOP_SLURMD = "slurm_retire : Stop and disable slurmd on the departing nodes."
RETIRE_REASON = "podplan: left the plan"
CONFIG_ROOTS = "/etc /usr/local"
NODE_FILES = {  # file -> the only lines a change of the node list may change in it
    "/etc/hosts": r"^\d+\.\d+\.\d+\.\d+\s",
    "/etc/slurm/slurm.conf": r"^(NodeName|NodeSet)=",
    "/etc/slurm/gres.conf": r"^NodeName=",
    "/etc/slurm/topology.conf": r"^SwitchName=",
}


def changes(output: str) -> dict[str, set[str]]:
    """Host -> every task (``task [item]`` for loops) that reported ``changed``."""
    found: dict[str, set[str]] = {}
    parts = SECTION.split(output)
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        for m in CHANGED.finditer(body):
            label = f"{name} [{m['item']}]" if m["item"] else name
            found.setdefault(m["host"], set()).add(label)
    return found


def plan_tree(inventory: Path) -> tuple[Path, Path]:
    """(spec, output tree) the lab's inventory was generated from and into."""
    tree = inventory.parents[1]
    podplan = yaml.safe_load((inventory / "group_vars" / "all" / "podplan.yml").read_text())
    spec = Path(podplan["podplan_spec_file"])
    return (spec if spec.is_absolute() else REPO / spec), tree


def replan(inventory: Path, gpus: int, login_nodes: int) -> str:
    """Edit the spec's size and run ``podplan plan`` over the same tree; its output."""
    spec, tree = plan_tree(inventory)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["hardware"]["gpus"] = gpus
    data["hardware"]["login_nodes"] = login_nodes
    spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-c", "import sys; from generator.cli import main; sys.exit(main())",
         "plan", str(spec), "--out", str(tree)],
        cwd=REPO, text=True, capture_output=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, f"podplan plan over the running cluster's tree failed:\n{r.stderr}"
    return r.stdout + r.stderr


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def host_digests(lab: Lab, hosts: list[str], path: str) -> dict[str, str]:
    return {h: lab.sh(h, f"sha256sum {path}").split()[0] for h in hosts}


def config_files(lab: Lab, hosts: list[str]) -> dict[str, dict[str, str]]:
    """Host -> {path: SHA-256} of every file under ``CONFIG_ROOTS``: what a run may change."""
    found = {}
    for host in hosts:
        out = lab.sh(host, f"find {CONFIG_ROOTS} -type f -print0 | xargs -0 sha256sum")
        found[host] = {path: sha for sha, path in (line.split(None, 1) for line in
                       out.splitlines())}  # fmt: skip
    return found


def files_changed(
    before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]
) -> dict[str, list[str]]:
    """Host -> the files added, removed or rewritten with other content between two reads."""
    return {
        host: sorted(p for p in old.keys() | after[host].keys() if old.get(p) != after[host].get(p))
        for host, old in before.items()
    }


def node_file_texts(lab: Lab, host: str) -> dict[str, str]:
    return {path: lab.sh(host, f"cat {path}") for path in NODE_FILES}


def lines_changed(before: dict[str, str], after: dict[str, str]) -> dict[str, list[str]]:
    """File -> its removed (``-``) and added (``+``) lines, for the files that name nodes."""
    return {
        path: [
            line.rstrip("\n")
            for line in difflib.ndiff(before[path].splitlines(), after[path].splitlines())
            if line[:2] in ("- ", "+ ")
        ]
        for path in before
    }


def assert_node_lines_only(changed: dict[str, list[str]]) -> None:
    """Every changed line of a node-naming file is one that names nodes, and some changed."""
    for path, lines in changed.items():
        assert lines, f"{path} did not change"
        other = [ln for ln in lines if not re.match(NODE_FILES[path], ln[2:])]
        assert not other, f"{path}: lines other than the node lines changed: {other}"


def addresses(inventory: Path, hosts: list[str]) -> dict[str, str]:
    """Each host's management address as its host_vars give it."""
    out = {}
    for host in hosts:
        data = yaml.safe_load((inventory / "host_vars" / f"{host}.yml").read_text())
        out[host] = data["ansible_host"]
    return out


def finished_job(lab: Lab, login: str) -> str:
    """A job run to completion (accounting must keep it across growth and shrink)."""
    job = lab.sh(f"alice@{login}", "sbatch --parsable --wrap hostname").strip()
    lab.wait("the job before the change", lambda: lab.job_state(login, job) == "COMPLETED")
    return job


def in_accounting(lab: Lab, login: str, job: str) -> str:
    """The job's state as ``sacct`` records it ('' if slurmdbd has no record)."""
    out = lab.ssh(
        login, f"sacct --noheader --parsable2 --allocations --jobs={job} --format=JobID,State"
    ).stdout
    m = re.search(rf"^{job}\|(\S+)", out, re.MULTILINE)
    return m[1] if m else ""


def slurm_nodes(lab: Lab, host: str) -> dict[str, str]:
    """Node -> state, as slurmctld sees the cluster from ``host``."""
    out = lab.sh(host, "sinfo --noheader --Node --format='%N %T'")
    return dict(line.split() for line in out.splitlines() if line.strip())


def groups_of(lab: Lab) -> dict[str, list[str]]:
    return {
        g: group(lab.inventory, g) for g in ("slurm_compute", "slurm_controller", "slurm_login")
    }


def _acceptance_passes(lab: Lab) -> None:
    report = yaml.safe_load((lab.inventory / ".acceptance" / "report.json").read_text())
    statuses = {r["name"]: r["status"] for r in report["rungs"]}
    assert set(statuses.values()) == {"pass"}, report


def _expected_changes(
    hosts: list[str], heads: list[str], compute: list[str]
) -> dict[str, set[str]]:
    """What a change of the node list must change on a host that stays: its hosts file, the
    Slurm files that name nodes, and a restart of the daemon that reads them."""
    files = {HOSTS_FILE} | {
        f"{CONF_FILES} [{f}]" for f in ("slurm.conf", "gres.conf", "topology.conf")
    }
    out = {}
    for host in hosts:
        daemon = {RESTART_CTLD} if host in heads else {RESTART_SLURMD} if host in compute else set()
        out[host] = files | daemon
    return out


def grow(lab: Lab, extra: list[str]) -> dict[str, set[str]]:
    """One more compute node and one more login node; returns what changed on each host."""
    before = groups_of(lab)
    login, heads = before["slurm_login"][0], before["slurm_controller"]
    old = sorted({h for hosts in before.values() for h in hosts})
    key_file = lab.inventory / ".secrets" / "munge.key"
    key, host_keys = digest(key_file), host_digests(lab, old, "/etc/munge/munge.key")
    built = addresses(lab.inventory, old)
    job = finished_job(lab, login)

    replan(lab.inventory, 8 * (len(before["slurm_compute"]) + 1), len(before["slurm_login"]) + 1)
    assert digest(key_file) == key, "regenerating must keep the munge key byte for byte"
    assert addresses(lab.inventory, old) == built, "built hosts keep their addresses"
    after = groups_of(lab)
    (node,) = sorted(set(after["slurm_compute"]) - set(before["slurm_compute"]))
    (new_login,) = sorted(set(after["slurm_login"]) - set(before["slurm_login"]))
    r = lab.timed("lab add", "add", str(lab.inventory))
    assert r.returncode == 0, r.stdout + r.stderr

    files, texts = config_files(lab, old), node_file_texts(lab, heads[0])
    lab.playbook("growth run", *extra)
    changed = changes(lab.output)
    got = {h: changed.get(h, set()) for h in old}
    assert got == _expected_changes(old, heads, before["slurm_compute"]), got
    on_disk = files_changed(files, config_files(lab, old))
    assert on_disk == {h: sorted(NODE_FILES) for h in old}, on_disk
    lines = lines_changed(texts, node_file_texts(lab, heads[0]))
    assert_node_lines_only(lines)
    assert all(ln.startswith("+ ") for ln in lines["/etc/hosts"]), lines["/etc/hosts"]
    lab.evidence["growth"] = {"files": on_disk, "lines": lines}
    assert host_digests(lab, old, "/etc/munge/munge.key") == host_keys
    assert slurm_nodes(lab, new_login)[node] == "idle"
    ran = lab.sh(f"alice@{new_login}", f"srun --nodelist={node} hostname").strip()
    assert ran == node, ran
    _acceptance_passes(lab)
    assert in_accounting(lab, new_login, job) == "COMPLETED", "accounting must keep old jobs"
    return changed


def shrink(lab: Lab, extra: list[str]) -> dict[str, set[str]]:
    """One compute node fewer: the highest-numbered is drained, then leaves slurm.conf."""
    before = groups_of(lab)
    login, heads = before["slurm_login"][0], before["slurm_controller"]
    job = finished_job(lab, login)
    replan(lab.inventory, 8 * (len(before["slurm_compute"]) - 1), len(before["slurm_login"]))
    after = groups_of(lab)
    (victim,) = sorted(set(before["slurm_compute"]) - set(after["slurm_compute"]))
    assert victim == before["slurm_compute"][-1], "the highest-numbered node goes"

    # A job still runs there: the run drains the node and stops before changing anything.
    busy = lab.sh(f"alice@{login}", f"sbatch --parsable -w {victim} --wrap 'sleep 600'").strip()
    lab.wait("the job on the departing node", lambda: lab.job_state(login, busy) == "RUNNING")
    r = lab.run_playbook("shrink blocked", *extra)
    assert r.returncode != 0, "site.yml must not drop a node that runs a job"
    assert f"{victim} left the plan" in lab.output and f"{busy} alice RUNNING" in lab.output
    assert f"TASK [{CONF_FILES}]" not in lab.output, "nothing may be written before it is idle"
    state = lab.node(login, victim)
    assert "DRAIN" in state["State"] and state["Reason"] == RETIRE_REASON, state
    assert lab.job_state(login, busy) == "RUNNING", "the job keeps running"
    lab.sh(login, f"scancel {busy}")
    lab.wait(
        "the departing node to be idle",
        lambda: lab.sh(login, f"squeue --noheader --nodelist={victim}").strip() == "",
    )

    stays = sorted({h for hosts in after.values() for h in hosts})
    files, texts = config_files(lab, stays), node_file_texts(lab, heads[0])
    lab.playbook("shrink run", *extra)
    changed = changes(lab.output)
    on_disk = files_changed(files, config_files(lab, stays))
    assert on_disk == {h: sorted(NODE_FILES) for h in stays}, on_disk
    lines = lines_changed(texts, node_file_texts(lab, heads[0]))
    assert_node_lines_only(lines)
    assert all(ln.startswith("- ") and victim in ln for ln in lines["/etc/hosts"]), lines
    lab.evidence["shrink"] = {"files": on_disk, "lines": lines}
    got = {h: changed.get(h, set()) - {f"{STOP_SLURMD} [{victim}]"} for h in stays}
    assert got == _expected_changes(stays, heads, after["slurm_compute"]), got
    assert f"{STOP_SLURMD} [{victim}]" in changed.get(heads[0], set()), changed.get(heads[0])
    assert victim not in slurm_nodes(lab, login)
    for host in stays:
        conf = lab.sh(host, "grep -E '^(NodeName|NodeSet)=' /etc/slurm/slurm.conf")
        assert victim not in conf and re.search(r"^NodeName=\S*\[", conf, re.M), (host, conf)
    assert lab.ssh(victim, "systemctl is-active slurmd").stdout.strip() == "inactive"
    assert lab.ssh(victim, "systemctl is-enabled slurmd").stdout.strip() == "disabled"
    _acceptance_passes(lab)
    assert in_accounting(lab, login, job) == "COMPLETED"
    assert in_accounting(lab, login, busy).startswith("CANCELLED")
    return changed
