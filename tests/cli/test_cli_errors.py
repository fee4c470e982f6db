"""Bad input gets a located, one-screen error and exit code 2 — never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """\
name: ok-spec
workloads:
  - name: finetune
    kind: lora
    model: llama2-7b
    steps: 10
"""


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from generator.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_valid_spec_validates(tmp_path: Path) -> None:
    r = run_cli("validate", str(write(tmp_path, GOOD)))
    assert r.returncode == 0, r.stderr
    assert "ok:" in r.stdout


@pytest.mark.parametrize(
    ("mutation", "line", "path", "needle"),
    [
        (("kind: lora", "kind: lorra"), 4, "workloads[0].kind", "did you mean 'lora'"),
        (("steps: 10", "stepz: 10"), 6, "workloads[0].stepz", "did you mean 'steps'"),
        (
            ("model: llama2-7b", "model: llama2-7bb"),
            5,
            "workloads[0].model",
            "did you mean 'llama2-7b'",
        ),
        (("name: ok-spec", "name: Not_OK"), 1, "name", "allowed"),
        (("kind: lora", "kind: inferance"), 4, "workloads[0].kind", "did you mean 'inference'"),
    ],
)
def test_error_names_file_line_path_and_hint(
    tmp_path: Path, mutation: tuple[str, str], line: int, path: str, needle: str
) -> None:
    spec = write(tmp_path, GOOD.replace(*mutation))
    r = run_cli("validate", str(spec))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert f"{spec}:{line}: {path}" in r.stderr, r.stderr
    assert needle in r.stderr


def test_two_kinds_of_work_is_an_error(tmp_path: Path) -> None:
    r = run_cli("validate", str(write(tmp_path, GOOD + "    tokens: 1e9\n")))
    assert r.returncode == 2
    assert "exactly one of steps | tokens | dataset" in r.stderr


def test_bad_yaml_points_at_the_line(tmp_path: Path) -> None:
    r = run_cli("validate", str(write(tmp_path, "name: x\nworkloads: [\n  - a: b\n")))
    assert r.returncode == 2
    assert "is not valid YAML" in r.stderr and "Traceback" not in r.stderr


def test_missing_file(tmp_path: Path) -> None:
    r = run_cli("validate", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and "spec file not found" in r.stderr


def test_gpu_not_taken_by_server(tmp_path: Path) -> None:
    spec = write(tmp_path, GOOD + "hardware: {server: xe9680, gpu: l40s-48gb}\n")
    r = run_cli("validate", str(spec))
    assert r.returncode == 2 and "hardware.gpu" in r.stderr and "allowed" in r.stderr


def test_nic_count_and_gpu_multiple(tmp_path: Path) -> None:
    spec = write(tmp_path, GOOD + "hardware: {east_west_nics_per_node: 6, gpus: 12}\n")
    r = run_cli("validate", str(spec))
    assert r.returncode == 2
    assert "hardware.east_west_nics_per_node" in r.stderr


def test_gpus_need_not_fill_whole_servers(tmp_path: Path) -> None:
    """What-if sizing on part of a server is a question, not an error; the plan rounds up."""
    spec = str(write(tmp_path, GOOD + "hardware: {gpus: 12}\n"))
    assert run_cli("validate", spec).returncode == 0
    r = run_cli("size", spec)
    assert r.returncode == 0 and "round up to 2 servers (16 GPUs, 4 idle)" in r.stdout


def test_schema_is_json_with_descriptions() -> None:
    import json

    r = run_cli("schema")
    assert r.returncode == 0
    schema = json.loads(r.stdout)
    assert "workloads" in schema["properties"]
    assert schema["properties"]["name"]["description"]
