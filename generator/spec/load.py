"""Read a spec file into a validated ``Spec``, or fail with a one-screen, located error.

Three gates, each answering with the file, the line, the field path (``workloads[0].kind``),
what is allowed and a did-you-mean: the hardened YAML reader (``safeyaml``: size, depth,
aliases, duplicate keys), the spec models (pydantic, retold by ``messages``), and the sane
ranges of ``limits``. Whatever passes all three can be sized and planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from generator.errors import PodplanError, Problem
from generator.spec import limits, safeyaml
from generator.spec.messages import did_you_mean, format_path, problems
from generator.spec.models import Spec

__all__ = [
    "LoadedLines",
    "LoadedSpec",
    "did_you_mean",
    "format_path",
    "load_spec",
    "parse_yaml",
    "read_text",
    "validate_data",
    "yaml_problem",
]

_MAX_PROBLEMS = 12

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class LoadedLines:
    """Line lookup over a parsed document."""

    lines: dict[Loc, int]

    def line_of(self, loc: Loc) -> int | None:
        """Line of the deepest located prefix of ``loc``."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return None


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec and where it came from (for headers and later error messages)."""

    spec: Spec
    path: str
    lines: LoadedLines


def yaml_problem(exc: yaml.YAMLError, text: str) -> Problem:
    """The parser's complaint, located: marks for syntax errors, positions for bad characters."""
    if isinstance(exc, yaml.reader.ReaderError):
        at = text.count("\n", 0, exc.position) + 1
        char = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        return Problem(path="", message=f"character {char} is not allowed in YAML", line=at)
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem = f"{problem} ({context} on line {context_mark.line + 1})"
    loc = getattr(exc, "loc", ())
    return Problem(path=format_path(loc), message=str(problem), line=line)


def parse_yaml(text: str, source: str) -> tuple[Any, dict[Loc, int]]:
    """Parse YAML and map every key/item path to its 1-based line."""
    try:
        return safeyaml.load(text)
    except yaml.YAMLError as exc:
        raise PodplanError("is not valid YAML", source, [yaml_problem(exc, text)]) from None


def _fail(source: str, found: list[Problem]) -> PodplanError:
    found = sorted(found, key=lambda p: p.line if p.line is not None else 1 << 30)
    n = len(found)
    shown = found[:_MAX_PROBLEMS]
    if n > _MAX_PROBLEMS:
        shown.append(Problem(path="", message=f"... and {n - _MAX_PROBLEMS} more problems"))
    noun = "problem" if n == 1 else "problems"
    return PodplanError(f"spec is not valid ({n} {noun})", source, shown)


def limit_problems(spec: Spec, lines: LoadedLines) -> list[Problem]:
    """Values outside ``limits``, located."""
    return [
        Problem(path=format_path(v.loc), message=v.message, line=lines.line_of(v.loc),
                allowed=v.allowed)
        for v in limits.violations(spec)
    ]


def duplicate_name_problems(data: dict[str, Any], located: LoadedLines) -> list[Problem]:
    """Each repeated workload name, located at the repeat and naming the first use: the
    model's own uniqueness check can only point at the whole list."""
    workloads = data.get("workloads")
    if not isinstance(workloads, list):
        return []
    seen: dict[str, int] = {}
    out = []
    for j, w in enumerate(workloads):
        name = w.get("name") if isinstance(w, dict) else None
        if not isinstance(name, str):
            continue
        if name not in seen:
            seen[name] = j
            continue
        first = seen[name]
        where = located.line_of(("workloads", first, "name"))
        out.append(Problem(
            path=f"workloads[{j}].name", line=located.line_of(("workloads", j, "name")),
            message=f"workload name '{name}' is already used by workloads[{first}]"
                    + (f" (line {where})" if where else ""),
            allowed="a name no other workload of the spec has"))
    return out


def validate_data(data: Any, source: str, lines: dict[Loc, int]) -> Spec:
    """Validate parsed YAML into a ``Spec`` or raise a located ``PodplanError``."""
    located = LoadedLines(lines)
    if not isinstance(data, dict):
        what = "an empty file" if data is None else f"a {type(data).__name__}"
        raise PodplanError(
            "spec must be a mapping with 'name' and 'workloads'",
            source,
            [Problem(path="", message=f"got {what}", line=1)],
        )
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        errors = [dict(e) for e in exc.errors()]
        found = problems(errors, data, Spec, located.line_of)
        repeats = duplicate_name_problems(data, located)
        if repeats:
            found = [p for p in found if "names must be unique" not in p.message] + repeats
        raise _fail(source, found) from None
    found = limit_problems(spec, located)
    if found:
        raise _fail(source, found)
    return spec


def read_text(path: str | Path, what: str = "spec file") -> str:
    """The file's text: UTF-8, at most ``MAX_SPEC_BYTES``, or a located error."""
    source = str(path)
    try:
        with Path(path).open("rb") as f:
            raw = f.read(safeyaml.MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise PodplanError(f"{what} not found", source) from None
    except IsADirectoryError:
        raise PodplanError(f"is a directory, not a {what}", source) from None
    except OSError as exc:
        raise PodplanError(f"cannot read {what} ({exc.strerror or exc})", source) from None
    if len(raw) > safeyaml.MAX_SPEC_BYTES:
        raise PodplanError(
            f"{what} is larger than {safeyaml.MAX_SPEC_BYTES // 1024} KiB; it should be a few "
            "kilobytes", source)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        byte = raw[exc.start:exc.start + 1].hex()
        raise PodplanError("is not UTF-8 text", source, [
            Problem(path="", message=f"byte 0x{byte} cannot be decoded", line=line)
        ]) from None


def load_spec(path: str | Path) -> LoadedSpec:
    """Read, parse and validate a spec file (catalog references are checked by ``resolve``)."""
    source = str(path)
    data, lines = parse_yaml(read_text(path), source)
    spec = validate_data(data, source, lines)
    return LoadedSpec(spec=spec, path=source, lines=LoadedLines(lines))
