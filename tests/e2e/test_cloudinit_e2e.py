"""End to end: the user data the Pulumi programs render forms a working Slurm cluster.

For each cloud, ``podplan plan tests/cloudlab/cloudlab.yaml`` writes the stack configuration
(head + 2 GPU nodes); the real stack program runs under Pulumi mocks with it (address ranges
moved into the lab's link-local network) and renders the head's and the GPU nodes' user data
and the munge key it puts into the cloud's secret store. ``tests/cloudlab/cloudlab.sh`` boots
one systemd-nspawn container per instance with Debian's cloud-init and the NoCloud datasource
fed exactly that user data; the lab's vendor data swaps the cloud-specific seams (node name,
secret store, Lustre client, fabric) for stand-ins. Then, for real:

1. cloud-init finishes without error and every node's bootstrap reports ok;
2. the head's slurmctld sees both GPU nodes (dynamic, Gres=gpu:8, the instance type as
   feature) and a 2-node job runs with the fabric's NCCL environment and the shared mount;
3. every node runs with the key from the secret store, and that key is in no log, no
   cloud-init file and no user data;
4. (AWS run) a node whose identity may not read the secret, and a node with one fabric device
   down, both fail loudly (cloud-init error, bootstrap status failed at the right step) and
   never start slurmd.

Needs root, systemd-nspawn, debootstrap and dpkg-scanpackages; skips elsewhere, fails under
``CI=true``. Only one lab may run at a time: run it under ``flock /var/lock/podplan-lab.lock``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cloudlab.render import (
    LabHost,
    Rendered,
    gpu_address,
    head_address,
    render,
    write_seeds,
)
from tests.pulumi.harness import load_stack_config
from tests.tooling import unavailable

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tests" / "cloudlab" / "cloudlab.sh"
SPEC = "tests/cloudlab/cloudlab.yaml"
CLOUD_INIT_TIMEOUT = 420
FABRIC = {"aws": ("rdmap{}s0", "ACTIVE"), "gcp": ("ens{}", "up"), "azure": ("mlx5_ib{}", "ACTIVE")}
JOB_ENV = {
    "aws": "FI_PROVIDER",
    "gcp": "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY",
    "azure": "NCCL_TOPO_FILE",
}
SEAMS_HEAD = ["munge-key", "node-name", "shared-fs"]
SEAMS_GPU = ["fabric-devices", "fabric-setup", "munge-key", "node-name", "shared-fs"]


def _preflight() -> None:
    if os.geteuid() != 0:
        unavailable("the cloud-init lab needs root")
    tools = ("systemd-nspawn", "debootstrap", "dpkg-scanpackages", "ip", "nsenter")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        unavailable(f"the cloud-init lab cannot run here: missing {', '.join(missing)}")


def _lab(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAB), *args],
        cwd=REPO,
        text=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


class Lab:
    """The running lab: commands inside hosts, wall times of each phase."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.times: dict[str, float] = {}

    def timed(self, label: str, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
        start = time.monotonic()
        r = _lab(*args, timeout=timeout)
        self.times[label] = self.times.get(label, 0.0) + time.monotonic() - start
        (self.logs / f"{label.replace(' ', '-')}.log").write_text(r.stdout + r.stderr)
        return r

    def run(self, host: str, command: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
        return _lab("exec", host, "bash", "-c", command, timeout=timeout)

    def ok(self, host: str, command: str, timeout: int = 120) -> str:
        r = self.run(host, command, timeout)
        assert r.returncode == 0, (
            f"{host}: {command!r} failed ({r.returncode}):\n{r.stdout}{r.stderr}"
        )
        return r.stdout

    def status(self, host: str) -> dict[str, str]:
        text = self.ok(host, "cat /var/lib/podplan/bootstrap.status")
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


CLOUDS = ("aws", "gcp", "azure")
NEGATIVE_CLOUD = "aws"
"""The cloud whose run also boots the two nodes that must fail (no key; a fabric device down)."""


class Booted:
    """All three clouds' clusters, booted at once (each in its own /26 of the lab network)."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.rendered: dict[str, Rendered] = {}
        self.config: dict[str, dict[str, object]] = {}
        self.hosts: dict[str, list[LabHost]] = {}
        self.cloud_init: dict[str, str] = {}


def _plan(out: Path) -> Path:
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
    return out


@pytest.fixture(scope="module")
def booted(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[Booted]:
    _preflight()
    root = tmp_path_factory.mktemp("cloudlab")
    logs = root / "logs"
    logs.mkdir()
    lab = Lab(logs)
    state = Booted(lab)
    started = time.monotonic()
    try:
        plan = _plan(root / "plan")
        t = time.monotonic()
        for cloud in CLOUDS:
            config = load_stack_config(plan / "stacks" / cloud / "Pulumi.cloudlab.yaml")
            state.config[cloud] = config
            state.rendered[cloud] = render(cloud, config)
            state.hosts[cloud] = _hosts(cloud, state.rendered[cloud], cloud == NEGATIVE_CLOUD)
        lab.times["plan+render"] = time.monotonic() - t
        every = [h for hosts in state.hosts.values() for h in hosts]
        seeds = write_seeds(root / "seeds", every)
        r = lab.timed("image", "image", timeout=900)
        assert r.returncode == 0, f"building the lab image failed:\n{r.stderr[-6000:]}"
        r = lab.timed("lab up", "up", str(seeds))
        assert r.returncode == 0, f"lab up failed:\n{r.stdout}{r.stderr[-6000:]}"
        state.cloud_init = _wait_cloud_init(lab, every)
        for h in every:
            (logs / f"cloud-init-{h.seed}.log").write_text(
                lab.run(h.seed, "cat /var/log/cloud-init-output.log").stdout
            )
        yield state
    finally:
        lab.timed("teardown", "down")
        lab.times["total"] = time.monotonic() - started
        summary = ", ".join(f"{k} {v:.1f}s" for k, v in lab.times.items())
        (root / "e2e-times.json").write_text(json.dumps(lab.times, indent=2))
        reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"[cloud-init e2e] wall times: {summary}")
            reporter.write_line(f"[cloud-init e2e] logs: {logs}")
        leftovers = subprocess.run(
            ["ip", "netns", "list"], text=True, capture_output=True, check=False
        ).stdout
        assert "ppcl-" not in leftovers, f"lab namespaces left behind:\n{leftovers}"


def _hosts(cloud: str, rendered: Rendered, negatives: bool) -> list[LabHost]:
    pattern, state = FABRIC[cloud]
    expected = {"aws": 32, "gcp": 8, "azure": 8}[cloud]
    fabric = [(pattern.format(i), state) for i in range(expected)]
    key = rendered.munge_key_b64
    head = LabHost(
        cloud,
        f"{cloud}-head",
        head_address(cloud),
        rendered.head_name,
        rendered.head_user_data,
        key,
        [],
    )
    hosts = [head] + [
        LabHost(
            cloud,
            f"{cloud}-gpu{i + 1}",
            gpu_address(cloud, i),
            name,
            rendered.compute_user_data,
            key,
            fabric,
        )
        for i, name in enumerate(rendered.compute_names)
    ]
    if negatives:
        prefix = rendered.compute_names[0].rsplit("-", 1)[0]
        broken = [(dev, "DOWN" if i == 7 else st) for i, (dev, st) in enumerate(fabric)]
        hosts += [
            LabHost(
                cloud,
                f"{cloud}-nokey",
                gpu_address(cloud, 4),
                f"{prefix}-nokey",
                rendered.compute_user_data,
                None,
                fabric,
            ),
            LabHost(
                cloud,
                f"{cloud}-badfabric",
                gpu_address(cloud, 5),
                f"{prefix}-badfabric",
                rendered.compute_user_data,
                key,
                broken,
            ),
        ]
    return hosts


def _wait_cloud_init(lab: Lab, hosts: list[LabHost]) -> dict[str, str]:
    """``cloud-init status --wait --long`` of every host (all in parallel)."""
    start = time.monotonic()
    procs = {
        h.seed: subprocess.Popen(
            [str(LAB), "exec", h.seed, "cloud-init", "status", "--wait", "--long"],
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        for h in hosts
    }
    out = {seed: p.communicate(timeout=CLOUD_INIT_TIMEOUT)[0] for seed, p in procs.items()}
    lab.times["cloud-init"] = time.monotonic() - start
    return out


def _wait_idle(lab: Lab, head: str, names: list[str], seconds: int = 90) -> str:
    deadline = time.monotonic() + seconds
    while True:
        out = lab.run(head, "sinfo -h -N -o '%N %T'").stdout
        states = dict(line.split() for line in out.splitlines() if line.strip())
        if all(states.get(n) == "idle" for n in names):
            return out
        assert time.monotonic() < deadline, f"GPU nodes not idle after {seconds}s:\n{out}"
        time.sleep(2)


def _check_cluster(lab: Lab, cloud: str, rendered: Rendered, instance_type: str) -> None:
    head = f"{cloud}-head"
    names = rendered.compute_names
    _wait_idle(lab, head, names)
    for name in names:
        node = lab.ok(head, f"scontrol show node {name}")
        assert "Gres=gpu:8" in node and f"AvailableFeatures={instance_type}" in node, node
    start = time.monotonic()
    var = JOB_ENV[cloud]
    job = lab.ok(
        head,
        "srun -N2 --ntasks-per-node=1 --gres=gpu:8 bash -c "
        f"'echo $(hostname) gpus=$CUDA_VISIBLE_DEVICES {var}=${var} && "
        "echo from-$(hostname) > /shared/$(hostname).txt' && cat /shared/*.txt",
        timeout=180,
    )
    lab.times[f"2-node job {cloud}"] = time.monotonic() - start
    lines = job.splitlines()
    for name in names:
        assert any(
            line.startswith(f"{name} gpus=0,1,2,3,4,5,6,7 {var}=") and not line.endswith("=")
            for line in lines
        ), job
        assert f"from-{name}" in lines, job
    # Production's cgroup plugins confine the job: 2 of the 8 GPUs (devices cgroup: the two
    # granted open as far as the missing driver, the others are refused), in Slurm's cgroups.
    confined = lab.ok(
        head,
        f"srun -N1 -w {names[0]} --gres=gpu:2 bash -c 'echo gpus=$CUDA_VISIBLE_DEVICES; "
        'grep -E ":(freezer|memory|devices):" /proc/self/cgroup; '
        "for d in 0 1 7; do head -c1 /dev/nvidia$d >/dev/null 2>/tmp/e || "
        "echo nvidia$d: $(cat /tmp/e); done'",
    )
    assert "gpus=0,1" in confined, confined
    for ctrl in ("freezer", "memory", "devices"):
        assert any(f":{ctrl}:" in x and "/job_" in x for x in confined.splitlines()), confined
    assert "nvidia0: " in confined and "No such device or address" in confined, confined
    assert any(
        x.startswith("nvidia7:") and "Operation not permitted" in x for x in confined.splitlines()
    ), confined


def _check_key(lab: Lab, key_b64: str, hosts: list[LabHost]) -> None:
    digest = hashlib.sha256(base64.b64decode(key_b64)).hexdigest()
    for h in hosts:
        got = lab.ok(h.seed, "sha256sum /etc/munge/munge.key || true").split(" ")[0]
        if h.munge_key_b64 is None:
            assert got != digest
            continue
        assert got == digest, f"{h.seed} runs with another munge key"
        # The key is in no log, no cloud-init file and no journal entry.
        probe = f"{key_b64[:48]!r}"
        places = "/var/log /var/lib/cloud /run/cloud-init /etc/podplan /var/lib/podplan /usr/local"
        leak = lab.run(
            h.seed,
            f"grep -rlF -e {probe} {places} 2>/dev/null; journalctl -o cat | grep -cF {probe}",
        ).stdout
        assert leak.strip() == "0", f"{h.seed} shows the munge key in: {leak}"


def _check_failure(lab: Lab, host: str, step: str, unit: str, message: str) -> None:
    """The bootstrap stopped at ``step``, slurmd never ran, and starting ``unit`` by hand
    fails with ``message`` in its journal."""
    status = lab.status(host)
    assert status["status"] == "failed" and status["step"] == step, status
    assert lab.run(host, "systemctl is-active --quiet slurmd").returncode != 0
    assert lab.run(host, "systemctl start slurmd").returncode != 0, "slurmd must refuse"
    assert lab.run(host, f"systemctl start {unit}").returncode != 0, f"{unit} must refuse"
    journal = lab.ok(host, f"journalctl -o cat -u {unit} || true")
    assert message in journal, journal


@pytest.mark.parametrize("cloud", CLOUDS)
def test_cloud_init_bootstrap_forms_a_slurm_cluster(cloud: str, booted: Booted) -> None:
    lab, rendered = booted.lab, booted.rendered[cloud]
    good = [h for h in booted.hosts[cloud] if h.seed.split("-")[-1] in ("head", "gpu1", "gpu2")]
    for h in good:
        result = booted.cloud_init[h.seed]
        assert "status: done" in result, f"{h.seed}:\n{result}"
        assert lab.status(h.seed)["status"] == "ok", lab.status(h.seed)
        # Exactly the user data the program rendered, with the cloud's seams swapped by the lab.
        assert lab.ok(h.seed, "cat /var/lib/cloud/instance/user-data.txt") == h.user_data
        replaced = sorted(lab.ok(h.seed, "cat /var/lib/podplan-lab/seams-replaced").split())
        assert replaced == (SEAMS_HEAD if h.seed.endswith("-head") else SEAMS_GPU)
        assert lab.ok(h.seed, "hostname").strip() == h.name
    _check_cluster(lab, cloud, rendered, str(booted.config[cloud][f"podplan-{cloud}:instanceType"]))
    _check_key(lab, rendered.munge_key_b64, good)
    assert "status=ok" in lab.ok(f"{cloud}-gpu1", "cat /var/lib/podplan/fabric.status")


def test_nodes_without_the_key_or_the_fabric_never_join(booted: Booted) -> None:
    lab, cloud = booted.lab, NEGATIVE_CLOUD
    for seed in (f"{cloud}-nokey", f"{cloud}-badfabric"):
        result = booted.cloud_init[seed]
        assert "status: error" in result, f"{seed}:\n{result}"
    _check_failure(lab, f"{cloud}-nokey", "munge-key", "munge", "no munge key was received")
    _check_failure(
        lab,
        f"{cloud}-badfabric",
        "fabric-check",
        "podplan-fabric-check",
        "FABRIC CHECK FAILED: expected 32 efa devices ACTIVE, found 31 of 32",
    )
    key = booted.rendered[cloud].munge_key_b64
    _check_key(lab, key, [h for h in booted.hosts[cloud] if h.seed.endswith("-nokey")])
    listed = lab.ok(f"{cloud}-head", "sinfo -h -N -o '%N'").split()
    assert sorted(listed) == sorted(booted.rendered[cloud].compute_names), listed
