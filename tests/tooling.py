"""Test prerequisites: external tools and goldens, handled the same way everywhere.

A missing prerequisite skips a test with its reason on a developer's machine, but under
``CI=true`` it fails: in CI a skip would hide a broken pipeline.
"""

from __future__ import annotations

import difflib
import os
import shutil
import sys
from pathlib import Path
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; fail instead when running in CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required in CI)")
    pytest.skip(reason)


def require_tool(name: str) -> str:
    """Path of a CLI next to this Python (a venv's), else on PATH."""
    beside = Path(sys.executable).parent / name
    path = str(beside) if beside.exists() else shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed")
    return path


def tree_snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``root`` with its mode and, for files, its bytes (to prove a tree
    was left exactly as it was)."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[p.relative_to(root).as_posix()] = (st.st_mode, p.read_bytes() if p.is_file() else None)
    return out


def check_golden_tree(root: Path, got: dict[str, str], update: bool) -> None:
    """Compare rendered files with the tree under ``root``, or rewrite it when ``update``."""
    if update:
        shutil.rmtree(root, ignore_errors=True)
        for path, content in got.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(content, encoding="utf-8")
        return
    want = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*")) if p.is_file()
    }
    assert want, f"no golden tree at {root}; run pytest --update-golden"
    assert sorted(got) == sorted(want), "file lists differ (run pytest --update-golden?)"
    for path in sorted(got):
        if got[path] != want[path]:
            diff = difflib.unified_diff(
                want[path].splitlines(), got[path].splitlines(), "golden/" + path,
                "now/" + path, lineterm="", n=2,
            )
            pytest.fail("\n".join(list(diff)[:60]))
