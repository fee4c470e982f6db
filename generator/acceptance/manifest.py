"""``run.json``, the manifest the ladder writes next to a run's outputs, checked.

Written by ``ansible/roles/slurm_acceptance/tasks/collect.yml``; every field is optional
(outputs collected by hand in the same layout have no manifest), but a field that is there
must have the ladder's shape: a run directory of something else, or a hand-edited manifest
gone wrong, is a clear error (exit 2), never a comparison of the wrong thing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from generator.errors import PodplanError


class _Loose(BaseModel):
    """Strict types for the fields read, anything else kept (the ladder may add fields)."""

    model_config = ConfigDict(strict=True, extra="allow")


class Rail(_Loose):
    device: str


class Rung(_Loose):
    name: str
    status: str
    detail: Any = None


class Manifest(_Loose):
    """The fields ``podplan accept`` reads from run.json."""

    cluster: str | None = None
    run: str | None = Field(default=None, pattern=r"^\d{8}T\d{6}Z$")
    started: str | None = None
    gpu_nodes: list[str] = Field(default_factory=list)
    gpus_per_node: int | None = None
    rails: list[Rail] = Field(default_factory=list)
    nccl_nodes: dict[str, list[str]] = Field(default_factory=dict)
    rungs: list[Rung] = Field(default_factory=list)


def _problem(err: ValidationError) -> str:
    e = err.errors()[0]
    where = ".".join(str(p) for p in e["loc"]) or "(top level)"
    if e["type"] == "string_pattern_mismatch":
        return f"'{where}' must look like 20260101T120000Z, not {e['input']!r}"
    msg = "should be a JSON object" if e["type"] == "model_type" else e["msg"].lower()
    return f"'{where}': {msg}, not {json.dumps(e['input'])[:80]}"


def read_manifest(root: Path) -> Manifest:
    """run.json of a run directory (an empty manifest when there is none)."""
    path = root / "run.json"
    if not path.is_file():
        return Manifest()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PodplanError(f"not JSON ({exc})", str(path)) from None
    if not isinstance(doc, dict):
        raise PodplanError("not a ladder run manifest: a JSON object expected",
                           str(path))
    try:
        m = Manifest.model_validate(doc)
    except ValidationError as exc:
        raise PodplanError(f"not a ladder run manifest: {_problem(exc)}",
                           str(path)) from None
    bad = [k for k in m.nccl_nodes if not k.isdigit()]
    if bad:
        raise PodplanError(f"not a ladder run manifest: 'nccl_nodes' keys are "
                           f"node counts, not {bad[0]!r}", str(path))
    return m
