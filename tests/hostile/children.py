"""What a child of :mod:`tests.hostile.forked` runs in its own tests (``python -c`` runs the same):
a crash, an allocation past ``RLIMIT_AS``, a hang. Imports nothing but the standard library."""

from __future__ import annotations

import time

__all__ = ["allocate_2_gib", "crash", "hang"]


def crash() -> None:
    """An uncaught exception: its traceback on stderr, status 1."""
    raise RuntimeError("a deliberate crash")


def allocate_2_gib() -> None:
    """2 GiB at once: a ``MemoryError`` under a 1 GiB ``RLIMIT_AS``."""
    block = bytearray(2 << 30)
    print(len(block))


def hang() -> None:
    """Longer than any timeout the tests give it."""
    time.sleep(600)
