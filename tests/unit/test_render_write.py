"""The writer: all files or none, whatever step fails, and after a killed run.

Faults are injected at every step of the commit (each rename or link), and a real
``kill -9`` interrupts a run in a child process; the tree must be as it was, byte for byte.
Real filesystem failures (a full tmpfs, read-only mounts, immutable files) are in
``tests/integration/test_write_failures.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from generator.errors import PodplanError
from generator.render import write
from generator.render.files import OutFile, dump_json, dump_yaml
from generator.render.update import prepare
from generator.render.write import commit, pending, recover, write_tree
from tests.tooling import tree_snapshot

snapshot = tree_snapshot


OLD = {"a/one.txt": "1", "a/b/two.txt": "2", "gone.txt": "x", "keep/user.txt": "mine"}
NEW = {"a/one.txt": "1 new", "a/b/two.txt": "2 new", "c/d/three.txt": "3", "z.txt": "z"}


def _tree(root: Path) -> None:
    for path, text in OLD.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


def test_writes_and_removes_and_leaves_nothing_behind(tmp_path: Path) -> None:
    _tree(tmp_path)
    commit(tmp_path, NEW, ["gone.txt"])
    assert {p: (tmp_path / p).read_text() for p in NEW} == NEW
    assert not (tmp_path / "gone.txt").exists()
    assert (tmp_path / "keep/user.txt").read_text() == "mine"
    assert not [p for p in tmp_path.rglob(".podplan-*")]


def test_removal_prunes_only_directories_it_emptied(tmp_path: Path) -> None:
    (tmp_path / "s/gcp").mkdir(parents=True)
    (tmp_path / "s/gcp/Pulumi.x.yaml").write_text("x")
    (tmp_path / "s/aws").mkdir()
    (tmp_path / "s/aws/Pulumi.x.yaml").write_text("x")
    (tmp_path / "s/aws/Pulumi.other.yaml").write_text("another stack")
    commit(tmp_path, {}, ["s/gcp/Pulumi.x.yaml", "s/aws/Pulumi.x.yaml"])
    assert not (tmp_path / "s/gcp").exists()
    assert (tmp_path / "s/aws/Pulumi.other.yaml").exists()


def test_replaced_files_keep_their_mode(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "a/one.txt").chmod(0o640)
    commit(tmp_path, NEW, [])
    assert (tmp_path / "a/one.txt").stat().st_mode & 0o777 == 0o640


def _fail_on(monkeypatch: pytest.MonkeyPatch, nth: int) -> None:
    """Make the ``nth`` rename/replace/link of the commit fail like a full or read-only disk."""
    calls = {"n": 0}

    def hook(real):  # type: ignore[no-untyped-def]
        def wrapped(self: Path, other: Path) -> Path:
            calls["n"] += 1
            if calls["n"] == nth and ".podplan-journal" not in str(self):
                raise OSError(30, "Read-only file system", str(self))
            return real(self, other)  # type: ignore[no-any-return]
        return wrapped

    for name in ("rename", "replace", "hardlink_to"):
        monkeypatch.setattr(Path, name, hook(getattr(Path, name)))


@pytest.mark.parametrize("nth", range(1, 11))
def test_a_failure_at_any_step_rolls_everything_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nth: int
) -> None:
    _tree(tmp_path)
    before = snapshot(tmp_path)
    _fail_on(monkeypatch, nth)
    try:
        commit(tmp_path, NEW, ["gone.txt"])
    except PodplanError as err:
        assert "read-only file system; nothing was changed" in str(err)
        assert snapshot(tmp_path) == before
        assert not pending(tmp_path)
    else:  # fewer steps than nth: the commit went through
        assert not (tmp_path / "gone.txt").exists()


def test_interrupt_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    before = snapshot(tmp_path)
    real = Path.replace

    def ctrl_c(self: Path, other: Path) -> Path:
        if self.name.endswith(".new") and "three" in self.name:
            raise KeyboardInterrupt
        return real(self, other)

    monkeypatch.setattr(Path, "replace", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        commit(tmp_path, NEW, ["gone.txt"])
    assert snapshot(tmp_path) == before


KILLER = """
import os, signal, sys
from pathlib import Path
from generator.render.write import commit
real, calls = Path.replace, []
def replace(self, other):
    calls.append(self)
    if len(calls) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, other)
