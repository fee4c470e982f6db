"""Pydantic's validation errors, retold in the user's terms.

Pydantic locates an error inside its own machinery: union members (``hot_spares.int``,
``hot_spares.literal['auto']``), discriminator tags (``workloads.0.training.model.id``), and
words like ``int_parsing``. A user wrote YAML. Here every error becomes one ``Problem`` at the
field path as written (``hardware.hot_spares``), with what was given, what is allowed (read
from the spec model itself, bounds included) and a did-you-mean; the several errors one union
field raises are told as one.
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from generator.errors import Problem
from generator.spec import limits
from generator.spec.synonyms import KEY_SYNONYMS, KIND_SYNONYMS

Loc = tuple[str | int, ...]
LineOf = Callable[[Loc], int | None]

_TAG_WORDS = {
    "id": "a catalog id",
    "inline": "an inline architecture mapping",
    "training": "a training workload",
    "inference": "an inference workload",
}
_RANGE_ERRORS = {
    "greater_than": "greater than {gt}",
    "greater_than_equal": "at least {ge}",
    "less_than": "less than {lt}",
    "less_than_equal": "at most {le}",
    "string_too_short": "at least {min_length} character(s) long",
    "string_too_long": "at most {max_length} characters long",
}
_LENGTH_ERRORS = {"too_short", "too_long"}
_OWN_MESSAGE = {"value_error", "assertion_error", "missing", "string_pattern_mismatch",
                *_RANGE_ERRORS, *_LENGTH_ERRORS}
"""Error types that say something of their own; any other is a type mismatch, told as
'must be <what the field takes>, not <what was given>'."""


def format_path(loc: Loc) -> str:
    """``('workloads', 0, 'kind')`` -> ``workloads[0].kind``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def did_you_mean(word: str, choices: list[str]) -> str | None:
    """A close match for a misspelled key or value, as a hint (a choice the word is the last
    part of, 'heads' for attention_heads, counts as close)."""
    match = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not match:
        match = [c for c in choices if c.endswith("_" + word)][:1]
    if not match:  # 'h100' for the catalog's h100-nvl-94gb, h100-pcie-80gb, h100-sxm-80gb
        match = [c for c in choices if c.lower().startswith(word.lower() + "-")]
        if len(match) > 1:
            return "did you mean one of " + ", ".join(f"'{c}'" for c in match) + "?"
    return f"did you mean '{match[0]}'?" if match else None


def show(value: Any) -> str:
    """A value as the user wrote it, short: ``'foo'``, ``true``, ``.inf``, ``a list``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing (null)"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        return ("-.inf" if value < 0 else ".inf") if math.isinf(value) else f"{value:g}"
    if isinstance(value, int):
        return limits.number(value)
    words: dict[type, str] = {list: "a list", dict: "a mapping", bytes: "binary data",
                              set: "a set"}
    return words.get(type(value), f"a {type(value).__name__}")


# --- the model behind a location -------------------------------------------------------------

def _unwrap(tp: Any, value: Any) -> type[BaseModel] | None:
    """The model class a value of annotation ``tp`` validates into, if any."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        disc = next((m for m in args[1:] if hasattr(m, "discriminator")), None)
        if disc is not None and callable(disc.discriminator):
            tag = disc.discriminator(value)
            for option in typing.get_args(args[0]):
                meta = typing.get_args(option)[1:] if typing.get_origin(option) else ()
                if any(getattr(m, "tag", None) == tag for m in meta):
                    return _unwrap(typing.get_args(option)[0], value)
            return None
        return _unwrap(args[0], value)
    if origin in (typing.Union, types.UnionType):
        found = [m for o in typing.get_args(tp) if (m := _unwrap(o, value)) is not None]
        return found[0] if len(found) == 1 else None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    return None


def field_at(loc: Loc, data: Any, root: type[BaseModel]) -> tuple[str, Any, FieldInfo | None]:
    """(owning model name, annotation, field info) of the value at ``loc``, or ('', None, None).

    Walks the spec models alongside the user's data, so discriminated unions (workload kind,
    model id or inline) resolve to the member the data selects.
    """
    model: type[BaseModel] | None = root
    owner, tp, info = "", None, None
    cur = data
    for part in loc:
        if isinstance(part, int):
            args = typing.get_args(tp)
            cur = cur[part] if isinstance(cur, list) and 0 <= part < len(cur) else None
            tp, info = (args[0] if args else None), None
            model = _unwrap(tp, cur) if tp is not None else None
            continue
        if model is None or part not in model.model_fields:
            return "", None, None
        owner, info = model.__name__, model.model_fields[part]
        tp = info.annotation
        cur = cur.get(part) if isinstance(cur, dict) else None
        model = None if typing.get_origin(tp) is list else _unwrap(tp, cur)
    return owner, tp, info


