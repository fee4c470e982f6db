"""ruff and mypy (strict, pydantic plugin) stay clean on the generator and the tests."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import REPO
from tests.tooling import require_tool


def test_ruff_is_clean() -> None:
    r = subprocess.run(
        [require_tool("ruff"), "check", "generator", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    r = subprocess.run(
        [require_tool("mypy"), "generator"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stdout[-4000:]
