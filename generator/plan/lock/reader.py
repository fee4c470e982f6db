"""The line reader under ``lock.read``: a lock line's names, numbers, flow mappings and
addresses, each checked, and every refusal raised as a ``PodplanError`` at its line with
the hint to restore the file (podplan writes it; a hand edit is never the fix)."""

from __future__ import annotations

import re

from generator.errors import PodplanError, Problem
from generator.plan.lock.model import Lock

__all__ = ["NAME", "Reader"]

NAME = r"[A-Za-z0-9][A-Za-z0-9._/-]*"
_TOKEN = re.compile(NAME)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")


class Reader:
    """Reads the fixed layout; ``fail`` raises a ``PodplanError`` naming the line."""

    def __init__(self, text: str, path: str) -> None:
        self.lines = text.split("\n")
        self.path = path
        self.lock = Lock(path, "", {}, [], {}, {}, [], {}, [])
        self.addresses: dict[tuple[str, str], str] = {}

    def fail(self, line: int, where: str, message: str, allowed: str | None = None) -> None:
        raise PodplanError(
            "the plan lock cannot be read",
            self.path,
            [
                Problem(
                    path=where,
                    message=message,
                    line=line,
                    allowed=allowed,
                    hint=(
                        "podplan writes this file; restore it from git (git checkout -- "
                        f"{self.path}), or plan with --fresh --force to number every device "
                        "afresh and replace it"
                    ),
                )
            ],
        )

    def token(self, value: str, line: int, where: str) -> str:
        if not _TOKEN.fullmatch(value):
            self.fail(line, where, f"{value!r} is not a name", "letters, digits, . _ / -")
        return value

    def number(self, value: str, line: int, where: str) -> int:
        if not value.isdigit() or int(value) < 1:
            self.fail(line, where, f"{value!r} is not a whole number", "1, 2, 3 ...")
        return int(value)

    def flow(self, text: str, line: int, where: str, keys: tuple[str, ...]) -> dict[str, str]:
        if not (text.startswith("{") and text.endswith("}")):
            self.fail(line, where, f"expected {{key: value, ...}}, found {text!r}")
        out: dict[str, str] = {}
        body = text[1:-1].strip()
        for item in body.split(", ") if body else []:
            key, sep, value = item.partition(": ")
            if not sep or key not in keys or key in out:
                why = "repeated" if key in out else "unknown"
                self.fail(line, f"{where}.{key}", f"{why} key {key!r}", ", ".join(keys))
            out[key] = value.strip()
        return out

    def address(self, value: str, line: int, where: str, net: str, owner: str) -> str:
        if not _IPV4.fullmatch(value):
            self.fail(line, where, f"{value!r} is not an IPv4 address")
        other = self.addresses.setdefault((net, value), owner)
        if other != owner:
            self.fail(line, where, f"{value} is also the {net} address of {other}")
        return value
