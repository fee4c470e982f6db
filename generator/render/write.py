"""Write a set of generated files atomically: all of them, or none.

Files are first written under a temporary directory next to the output, then each target
is replaced with ``os.replace`` (atomic per file). If anything fails before the swap, the
output directory is untouched. Directories owned entirely by podplan (``reports/<name>``,
``inventories/<name>``) are swapped as a whole so stale files do not linger.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from generator.errors import PodplanError
from generator.render.files import OutFile


def _stage(files: Sequence[OutFile], stage: Path) -> None:
    for f in files:
        target = stage / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f.content, encoding="utf-8")


def _check_paths(files: Sequence[OutFile]) -> None:
    seen: set[str] = set()
    for f in files:
        p = Path(f.path)
        if p.is_absolute() or ".." in p.parts:
            raise PodplanError(f"refusing to write outside the output directory: {f.path}")
        if f.path in seen:
            raise PodplanError(f"two generated files share one path: {f.path}")
        seen.add(f.path)


def write_tree(out_dir: Path, files: Sequence[OutFile], owned_dirs: Iterable[str] = ()) -> None:
    """Write ``files`` under ``out_dir``; replace each of ``owned_dirs`` wholesale.

    ``owned_dirs`` are relative directories podplan regenerates completely (e.g.
    ``reports/<name>``): they are swapped in whole, so a removed file disappears too.
    """
    _check_paths(files)
    out_dir.mkdir(parents=True, exist_ok=True)
    owned = sorted(set(owned_dirs))
    with tempfile.TemporaryDirectory(prefix=".podplan-", dir=out_dir) as tmp:
        stage = Path(tmp) / "new"
        try:
            _stage(files, stage)
        except OSError as exc:
            raise PodplanError(f"could not write output: {exc}") from None
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
