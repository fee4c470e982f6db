"""Drain the nodes an acceptance run pins faults on, through ``scontrol``.

One ``scontrol update NodeName=<node> State=DRAIN Reason=<reason>`` per node, run as an
argument list (no shell). ``--scontrol`` may name another command: its words come first
and the scontrol arguments are appended; when that command is ``ssh`` (``ssh login01
scontrol``) the appended arguments are shell-quoted, because ssh hands its arguments to a
remote shell as one string. A drained node keeps running its jobs and takes no new ones;
``scontrol update NodeName=<node> State=RESUME`` undoes it after the repair.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from generator.errors import PodplanError

TIMEOUT_S = 60


def drain_argv(scontrol: str, node: str, reason: str) -> list[str]:
    """The command line that drains ``node`` with ``reason``."""
    words = shlex.split(scontrol)
    if not words:
        raise PodplanError("--scontrol is empty", problems=[])
    args = ["update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}"]
    if Path(words[0]).name == "ssh":
        args = [shlex.quote(a) for a in args]
    return [*words, *args]


def drain(reasons: dict[str, str], scontrol: str = "scontrol") -> list[str]:
    """Drain every node in ``reasons``; one line per node saying what happened. A node
    Slurm refuses to drain is reported, the others are still drained; a missing command
    is an error."""
    lines = []
    for node, reason in sorted(reasons.items()):
        argv = drain_argv(scontrol, node, reason)
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                               check=False)
        except FileNotFoundError:
            raise PodplanError(f"cannot drain {node}: {argv[0]} not found (run on a host with "
                               "Slurm's client commands, or pass --scontrol)") from None
        except subprocess.TimeoutExpired:
            lines.append(f"not drained {node}: {argv[0]} did not answer in {TIMEOUT_S} s")
            continue
        if r.returncode == 0:
            lines.append(f"drained {node}: {reason}")
        else:
            why = (r.stderr or r.stdout).strip().splitlines()
            lines.append(f"not drained {node}: {why[-1] if why else f'exit {r.returncode}'}")
    return lines