def model_at(loc: Loc, data: Any, root: type[BaseModel]) -> type[BaseModel] | None:
    """The spec model whose keys live at ``loc`` (for unknown-key did-you-means)."""
    if not loc:
        return root
    _, tp, _ = field_at(loc, data, root)
    value = _value_at(loc, data)
    return _unwrap(tp, value) if tp is not None else None


def _value_at(loc: Loc, data: Any) -> Any:
    cur = data
    for part in loc:
        in_dict = isinstance(cur, dict) and part in cur
        in_list = isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur)
        if not (in_dict or in_list):
            return None
        cur = cur[part]
    return cur


def user_loc(loc: tuple[Any, ...], data: Any, root: type[BaseModel]) -> Loc:
    """Pydantic's location without union members and tags: only keys and indexes the user
    wrote, plus a missing field's own name."""
    out: list[str | int] = []
    cur: Any = data
    for part in loc:
        if isinstance(part, int) and isinstance(cur, list):
            out.append(part)
            cur = cur[part] if 0 <= part < len(cur) else None
        elif isinstance(part, str) and isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(part, str) and _is_field(tuple(out), part, data, root):
            out.append(part)
            cur = None
    return tuple(out)


def _is_field(loc: Loc, name: str, data: Any, root: type[BaseModel]) -> bool:
    model = model_at(loc, data, root)
    return model is not None and name in model.model_fields


# --- what is allowed --------------------------------------------------------------------------

def choices_of(tp: Any) -> list[str]:
    """The literal or enum values an annotation accepts (for did-you-mean)."""
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return [str(v) for v in typing.get_args(tp)]
    if origin in (typing.Union, types.UnionType, typing.Annotated, list):
        args = typing.get_args(tp)
        members = args[:1] if origin is typing.Annotated else args
        return [c for a in members for c in choices_of(a)]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return [str(m.value) for m in tp]
    return []


