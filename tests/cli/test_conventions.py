"""CLI conventions: exit codes, stdout vs stderr, --quiet/--verbose, NO_COLOR, completion,
and the list of files ``plan`` wrote and removed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import pipeline
from tests.cli.runner import GOOD, podplan, write

SPEC = "examples/slurm-lab.yaml"


def _boom(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("float division by zero")


def test_a_bug_exits_1_with_one_line_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PODPLAN_DEBUG", raising=False)
    monkeypatch.setattr(pipeline, "load_checked", _boom)
    r = podplan("size", str(write(tmp_path, GOOD)))
    assert (r.code, r.out) == (1, "")
    assert r.err == (
        "error: internal error: ZeroDivisionError: float division by zero\n"
        "  This is a bug in podplan: please report it with the spec that caused it "
        "(rerun with --verbose or PODPLAN_DEBUG=1 for the traceback).\n"
    )


@pytest.mark.parametrize("how", ["--verbose", "-v", "PODPLAN_DEBUG"])
def test_verbose_or_debug_shows_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr(pipeline, "load_checked", _boom)
    flags = [] if how == "PODPLAN_DEBUG" else [how]
    if how == "PODPLAN_DEBUG":
        monkeypatch.setenv("PODPLAN_DEBUG", "1")
    r = podplan(*flags, "size", str(write(tmp_path, GOOD)))
    assert r.code == 1
    assert r.err.startswith("Traceback (most recent call last)")
    assert "error: internal error: ZeroDivisionError" in r.err


def test_user_errors_exit_2_on_stderr_only(tmp_path: Path) -> None:
    r = podplan("size", str(write(tmp_path, GOOD.replace("lora", "lorra"))))
    assert (r.code, r.out) == (2, "")
    assert r.err.startswith("error: ") and "did you mean 'lora'" in r.err


@pytest.mark.parametrize("args", [["plan"], ["size", "--nope", "x.yaml"], ["sise", "x.yaml"]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    r = podplan(*args)
    assert r.code == 2 and r.out == ""
    assert "Usage: podplan" in r.err or "Error:" in r.err


def test_version_and_help_exit_0() -> None:
    assert podplan("--version").code == 0
    r = podplan("--help")
    assert r.code == 0 and "Exit codes: 0 ok, 2 bad input" in r.out


def test_color_on_a_terminal_and_never_with_no_color(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = str(write(tmp_path, GOOD.replace("lora", "lorra")))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert "\x1b[" in podplan("validate", spec, tty=True).err
    assert "\x1b[" not in podplan("validate", spec, tty=False).err
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in podplan("validate", spec, tty=True).err


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_drops_information_but_not_results(tmp_path: Path, where: str) -> None:
    spec = str(write(tmp_path, GOOD))
    for command, prints_result in (("validate", False), ("size", True)):
        args = ["-q", command, spec] if where == "before" else [command, spec, "--quiet"]
        r = podplan(*args)
        assert r.code == 0
        assert bool(r.out) is prints_result


def test_plan_lists_written_unchanged_and_removed_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = podplan("plan", SPEC, "--out", str(out))
    assert first.code == 0 and first.err == ""
    written = [ln for ln in first.out.splitlines() if ln.startswith("wrote ")]
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert sorted(Path(ln.removeprefix("wrote ")) for ln in written) == files
    assert first.out.splitlines()[-1] == f"{len(files)} written, 0 unchanged, 0 removed under {out}"

    mine = out / "reports/slurm-lab/old-report.txt"  # the user's file: kept, never listed
    mine.write_text("site notes", encoding="utf-8")
    again = podplan("plan", SPEC, "--out", str(out))
    assert again.out.splitlines() == [f"0 written, {len(files)} unchanged, 0 removed under {out}"]
    assert mine.read_text(encoding="utf-8") == "site notes"

    smaller = tmp_path / "lab.yaml"  # a file podplan wrote and no longer writes is removed
    smaller.write_text(Path(SPEC).read_text(encoding="utf-8").replace("gpus: 24", "gpus: 16"),
                       encoding="utf-8")
    shrunk = podplan("plan", str(smaller), "--out", str(out))
    gone = out / "inventories/slurm-lab/host_vars/gpu003.yml"
    assert shrunk.code == 0 and f"removed {gone}" in shrunk.out.splitlines()
    assert not gone.exists() and mine.exists()
    podplan("plan", SPEC, "--out", str(out))

    verbose = podplan("plan", SPEC, "--out", str(out), "-v")
    assert sum(ln.startswith("unchanged ") for ln in verbose.out.splitlines()) == len(files)
    assert podplan("-q", "plan", SPEC, "--out", str(out)).out == ""


def test_dry_run_lists_and_writes_nothing(tmp_path: Path) -> None:
    r = podplan("plan", SPEC, "--out", str(tmp_path / "o"), "--dry-run")
    assert r.code == 0 and r.out.startswith("would write ")
    assert not (tmp_path / "o").exists()


def test_bash_completion_script_and_completions() -> None:
    env = {**os.environ, "_PODPLAN_COMPLETE": "bash_source"}
    cmd = [sys.executable, "-c", "from generator.cli import main; main()"]
    script = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert script.returncode == 0 and "_podplan_completion" in script.stdout
    env.update(_PODPLAN_COMPLETE="bash_complete", COMP_WORDS="podplan pl", COMP_CWORD="1")
    words = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert words.returncode == 0 and "plain,plan" in words.stdout


def test_the_cli_imports_nothing_heavy_until_a_command_needs_it() -> None:
    """``podplan --version`` must answer fast: importing the CLI loads no pydantic models,
    catalog, matplotlib, Pulumi or YAML (measured by hyperfine in the README, not here)."""
    probe = ("import sys, generator.cli; "
             "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('matplotlib', 'pulumi', 'pydantic', 'yaml', 'jinja2', 'numpy') or "
             "m.startswith(('generator.catalog', 'generator.spec', 'generator.plan', "
             "'generator.pipeline')))))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""
