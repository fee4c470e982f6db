"""Run ``podplan`` in-process through its real entry point, ``generator.cli.main``."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

from generator.cli import main

GOOD = """\
name: ok-spec
workloads:
  - name: finetune
    kind: lora
    model: llama2-7b
    steps: 10
"""


@dataclass(frozen=True)
class Ran:
    """Exit code, stdout and stderr of one run."""

    code: int
    out: str
    err: str


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal (for colour)."""

    def isatty(self) -> bool:
        return True


def podplan(*args: str, tty: bool = False) -> Ran:
    """``podplan ARGS`` in-process; ``tty`` makes stderr look like a terminal."""
    out, err = io.StringIO(), (Terminal() if tty else io.StringIO())
    code: int | str | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as done:
            code = done.code
    assert isinstance(code, int), f"main() must exit with a code, got {code!r}"
    return Ran(code, out.getvalue(), err.getvalue())


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p
