"""End to end: the generated inventory deploys a production-shaped Slurm GPU cluster.

``podplan plan`` writes the inventory (the lab spec with this machine's node shape);
``tests/lab/lab.sh`` boots one systemd-nspawn container per host (systemd as PID 1, writable
freezer and devices cgroups, link-local addresses, fake /dev/nvidia0-7, veth stand-ins for
the front-end NIC and the IPoIB rails, /shared bind-mounted into every host as the NFS
export); ``site.yml``
deploys from an offline apt repository, with Slurm pinned and held at the repository's
version, and ends with the acceptance ladder. Then, in order:

1. the pre-flight play, given a plan with the catalog's XE9680 shape, stops with a table;
2. the first run deploys; the second changes nothing on any host;
3. production paths work: ConstrainDevices (cgroup v1 here), pam_slurm_adopt, enroot
   directories for an ordinary user, AccountingStorageEnforce, memlock, IPoIB, NCCL, opensm,
   the slurmdbd backup, the slurmctld unit ordering;
4. a lost mount drains a node through the prolog with the health check's reason, and it
   stays drained across slurmd restarts (ReturnToService=1) until an admin resumes it;
5. slurmctld restarts on failure; with the primary stopped the backup takes over from the
   shared StateSaveLocation, runs a job queued before, and accounting records it;
6. a broken node (foreign munge key) plus a configuration change: the third run repairs it,
   restarts the controllers one at a time and every slurmd exactly once, a batch at a time.

Needs root, systemd-nspawn, debootstrap and dpkg-scanpackages. Elsewhere it skips, except
under ``CI=true``, where it fails: CI must run it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e import growth
from tests.e2e.labrun import REPO, Lab, generate, group, lab_inventory, slurm_version
from tests.tooling import unavailable

pytestmark = pytest.mark.e2e

RESTART_CTLD = (
    "slurm_controller : Restart slurmctld after a change (configuration, unit, key, package)."
)
RESTART_SLURMD = (
    "slurm_compute : Restart slurmd after a change"
    " (configuration, unit, key, package, spool, plugin)."
)
RESTART_DBD = "slurm_dbd : Restart slurmdbd after a change (configuration, unit, key, package)."
TOOLS = (
    "systemd-nspawn",
    "debootstrap",
    "dpkg-scanpackages",
    "ip",
    "ssh",
    "ssh-keygen",
    "ansible-playbook",
    "ansible-inventory",
)


def _preflight() -> None:
    if os.geteuid() != 0:
        unavailable("the Slurm lab cannot run here: the lab needs root")
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        unavailable(f"the Slurm lab cannot run here: missing tools: {', '.join(missing)}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Lab]:
    """One lab for the module: the tests below run on it in order (deploy, then change it)."""
    _preflight()
    tmp_path = tmp_path_factory.mktemp("slurm-lab")
    capman = request.config.pluginmanager.getplugin("capturemanager")
    logs = tmp_path / "logs"
    logs.mkdir()
    the_lab = Lab(lab_inventory(tmp_path), logs)
    started = time.monotonic()
    try:
        r = the_lab.timed("image", "image")
        assert r.returncode == 0, f"building the lab image failed:\n{r.stderr[-6000:]}"
        the_lab.extra = ["-e", f"slurm_version={slurm_version()}"]
        r = the_lab.timed("lab up", "up", str(the_lab.inventory))
        assert r.returncode == 0, f"lab up failed:\n{r.stdout}{r.stderr[-6000:]}"
        yield the_lab
    finally:
        the_lab.timed("teardown", "down")
        the_lab.times["total"] = time.monotonic() - started
        summary = ", ".join(f"{k} {v:.1f}s" for k, v in the_lab.times.items())
        (tmp_path / "e2e-times.json").write_text(json.dumps(the_lab.times, indent=2))
        with capman.global_and_fixture_disabled():
            print(f"\n[slurm e2e] wall times: {summary}\n[slurm e2e] logs: {logs}")
        leftovers = subprocess.run(
            ["ip", "netns", "list"], text=True, capture_output=True, check=False
        ).stdout
        prefix = os.environ.get("PODPLAN_LAB_NS", "pplab") + "-"
        assert prefix not in leftovers, f"lab namespaces left behind:\n{leftovers}"


def _check_preflight_stops_on_wrong_shape(lab: Lab, tmp: Path) -> None:
    """The catalog's XE9680 (2 x 48 cores x 2 threads, 1 TB) is not what the lab has."""
    wrong = generate(tmp, "wrong-shape", None)
    r = lab.run_playbook("preflight wrong spec", "--tags", "preflight", inventory=wrong)
    assert r.returncode != 0, "the pre-flight check must stop on the XE9680 shape"
    out = lab.output
    assert "The nodes differ from the plan" in out, out[-4000:]
    for host in group(lab.inventory, "slurm_compute"):
        assert re.search(rf"{host}\s+cores_per_socket\s+48\s+\d", out), out[-4000:]
        assert re.search(rf"{host}\s+memory_mb \(node would be INVALID\)\s+>= 996147", out), out[
            -4000:
        ]
    assert "slurm_controller : Start and enable slurmctld" not in out, "nothing may be deployed"


