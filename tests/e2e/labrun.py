"""The running Slurm lab as the e2e tests drive it: playbook runs, ssh, polling, timings.

Kept apart from the scenarios so that each test reads as the steps an admin would take.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tests" / "lab" / "lab.sh"
SPEC = REPO / "examples" / "slurm-lab.yaml"
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


def lab_cmd(
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


def machine_shape() -> dict[str, float]:
    """This machine's CPU topology and memory, as every lab container sees them."""
    out = subprocess.run(["lscpu"], text=True, capture_output=True, check=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)

    def num(key: str) -> int:
        return int(fields[key].strip())

    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[1])
    return {
        "sockets": num("Socket(s)"),
        "cores_per_socket": num("Core(s) per socket"),
        "threads_per_core": num("Thread(s) per core"),
        "memory_gb": mem_kb // (1024 * 1024),
    }


def generate(tmp: Path, label: str, shape: dict[str, float] | None, in_place: bool = False) -> Path:
    """Plan a copy of the lab spec with ``shape`` (None: the catalog's XE9680 shape); a copy
    of the inventory, or (``in_place``) the inventory inside the plan's output tree, where a
    later ``podplan plan`` of the same spec regenerates it."""
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    if shape is None:
        spec["hardware"].pop("node_shape", None)
    else:
        spec["hardware"]["node_shape"] = shape
    path = tmp / f"{label}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    out = tmp / f"{label}-plan"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from generator.cli import main; sys.exit(main())",
            "plan",
            str(path),
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
    if in_place:
        return found[0].parent
    target = tmp / label
    shutil.copytree(found[0].parent, target)
    return target


def lab_inventory(tmp: Path) -> Path:
    """The inventory the lab deploys: PODPLAN_LAB_INVENTORY, or the lab spec planned with
    this machine's shape (the example states the CI machine's; a different machine would
    otherwise stop at the pre-flight check, rightly)."""
    given = os.environ.get("PODPLAN_LAB_INVENTORY")
    if given:
        target = tmp / "inventory"
        shutil.copytree(Path(given), target)
        return target
    return generate(tmp, "inventory", machine_shape(), in_place=True)


def group(inventory: Path, name: str) -> list[str]:
    listing = json.loads(
        subprocess.run(
            ["ansible-inventory", "-i", str(inventory), "--list"],
            text=True,
            capture_output=True,
            check=True,
        ).stdout
    )

    def members(n: str) -> set[str]:
        entry = listing.get(n, {})
        hosts = set(entry.get("hosts", []))
        for child in entry.get("children", []):
            hosts |= members(child)
        return hosts

    return sorted(members(name))


def slurm_version() -> str:
    """The Slurm version in the lab's offline repository (the e2e pins and holds it)."""
    image = lab_cmd("image")
    assert image.returncode == 0, image.stderr[-4000:]
    repo = Path(image.stdout.strip().splitlines()[-1]) / "repo"
    deb = sorted(repo.glob("slurmd_*.deb"))[-1]
    return subprocess.run(
        ["dpkg-deb", "--field", str(deb), "Version"], text=True, capture_output=True, check=True
    ).stdout.strip()


class Lab:
    """The running lab; every playbook run's output is kept for the failure report."""

    def __init__(self, inventory: Path, logs: Path) -> None:
        self.inventory = inventory
        self.logs = logs
        self.times: dict[str, float] = {}
        self.output = ""
        self.extra: list[str] = []
        self.evidence: dict[str, dict[str, object]] = {}
        """What a scenario found on the hosts, written beside the logs for the report."""

    def timed(self, label: str, *args: str) -> subprocess.CompletedProcess[str]:
        start = time.monotonic()
        r = lab_cmd(*args)
        self.times[label] = self.times.get(label, 0.0) + time.monotonic() - start
        (self.logs / f"{label.replace(' ', '-')}.log").write_text(
            r.stdout + r.stderr, encoding="utf-8"
        )
        return r

    def run_playbook(
        self, label: str, *extra: str, inventory: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        r = self.timed(label, "playbook", str(inventory or self.inventory), *self.extra, *extra)
        self.output = r.stdout + r.stderr
        return r

    def playbook(self, label: str, *extra: str) -> dict[str, dict[str, int]]:
        r = self.run_playbook(label, *extra)
        assert r.returncode == 0, f"{label} failed (rc={r.returncode}):\n{self.output[-12000:]}"
        recap = {
            m["host"]: {k: int(m[k]) for k in ("ok", "changed", "unreachable", "failed")}
            for m in RECAP.finditer(self.output)
        }
        assert recap, f"{label}: no PLAY RECAP in the output:\n{self.output[-4000:]}"
        return recap

    def results(self, section: str) -> dict[str, list[str]]:
        """Host -> statuses, in order, of every task or handler called ``section`` (a task
        in a serial play runs once per batch)."""
        found: dict[str, list[str]] = {}
        parts = SECTION.split(self.output)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name == section:
                for m in RESULT.finditer(body):
                    found.setdefault(m["host"], []).append(m["status"])
        return found

    def changed(self, section: str) -> list[str]:
        return sorted(h for h, s in self.results(section).items() if "changed" in s)

    def order(self, section: str) -> list[str]:
        """Hosts in the order the task ``section`` reported them changed."""
        seen = []
        parts = SECTION.split(self.output)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name == section:
                seen += [m["host"] for m in RESULT.finditer(body) if m["status"] == "changed"]
        return seen

    def ssh(
        self, host: str, command: str, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return lab_cmd("ssh", host, command, timeout=180, stdin=stdin)

    def sh(self, host: str, command: str) -> str:
        """Run and require success; stdout."""
        r = self.ssh(host, command)
        assert r.returncode == 0, f"{host}: {command}\nrc={r.returncode}\n{r.stdout}{r.stderr}"
        return r.stdout

    def wait(self, what: str, check: Callable[[], bool], timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, (
                f"timed out after {timeout:.0f} s waiting for {what}"
            )
            time.sleep(1)

    def node(self, login: str, node: str) -> dict[str, str]:
        out = self.sh(login, f"scontrol --oneliner show node {node}")
        fields = dict(re.findall(r"(\w+)=(\S*)", out))
        reason = re.search(r"\bReason=(.*?)(?: \[|$)", out)
        fields["Reason"] = reason[1] if reason else ""
        return fields

    def job_state(self, login: str, job: str) -> str:
        out = self.ssh(login, f"scontrol --oneliner show job {job}").stdout
        m = re.search(r"JobState=(\S+)", out)
        return m[1] if m else "?"
