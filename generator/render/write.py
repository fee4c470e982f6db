"""Apply a set of file writes and removals to the output tree: all of them, or none.

How (a transaction with a rollback journal):

1. **Check** every path first: no file where a directory must go, no directory where a file
   must go, no read-only file to replace or remove. A failure here changes nothing.
2. **Journal**: ``<out>/.podplan-journal-<token>.json`` lists every step before any is taken.
3. **Stage**: each new text is written beside its target as ``.podplan-<token>-<name>.new``
   (same directory, so the final rename is atomic and never crosses a mount point); missing
   directories are created. A failure (no space, read-only or immutable directory, ...)
   removes what was staged and created.
4. **Commit**: each replaced file is hard-linked to ``.podplan-<token>-<name>.old`` (renamed
   there where links are not supported) and the staged file renamed over it; each removed
   file is renamed to its ``.old`` name. The first failure undoes every step taken, in
   reverse, so the tree is as it was, byte for byte.
5. **Done**: the journal is marked done, the ``.old`` files are deleted, then the journal.

A run killed mid-way (``kill -9``, a crash) leaves its journal; the next ``podplan plan`` on
that directory reads it and rolls the tree back (or, after step 5 began, only cleans up)
before it does anything else. One run at a time: the output directory is ``flock``-ed.
Files are not ``fsync``-ed: this guards against failures and killed runs, not power loss.
Hidden ``.podplan-*`` names are skipped by Ansible's inventory and group_vars loaders.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath

from generator.errors import PodplanError
from generator.render.files import OutFile
from generator.render.oserrors import cannot_write


@dataclass(frozen=True)
class _Op:
    """One step: write ``path`` (``remove`` False) or remove it; ``existed``: a file was there."""

    path: str
    remove: bool
    existed: bool


@dataclass(frozen=True)
class _Journal:
    """The steps of one run; its state is in the file name, changed by renames (which need
    no free space): ``.podplan-journal-<token>.<state>.json``."""

    out_dir: Path
    token: str
    dirs: list[str]  # directories the run creates, parents first
    ops: list[_Op]

    def file(self, state: str) -> Path:
        return self.out_dir / f".podplan-journal-{self.token}.{state}.json"

    def side(self, op: _Op, suffix: str) -> Path:
        # string split, not PurePosixPath: three of these per file, 2,000 host_vars files
        head, _, name = op.path.rpartition("/")
        return self.out_dir / head / f".podplan-{self.token}-{name}.{suffix}"

    def create(self) -> None:
        """Write the journal in state ``staging`` (via a temporary name: never half-written)."""
        doc = {"token": self.token, "dirs": self.dirs,
               "ops": [[op.path, op.remove, op.existed] for op in self.ops]}  # fmt: skip
        tmp = self.out_dir / f".podplan-journal-{self.token}.tmp"
        try:
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            tmp.rename(self.file("staging"))
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def advance(self, old: str, new: str) -> None:
        self.file(old).rename(self.file(new))

    @classmethod
    def load(cls, file: Path) -> tuple[_Journal, str]:
        doc = json.loads(file.read_text(encoding="utf-8"))
        ops = [_Op(str(p), bool(r), bool(e)) for p, r, e in doc["ops"]]
        state = file.name.split(".")[-2]
        return cls(file.parent, str(doc["token"]), list(doc["dirs"]), ops), state


def _blocking_file(path: Path, stop: Path) -> Path | None:
    """The first existing non-directory among ``path``'s ancestors (up to ``stop``), if any."""
    for parent in reversed(path.parents):
        if len(parent.parts) < len(stop.parts):
            continue
        if parent.exists() and not parent.is_dir():
            return parent
        if not parent.exists():
            return None
    return None