def _check_production_paths(lab: Lab, login: str, compute: list[str], heads: list[str]) -> None:
    node = compute[0]
    # proctrack/cgroup + task/cgroup + ConstrainDevices (cgroup v1 here, see tests/lab): a
    # 2-GPU step sits in its job's devices and freezer cgroups, may open its two devices
    # (no driver: ENXIO) and is denied the other six (EPERM).
    probe = (
        f'srun -w {node} --gres=gpu:2 python3 -c "import os,errno\n'
        "print('gpus', os.environ['SLURM_STEP_GPUS'])\n"
        "print(open('/proc/self/cgroup').read().strip())\n"
        "for i in range(8):\n"
        "    try: os.close(os.open(f'/dev/nvidia{i}', os.O_RDONLY)); print(i, 'OPEN')\n"
        '    except OSError as e: print(i, errno.errorcode[e.errno])"'
    )
    out = lab.sh(login, probe)
    granted = {int(g) for g in re.search(r"^gpus (\S+)$", out, re.M)[1].split(",")}
    assert len(granted) == 2, out
    for ctrl in ("devices", "freezer"):
        assert re.search(rf"^\d+:{ctrl}:/slurm_{node}/uid_0/job_\d+/step_0", out, re.M), out
    for i in range(8):
        want = "ENXIO" if i in granted else "EPERM"
        assert re.search(rf"^{i} {want}$", out, re.M), f"nvidia{i}: want {want}\n{out}"
    # Jobs take slurmd's memlock limit, never the submitting shell's
    # (PropagateResourceLimitsExcept=MEMLOCK). slurmd's unit asks for infinity; this
    # machine's root lacks CAP_SYS_RESOURCE, so here the ceiling stays 8 MB.
    limits = lab.sh(
        f"alice@{login}", f"ulimit -l 1024; ulimit -l; srun -w {node} sh -c 'ulimit -l'"
    )
    assert limits.split() == ["1024", "8192"], limits
    unit = lab.sh(node, "systemctl show -p LimitMEMLOCK slurmd")
    assert "LimitMEMLOCK=infinity" in unit, unit
    # AccountingStorageEnforce: bob has no association, alice is in account research.
    refused = lab.ssh(f"bob@{login}", "sbatch --wrap true")
    assert refused.returncode != 0 and "account" in refused.stderr.lower(), refused.stderr
    # pam_slurm_adopt: no job, no ssh; with a job, the session lands in the job's cgroup.
    other = compute[1]
    assert lab.ssh(f"alice@{other}", "true").returncode != 0, "ssh without a job must fail"
    job = lab.sh(f"alice@{login}", f"sbatch --parsable -w {other} --wrap 'sleep 300'").strip()
    lab.wait("alice's job to run", lambda: lab.job_state(login, job) == "RUNNING")
    inside = lab.sh(
        f"alice@{other}",
        "cat /proc/self/cgroup; stat -c '%U %a' /run/enroot/user-2001 "
        "/var/lib/enroot/data/user-2001",
    )
    assert f"job_{job}/step_extern" in inside, f"ssh must be adopted into the job:\n{inside}"
    assert inside.count("alice 700") == 2, f"the prolog must create alice's enroot dirs:\n{inside}"
    lab.sh(login, f"scancel {job}")
    # Fabric stand-ins: IPoIB addresses from the plan, NCCL's defaults, opensm on the heads.
    hv = yaml.safe_load((lab.inventory / "host_vars" / f"{node}.yml").read_text())
    ipoib = lab.sh(node, "ip -brief -4 addr show dev ib0; ip -brief -4 addr show dev ib7")
    for rail in (0, 7):
        assert hv["podplan_fabric_addresses"][rail]["address"] in ipoib, ipoib
    nccl = lab.sh(node, "cat /etc/nccl.conf")
    assert "NCCL_IB_HCA==" + ",".join(f"mlx5_{r}:1" for r in range(8)) in nccl, nccl
    assert "NCCL_SOCKET_IFNAME==fe0" in nccl, nccl
    prios = [lab.sh(h, "grep sm_priority /etc/opensm/opensm.conf").split()[-1] for h in heads]
    assert prios == ["14", "13"], prios
    # HA plumbing: slurmctld waits for the shared StateSaveLocation and restarts on failure.
    unit = lab.sh(heads[0], "systemctl show -p RequiresMountsFor -p Restart slurmctld")
    assert "/shared/slurm/statesave" in unit and "Restart=on-failure" in unit, unit
    # slurmdbd backup: the timer's service dumps the accounting database.
    dump = lab.sh(
        heads[0],
        "systemctl start podplan-slurmdbd-backup.service && "
        "zcat $(ls -t /var/backups/slurmdbd/*.sql.gz | head -1) | grep -c 'CREATE TABLE'",
    )
    assert int(dump.split()[-1]) > 10, dump


