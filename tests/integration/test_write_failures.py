"""Every write failure, made by the real kernel, leaves the previous tree byte for byte.

Each test writes the slurm-lab tree, snapshots it (every path, mode and byte), makes the
filesystem refuse something, regenerates from a grown spec (so every file changes and new
ones appear), and checks: exit 2, one error line naming the path, the snapshot unchanged, no
``.podplan-*`` leftovers. The conditions are real: a full tmpfs (ENOSPC), a tmpfs remounted
read-only and a read-only bind mount (EROFS), ``chattr +i`` on a file and on a directory
(EPERM; the commit-phase rollback), a directory mode 0555 with the DAC-override capabilities
dropped (EACCES: root ignores modes otherwise), a file where a directory must go, ``--out``
inside a file, and a read-only (0444) file.

They need root (mount, chattr, capabilities): elsewhere they skip, and under ``CI=true`` a
skip fails like any missing prerequisite (``tests.tooling.unavailable``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.runner import podplan
from tests.conftest import REPO
from tests.tooling import tree_snapshot, unavailable

SPEC = "examples/slurm-lab.yaml"


@pytest.fixture(autouse=True)
def _root() -> None:
    if os.geteuid() != 0:
        unavailable("needs root to mount filesystems, set immutable attributes and drop "
                    "capabilities")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


@contextlib.contextmanager
def _mount(where: Path, *args: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    r = _run("mount", *args, str(where))
    if r.returncode != 0:
        unavailable(f"cannot mount here ({r.stderr.strip()})")
    try:
        yield where
    finally:
        _run("umount", "-l", str(where))


def _chattr(flag: str, path: Path) -> None:
    r = _run("chattr", flag, str(path))
    if r.returncode != 0:
        unavailable(f"chattr {flag} is not supported here ({r.stderr.strip()})")


def _grown(tmp_path: Path) -> str:
    spec = tmp_path / "grown.yaml"  # another path: every header, so every file, changes
    spec.write_text(Path(SPEC).read_text(encoding="utf-8").replace("gpus: 24", "gpus: 32")
                    .replace("login_nodes: 1", "login_nodes: 2"), encoding="utf-8")
    return str(spec)


def _planned(out: Path) -> dict[str, tuple[int, bytes | None]]:
    r = podplan("plan", SPEC, "--out", str(out), "-q")
    assert r.code == 0, r.err
    return tree_snapshot(out)


def _refused(out: Path, spec: str, before: dict[str, tuple[int, bytes | None]], names: str,
             why: str, root: Path | None = None) -> None:
    r = podplan("plan", spec, "--out", str(out))
    assert (r.code, r.out) == (2, ""), r.err
    assert r.err.count("\n") == 1 and r.err.startswith("error: cannot "), r.err
    assert names in r.err and why in r.err, r.err
    assert tree_snapshot(root or out) == before


def test_no_space_left(tmp_path: Path) -> None:
    with _mount(tmp_path / "fs", "-t", "tmpfs", "-o", "size=2m", "tmpfs") as out:
        _planned(out)
        free = os.statvfs(out)
        (out / "filler").write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 96 * 1024))
        before = tree_snapshot(out)
        _refused(out, _grown(tmp_path), before, str(out), "no space left on the device")


def test_read_only_file_system(tmp_path: Path) -> None:
    with _mount(tmp_path / "fs", "-t", "tmpfs", "-o", "size=4m", "tmpfs") as out:
        before = _planned(out)
        assert _run("mount", "-o", "remount,ro", str(out)).returncode == 0
        _refused(out, _grown(tmp_path), before, str(out), "read-only file system")


def test_read_only_bind_mount_inside_the_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _planned(out)
    stacks = out / "stacks" / "aws"
    with _mount(stacks, "--bind", str(stacks)):
        assert _run("mount", "-o", "remount,bind,ro", str(stacks)).returncode == 0
        before = tree_snapshot(out)
        _refused(out, _grown(tmp_path), before, str(stacks), "read-only file system")


def test_immutable_file_fails_the_commit_and_everything_rolls_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _planned(out)
    stack = out / "stacks" / "aws" / "Pulumi.slurm-lab.yaml"  # sorted last: all else is done
    _chattr("+i", stack)
    try:
        before = tree_snapshot(out)
        _refused(out, _grown(tmp_path), before, str(stack), "operation not permitted")
    finally:
        _chattr("-i", stack)


def test_immutable_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _planned(out)
    host_vars = out / "inventories" / "slurm-lab" / "host_vars"
    _chattr("+i", host_vars)
    try:
        before = tree_snapshot(out)
        _refused(out, _grown(tmp_path), before, str(host_vars), "operation not permitted")
    finally:
        _chattr("-i", host_vars)


def test_permission_denied_without_the_dac_override_capability(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _planned(out)
    reports = out / "reports" / "slurm-lab"
    reports.chmod(0o555)
    before = tree_snapshot(out)
    cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner",
           sys.executable, "-c", "from generator.cli import main; main()",
           "plan", _grown(tmp_path), "--out", str(out)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)
    if "setpriv" in r.stderr and r.returncode != 2:
        unavailable(f"cannot drop capabilities here ({r.stderr.strip()})")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1 and str(reports) in r.stderr, r.stderr
    assert "permission denied; nothing was changed" in r.stderr
    assert tree_snapshot(out) == before


def test_a_file_where_a_directory_must_go(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _planned(out)
    (out / "inventories/slurm-lab/host_vars/gpu001.yml").unlink()
    (out / "inventories/slurm-lab/host_vars").rename(out / "hv")
    (out / "inventories/slurm-lab/host_vars").write_text("in the way", encoding="utf-8")
    before = tree_snapshot(out)
    _refused(out, _grown(tmp_path), before, "host_vars is a file, not a directory", "")


def test_out_inside_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    before = tree_snapshot(tmp_path)
    _refused(tmp_path / "file" / "out", SPEC, before, f"{tmp_path / 'file'} is a file", "",
             root=tmp_path)


def test_read_only_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _planned(out)
    hosts = out / "inventories" / "slurm-lab" / "hosts.yml"
    hosts.chmod(0o444)  # root could replace it; podplan respects the mode all the same
    before = tree_snapshot(out)
    _refused(out, _grown(tmp_path), before, str(hosts), "the file is read-only (mode 0444)")
