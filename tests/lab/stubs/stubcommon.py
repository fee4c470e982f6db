"""Shared by the lab's stub tools: the lab's made-up cluster and the job's geometry.

STUBS: these programs stand in for nvidia-smi, dcgmi, ib_write_bw and nccl-tests in the
systemd-nspawn lab, which has no GPU and no InfiniBand. They check what the real tool
would need from its Slurm job (GPUs granted, rank geometry, peer reachable) and print
the real tool's output format with the figures of lab-cluster.json. Installed only by
tests/lab/lab.sh (bind-mounted at /usr/local/libexec/podplan-stubs), never by a role.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import toolformats  # noqa: E402, F401  (the stub tools take it from here)

CLUSTER = json.loads((HERE / "lab-cluster.json").read_text())


def host() -> str:
    return socket.gethostname().split(".")[0]


def die(message: str, code: int = 1) -> None:
    print(message, file=sys.stderr)
    sys.exit(code)


def granted_gpus() -> int:
    """GPUs Slurm granted this job step (what the real tools would see)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return len([d for d in visible.split(",") if d.strip()])


def job_hosts() -> list[str]:
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not nodelist:
        die("stub: not inside a Slurm job (no SLURM_JOB_NODELIST)")
    out = subprocess.run(["scontrol", "show", "hostnames", str(nodelist)], text=True,
                         capture_output=True, check=True).stdout
    return out.split()


def slow_port() -> tuple[str, str]:
    s = CLUSTER["slow_port"]
    return str(s["node"]), str(s["device"])
