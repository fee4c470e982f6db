"""ruff and mypy (strict, against the provider SDKs' own type hints) stay clean on the stacks.

mypy runs once per Pulumi project (each has its own ``__main__.py``), with ``stacks/mypy.ini``.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import REPO
from tests.tooling import require_tool

PROJECTS = ["common", "policy", "aws", "gcp", "azure"]


def test_ruff_is_clean_on_the_stacks() -> None:
    r = subprocess.run(
        [require_tool("ruff"), "check", "stacks", "tests/pulumi", "generator/emit/pulumi.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("project", PROJECTS)
def test_mypy_is_clean_on_each_stack(project: str) -> None:
    r = subprocess.run(
        [require_tool("mypy"), "--config-file", "stacks/mypy.ini", f"stacks/{project}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
