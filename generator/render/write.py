"""Write a set of generated files atomically: all of them, or none.

Files are first written under a temporary directory next to the output, then each target
is replaced with ``os.replace`` (atomic per file). If anything fails before the swap, the
output directory is untouched. Directories owned entirely by podplan (``reports/<name>``,
``inventories/<name>``) are swapped as a whole so stale files do not linger.

What was written, left unchanged and removed is returned, so the CLI can list it; a path
that cannot be written (a file where a directory must go, no permission) is a user error
naming that path, not a traceback.
"""

from __future__ import annotations

import errno
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.errors import PodplanError
from generator.render.files import OutFile

_WHY = {
    errno.EEXIST: "a file is in the way of a directory",
    errno.ENOTDIR: "part of the path is a file, not a directory",
    errno.EISDIR: "a directory is in the way of a file",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.ENAMETOOLONG: "file name too long",
}


@dataclass
class Written:
    """Relative paths by outcome: new or changed, identical to what was there, removed."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _stage(files: Sequence[OutFile], stage: Path, out_dir: Path) -> None:
    for f in files:
        target = stage / f.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.content, encoding="utf-8")
        except OSError as exc:  # name the output path, not the staging copy
            raise OSError(exc.errno, exc.strerror, str(out_dir / f.path)) from None


def _check_paths(files: Sequence[OutFile]) -> None:
    seen: set[str] = set()
    for f in files:
        p = Path(f.path)
        if p.is_absolute() or ".." in p.parts:
            raise PodplanError(f"refusing to write outside the output directory: {f.path}")
        if f.path in seen:
            raise PodplanError(f"two generated files share one path: {f.path}")
        seen.add(f.path)


def _outcome(out_dir: Path, files: Sequence[OutFile], owned: list[str]) -> Written:
    """Compare the new files with what is on disk before anything is replaced."""
    result = Written()
    for f in files:
        target = out_dir / f.path
        try:
            same = target.is_file() and target.read_text(encoding="utf-8") == f.content
        except (OSError, UnicodeDecodeError):
            same = False
        (result.unchanged if same else result.written).append(f.path)
    new = {f.path for f in files}
    for d in owned:
        root = out_dir / d
        if root.is_dir():
            old = (p.relative_to(out_dir).as_posix() for p in root.rglob("*") if not p.is_dir())
            result.removed += sorted(p for p in old if p not in new)
    return result


def cannot_write(exc: OSError, fallback: Path) -> PodplanError:
    """One line naming the path that could not be written and why."""
    path = exc.filename or fallback
    why = _WHY.get(exc.errno or 0, exc.strerror or str(exc))
    return PodplanError(f"cannot write {path}: {why}")


def write_tree(out_dir: Path, files: Sequence[OutFile], owned_dirs: Iterable[str] = ()) -> Written:
    """Write ``files`` under ``out_dir``; replace each of ``owned_dirs`` wholesale.

    ``owned_dirs`` are relative directories podplan regenerates completely (e.g.
    ``reports/<name>``): they are swapped in whole, so a removed file disappears too.
    """
    _check_paths(files)
    if out_dir.exists() and not out_dir.is_dir():
        raise PodplanError(f"cannot write {out_dir}: it is a file, not a directory")
    owned = sorted(set(owned_dirs))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        result = _outcome(out_dir, files, owned)
        _write(out_dir, files, owned)
    except OSError as exc:
        raise cannot_write(exc, out_dir) from None
    return result


def _write(out_dir: Path, files: Sequence[OutFile], owned: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix=".podplan-", dir=out_dir) as tmp:
        stage = Path(tmp) / "new"
        _stage(files, stage, out_dir)
        for d in owned:
            (stage / d).mkdir(parents=True, exist_ok=True)
            final = out_dir / d
            final.parent.mkdir(parents=True, exist_ok=True)
            old = Path(tmp) / "old" / d
            if final.exists():
                old.parent.mkdir(parents=True, exist_ok=True)
                final.replace(old)
            (stage / d).replace(final)
        for f in files:
            if any(f.path == d or f.path.startswith(d + "/") for d in owned):
                continue
            target = out_dir / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            (stage / f.path).replace(target)
