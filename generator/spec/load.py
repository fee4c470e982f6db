"""Read a spec file into a validated ``Spec``, or fail with a one-screen, located error.

Errors name the file, the line, the field path (``workloads[0].kind``), what is allowed,
and a did-you-mean for misspelled keys and values, so a user never has to read a traceback.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from generator.errors import PodplanError, Problem
from generator.spec.models import WORKLOAD_KINDS, Spec

# Tags of the discriminated unions; they show up in pydantic's error locations but are not
# keys a user wrote.
_UNION_TAGS = {"training", "inference", "id", "inline"}
_MAX_PROBLEMS = 12


@dataclass(frozen=True)
class LoadedLines:
    """Line lookup over a parsed document."""

    lines: dict[tuple[str | int, ...], int]

    def line_of(self, loc: tuple[str | int, ...]) -> int | None:
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


def _node_lines(
    node: yaml.Node, loc: tuple[str | int, ...], out: dict[tuple[str | int, ...], int]
) -> None:
    out[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            k = key.value
            out[(*loc, k)] = key.start_mark.line + 1
            _node_lines(value, (*loc, k), out)
            out[(*loc, k)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _node_lines(item, (*loc, i), out)


def parse_yaml(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    """Parse YAML and map every key/item path to its 1-based line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise PodplanError(
            "is not valid YAML", source, [Problem(path="", message=str(problem), line=line)]
        ) from None
    lines: dict[tuple[str | int, ...], int] = {}
    if node is not None:
        _node_lines(node, (), lines)
    return data, lines


def format_path(loc: tuple[str | int, ...]) -> str:
    """``('workloads', 0, 'kind')`` -> ``workloads[0].kind``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _user_loc(loc: tuple[Any, ...], data: Any) -> tuple[str | int, ...]:
    """Drop union tags from a pydantic location by walking the user's data alongside it."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        if (
            isinstance(part, str)
            and part in _UNION_TAGS
            and not (isinstance(cur, dict) and part in cur)
        ):
            continue
        out.append(part)
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and isinstance(part, int) and part < len(cur):
            cur = cur[part]
        else:
            cur = None
    return tuple(out)


def _unwrap(tp: Any, value: Any) -> Any:
    """The model class a value of annotation ``tp`` validates into, if any."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        disc = next((m for m in args[1:] if hasattr(m, "discriminator")), None)
        inner = args[0]
        if disc is not None and callable(disc.discriminator):
            tag = disc.discriminator(value)
            for option in typing.get_args(inner):
                meta = typing.get_args(option)[1:] if typing.get_origin(option) else ()
                if any(getattr(m, "tag", None) == tag for m in meta):
                    return _unwrap(typing.get_args(option)[0], value)
        return _unwrap(inner, value)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(tp):
            found = _unwrap(option, value)
            if found is not None:
                return found
        return None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    return None


def model_at(loc: tuple[str | int, ...], data: Any) -> type[BaseModel] | None:
    """The spec model whose fields live at ``loc`` in the user's data (for did-you-mean)."""
    model: type[BaseModel] | None = Spec
    cur = data
    pending: Any = None
    for part in loc:
        if isinstance(part, int):
            cur = cur[part] if isinstance(cur, list) and part < len(cur) else None
            item_tp = typing.get_args(pending)[0] if typing.get_args(pending) else None
            model = _unwrap(item_tp, cur) if item_tp is not None else None
            continue
        if model is None or part not in model.model_fields:
            return None
        pending = model.model_fields[part].annotation
        cur = cur.get(part) if isinstance(cur, dict) else None
        if typing.get_origin(pending) is list:
            model = None
            continue
        model = _unwrap(pending, cur)
    return model


def did_you_mean(word: str, choices: list[str]) -> str | None:
    """A close match for a misspelled key or id, as a hint."""
    match = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean '{match[0]}'?" if match else None


def _expected_values(err: dict[str, Any]) -> list[str]:
    ctx = err.get("ctx") or {}
    expected = ctx.get("expected")
    if not isinstance(expected, str):
        return []
    return [v.strip().strip("'\"") for v in expected.replace(" or ", ",").split(",") if v.strip()]


def _problem(err: dict[str, Any], data: Any, lines: LoadedLines) -> Problem:
    loc = _user_loc(err["loc"], data)
    line = lines.line_of(loc)
    if err["type"] == "extra_forbidden":
        key = str(loc[-1])
        parent = model_at(loc[:-1], data)
        allowed = sorted(parent.model_fields) if parent else []
        return Problem(
            path=format_path(loc),
            message=f"unknown key '{key}'",
            line=line,
            allowed=", ".join(allowed) or None,
            hint=did_you_mean(key, allowed),
        )
    if err["type"] == "union_tag_not_found" and loc[:1] == ("workloads",):
        kind = data["workloads"][loc[1]].get("kind") if isinstance(loc[1], int) else None
        kloc = (*loc, "kind")
        message = "is required" if kind is None else f"unknown kind '{kind}'"
        return Problem(
            path=format_path(kloc),
            message=message,
            line=lines.line_of(kloc),
            allowed=", ".join(WORKLOAD_KINDS),
            hint=did_you_mean(str(kind), list(WORKLOAD_KINDS)) if kind else None,
        )
    if err["type"] == "string_pattern_mismatch":
        return Problem(
            path=format_path(loc),
            message=f"'{err.get('input')}' has characters not allowed",
            line=line,
            allowed=f"text matching {err['ctx']['pattern']}",
        )
    choices = _expected_values(err)
    hint = did_you_mean(str(err.get("input")), choices) if choices else None
    message = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        message = "is required"
    return Problem(
        path=format_path(loc),
        message=message,
        line=line,
        allowed=", ".join(choices) or None,
        hint=hint,
    )


def _fail(source: str, problems: list[Problem]) -> PodplanError:
    n = len(problems)
    shown = problems[:_MAX_PROBLEMS]
    if n > _MAX_PROBLEMS:
        shown.append(Problem(path="", message=f"... and {n - _MAX_PROBLEMS} more problems"))
    noun = "problem" if n == 1 else "problems"
    return PodplanError(f"spec is not valid ({n} {noun})", source, shown)


def validate_data(data: Any, source: str, lines: dict[tuple[str | int, ...], int]) -> Spec:
    """Validate parsed YAML into a ``Spec`` or raise a located ``PodplanError``."""
    if not isinstance(data, dict):
        raise PodplanError(
            "spec must be a mapping with 'name' and 'workloads'",
            source,
            [Problem(path="", message=f"got {type(data).__name__}", line=1)],
        )
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        located = LoadedLines(lines)
        problems = [_problem(dict(e), data, located) for e in exc.errors()]
        raise _fail(source, problems) from None


def load_spec(path: str | Path) -> LoadedSpec:
    """Read, parse and validate a spec file (catalog references are checked by ``resolve``)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PodplanError("spec file not found", source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PodplanError(f"cannot read spec file ({exc})", source) from None
    data, lines = parse_yaml(text, source)
    spec = validate_data(data, source, lines)
    return LoadedSpec(spec=spec, path=source, lines=LoadedLines(lines))


def enum_values(enum: type[Enum]) -> str:
    """Allowed values of an enum, for messages."""
    return " | ".join(str(m.value) for m in enum)
