#!/usr/bin/python3
"""Ansible module: make a directory's files with a given prefix exactly a given set.

Writes each file whose content differs, removes files with the prefix that are no longer
wanted (a rail taken out of the plan), in one call: the fabric role writes one
systemd-networkd file per rail, and eight template tasks per node cost a round trip each.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DOCUMENTATION = r"""
module: podplan_files
short_description: Own the files with a prefix in a directory (write changed, remove stale).
options:
  path:
    description: Directory.
    type: path
    required: true
  prefix:
    description: File names this call owns start with it.
    type: str
    required: true
  files:
    description: File name to content.
    type: dict
    required: true
  mode:
    description: Mode of written files.
    type: str
    default: "0644"
author: podplan
"""


def plan(directory: Path, prefix: str, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """(names to write, names to remove)."""
    write = []
    for name, content in sorted(files.items()):
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            write.append(name)
    stale = sorted(
        p.name for p in directory.glob(f"{prefix}*") if p.is_file() and p.name not in files
    )
    return write, stale


def main() -> None:
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "prefix": {"type": "str", "required": True},
            "files": {"type": "dict", "required": True},
            "mode": {"type": "str", "default": "0644"},
        },
        supports_check_mode=True,
    )
    p = module.params
    directory = Path(p["path"])
    bad = [n for n in p["files"] if not n.startswith(p["prefix"]) or "/" in n]
    if bad:
        module.fail_json(msg=f"file names must start with {p['prefix']!r} and hold no '/': {bad}")
    if not directory.is_dir():
        module.fail_json(msg=f"{directory} is not a directory")
    write, stale = plan(directory, p["prefix"], {k: str(v) for k, v in p["files"].items()})
    if not module.check_mode:
        for name in write:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".podplan-")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(str(p["files"][name]))
            os.chmod(tmp, int(p["mode"], 8))
            os.replace(tmp, directory / name)
        for name in stale:
            (directory / name).unlink()
    module.exit_json(changed=bool(write or stale), written=write, removed=stale)


if __name__ == "__main__":
    main()
