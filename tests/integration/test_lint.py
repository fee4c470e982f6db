"""ruff and mypy (strict, pydantic plugin) stay clean on the generator and the tests."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import REPO


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed (required in CI)")
        pytest.skip(f"{name} is not installed")
    return path


def test_ruff_is_clean() -> None:
    r = subprocess.run(
        [_tool("ruff"), "check", "generator", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    r = subprocess.run(
        [_tool("mypy"), "generator"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stdout[-4000:]
