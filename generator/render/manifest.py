"""The manifest: which files podplan wrote for a spec, and a hash of what it wrote in each.

``reports/<name>/manifest.json`` is written with the outputs (and meant to be committed with
them). It is how podplan keeps its side of the ownership contract:

* a file is podplan's exactly when the manifest lists it; every other file in the output
  tree is the user's, in whatever directory, and is never changed or removed;
* a listed file whose content no longer hashes to the recorded SHA-256 was edited by hand:
  regeneration refuses to overwrite or remove it without ``--force``;
* a listed file that podplan no longer generates (a removed node's host_vars, a dropped
  cloud's stack file) is removed.

Why a manifest rather than a hash in each file's header: JSON and CSV have no comments (a
hash field inside the data would have to exclude itself), a header hash cannot say which
files podplan wrote *last time* (needed to remove stale ones), and one file keeps the
bookkeeping out of files people read and diff. Each file still carries its provenance
header (or ``generated_by``/``regenerate`` fields) for people who find it on its own.

Stack files are shared with Pulumi (``emit.stack_secrets``), so for them the manifest
records the config keys podplan set, each with a digest of its value, instead of a file hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.emit.stack_secrets import is_stack_file, owned_digests
from generator.errors import PodplanError
from generator.render.files import OutFile, provenance_values

ABOUT = (
    "Files podplan wrote for this spec, with the SHA-256 of each as written (stack files: "
    "the config keys it set, with a digest of each value). podplan owns exactly these: it "
    "refuses to overwrite or remove one edited by hand without --force, and removes those it "
    "no longer generates. Every other file in the output tree is yours."
)


def manifest_path(cluster_name: str) -> str:
    """Where a cluster's manifest lives, relative to the output directory."""
    return f"reports/{cluster_name}/manifest.json"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Manifest:
    """What podplan wrote last time: file hashes, and stack-file key digests."""

    files: dict[str, str]
    stack_keys: dict[str, dict[str, str]]

    def paths(self) -> set[str]:
        """Every path podplan wrote, stack files included."""
        return set(self.files) | set(self.stack_keys)


def build_manifest(spec_file: str, path: str, files: Sequence[OutFile]) -> OutFile:
    """The manifest of ``files`` (the manifest does not list itself)."""
    hashes: dict[str, str] = {}
    keys: dict[str, dict[str, str]] = {}
    for f in files:
        if is_stack_file(f.path):
            keys[f.path] = owned_digests(f.content)
        else:
            hashes[f.path] = sha256_bytes(f.content.encode("utf-8"))
    generated_by, regenerate = provenance_values(spec_file)
    doc = {"generated_by": generated_by, "regenerate": regenerate, "about": ABOUT,
           "files": dict(sorted(hashes.items())),
           "stack_config_keys": {p: dict(sorted(k.items())) for p, k in sorted(keys.items())}}
    # Provenance first (for people who open it), then the sorted maps: deterministic.
    return OutFile(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def parse_manifest(text: str) -> Manifest:
    """A manifest's data; ``ValueError`` when the text is not one."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}, line {exc.lineno})") from None
    files = doc.get("files") if isinstance(doc, dict) else None
    keys = doc.get("stack_config_keys", {}) if isinstance(doc, dict) else None
    if not _string_map(files) or not isinstance(keys, dict) or not all(
        _string_map(v) for v in keys.values()
    ):
        raise ValueError("no 'files' map of path -> SHA-256")
    assert isinstance(files, dict)  # for mypy: checked above
    return Manifest(files=dict(files), stack_keys={k: dict(v) for k, v in keys.items()})


def read_manifest(out_dir: Path, path: str) -> Manifest | None:
    """The manifest on disk, ``None`` when there is none (a first run, or a tree written
    before manifests); a damaged one is a user error, never silently ignored."""
    target = out_dir / path
    try:
        return parse_manifest(target.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise PodplanError(
            f"cannot read podplan's manifest {target}: {why}; restore it from version control "
            "(or delete it: podplan then replaces only files that carry its header and "
            "removes nothing)"
        ) from None
