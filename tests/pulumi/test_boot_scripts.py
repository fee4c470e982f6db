"""The shell the nodes run: shellcheck-clean, and each cloud's fabric-devices seam run for
real (bash) against a fake /sys tree, since the lab stands in for those seams.

Device layouts follow the kernel's sysfs: /sys/class/infiniband/<dev>/ports/1/state holds
"4: ACTIVE", .../link_layer "InfiniBand" or "Ethernet", device/driver links to the driver;
/sys/class/net/<nic>/operstate and mtu.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.tooling import require_tool

STACKS = REPO / "stacks"
SCRIPTS = sorted(
    [
        *STACKS.glob("*/podplan_*/seams/*.sh"),
        *STACKS.glob("common/podplan_stackkit/scripts/*.sh"),
        *STACKS.glob("*/podplan_*/seams/fabric.env"),
        REPO / "tests/cloudlab/cloudlab.sh",
        REPO / "tests/lab/lab.sh",
        REPO / "tests/lab/lib/nspawn.sh",
        REPO / "tests/cloudlab/vendor-data",
        *(REPO / "tests/cloudlab/stubs").iterdir(),
    ]
)


def test_shellcheck_is_clean_on_everything_the_nodes_run() -> None:
    r = subprocess.run(
        # -x: follow the labs' shared library (lib/nspawn.sh), which sets and reads their globals.
        [require_tool("shellcheck"), "-x", "--shell=bash", "-S", "info", *map(str, SCRIPTS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout[-6000:]


def seam(cloud: str) -> Path:
    return STACKS / cloud / f"podplan_{cloud}" / "seams" / "fabric-devices.sh"


def run(
    cloud: str, root: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(seam(cloud))],
        env={"PATH": f"{root}/bin:{os.environ['PATH']}", "PODPLAN_ROOT": str(root), **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def rdma_device(root: Path, name: str, driver: str, state: str, link: str = "InfiniBand") -> None:
    dev = root / "sys/class/infiniband" / name
    write(dev / "ports/1/state", f"{'4' if state == 'ACTIVE' else '1'}: {state}\n")
    write(dev / "ports/1/link_layer", f"{link}\n")
    drv = root / "sys/bus/pci/drivers" / driver
    drv.mkdir(parents=True, exist_ok=True)
    (dev / "device").mkdir(parents=True, exist_ok=True)
    (dev / "device/driver").symlink_to(drv)


def efa_root(tmp: Path, devices: int, fi_info_ok: bool = True, plugin: bool = True) -> Path:
    for i in range(devices):
        rdma_device(tmp, f"rdmap{i}s0", "efa", "ACTIVE" if i else "DOWN")
    rdma_device(tmp, "mlx5_0", "mlx5_core", "ACTIVE")  # not an EFA: ignored
    write(tmp / "opt/amazon/efa/bin/fi_info", f"#!/bin/sh\nexit {0 if fi_info_ok else 1}\n", 0o755)
    if plugin:
        write(tmp / "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", "")
    return tmp


def test_aws_lists_every_efa_device_with_its_port_state(tmp_path: Path) -> None:
    r = run("aws", efa_root(tmp_path, 32))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 32 and "rdmap0s0 DOWN" in lines and "rdmap31s0 ACTIVE" in lines


@pytest.mark.parametrize(
    ("fi_info_ok", "plugin", "message"),
    [(False, True, "fi_info -p efa"), (True, False, "aws-ofi-nccl plugin")],
)
def test_aws_fails_without_libfabric_or_the_plugin(
    tmp_path: Path, fi_info_ok: bool, plugin: bool, message: str
) -> None:
    r = run("aws", efa_root(tmp_path, 32, fi_info_ok, plugin))
    assert r.returncode != 0 and message in r.stderr and r.stdout == ""


def tcpxo_root(tmp: Path, mtu: int = 8244, rxdm: bool = True) -> Path:
    (tmp / "sys/module/import_helper").mkdir(parents=True)
    write(tmp / "dev/aperture_devices/0000:8a:00.0/resource0", "")
    nics = [f"ens{6 + i}" for i in range(8)]
    write(tmp / "var/lib/podplan/tcpxo-nics.env", f'TCPXO_GPU_NICS="{" ".join(nics)}"\n')
    for i, nic in enumerate(nics):
        write(tmp / "sys/class/net" / nic / "operstate", "down\n" if i == 3 else "up\n")
        write(tmp / "sys/class/net" / nic / "mtu", f"{mtu if i else 1460}\n")
    write(tmp / "bin/systemctl", f"#!/bin/sh\nexit {0 if rxdm else 3}\n", 0o755)
    return tmp


def test_gcp_lists_the_gpu_nics_with_state_and_mtu(tmp_path: Path) -> None:
    r = run("gcp", tcpxo_root(tmp_path), {"TCPXO_MTU": "8244"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "ens6 mtu-1460",
        "ens7 up",
        "ens8 up",
        "ens9 down",
        "ens10 up",
        "ens11 up",
        "ens12 up",
        "ens13 up",
    ]


def test_gcp_fails_without_a_running_rxdm(tmp_path: Path) -> None:
    r = run("gcp", tcpxo_root(tmp_path, rxdm=False), {"TCPXO_MTU": "8244"})
    assert r.returncode != 0 and "receive-datapath manager" in r.stderr


def test_azure_lists_infiniband_hcas_only(tmp_path: Path) -> None:
    for i in range(8):
        rdma_device(tmp_path, f"mlx5_ib{i}", "mlx5_core", "ACTIVE" if i != 5 else "INIT")
    rdma_device(tmp_path, "mlx5_an0", "mlx5_core", "ACTIVE", link="Ethernet")
    r = run("azure", tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 8 and "mlx5_ib5 INIT" in lines and not any("mlx5_an0" in x for x in lines)