Path.replace = replace
commit(Path(sys.argv[1]), NEW, ["gone.txt"])
"""


@pytest.mark.parametrize("nth", [2, 4])
def test_a_killed_run_is_rolled_back_by_the_next(tmp_path: Path, nth: int) -> None:
    _tree(tmp_path)
    before = snapshot(tmp_path)
    r = subprocess.run([sys.executable, "-c", f"NEW = {NEW!r}\n" + KILLER, str(tmp_path), str(nth)],
                       cwd=Path(__file__).resolve().parents[2], check=False)
    assert r.returncode == -signal.SIGKILL
    assert snapshot(tmp_path) != before and pending(tmp_path)  # half done, journal left
    said = recover(tmp_path)
    assert said and "rolled back an interrupted run" in said[0]
    assert snapshot(tmp_path) == before


def test_a_run_killed_after_its_commit_is_only_cleaned_up(tmp_path: Path) -> None:
    _tree(tmp_path)
    j = write._Journal(tmp_path, "feed", [], [write._Op("a/one.txt", False, True)])
    (tmp_path / "a/.podplan-feed-one.txt.old").write_text("old copy")
    j.create()
    j.advance("staging", "done")
    assert recover(tmp_path) == ["finished cleaning up after an interrupted run "
                                 "(.podplan-journal-feed.done.json)"]
    assert (tmp_path / "a/one.txt").read_text() == "1"
    assert not [p for p in tmp_path.rglob(".podplan-*")]


def test_two_runs_at_once_are_refused(tmp_path: Path) -> None:
    import fcntl

    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(PodplanError, match="another podplan is writing"):
            commit(tmp_path, {"x": "1"}, [])
    finally:
        os.close(fd)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("bad", ["../escape.txt", "/abs.txt"])
def test_refuses_paths_outside_and_writes_nothing(tmp_path: Path, bad: str) -> None:
    with pytest.raises(PodplanError):
        prepare(tmp_path, [OutFile("ok.txt", "fine"), OutFile(bad, "no")], "m.json")
    assert not (tmp_path / "ok.txt").exists()


def test_duplicate_paths_are_refused(tmp_path: Path) -> None:
    with pytest.raises(PodplanError, match="share one path"):
        prepare(tmp_path, [OutFile("a", "1"), OutFile("a", "2")], "m.json")


def test_checks_refuse_before_anything_changes(tmp_path: Path) -> None:
    _tree(tmp_path)
    before = snapshot(tmp_path)
    (tmp_path / "a/b/two.txt").chmod(0o444)
    before = snapshot(tmp_path)
    with pytest.raises(PodplanError, match=r"two.txt: the file is read-only \(mode 0444\)"):
        commit(tmp_path, NEW, [])
    with pytest.raises(PodplanError, match=r"z\.txt: a directory is in the way"):
        (tmp_path / "z.txt").mkdir()
        commit(tmp_path, {"a/one.txt": "x", "z.txt": "z"}, [])
    (tmp_path / "z.txt").rmdir()
    with pytest.raises(PodplanError, match=r"gone.txt is a file, not a directory"):
        commit(tmp_path, {"a/one.txt": "x", "gone.txt/inside": "z"}, [])
    assert snapshot(tmp_path) == before


def test_write_tree_writes_a_fresh_directory(tmp_path: Path) -> None:
    write_tree(tmp_path / "new" / "out", [OutFile("r/a.txt", "a"), OutFile("b.txt", "b")])
    assert (tmp_path / "new/out/r/a.txt").read_text() == "a"


def test_yaml_is_sorted_with_header_and_json_sorted() -> None:
    text = dump_yaml({"b": 1, "a": 2}, "examples/x.yaml")
    assert text.startswith("# Generated by podplan from examples/x.yaml")
    assert text.index("a: 2") < text.index("b: 1")
    assert dump_json({"b": 1, "a": 2}).index('"a"') < dump_json({"b": 1, "a": 2}).index('"b"')


def test_csv_text_is_the_csv_modules_output_quoting_included() -> None:
    import csv
    import io

    from generator.render.files import csv_text

    def reference(columns: list[str], rows: list[list[str]]) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
        return buf.getvalue()

    cols = ["a", "b", "c"]
    for rows in (
        [["x", "1", ""], ["y", "2.5", "p/n"]],
        [["x", "has,comma", "1"]],
        [['say "hi"', "", "3"]],
        [["two\nlines", "b", "c"]],
        [],
    ):
        assert csv_text(cols, rows) == reference(cols, rows)
