"""Parsers for the exact output of each tool the acceptance ladder runs.

Each parser takes the text of one file and returns plain data plus the ``Issue``s it met
(a truncated run, an error line, a table it cannot read): a broken measurement is a
finding in the report, not a crash of the comparator.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    """Something in a tool's output that is not a measurement: where and what."""

    file: str
    line: int | None
    message: str

    def text(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


def number(token: str) -> float | None:
    """A float, or None for ``N/A``, ``[N/A]``, ``[Not Supported]`` and the like."""
    try:
        return float(token.strip().strip("[]"))
    except ValueError:
        return None