def _check_health_drain(lab: Lab, login: str, victim: str) -> None:
    reason = "podplan-health: /shared not mounted"
    lab.sh(victim, "mkdir -p /run/saved && mount --bind /shared /run/saved && umount /shared")
    job = lab.sh(f"alice@{login}", f"sbatch --parsable -w {victim} --wrap hostname").strip()
    lab.wait("the prolog to drain the node", lambda: lab.node(login, victim)["Reason"] == reason)
    assert "DRAIN" in lab.node(login, victim)["State"]
    for step in ("restart with the fault", "restart after the repair"):
        if step == "restart after the repair":
            lab.sh(victim, "mount --bind /run/saved /shared && umount /run/saved")
        before = lab.node(login, victim)["SlurmdStartTime"]
        lab.sh(victim, "systemctl restart slurmd")
        lab.wait(
            f"slurmd to register ({step})",
            lambda before=before: lab.node(login, victim)["SlurmdStartTime"] != before,
        )
        time.sleep(2)
        now = lab.node(login, victim)
        assert "DRAIN" in now["State"] and now["Reason"] == reason, (step, now)
    lab.sh(login, f"scontrol update nodename={victim} state=resume")
    # A requeued job is held and gets a later begin time; the admin lets it go now.
    lab.ssh(login, f"scontrol release {job}; scontrol update jobid={job} starttime=now")
    lab.wait("the requeued job", lambda: lab.job_state(login, job) == "COMPLETED", timeout=120)


def _check_ha_takeover(lab: Lab, login: str, heads: list[str]) -> None:
    primary = heads[0]
    lab.sh(primary, "systemctl kill --signal=SIGKILL slurmctld")
    lab.wait(
        "systemd to restart slurmctld",
        lambda: (
            re.search(r"NRestarts=[1-9]", lab.sh(primary, "systemctl show -p NRestarts slurmctld"))
            is not None
        ),
    )
    lab.wait(
        "the primary", lambda: f"(primary) at {primary} is UP" in lab.sh(login, "scontrol ping")
    )
    job = lab.sh(login, "sbatch --parsable --hold -N1 --wrap hostname").strip()
    lab.sh(primary, "systemctl stop slurmctld")
    start = time.monotonic()
    lab.wait(
        "the backup to take control",
        lambda: lab.ssh(login, f"scontrol release {job}").returncode == 0,
        timeout=120,
    )
    lab.times["ha takeover"] = time.monotonic() - start
    lab.wait(
        "the queued job on the backup",
        lambda: lab.job_state(login, job) == "COMPLETED",
        timeout=120,
    )
    lab.wait(
        "accounting of that job",
        lambda: (
            "|COMPLETED"
            in lab.ssh(
                login,
                f"sacct --noheader --parsable2 --allocations --jobs={job} --format=JobID,State",
            ).stdout
        ),
    )
    lab.sh(primary, "systemctl start slurmctld")
    lab.wait("both controllers", lambda: lab.ssh(login, "scontrol ping").stdout.count("is UP") == 2)