class _Dirs:
    """What each directory of the tree is (a directory, missing, or a file in the way),
    looked up once: 2,000 host_vars share a handful of parents."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.kinds: dict[str, str] = {}

    def kind(self, rel: str) -> str:
        found = self.kinds.get(rel)
        if found is None:
            p = self.out_dir / rel
            found = "dir" if p.is_dir() else "file" if p.exists() else "missing"
            self.kinds[rel] = found
        return found

    def parents(self, path: str) -> list[str]:
        """``path``'s directories below ``out_dir``, outermost first (worked out once per
        directory: 2,000 host_vars share one)."""
        return _parents(path.rpartition("/")[0])

    def blocker(self, path: str) -> str | None:
        for parent in self.parents(path):
            kind = self.kind(parent)
            if kind != "dir":
                return parent if kind == "file" else None
        return None

    def missing(self, paths: Sequence[str]) -> list[str]:
        """Directories to create for ``paths``, parents first."""
        out: dict[str, None] = {}
        for path in paths:
            for parent in self.parents(path):
                if parent not in out and self.kind(parent) == "missing":
                    out[parent] = None
        return list(out)


@lru_cache(maxsize=1024)
def _parents(directory: str) -> list[str]:
    """``directory`` and its ancestors, outermost first (``""``: none). Callers do not
    change the list."""
    if not directory:
        return []
    p = PurePosixPath(directory)
    return [*(str(q) for q in reversed(p.parents) if str(q) != "."), str(p)]


def _check(dirs: _Dirs, path: str, remove: bool) -> bool:
    """Refuse before anything changes; return whether a file is there now."""
    target = dirs.out_dir / path
    blocker = dirs.blocker(path)
    if blocker is not None:
        raise PodplanError(f"cannot write {target}: {dirs.out_dir / blocker} is a file, not a "
                           "directory; nothing was changed")
    try:
        st = target.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISDIR(st.st_mode):
        raise PodplanError(f"cannot write {target}: a directory is in the way; nothing was changed")
    if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o222:
        verb = "remove" if remove else "replace"
        raise PodplanError(
            f"cannot {verb} {target}: the file is read-only (mode {st.st_mode & 0o777:04o}); "
            f"make it writable (chmod u+w) to let podplan {verb} it; nothing was changed")
    return True


def check_root(out_dir: Path) -> None:
    """``--out`` must be a directory, or a path whose existing part is directories."""
    if out_dir.exists() and not out_dir.is_dir():
        raise PodplanError(f"cannot write {out_dir}: it is a file, not a directory")
    blocker = _blocking_file(out_dir / "x", Path(out_dir.anchor))
    if blocker is not None:
        raise PodplanError(f"cannot write {out_dir}: {blocker} is a file, not a directory")


def _make_root(out_dir: Path) -> list[Path]:
    """Create ``out_dir`` and missing parents; return those created (to undo)."""
    check_root(out_dir)
    created = [p for p in reversed([out_dir, *out_dir.parents]) if not p.exists()]
    for p in created:
        try:
            p.mkdir()
        except OSError as exc:
            _rmdirs(reversed(created))
            raise cannot_write(exc, p) from None
    return created


def _rmdirs(dirs: Iterator[Path] | Sequence[Path]) -> None:
    for d in dirs:
        with contextlib.suppress(OSError):
            d.rmdir()


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the output directory itself (no lock file)."""
    fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PodplanError(
                f"another podplan is writing {out_dir}; try again when it is done") from None
        yield
    finally:
        os.close(fd)


def _undo(j: _Journal, op: _Op, committing: bool) -> None:
    """Put ``op.path`` back as it was, from whatever state the step reached."""
    target, staged, old = j.out_dir / op.path, j.side(op, "new"), j.side(op, "old")
    if op.existed and old.exists():
        old.replace(target)  # a no-op when both are links to the same file
        if old.exists():
            old.unlink()
    elif committing and not op.existed and not staged.exists() and target.exists():
        target.unlink()  # the new file had been put in place
    if staged.exists():
        staged.unlink()


def _undo_all(j: _Journal, committing: bool) -> None:
    for op in reversed(j.ops):
        _undo(j, op, committing)
    _rmdirs([j.out_dir / d for d in reversed(j.dirs)])


def _finish(j: _Journal) -> None:
    """After the commit: drop the ``.old`` copies, leftovers and the journal."""
    for op in j.ops:
        if op.existed:  # staged files were all renamed into place
            with contextlib.suppress(FileNotFoundError):
                j.side(op, "old").unlink()
    _prune_empty(j.out_dir, [op.path for op in j.ops if op.remove])
    j.file("done").unlink()


def _prune_empty(out_dir: Path, removed: Sequence[str]) -> None:
    """Remove directories that removals left empty (never ``out_dir`` itself)."""
    for path in removed:
        for parent in PurePosixPath(path).parents:
            if str(parent) == ".":
                break
            try:
                (out_dir / parent).rmdir()
            except OSError:
                break


