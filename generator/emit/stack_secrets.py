"""A generated ``Pulumi.<stack>.yaml`` is shared: podplan owns its keys, the user owns the rest.

Pulumi writes into the same file podplan generates: ``pulumi config set aws:profile prod``,
``pulumi config set --path 'app:a.b[0]' x``, ``--secret`` values (``{secure: v1:...}``), the
stack's ``encryptionsalt`` / ``encryptedkey`` / ``secretsprovider`` and an ``environment``
list. So ownership in a stack file is per key, not per file:

* podplan owns the top-level ``config`` keys it generated last time; the manifest records
  them with a digest of each value (``owned_digests``);
* every other key, at any depth, and every top-level entry but ``config`` is the user's and is
  carried into the regenerated file unchanged in value (comments and the original quoting
  are not kept: the file is re-serialized, sorted, the way podplan writes YAML);
* a podplan key whose value no longer matches its digest was changed by the user
  (``pulumi config set`` on a generated key): regeneration refuses without ``--force``;
  so it does when podplan starts generating a key the user had already set to another value;
* keys podplan generated last time and no longer generates are dropped.

Values are compared the way Pulumi reads them: a plain config value is a string, so ``3`` and
``"3"`` are the same setting (the Pulumi CLI may rewrite one as the other).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from generator.render import fastyaml

STACK_FILES = "stacks/*/Pulumi.*.yaml"


def is_stack_file(path: str) -> bool:
    """Whether ``path`` (relative to the output directory) is a Pulumi stack settings file."""
    return fnmatch.fnmatch(path, STACK_FILES)


class _Loader(yaml.SafeLoader):
    """YAML as the Pulumi CLI reads it, near enough: dates stay strings and only
    ``true``/``false`` are booleans (YAML 1.2), so ``no`` or ``2024-01-01`` keep their text."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}  # fmt: skip
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_stack(text: str) -> dict[str, Any]:
    """A stack file's data; ``ValueError`` when it is not a YAML mapping with a mapping
    ``config`` (a file podplan cannot merge without losing something)."""
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML ({str(exc).splitlines()[0]})") from None
    data = {} if data is None else data
    if not isinstance(data, dict) or not isinstance(data.get("config") or {}, dict):
        raise ValueError("not a Pulumi stack file (a mapping with a 'config' mapping)")
    return data


def _as_pulumi_reads(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _as_pulumi_reads(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_pulumi_reads(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def value_digest(value: Any) -> str:
    """SHA-256 of a config value as Pulumi reads it (scalars as strings)."""
    canon = json.dumps(_as_pulumi_reads(value), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def owned_digests(generated: str) -> dict[str, str]:
    """The config keys of a generated stack file with the digest of each value."""
    config = load_stack(generated).get("config") or {}
    return {key: value_digest(value) for key, value in config.items()}


@dataclass
class StackMerge:
    """The regenerated file's text, and the podplan keys it could not take over cleanly."""

    text: str
    edited: list[str] = field(default_factory=list)  # podplan's keys the user changed
    taken: list[str] = field(default_factory=list)  # user keys podplan now sets differently


def _previous_keys(old_config: dict[str, Any], new_config: dict[str, Any],
                   previous: dict[str, str] | None) -> dict[str, str | None]:
    """podplan's keys last time with their digests; without a record (a tree written before
    manifests), the keys podplan generates now that are in the file and hold no secret."""
    if previous is not None:
        return dict(previous)
    return {
        k: None for k in new_config
        if k in old_config and not (isinstance(old_config[k], dict) and "secure" in old_config[k])
    }  # fmt: skip


def merge_stack(existing: str, generated: str, previous: dict[str, str] | None) -> StackMerge:
    """``generated`` with every user setting found in ``existing`` carried over.

    ``previous`` is what the manifest recorded for this file (key -> digest), ``None`` when
    there is no record. Raises ``ValueError`` when ``existing`` cannot be read as a stack file.
    """
    old = load_stack(existing)
    new = load_stack(generated)
    old_config: dict[str, Any] = old.get("config") or {}
    new_config: dict[str, Any] = new.get("config") or {}
    mine = _previous_keys(old_config, new_config, previous)
    result = StackMerge(text=generated)
    for key, digest in sorted(mine.items()):
        if digest is not None and (key not in old_config
                                   or value_digest(old_config[key]) != digest):
            result.edited.append(key)
    config = {k: v for k, v in old_config.items() if k not in mine}
    result.taken = sorted(
        k for k, v in new_config.items()
        if k in config and value_digest(config[k]) != value_digest(v)
    )  # fmt: skip
    config.update(new_config)
    merged = {**{k: v for k, v in old.items() if k != "config"}, **new, "config": config}
    if merged != new:
        header = generated.partition("---\n")[0]  # podplan's comment lines
        try:
            result.text = header + fastyaml.dump(merged)
        except TypeError as exc:  # e.g. mixed key types deep in a user's object value
            raise ValueError(f"holds a value podplan cannot re-serialize ({exc})") from None
    return result
