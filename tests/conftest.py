"""Shared fixtures: paths of the named instances."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment; the tests
# expect what a plain run sees (unset: piped output is 200 columns wide), and set it themselves.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"


@pytest.fixture
def instances_dir() -> Path:
    return INSTANCES


def instance_path(name: str) -> Path:
    return INSTANCES / f"{name}.toml"