def _stage(j: _Journal, writes: Mapping[str, str]) -> None:
    for d in j.dirs:
        (j.out_dir / d).mkdir()
    for op in j.ops:
        if op.remove:
            continue
        staged = j.side(op, "new")
        try:
            with staged.open("xb") as fh:
                fh.write(writes[op.path].encode("utf-8"))
            if op.existed:
                staged.chmod(stat.S_IMODE((j.out_dir / op.path).stat().st_mode))
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(j.out_dir / op.path)) from None


def _commit(j: _Journal) -> None:
    for op in j.ops:
        target, old = j.out_dir / op.path, j.side(op, "old")
        try:
            if op.remove:
                target.rename(old)
                continue
            if op.existed:
                try:
                    old.hardlink_to(target)
                except OSError:
                    target.rename(old)
            j.side(op, "new").replace(target)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(target)) from None


def write_tree(out_dir: Path, files: Sequence[OutFile]) -> None:
    """Write ``files`` under ``out_dir``, all or nothing, with no ownership bookkeeping
    (tests and benchmarks; ``podplan plan`` goes through ``render.update``)."""
    commit(out_dir, {f.path: f.content for f in files}, [])


def commit(out_dir: Path, writes: Mapping[str, str], removes: Sequence[str]) -> None:
    """Write every ``writes`` path (relative, '/'-separated) and remove every ``removes`` path
    under ``out_dir``, all or nothing; a failure is a ``PodplanError`` naming the path."""
    check_root(out_dir)
    dirs = _Dirs(out_dir)
    ops = [_Op(p, False, _check(dirs, p, False)) for p in sorted(writes)]
    ops += [_Op(p, True, _check(dirs, p, True)) for p in sorted(removes)]
    ops = [op for op in ops if not op.remove or op.existed]
    if not ops:
        return
    created = _make_root(out_dir)
    j = _Journal(out_dir, secrets.token_hex(4), dirs.missing(sorted(writes)), ops)
    try:
        with _locked(out_dir):
            _transact(j, writes)
    except BaseException:
        _rmdirs(list(reversed(created)))
        raise


def _transact(j: _Journal, writes: Mapping[str, str]) -> None:
    try:
        j.create()
    except OSError as exc:  # name the directory, not the journal's temporary name
        raise cannot_write(OSError(exc.errno, exc.strerror, str(j.out_dir)), j.out_dir) from None
    state = "staging"
    try:
        _stage(j, writes)
        j.advance("staging", "commit")
        state = "commit"
        _commit(j)
        j.advance("commit", "done")
    except BaseException as exc:
        _rollback(j, exc, state)
        if isinstance(exc, OSError):
            raise cannot_write(exc, j.out_dir) from None
        raise
    with contextlib.suppress(OSError):  # committed: leftovers are cleaned by the next run
        _finish(j)


def _rollback(j: _Journal, cause: BaseException, state: str) -> None:
    try:
        _undo_all(j, committing=state == "commit")
        j.file(state).unlink()
    except OSError as exc:
        raise PodplanError(
            f"{cause}; rolling back failed too ({exc.filename}: {exc.strerror}): the next "
            f"`podplan plan` with --out {j.out_dir} finishes the rollback from "
            f"{j.file(state).name}"
        ) from None


def pending(out_dir: Path) -> list[Path]:
    """Journals left by runs that were killed mid-way (and half-written ones)."""
    if not out_dir.is_dir():
        return []
    return sorted(out_dir.glob(".podplan-journal-*"))


def recover(out_dir: Path) -> list[str]:
    """Roll back (or finish cleaning up after) every run killed mid-way; say what was done."""
    done: list[str] = []
    journals = pending(out_dir)
    if not journals:
        return done
    with _locked(out_dir):
        for file in journals:
            try:
                done += _recover_one(file)
            except OSError as exc:
                raise cannot_write(exc, out_dir, "roll back") from None
    return done


def _recover_one(file: Path) -> list[str]:
    if file.suffix == ".tmp":  # killed while writing its journal: nothing else was done
        file.unlink()
        return []
    try:
        j, state = _Journal.load(file)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise PodplanError(f"cannot read the journal {file} of an interrupted run ({exc}); "
                           "move it away to go on") from None
    if state == "done":
        _finish(j)
        return [f"finished cleaning up after an interrupted run ({file.name})"]
    _undo_all(j, committing=state == "commit")
    file.unlink()
    return [f"rolled back an interrupted run ({file.name}): the tree is as it was before it"]
