"""The fork server of the subprocess-per-case tests (:mod:`tests.hostile.forked`): one per pytest
worker, started by the first test that asks for it and ended with the session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .forked import ForkServer

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="session")
def fork_server() -> Iterator[ForkServer]:
    server = ForkServer(str(ROOT / "src"))
    try:
        yield server
    finally:
        server.close()
