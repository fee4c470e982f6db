"""Keep what the user added to a generated ``Pulumi.<stack>.yaml`` when podplan rewrites it.

After ``pulumi config set --secret sshPublicKey …`` Pulumi stores the encrypted value, and the
stack's ``encryptionsalt``, in the same file podplan generates. Regenerating must not throw
them away, so before writing we carry the user's secure entries and the encryption settings
from the existing file into the new one. Everything else stays exactly as generated.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import yaml

from generator.render import fastyaml
from generator.render.files import OutFile

STACK_FILES = "stacks/*/Pulumi.*.yaml"
_ENCRYPTION_KEYS = ("encryptionsalt", "encryptedkey", "secretsprovider")


def _user_settings(existing: str) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        old = yaml.safe_load(existing) or {}
    except yaml.YAMLError:
        return {}, {}
    if not isinstance(old, dict):
        return {}, {}
    top = {k: old[k] for k in _ENCRYPTION_KEYS if k in old}
    config = old.get("config") or {}
    secure = (
        {k: v for k, v in config.items() if isinstance(v, dict) and "secure" in v}
        if isinstance(config, dict)
        else {}
    )
    return top, secure


def keep_user_secrets(existing: str, generated: str) -> str:
    """``generated`` plus the encryption settings and secure values found in ``existing``."""
    top, secure = _user_settings(existing)
    if not top and not secure:
        return generated
    data = yaml.safe_load(generated)
    data.update(top)
    data.setdefault("config", {}).update(secure)
    lines = generated.splitlines(keepends=True)
    header = "".join(line for line in lines[: len(lines)] if line.startswith("#"))
    return header + fastyaml.dump(data)


def merge_with_existing(out_dir: Path, files: list[OutFile]) -> list[OutFile]:
    """Apply ``keep_user_secrets`` to generated stack files that already exist on disk."""
    merged = []
    for f in files:
        target = out_dir / f.path
        if fnmatch.fnmatch(f.path, STACK_FILES) and target.is_file():
            f = OutFile(f.path, keep_user_secrets(target.read_text(encoding="utf-8"), f.content))
        merged.append(f)
    return merged
