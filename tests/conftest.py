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


# 16 accelerators in 4 racks of 4, 2 ports; leaves 4 down + 4 up; 2 spines per rail, each reaching a leaf
# over 2 down-links: 4 equal uplinks at a leaf, 2 equal down-links at a spine, so the world axis crosses
# racks and Simlette's spraying granularity decides its links (tests of --spray)
EPS_TINY = """
name = "eps-tiny"
accelerators = 16
ports = 2
link = "400Gb/s"
[racks]
size = 4
[[level]]
technology = "eps"
radix = 8
down = 4
up = 4
[[level]]
technology = "eps"
radix = 8
"""