def _only_choices(tp: Any) -> bool:
    """The annotation accepts nothing but literal or enum values (None aside)."""
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return _only_choices(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return all(_only_choices(a) for a in typing.get_args(tp) if a is not type(None))
    return isinstance(tp, type) and issubclass(tp, Enum)


def _range(owner: str, name: str, info: FieldInfo | None) -> str:
    bound = limits.BOUNDS.get((owner, name))
    if bound is not None:
        return f" from {limits.number(bound.low)} to {limits.number(bound.high)}"
    words = []
    for m in info.metadata if info else []:
        for attr, text in (("gt", "greater than"), ("ge", "at least"), ("lt", "below"),
                           ("le", "at most")):
            if getattr(m, attr, None) is not None:
                words.append(f"{text} {getattr(m, attr)}")
    return f" {' and '.join(words)}" if words else ""


def describe(tp: Any, owner: str = "", name: str = "", info: FieldInfo | None = None) -> str:
    """What an annotation accepts, in words: ``a whole number from 1 to 65,536``."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        args = typing.get_args(tp)
        tag = next((getattr(m, "tag", None) for m in args[1:] if hasattr(m, "tag")), None)
        return _TAG_WORDS.get(str(tag)) or describe(args[0], owner, name, info)
    if origin in (typing.Union, types.UnionType):
        parts = [describe(a, owner, name, info) for a in typing.get_args(tp)
                 if a is not type(None)]
        return " or ".join(dict.fromkeys(parts))
    if origin is typing.Literal:
        return " or ".join(repr(v) if isinstance(v, str) else str(v) for v in typing.get_args(tp))
    if origin is list:
        return f"a list, each item {describe(typing.get_args(tp)[0])}"
    if isinstance(tp, type):
        return _describe_type(tp, owner, name, info)
    return "a valid value"


def _describe_type(tp: type, owner: str, name: str, info: FieldInfo | None) -> str:
    if issubclass(tp, Enum):
        return "one of " + ", ".join(str(m.value) for m in tp)
    if issubclass(tp, BaseModel):
        return f"a mapping with keys {', '.join(tp.model_fields)}"
    if tp is bool:
        return "true or false"
    if tp is int:
        return "a whole number" + _range(owner, name, info)
    if tp is float:
        return "a number" + _range(owner, name, info)
    if tp is str:
        return "text"
    return "a valid value"


# --- one problem per field --------------------------------------------------------------------

def _kind_hint(kind: object, known: list[str]) -> str | None:
    if not isinstance(kind, str):
        return None
    return KIND_SYNONYMS.get(kind.strip().lower()) or did_you_mean(kind, known)


def _kind_problem(loc: Loc, data: Any, line_of: LineOf) -> Problem:
    from generator.spec.models import WORKLOAD_KINDS

    item = _value_at(loc, data)
    if not isinstance(item, dict):
        return Problem(
            path=format_path(loc), message=f"must be a workload mapping, not {show(item)}",
            line=line_of(loc), allowed="a mapping with name, kind, model and the work to do",
        )
    kind = item.get("kind")
    kloc = (*loc, "kind")
    known = list(WORKLOAD_KINDS)
    message = "is required" if kind is None else f"unknown kind {show(kind)}"
    hint = _kind_hint(kind, known)
    return Problem(path=format_path(kloc), message=message, line=line_of(kloc),
                   allowed=", ".join(known), hint=hint)


def _unknown_key(loc: Loc, data: Any, root: type[BaseModel], line: int | None) -> Problem:
    key = str(loc[-1])
    parent = model_at(loc[:-1], data, root)
    allowed = list(parent.model_fields) if parent else []
    meant = KEY_SYNONYMS.get(key.lower())
    hint = (f"did you mean '{meant}'?" if meant in allowed else None) or did_you_mean(
        key, _missing_required(parent, loc[:-1], data)) or did_you_mean(key, allowed)
    return Problem(path=format_path(loc), message=f"unknown key '{key}'", line=line,
                   allowed=", ".join(allowed) or None, hint=hint)


def _missing_required(model: type[BaseModel] | None, loc: Loc, data: Any) -> list[str]:
    """Required fields the mapping at ``loc`` lacks: a misspelt key most likely meant one
    of them ('heads' where attention_heads is missing, not the optional kv_heads)."""
    node: Any = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return []
    if model is None or not isinstance(node, dict):
        return []
    return [name for name, f in model.model_fields.items()
            if f.is_required() and name not in node]


def _field_problem(
    loc: Loc, errors: list[dict[str, Any]], data: Any, root: type[BaseModel], line: int | None
) -> list[Problem]:
    """The problems of one field: its own messages first, else one 'must be X, not Y'."""
    owner, tp, info = field_at(loc, data, root)
    name = str(loc[-1]) if loc else ""
    allowed = describe(tp, owner, name, info) if tp is not None else None
    path = format_path(loc)
    own = [e for e in errors if e["type"] in _OWN_MESSAGE]
    if own:
        return [_own_problem(path, e, line, allowed) for e in own]
    value = errors[0].get("input")
    choices = choices_of(tp)
    if allowed is None:
        raw = str(errors[0].get("msg", "is not valid"))
        return [Problem(path=path, message=raw.replace("Input should be", "must be"), line=line)]
    if choices and _only_choices(tp):
        return [Problem(path=path, message=f"{show(value)} is not one of the choices",
                        line=line, allowed=", ".join(choices),
                        hint=did_you_mean(str(value), choices))]
    hint = did_you_mean(str(value), choices) if choices and isinstance(value, str) else None
    return [Problem(path=path, message=f"must be {allowed}, not {show(value)}", line=line,
                    hint=hint)]


def _own_problem(path: str, err: dict[str, Any], line: int | None, allowed: str | None) -> Problem:
    kind = err["type"]
    if kind == "missing":
        return Problem(path=path, message="is required", line=line, allowed=allowed)
    if kind == "string_pattern_mismatch":
        return Problem(path=path, message=f"{show(err.get('input'))} has characters not allowed",
                       line=line, allowed=_pattern_words(str(err["ctx"]["pattern"])))
    if kind in _LENGTH_ERRORS:
        ctx = err.get("ctx") or {}
        n = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        side = "at least" if kind == "too_short" else "at most"
        return Problem(path=path, line=line, allowed=allowed,
                       message=f"must have {side} {n} item{'s' if n != 1 else ''}, "
                               f"not {ctx.get('actual_length', 'fewer')}")
    if kind in _RANGE_ERRORS:
        must = _RANGE_ERRORS[kind].format(**(err.get("ctx") or {}))
        return Problem(path=path, message=f"must be {must}, not {show(err.get('input'))}",
                       line=line, allowed=allowed)
    message = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    # a field's own check ('hot_spares must be >= 0 or auto') said what was wrong but not what
    # the field takes; plain text adds nothing, so only a described type is shown
    shown = allowed if allowed and not allowed.endswith("text") else None
    return Problem(path=path, message=message, line=line, allowed=shown)


_PATTERNS = {
    r"^[a-z0-9-]+$": "lower-case letters, digits and '-'",
    r"^[a-z0-9][a-z0-9_-]*$": "lower-case letters, digits, '-' and '_', starting with a "
                              "letter or digit",
}


def _pattern_words(pattern: str) -> str:
    return _PATTERNS.get(pattern, f"text matching {pattern}")


def problems(
    errors: list[dict[str, Any]], data: Any, root: type[BaseModel], line_of: LineOf
) -> list[Problem]:
    """One located problem per field (in document order of the errors)."""
    grouped: dict[Loc, list[dict[str, Any]]] = {}
    out: list[Problem] = []
    for err in errors:
        loc = user_loc(tuple(err["loc"]), data, root)
        if err["type"] == "extra_forbidden":
            out.append(_unknown_key(loc, data, root, line_of(loc)))
        elif err["type"] in ("union_tag_not_found", "union_tag_invalid"):
            out.append(_kind_problem(loc, data, line_of))
        else:
            grouped.setdefault(loc, []).append(err)
    for loc, errs in grouped.items():
        out += _field_problem(loc, errs, data, root, line_of(loc))
    return out
