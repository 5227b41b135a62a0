"""Tasks for the executor tests; imports nothing heavy, so spawned workers start fast."""

from __future__ import annotations

import os
from pathlib import Path


def task(x: object) -> object:
    """An int squares; "fail" raises; "die" kills its worker (a segfault, an OOM kill);
    ("flaky", path) kills its worker the first time only (a marker file remembers)."""
    if x == "fail":
        raise ValueError("not allowed")
    if x == "die":
        os._exit(1)
    if isinstance(x, tuple):
        marker = Path(x[1])
        if not marker.exists():
            marker.write_text("x")
            os._exit(1)
        return "second time lucky"
    assert isinstance(x, int)
    return x * x
