"""End to end: the generated inventory deploys a working Slurm GPU cluster.

``podplan plan examples/slurm-lab.yaml`` writes the inventory; ``tests/lab/lab.sh`` boots one
systemd-nspawn container per inventory host (link-local addresses, private namespaces, fake
/dev/nvidia0-7); ``ansible/site.yml`` deploys Slurm from an offline apt repository and ends
with its acceptance play. Then:

1. a second run must change nothing on any host;
2. one compute node is broken (a foreign munge key, its slurmd spool directory wiped) and
   the breakage is shown; at the same time an operator changes a slurm.conf setting. A third
   run must repair the node, restart every Slurm daemon exactly once (the broken node's
   slurmd only for its new key, not again for the configuration) and pass acceptance.

Needs root, systemd-nspawn, debootstrap and dpkg-scanpackages. Elsewhere it skips, except
under ``CI=true``, where it fails: CI must run it. Set ``PODPLAN_LAB_INVENTORY`` to deploy a
given inventory directory instead of the generated one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.tooling import unavailable

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tests" / "lab" / "lab.sh"
SPEC = "examples/slurm-lab.yaml"
RUN_TIMEOUT = 600
SECTION = re.compile(r"^(?:TASK|RUNNING HANDLER) \[(?P<name>[^\]]+)\]", re.MULTILINE)
RESULT = re.compile(
    r"^(?P<status>ok|changed|skipping|fatal|failed): \[(?P<host>[^\]\s]+)", re.MULTILINE
)
RECAP = re.compile(
    r"^(?P<host>\S+)\s+:\s+ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+"
    r"unreachable=(?P<unreachable>\d+)\s+failed=(?P<failed>\d+)",
    re.MULTILINE,
)


def _unavailable(reason: str) -> None:
    unavailable(f"the Slurm lab cannot run here: {reason}")


def _preflight() -> None:
    if os.geteuid() != 0:
        _unavailable("the lab needs root")
    missing = [
        tool
        for tool in (
            "systemd-nspawn",
            "debootstrap",
            "dpkg-scanpackages",
            "ip",
            "ssh",
            "ssh-keygen",
            "ansible-playbook",
            "ansible-inventory",
        )
        if shutil.which(tool) is None
    ]
    if missing:
        _unavailable(f"missing tools: {', '.join(missing)}")


def _lab(
    *args: str, timeout: int = RUN_TIMEOUT, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAB), *args],
        cwd=REPO,
        text=True,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def _generate_inventory(tmp_path: Path) -> Path:
    target = tmp_path / "inventory"
    given = os.environ.get("PODPLAN_LAB_INVENTORY")
    if given:
        shutil.copytree(Path(given), target)
        return target
    out = tmp_path / "plan"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from generator.cli import main; sys.exit(main())",
            "plan",
            SPEC,
            "--out",
            str(out),
        ],
        cwd=REPO,
        text=True,
        capture_output=True,
        check=False,
    )
    assert r.returncode == 0, f"podplan plan failed:\n{r.stdout}{r.stderr}"
    found = sorted(out.glob("inventories/*/hosts.yml"))
    assert len(found) == 1, f"expected one inventory under {out}, got {found}"
    shutil.copytree(found[0].parent, target)
    return target


def _group(inventory: Path, group: str) -> list[str]:
    listing = json.loads(
        subprocess.run(
            ["ansible-inventory", "-i", str(inventory), "--list"],
            text=True,
            capture_output=True,
            check=True,
        ).stdout
    )

    def members(name: str) -> set[str]:
        entry = listing.get(name, {})
        hosts = set(entry.get("hosts", []))
        for child in entry.get("children", []):
            hosts |= members(child)
        return hosts

    return sorted(members(group))


class Lab:
    """The running lab; every playbook run's output is kept for the failure report."""

    def __init__(self, inventory: Path, logs: Path) -> None:
        self.inventory = inventory
        self.logs = logs
        self.times: dict[str, float] = {}

    def timed(self, label: str, *args: str) -> subprocess.CompletedProcess[str]:
        start = time.monotonic()
        r = _lab(*args)
        self.times[label] = time.monotonic() - start
        (self.logs / f"{label.replace(' ', '-')}.log").write_text(
            r.stdout + r.stderr, encoding="utf-8"
        )
        return r

    def playbook(self, label: str, *extra: str) -> dict[str, dict[str, int]]:
        r = self.timed(label, "playbook", str(self.inventory), *extra)
        output = r.stdout + r.stderr
        self.output = output
        assert r.returncode == 0, f"{label} failed (rc={r.returncode}):\n{output[-12000:]}"
        recap = {
            m["host"]: {k: int(m[k]) for k in ("ok", "changed", "unreachable", "failed")}
            for m in RECAP.finditer(output)
        }
        assert recap, f"{label}: no PLAY RECAP in the output:\n{output[-4000:]}"
        return recap

    def changed(self, section: str) -> list[str]:
        """Hosts on which the task or handler ``section`` reported changed in the last run."""
        return sorted(h for h, status in self.results(section).items() if status == "changed")

    def results(self, section: str) -> dict[str, str]:
        """Host -> status of the last task or handler called ``section`` in the last run."""
        found: dict[str, str] = {}
        parts = SECTION.split(self.output)
        # parts: [preamble, name1, body1, name2, body2, ...]
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name == section:
                found = {}
                for m in RESULT.finditer(body):  # loops print one line per item
                    rank = ("skipping", "ok", "changed", "failed", "fatal").index
                    if rank(m["status"]) >= rank(found.get(m["host"], "skipping")):
                        found[m["host"]] = m["status"]
        return found

    def ssh(
        self, host: str, command: str, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return _lab("ssh", host, command, timeout=120, stdin=stdin)


@pytest.fixture
def lab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Lab]:
    _preflight()
    inventory = _generate_inventory(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    the_lab = Lab(inventory, logs)
    started = time.monotonic()
    try:
        r = the_lab.timed("image", "image")
        assert r.returncode == 0, f"building the lab image failed:\n{r.stderr[-6000:]}"
        r = the_lab.timed("lab up", "up", str(inventory))
        assert r.returncode == 0, f"lab up failed:\n{r.stdout}{r.stderr[-6000:]}"
        yield the_lab
    finally:
        the_lab.timed("teardown", "down")
        the_lab.times["total"] = time.monotonic() - started
        summary = ", ".join(f"{k} {v:.1f}s" for k, v in the_lab.times.items())
        (tmp_path / "e2e-times.json").write_text(json.dumps(the_lab.times, indent=2))
        with capsys.disabled():
            print(f"\n[slurm e2e] wall times: {summary}\n[slurm e2e] logs: {logs}")
        leftovers = subprocess.run(
            ["ip", "netns", "list"], text=True, capture_output=True, check=False
        ).stdout
        assert "pplab-" not in leftovers, f"lab namespaces left behind:\n{leftovers}"


def _munge_ok(lab: Lab, source: str, target: str) -> bool:
    """A credential made on ``source`` decodes on ``target`` iff both share a key."""
    cred = lab.ssh(source, "munge -n")
    assert cred.returncode == 0, cred.stderr
    return lab.ssh(target, "unmunge", stdin=cred.stdout).returncode == 0


def _config_change(tmp: Path) -> Path:
    """Extra vars that change one slurm.conf setting on top of the lab's overrides."""
    lab_vars = yaml.safe_load((REPO / "tests" / "lab" / "lab-vars.yml").read_text())
    overrides = {**lab_vars["slurm_config_overrides"], "KillWait": 31}
    path = tmp / "config-change.json"
    path.write_text(json.dumps({"slurm_config_overrides": overrides}))
    return path


def test_slurm_lab_deploys_is_idempotent_and_heals(lab: Lab, tmp_path: Path) -> None:
    compute = _group(lab.inventory, "slurm_compute")
    controllers = _group(lab.inventory, "slurm_controller")
    login = _group(lab.inventory, "slurm_login")[0]
    victim = compute[-1]

    # 1. Deploy; site.yml's last play is the acceptance test.
    first = lab.playbook("first run")
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in first.values()), first

    # 2. Idempotence: nothing may change anywhere.
    second = lab.playbook("second run")
    changed = {h: r["changed"] for h, r in second.items() if r["changed"]}
    assert not changed, f"second run changed hosts: {changed}"

    # 3. Break one compute node: a foreign munge key and no slurmd spool directory.
    assert _munge_ok(lab, login, victim), "munge must work before the fault"
    broken = lab.ssh(
        victim,
        "dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none"
        " && systemctl restart munge && rm -rf /var/lib/slurm/slurmd",
    )
    assert broken.returncode == 0, broken.stderr
    assert not _munge_ok(lab, login, victim), "the foreign key must break authentication"

    healed = lab.playbook("fault run", "-e", f"@{_config_change(tmp_path)}")
    assert healed[victim]["changed"] > 0, healed
    assert lab.changed("munge : Restart munge") == [victim]
    assert lab.changed("slurm : Write the Slurm configuration files.") == sorted(
        healed.keys() - {"localhost"}
    )
    assert lab.changed("slurm_controller : Restart slurmctld") == controllers
    # The broken node's slurmd restarts for its new key (or is started again if it died),
    # so the configuration handler must leave it alone: one restart per daemon.
    assert victim not in lab.changed("slurm_compute : Restart slurmd")
    assert lab.changed("slurm_compute : Restart slurmd") == [h for h in compute if h != victim]
    assert _munge_ok(lab, login, victim), "munge must work again after the repair"
    spool = lab.ssh(victim, "test -d /var/lib/slurm/slurmd")
    assert spool.returncode == 0, "the slurmd spool directory must be back"
