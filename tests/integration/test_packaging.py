"""A non-editable install carries the catalog data and the templates inside the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_wheel_contains_catalog_data_and_templates(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
    )
    wheel = next(tmp_path.glob("podplan-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "generator/catalog/data/gpus.yaml" in names
    assert "generator/catalog/data/models.yaml" in names
    assert any(n.startswith("generator/_templates/") for n in names)
    assert any(n.endswith("entry_points.txt") for n in names)
