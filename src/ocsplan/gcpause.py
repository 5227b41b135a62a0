"""Pausing the cyclic garbage collector while many small acyclic objects are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc(keep: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector: building and running a simulation, or realizing and
    validating a plan, makes hundreds of thousands of small acyclic objects (freed by reference
    counting), and each collection would rescan every long-lived one.

    ``keep``: what was built is kept (a cached set-up, a command's report, a realization). Every
    object the collector tracks then joins its oldest generation at once (a freeze and an
    unfreeze: two list splices), so the first young collection after the pause does not walk
    all of it; full collections still see it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if keep:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
