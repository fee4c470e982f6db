"""What regenerating would do to an output tree, worked out before anything is written.

``prepare`` compares the newly generated files with the tree on disk and the manifest podplan
wrote last time (``render.manifest``) and sorts every path into added, changed, unchanged or
removed, plus *refusals*: changes that would destroy the user's work and so need ``--force``:

* a generated file edited by hand (its hash no longer matches the manifest);
* a file podplan did not write (no manifest entry, no podplan header) where it must write;
* a stack file whose podplan keys were changed with ``pulumi config set``, or that still holds
  the user's settings when its cloud left the spec.

Files podplan did not write are never in any list, so they are never touched. The same
``Update`` drives ``plan`` (``render.write.commit``), ``plan --diff`` and ``plan --check``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from generator.emit.stack_secrets import is_stack_file, load_stack, merge_stack
from generator.errors import PodplanError
from generator.render.files import OutFile, carries_provenance
from generator.render.manifest import Manifest, read_manifest, sha256_bytes
from generator.render.oserrors import cannot_write
from generator.render.write import check_root, commit, pending


@dataclass(frozen=True)
class Refusal:
    """A change that needs ``--force``: the path and why."""

    path: str
    reason: str


@dataclass
class Update:
    """Every generated path by outcome; ``writes`` holds the text of added and changed ones."""

    out_dir: Path
    writes: dict[str, str] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    forced: bool = False

    @property
    def up_to_date(self) -> bool:
        """Nothing to add, change or remove, nothing refused, no interrupted run to undo."""
        return not (self.added or self.changed or self.removed or self.refusals
                    or pending(self.out_dir))  # fmt: skip

    def refuse(self, path: str, reason: str) -> bool:
        """Record a refusal; return whether to go ahead anyway (``--force``)."""
        self.refusals.append(Refusal(path, reason))
        return self.forced


def _check_paths(files: Sequence[OutFile]) -> None:
    seen: set[str] = set()
    for f in files:
        p = PurePosixPath(f.path)
        if p.is_absolute() or ".." in p.parts or not p.parts:
            raise PodplanError(f"refusing to write outside the output directory: {f.path}")
        if f.path in seen:
            raise PodplanError(f"two generated files share one path: {f.path}")
        seen.add(f.path)


def _read(out_dir: Path, path: str) -> bytes | None:
    target = out_dir / path
    try:
        return target.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # a file in the way of a directory is reported by the writer's check
    except IsADirectoryError:
        raise PodplanError(f"cannot write {target}: a directory is in the way") from None
    except OSError as exc:
        raise cannot_write(exc, target, "read") from None


def _add(u: Update, path: str, text: str, old: bytes | None) -> None:
    if old is None:
        u.added.append(path)
    elif old == text.encode("utf-8"):
        u.unchanged.append(path)
        return
    else:
        u.changed.append(path)
    u.writes[path] = text


def _regular(u: Update, f: OutFile, old: bytes | None, prev: Manifest | None) -> None:
    if old is not None and old != f.content.encode("utf-8"):
        recorded = prev.files.get(f.path) if prev else None
        if recorded is not None:
            why = "edited by hand since podplan wrote it" if sha256_bytes(old) != recorded else ""
        elif not carries_provenance(old.decode("utf-8", "replace")):
            why = "not written by podplan, and in the way of a file it writes"
        else:
            why = ""  # written by a podplan from before manifests: its header says so
        if why and not u.refuse(f.path, why):
            return
    _add(u, f.path, f.content, old)


def _stack(u: Update, f: OutFile, old: bytes | None, prev: Manifest | None) -> None:
    if old is None:
        _add(u, f.path, f.content, old)
        return
    try:
        text = old.decode("utf-8")
        if prev is not None and f.path in prev.stack_keys:
            recorded: dict[str, str] | None = prev.stack_keys[f.path]
        elif prev is None and carries_provenance(text):
            recorded = None  # written by a podplan from before manifests: keys unknown
        else:
            recorded = {}  # podplan never wrote this file (``pulumi stack init`` first)
        merged = merge_stack(text, f.content, recorded)
    except (ValueError, UnicodeDecodeError) as exc:
        if u.refuse(f.path, f"cannot keep your settings in it: {exc}"):
            _add(u, f.path, f.content, old)
        return
    if merged.edited and not u.refuse(
        f.path, f"podplan's keys changed by hand: {', '.join(merged.edited)}"
    ):
        return
    if merged.taken and not u.refuse(
        f.path, f"keys you set that podplan now sets differently: {', '.join(merged.taken)}"
    ):
        return
    _add(u, f.path, merged.text, old)


def _stale_stack(u: Update, path: str, old: bytes, recorded: dict[str, str]) -> None:
    try:
        data = load_stack(old.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        data = {"unreadable": True}
    config = data.get("config") or {}
    yours = sorted({k for k in data if k != "config"} | {k for k in config if k not in recorded})
    if yours and not u.refuse(
        path,
        f"its cloud left the spec but it holds your settings ({', '.join(yours)}); "
        "`pulumi destroy` and `pulumi stack rm` that stack first, or use --force",
    ):
        return
    u.removed.append(path)


def _stale(u: Update, prev: Manifest, new: set[str]) -> None:
    """Files podplan wrote last time and does not write now."""
    for path in sorted(prev.paths() - new):
        old = _read(u.out_dir, path)
        if old is None:
            continue
        if path in prev.stack_keys:
            _stale_stack(u, path, old, prev.stack_keys[path])
        elif sha256_bytes(old) == prev.files[path] or u.refuse(
            path, "edited by hand, and podplan no longer generates it"
        ):
            u.removed.append(path)


def _unrecorded_notes(u: Update, files: Sequence[OutFile]) -> None:
    """Without a manifest nothing is removed; name the old generated files left in place."""
    new = {f.path for f in files}
    roots = {"/".join(PurePosixPath(p).parts[:2]) for p in new if not is_stack_file(p)}
    for root in sorted(roots):
        base = u.out_dir / root
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            rel = p.relative_to(u.out_dir).as_posix()
            if rel in new or not p.is_file() or p.name.startswith("."):
                continue
            try:
                head = p.read_bytes()[:4096].decode("utf-8", "replace")
            except OSError:
                continue
            if carries_provenance(head):
                u.notes.append(f"kept {u.out_dir / rel}: it has podplan's header but no manifest "
                               "says podplan wrote it; delete it if it is stale")


def prepare(out_dir: Path, files: Sequence[OutFile], manifest: str, force: bool = False) -> Update:
    """Work out the update of ``out_dir`` to ``files`` (``manifest``: the manifest's path
    among them); reads the tree, writes nothing."""
    _check_paths(files)
    check_root(out_dir)
    u = Update(out_dir=out_dir, forced=force)
    prev = read_manifest(out_dir, manifest)
    for f in files:
        old = _read(out_dir, f.path)
        if f.path == manifest:
            _add(u, f.path, f.content, old)
        elif is_stack_file(f.path):
            _stack(u, f, old, prev)
        else:
            _regular(u, f, old, prev)
    if prev is not None:
        _stale(u, prev, {f.path for f in files})
    elif out_dir.is_dir():
        _unrecorded_notes(u, files)
    return u


def apply(u: Update) -> None:
    """Write the update (all or nothing); refuse without ``--force`` if anything was refused."""
    if u.refusals and not u.forced:
        raise refused(u)
    commit(u.out_dir, u.writes, u.removed)


def refused(u: Update) -> PodplanError:
    """The error that names every refused path."""
    lines = [f"  {u.out_dir / r.path}: {r.reason}" for r in u.refusals]
    return PodplanError(
        "regenerating would overwrite or remove your changes; nothing was written "
        "(keep your changes in the spec or a site override, or rerun with --force):\n"
        + "\n".join(lines)
    )