def _break_node(lab: Lab, victim: str) -> None:
    r = lab.ssh(
        victim,
        "dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none"
        " && systemctl restart munge && rm -rf /var/lib/slurm/slurmd",
    )
    assert r.returncode == 0, r.stderr


def _munge_ok(lab: Lab, source: str, target: str) -> bool:
    cred = lab.ssh(source, "munge -n")
    assert cred.returncode == 0, cred.stderr
    return lab.ssh(target, "unmunge", stdin=cred.stdout).returncode == 0


def _config_change(tmp: Path) -> Path:
    lab_vars = yaml.safe_load((REPO / "tests" / "lab" / "lab-vars.yml").read_text())
    overrides = {**lab_vars["slurm_config_overrides"], "KillWait": 31}
    path = tmp / "config-change.json"
    path.write_text(json.dumps({"slurm_config_overrides": overrides}))
    return path


def test_slurm_lab_production_paths(lab: Lab, tmp_path: Path) -> None:
    compute = group(lab.inventory, "slurm_compute")
    heads = group(lab.inventory, "slurm_controller")
    login = group(lab.inventory, "slurm_login")[0]
    victim = compute[-1]

    _check_preflight_stops_on_wrong_shape(lab, tmp_path)

    first = lab.playbook("first run")
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in first.values()), first
    report = json.loads((lab.inventory / ".acceptance" / "report.json").read_text())
    assert {r["name"]: r["status"] for r in report["rungs"]} == {
        "controllers": "pass",
        "nodes": "pass",
        "srun": "pass",
        "gpu_job": "pass",
        "accounting": "pass",
        "topology": "pass",
    }, report

    second = lab.playbook("second run")
    changed = {h: r["changed"] for h, r in second.items() if r["changed"]}
    assert not changed, f"second run changed hosts: {changed}"

    start = time.monotonic()
    _check_production_paths(lab, login, compute, heads)
    lab.times["production checks"] = time.monotonic() - start
    start = time.monotonic()
    _check_health_drain(lab, login, victim)
    lab.times["health drain"] = time.monotonic() - start
    start = time.monotonic()
    _check_ha_takeover(lab, login, heads)
    lab.times["ha"] = time.monotonic() - start

    assert _munge_ok(lab, login, victim), "munge must work before the fault"
    _break_node(lab, victim)
    assert not _munge_ok(lab, login, victim), "the foreign key must break authentication"
    # Only what a munge or slurm.conf change touches, and the acceptance ladder after it.
    healed = lab.playbook(
        "fault run", "--tags", "common,slurm,acceptance", "-e", f"@{_config_change(tmp_path)}"
    )
    assert healed[victim]["changed"] > 0, healed
    assert lab.changed("munge : Restart munge") == [victim]
    assert lab.changed("slurm : Write the Slurm configuration files.") == sorted(
        healed.keys() - {"localhost"}
    )
    assert lab.order(RESTART_CTLD) == heads, "controllers restart one at a time, primary first"
    assert lab.order(RESTART_SLURMD) == compute, "each slurmd restarts once, a batch at a time"
    assert lab.changed(RESTART_DBD) == [], "a slurm.conf change leaves slurmdbd alone"
    assert _munge_ok(lab, login, victim), "munge must work again after the repair"
    assert lab.ssh(victim, "test -d /var/lib/slurm/slurmd").returncode == 0


def test_slurm_lab_grows_and_shrinks(lab: Lab, tmp_path: Path) -> None:
    """Issue 9: regenerate over the running cluster's own tree, one compute and one login node
    more, then one compute node fewer (tests/e2e/growth.py). Runs on the lab the test above
    deployed (or deploys it), with that test's last configuration kept."""
    if os.environ.get("PODPLAN_LAB_INVENTORY"):
        pytest.skip("growth regenerates the lab's own plan tree; a given inventory has none")
    extra = ["-e", f"@{_config_change(tmp_path)}"]
    if "first run" not in lab.times:
        lab.playbook("first run", *extra)
    for step, change in (("growth", growth.grow), ("shrink", growth.shrink)):
        start = time.monotonic()
        changed = change(lab, extra)
        lab.times[step] = time.monotonic() - start
        tasks = {h: sorted(t) for h, t in sorted(changed.items())}
        found = {"ansible changed": tasks, **lab.evidence.get(step, {})}
        (lab.logs / f"{step}-changes.json").write_text(json.dumps(found, indent=2))
