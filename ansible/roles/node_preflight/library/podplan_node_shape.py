#!/usr/bin/python3
"""Ansible module: compare a node's hardware with the plan (read-only).

Reads ``slurmd -C`` (what slurmd will register: sockets, cores, threads, memory), the GPU
count (``nvidia-smi -L`` where a driver is loaded, else the ``/dev/nvidiaN`` devices) and
each planned InfiniBand port's state, rate and link layer from sysfs, and returns every
difference.
A node with less memory than ``RealMemory`` would register INVALID; one with much more, or
other cores, would leave capacity unused; a missing GPU or a port that is down or slow
would fail jobs. The comparison functions are pure, for tests.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

DOCUMENTATION = r"""
module: podplan_node_shape
short_description: Compare slurmd -C, GPUs and IB ports with the plan.
options:
  planned:
    description: sockets, cores_per_socket, threads_per_core, real_memory_mb, memory_mb, gpus, ib (list of device, rate_gbps).
    type: dict
    required: true
  memory_tolerance:
    description: How far above the planned memory the node may be before it counts as a difference.
    type: float
    default: 0.1
  sysfs_infiniband:
    description: Where the HCAs are in sysfs.
    type: str
    default: /sys/class/infiniband
  dev_dir:
    description: Where the GPU device files are.
    type: str
    default: /dev
author: podplan
"""

SHAPE = ("sockets", "cores_per_socket", "threads_per_core")
SLURMD_KEYS = {"Sockets": "sockets", "CoresPerSocket": "cores_per_socket",
               "ThreadsPerCore": "threads_per_core", "RealMemory": "real_memory_mb"}


def parse_slurmd_c(text: str) -> dict[str, int]:
    """The hardware fields of ``slurmd -C`` output (it reports Boards x SocketsPerBoard)."""
    raw = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)\b", text)}
    found = {SLURMD_KEYS[k]: v for k, v in raw.items() if k in SLURMD_KEYS}
    if "sockets" not in found and "SocketsPerBoard" in raw:
        found["sockets"] = raw.get("Boards", 1) * raw["SocketsPerBoard"]
    return found


def read_port(sysfs: Path, device: str) -> dict[str, Any]:
    """State, rate and link layer of port 1. The link layer matters because every mlx5
    adapter is named mlx5_N, Ethernet ones too (a front-end ConnectX-6 Dx, a ConnectX-7
    flashed to Ethernet): such a port is ACTIVE at its rate yet is no InfiniBand rail."""
    base = sysfs / device / "ports" / "1"
    try:
        state = (base / "state").read_text(encoding="ascii").strip()
        rate = (base / "rate").read_text(encoding="ascii").strip()
    except OSError:
        return {"device": device, "state": "missing", "rate_gbps": 0.0, "link_layer": ""}
    try:
        link = (base / "link_layer").read_text(encoding="ascii").strip()
    except OSError:
        link = ""  # not reported: not checked
    number = re.match(r"\s*([0-9.]+)", rate)
    return {
        "device": device,
        "state": state.split(":")[-1].strip(),
        "rate_gbps": float(number.group(1)) if number else 0.0,
        "link_layer": link,
    }


def differences(
    planned: dict[str, Any], found: dict[str, Any], tolerance: float
) -> list[dict[str, str]]:
    """Every way the node differs from the plan, as check/planned/found rows."""
    rows: list[dict[str, str]] = []

    def add(check: str, want: Any, got: Any) -> None:
        rows.append({"check": check, "planned": str(want), "found": str(got)})

    for key in SHAPE:
        if planned.get(key) is not None and found.get(key) != planned[key]:
            add(key, planned[key], found.get(key, "?"))
    real, got_mem = planned.get("real_memory_mb"), found.get("real_memory_mb")
    if real is not None:
        if got_mem is None or got_mem < real:
            add("memory_mb (node would be INVALID)", f">= {real}", got_mem)
        elif planned.get("memory_mb") and got_mem > planned["memory_mb"] * (1 + tolerance):
            add("memory_mb (more than planned: unused)", f"<= {int(planned['memory_mb'] * (1 + tolerance))}", got_mem)
    if planned.get("gpus") is not None and found.get("gpus") != planned["gpus"]:
        add("gpus", planned["gpus"], found.get("gpus", "?"))
    ports = {p["device"]: p for p in found.get("ib", [])}
    for port in planned.get("ib", []):
        dev, want = port["device"], float(port.get("rate_gbps", 0))
        got = ports.get(dev, {"state": "missing", "rate_gbps": 0.0})
        if got.get("link_layer") and got["link_layer"] != "InfiniBand":
            add(f"{dev} link_layer (not an IB rail: device names?)", "InfiniBand", got["link_layer"])
        elif got["state"] != "ACTIVE":
            add(f"{dev} state", "ACTIVE", got["state"])
        elif want and got["rate_gbps"] < want:
            add(f"{dev} rate_gbps", f"{want:g}", f"{got['rate_gbps']:g}")
    return rows


def normalize(planned: dict[str, Any]) -> dict[str, Any]:
    """Numbers may arrive as text from templating; None means "do not check"."""
    out = dict(planned)
    for key in (*SHAPE, "real_memory_mb", "memory_mb", "gpus"):
        if out.get(key) not in (None, ""):
            out[key] = int(float(out[key]))
        else:
            out[key] = None
    out["ib"] = list(out.get("ib") or [])
    return out


def count_gpus(dev_dir: Path) -> tuple[int, str]:
    smi = shutil.which("nvidia-smi")
    if smi:
        r = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
        return sum(1 for line in r.stdout.splitlines() if line.startswith("GPU ")), "nvidia-smi -L"
    found = [p for p in dev_dir.glob("nvidia*") if re.fullmatch(r"nvidia\d+", p.name) and p.is_char_device()]
    return len(found), f"{dev_dir}/nvidiaN"


def main() -> None:
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(
        argument_spec={
            "planned": {"type": "dict", "required": True},
            "memory_tolerance": {"type": "float", "default": 0.1},
            "sysfs_infiniband": {"type": "str", "default": "/sys/class/infiniband"},
            "dev_dir": {"type": "str", "default": "/dev"},
        },
        supports_check_mode=True,
    )
    p = module.params
    planned = normalize(p["planned"])
    slurmd = shutil.which("slurmd") or "/usr/sbin/slurmd"
    r = subprocess.run([slurmd, "-C"], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        module.fail_json(msg=f"slurmd -C failed: {(r.stdout + r.stderr).strip()}")
    found: dict[str, Any] = parse_slurmd_c(r.stdout)
    found["gpus"], gpu_source = count_gpus(Path(p["dev_dir"]))
    sysfs = Path(p["sysfs_infiniband"])
    found["ib"] = [read_port(sysfs, port["device"]) for port in planned.get("ib", [])]
    rows = differences(planned, found, p["memory_tolerance"])
    module.exit_json(changed=False, found=found, gpu_source=gpu_source,
                     slurmd_c=r.stdout.strip(), differences=rows)


if __name__ == "__main__":
    main()
