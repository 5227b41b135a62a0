"""Shared fixtures: paths of the named instances."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"


@pytest.fixture
def instances_dir() -> Path:
    return INSTANCES


def instance_path(name: str) -> Path:
    return INSTANCES / f"{name}.toml"
