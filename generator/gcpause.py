"""One pause of CPython's cycle collector, for the stages that build or search many objects.

The sizing search and the plan/BOM/report builders make tens of thousands of objects with no
reference cycles (frozen models, cached layouts): reference counting frees what they drop, and
every full collection the allocations trigger only walks live objects (an eighth of an MoE
layout sweep, a visible share of a 2,048-node plan). The collector's state is restored after.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cycle collector for the block; re-enable it only if it was enabled."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def spare_exit_collection() -> None:
    """Freeze every live object at interpreter exit, so its final cycle collections skip them.

    A ``podplan`` process ends right after its command: the interpreter's shutdown collections
    then walk every object the imports and the command left (matplotlib, pydantic schemas, a
    2,048-node plan's caches), only to find no cycles: about a tenth of a second of a
    ``plan``. The exit handler runs after the command's files are closed and its output
    flushed; objects are still freed by reference counting and the OS takes the rest.
    Registered once per process, so in-process callers (tests) are unaffected until they exit.
    """
    global _exit_registered
    if not _exit_registered:
        atexit.register(gc.freeze)
        _exit_registered = True


_exit_registered = False
