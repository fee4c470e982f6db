"""``podplan accept`` on damaged results: any bytes in any output file give a report or one
clear error (``PodplanError``, exit 2), never a crash. Fixed, small example budget."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.acceptance.compare import compare
from generator.acceptance.report import render
from generator.acceptance.results import read_run
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.sizing.acceptance import AcceptanceModel, build_model
from generator.spec.load import load_spec

FIX = Path("tests/fixtures/acceptance")
FILES = sorted(p.relative_to(FIX / "run-faults").as_posix()
               for p in (FIX / "run-faults").rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def model() -> AcceptanceModel:
    return build_model(load_spec(str(FIX / "spec.yaml")).spec, default_catalog(), 4)


def _damage(data: bytes, how: str, at: float, junk: bytes) -> bytes:
    cut = int(len(data) * at)
    return {"truncate": data[:cut], "splice": data[:cut] + junk + data[cut:],
            "replace": junk, "drop-line": b"\n".join(
                line for i, line in enumerate(data.split(b"\n")) if i != int(at * 40))}[how]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FILES), how=st.sampled_from(["truncate", "splice", "replace",
                                                          "drop-line"]),
       at=st.floats(0, 1), junk=st.binary(max_size=64))
def test_damaged_outputs_give_a_report_or_a_clear_error(model: AcceptanceModel, name: str,
                                                         how: str, at: float,
                                                         junk: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        shutil.copytree(FIX / "run-faults", run)
        (run / name).write_bytes(_damage((run / name).read_bytes(), how, at, junk))
        try:
            cmp = compare(read_run(run), model)
        except PodplanError as exc:
            assert str(exc)
            return
        _, md = render(cmp, default_catalog())
        assert cmp.verdict == "fail" and md.startswith("# Acceptance: accept-fixture")
