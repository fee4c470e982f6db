"""One pause of CPython's cycle collector, for the stages that build or search many objects.

The sizing search and the plan/BOM/report builders make tens of thousands of objects with no
reference cycles (frozen models, cached layouts): reference counting frees what they drop, and
every full collection the allocations trigger only walks live objects (an eighth of an MoE
layout sweep, a visible share of a 2,048-node plan). The collector's state is restored after.
"""

from __future__ import annotations

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
