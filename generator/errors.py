"""One exception family for everything a user can get wrong.

The CLI turns a ``PodplanError`` into a one-screen message and exit code 2; anything else
is a bug and may show a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, located as precisely as we can.

    Attributes:
        path: dotted field path inside the document, e.g. ``workloads[0].kind``.
        message: what is wrong, in the user's terms.
        line: 1-based line in the source file, when known.
        allowed: what would be accepted (values, range or shape), when it helps.
        hint: a did-you-mean or a fix, when we have one.
    """

    path: str
    message: str
    line: int | None = None
    allowed: str | None = None
    hint: str | None = None


@dataclass
class PodplanError(Exception):
    """An error meant for the user: bad input, impossible combination, unwritable output."""

    summary: str
    source: str | None = None
    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return format_error(self)


def format_error(err: PodplanError) -> str:
    """Render the error as the user sees it: file, line, field path, allowed values, hint."""
    head = f"error: {err.summary}"
    if err.source:
        head = f"error: {err.source}: {err.summary}"
    lines = [head]
    for p in err.problems:
        loc = f"{err.source}:{p.line}" if err.source and p.line else (err.source or "")
        prefix = f"  {loc}: " if loc else "  "
        where = f"{p.path}: " if p.path else ""
        lines.append(f"{prefix}{where}{p.message}")
        if p.allowed:
            lines.append(f"      allowed: {p.allowed}")
        if p.hint:
            lines.append(f"      hint: {p.hint}")
    return "\n".join(lines)
