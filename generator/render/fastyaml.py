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
    if isinstance(value, str):
        if _PLAIN.match(value) and value.lower() not in _RESERVED:
            return value
        quoted = json.dumps(value, ensure_ascii=False)
        return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    raise TypeError(f"cannot emit {type(value).__name__} as YAML")


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:  # PyYAML's float pattern needs a dot: 1e+20 -> 1.0e+20
        text = text.replace("e", ".0e", 1)
    return text


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple) or not value


def _leaf(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return scalar(value)


def _mapping(data: Mapping[str, Any], pad: str, out: list[str]) -> None:
    for key in sorted(data):
        value = data[key]
        k = scalar(key)
        if _is_leaf(value):
            out.append(f"{pad}{k}: {_leaf(value)}")
        elif isinstance(value, Mapping):
            out.append(f"{pad}{k}:")
            _mapping(value, pad + "  ", out)
        else:
            out.append(f"{pad}{k}:")
            _sequence(value, pad, out)


def _sequence(data: Sequence[Any], pad: str, out: list[str]) -> None:
    for item in data:
        if _is_leaf(item):
            out.append(f"{pad}- {_leaf(item)}")
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
