"""A small block-style YAML emitter for plain data, fast enough for 2,000-host inventories.

PyYAML's representer walks every scalar through its resolver; for the tens of thousands of
scalars in a large plan that dominates ``podplan plan``. Our outputs are plain data (mappings
with string keys, lists, strings, numbers, booleans, None), so we emit them directly: keys
sorted, block style, and any string that is not unmistakably a plain word is written as a JSON
double-quoted scalar (valid YAML). Round-trip safety is tested against ``yaml.safe_load``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

# Plain (unquoted) strings: start with a letter, '/', or '_', then a conservative alphabet.
# No ':', '#', spaces or leading digits, so nothing can be read back as another type or syntax.
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+-]*\Z")
# Characters YAML will not read raw inside a double-quoted scalar (non-printables, and the
# Unicode line breaks it would fold): written as \u escapes instead.
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")
# YAML 1.1 words PyYAML resolves to booleans or null.
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def scalar(value: Any) -> str:
    """One scalar as YAML text that reads back to the same value and type."""
    if type(value) is str:  # most scalars, keys included: exact types first, then the ABCs
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):  # a subclass (a str enum): its own text, uncached
        return _quote(value)
    raise TypeError(f"cannot emit {type(value).__name__} as YAML")


def _quote(value: str) -> str:
    if _PLAIN.match(value) and value.lower() not in _RESERVED:
        return value
    quoted = json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


#: ``_quote`` cached for exact ``str`` values: a 2,000-host inventory repeats the same keys
#: and values in every host's file (``True`` and ``1`` never reach it, so never collide).
_string = lru_cache(maxsize=1 << 16)(_quote)


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:  # PyYAML's float pattern needs a dot: 1e+20 -> 1.0e+20
        text = text.replace("e", ".0e", 1)
    return text


_CONTAINERS = (dict, list, tuple)


def _is_leaf(value: Any) -> bool:
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return True
    if t in _CONTAINERS:
        return not value
    return not isinstance(value, Mapping | list | tuple) or not value


def _leaf(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return scalar(value)


_SCALARS = frozenset({int, float, bool, type(None)})


def _inline(value: Any) -> str | None:
    """The text of a value written on its own line (a scalar or an empty container), or None
    for a mapping or sequence with items.

    The exact built-in types are told apart by ``type`` first: a 2,000-host inventory has
    ~130,000 scalars, and the ``Mapping`` ABC check ``_leaf`` needs for anything else costs
    more than the scalar's text.
    """
    t = type(value)
    if t is str:
        return _string(value)
    if t in _SCALARS:
        return scalar(value)
    if t in _CONTAINERS:
        return None if value else "{}" if t is dict else "[]"
    return _leaf(value) if _is_leaf(value) else None


def _mapping(data: Mapping[str, Any], pad: str, out: list[str]) -> None:
    for key in sorted(data):
        value = data[key]
        k = _string(key) if type(key) is str else scalar(key)
        text = _inline(value)
        if text is not None:
            out.append(f"{pad}{k}: {text}")
        elif isinstance(value, Mapping):
            out.append(f"{pad}{k}:")
            _mapping(value, pad + "  ", out)
        else:
            out.append(f"{pad}{k}:")
            _sequence(value, pad, out)


def _sequence(data: Sequence[Any], pad: str, out: list[str]) -> None:
    for item in data:
        text = _inline(item)
        if text is not None:
            out.append(f"{pad}- {text}")
            continue
        inner: list[str] = []
        if isinstance(item, Mapping):
            _mapping(item, pad + "  ", inner)
        else:
            _sequence(item, pad + "  ", inner)
        inner[0] = f"{pad}- " + inner[0][len(pad) + 2 :]
        out.extend(inner)


def dump(data: Any) -> str:
    """``data`` as a YAML document (``---`` first, sorted keys, block style)."""
    out = ["---"]
    if _is_leaf(data):
        out.append(_leaf(data))
    elif isinstance(data, Mapping):
        _mapping(data, "", out)
    else:
        _sequence(data, "", out)
    return "\n".join(out) + "\n"


# --- Reading it back ---------------------------------------------------------------------
# ``podplan plan --diff`` compares the plan.yaml on disk with the new one. PyYAML, even with
# libyaml, needs seconds for a 2,048-node plan; the subset written above (and by the plan.yaml
# emitter in ``emit.reports``) reads back with a line scanner in a fraction of that. Anything
# outside the subset falls back to PyYAML, so the result is always ``yaml.safe_load``'s.

_KEY = re.compile(r'(?:("(?:[^"\\]|\\.)*")|([A-Za-z0-9_./@+-](?:[A-Za-z0-9_./@+ -]*[^ :])?)):'
                  r"(?: (.*))?\Z")
_PLAIN_KEY = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+ -]*\Z")  # plan.yaml keys may hold spaces
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*(?:e[-+]?[0-9]+)?\Z")
_CONSTANTS = {"null": None, "true": True, "false": False, ".nan": math.nan, ".inf": math.inf,
              "-.inf": -math.inf}  # fmt: skip


class _Unsupported(Exception):
    """A line outside the subset the emitters write."""


def _read_scalar(text: str) -> Any:
    if text[0] == '"':
        value = json.loads(text)
        if not isinstance(value, str):
            raise _Unsupported(text)
        return value
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    raise _Unsupported(text)


def _split(body: str, keys: dict[str, str]) -> tuple[str, str | None] | None:
    """``key: value`` -> (key, value text), ``key:`` -> (key, None), else ``None``."""
    if body[0] == '"':
        m = _KEY.match(body)
        if m is None or m.group(1) is None:
            return None
        return str(json.loads(m.group(1))), m.group(3)
    head, sep, rest = body.partition(": ")
    if not sep:
        if body[-1] != ":":
            return None
        head, rest_opt = body[:-1], None
    else:
        rest_opt = rest
    key = keys.get(head)
    if key is None:
        if not _PLAIN_KEY.match(head) or head.lower() in _RESERVED or head.endswith(" "):
            raise _Unsupported(head)
        key = keys[head] = head
    return key, rest_opt


class _Reader:
    """A recursive reader over (indent, text) lines; scalars and keys are memoized because
    a plan repeats the same few thousand of them (names of fields, models, racks)."""

    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.i = 0
        self.keys: dict[str, str] = {}
        self.scalars: dict[str, Any] = {}

    def scalar(self, text: str) -> Any:
        value = self.scalars.get(text, self)
        if value is self:
            value = _read_scalar(text)
            if type(value) is dict or type(value) is list:
                return value  # a fresh empty container each time
            self.scalars[text] = value
        return value

    def block(self, indent: int) -> Any:
        if self.lines[self.i][1].startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        lines, n, keys = self.lines, len(self.lines), self.keys
        while self.i < n:
            ind, body = lines[self.i]
            if ind != indent or body.startswith("- "):
                if ind > indent:
                    raise _Unsupported(body)
                break
            kv = _split(body, keys)
            if kv is None:
                raise _Unsupported(body)
            key, rest = kv
            self.i += 1
            if rest is not None:
                out[key] = self.scalar(rest)
            elif self.i < n and lines[self.i][0] > indent:
                out[key] = self.block(lines[self.i][0])
            elif self.i < n and lines[self.i][0] == indent and lines[self.i][1].startswith("- "):
                out[key] = self.sequence(indent)
            else:
                raise _Unsupported(body)
        return out

    def sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        lines, n = self.lines, len(self.lines)
        while self.i < n:
            ind, body = lines[self.i]
            if ind != indent or not body.startswith("- "):
                break
            rest = body[2:]
            if rest.startswith("- ") or _split(rest, self.keys) is not None:
                lines[self.i] = (indent + 2, rest)
                out.append(self.block(indent + 2))
            else:
                out.append(self.scalar(rest))
                self.i += 1
        return out


def _fast_load(text: str) -> Any:
    lines = [(len(ln) - len(ln.lstrip(" ")), ln.lstrip(" ")) for ln in text.split("\n")]
    lines = [ln for ln in lines if ln[1] and not ln[1].startswith("#")]
    if not lines or lines[0] != (0, "---"):
        raise _Unsupported("no document start")
    reader = _Reader(lines[1:])
    if not reader.lines:
        raise _Unsupported("empty document")
    if len(reader.lines) == 1 and _split(reader.lines[0][1], {}) is None:
        return _read_scalar(reader.lines[0][1])
    value = reader.block(0)
    if reader.i != len(reader.lines):
        raise _Unsupported(reader.lines[reader.i][1])
    return value


def load(text: str) -> Any:
    """Read YAML written by ``dump`` (or the plan.yaml emitter) fast; anything else through
    PyYAML's safe loader (libyaml's when installed)."""
    try:
        return _fast_load(text)
    except (_Unsupported, ValueError, IndexError):
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader)  # a safe loader
