"""Shared pytest wiring: the repo root, the example specs, and ``--update-golden``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", default=False,
        help="Rewrite tests/golden/<example>/ from the current generator output.",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden")) or os.environ.get(
        "PODPLAN_UPDATE_GOLDEN"
    ) == "1"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Specs are referred to as ``examples/<x>.yaml`` in headers, so run from the root."""
    monkeypatch.chdir(REPO)
