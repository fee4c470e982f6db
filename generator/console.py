"""How the ``podplan`` command talks: exit codes, errors on stderr, verbosity and colour.

Exit codes (documented in the README):

* 0 - done;
* 2 - a user error: bad spec, bad option, unwritable ``--out``; one screen on stderr naming
  the file, line and field;
* 1 - an internal error, i.e. a bug in podplan: one line on stderr asking for a report, and
  the traceback only with ``--verbose`` or ``PODPLAN_DEBUG=1``;
* 130 - interrupted (Ctrl-C); 141 - the reader of stdout went away (``podplan bom | head``).

Results go to stdout, everything else (errors, progress) to stderr. ``--quiet`` drops the
informational lines (``ok:``, the files written), never results or errors; colour is used on
a terminal only and never when ``NO_COLOR`` is set (https://no-color.org).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

import click

from generator.errors import PodplanError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USER = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


@dataclass
class Verbosity:
    """The ``--quiet``/``--verbose`` level of the running command."""

    quiet: bool = False
    verbose: bool = False


LEVEL = Verbosity()


def set_level(quiet: bool = False, verbose: bool = False) -> None:
    """Raise the level from an option (options may repeat on the group and the command)."""
    LEVEL.quiet = LEVEL.quiet or quiet
    LEVEL.verbose = LEVEL.verbose or verbose


def info(message: str) -> None:
    """An informational line on stdout, dropped by ``--quiet``."""
    if not LEVEL.quiet:
        click.echo(message)


def warn(message: str) -> None:
    """A warning on stderr, shown even with ``--quiet`` (it is about the result)."""
    click.echo(f"warning: {message}", err=True)


def detail(message: str) -> None:
    """A line on stdout shown only with ``--verbose``."""
    if LEVEL.verbose and not LEVEL.quiet:
        click.echo(message)


def use_color(stream: object) -> bool:
    """Colour only on a terminal, never with ``NO_COLOR`` set (to anything but empty)."""
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def error(text: str) -> None:
    """An error screen on stderr, its ``error:`` prefix in red on a terminal."""
    stream = sys.stderr
    if use_color(stream) and text.startswith("error:"):
        text = click.style("error:", fg="red", bold=True) + text[len("error:"):]
    click.echo(text, err=True, color=use_color(stream))


def _debug_requested(argv: Sequence[str]) -> bool:
    flags = {"-v", "--verbose"}
    return os.environ.get("PODPLAN_DEBUG", "") not in ("", "0") or any(a in flags for a in argv)


def _internal(exc: BaseException, argv: Sequence[str]) -> int:
    what = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    if len(what) > 300:
        what = what[:297] + "..."
    if _debug_requested(argv):
        traceback.print_exception(exc, file=sys.stderr)
    error(f"error: internal error: {what}\n"
          "  This is a bug in podplan: please report it with the spec that caused it "
          "(rerun with --verbose or PODPLAN_DEBUG=1 for the traceback).")
    return EXIT_INTERNAL


def run(command: click.Command, argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default: the process arguments) and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    LEVEL.quiet = LEVEL.verbose = False
    try:
        rv = command.main(args=args, prog_name="podplan", standalone_mode=False)
    except PodplanError as err:
        error(str(err))
        return EXIT_USER
    except click.exceptions.Abort:
        return EXIT_INTERRUPTED
    except click.ClickException as err:
        err.show()
        return EXIT_USER if err.exit_code == 2 else err.exit_code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        return _internal(exc, args)
    return rv if isinstance(rv, int) else EXIT_OK


def _silence_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so the interpreter's flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
