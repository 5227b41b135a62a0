"""Plans and fabrics shared by the realization tests (solved once per test run)."""

from __future__ import annotations

import tomllib
from functools import cache

from ocsplan.instance import load_instance, loads_instance
from ocsplan.plan import Plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.fabrics import FabricSpec, load_fabric, parse_fabric

from .conftest import ROOT, instance_path

FABRICS = ROOT / "simulate" / "fabrics"

# 64 serving accelerators in 8 racks of 8 (12 racks installed), 8 ports, level-1 OCS
# with 8 down / 8 up, level-2 OCS of radix 24: 12 racks x 2 cables = 24 ports, so each
# rail has 4 level-2 devices with fan-out 2 (wiring rule in ocsplan.realization.wiring).
SMALL_FABRIC = """
name = "small-two-level"
accelerators = 96
ports = 8
link = "400Gb/s"
[racks]
size = 8
serving = 8
[[level]]
technology = "ocs"
radix = 16
down = 8
up = 8
[[level]]
technology = "ocs"
radix = 24
"""

SMALL_INSTANCE = """
name = "small-n64"
[fabric]
world = 64
ports = 8
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "m"
shape = [8, 8]
axes = [
  { collective = "all-reduce", payload = "4KiB" },
  { collective = "all-gather", payload = "64KiB" },
]
"""


@cache
def named_plan(name: str) -> Plan:
    return plan_heuristic(load_instance(instance_path(name)))


@cache
def small_plan() -> Plan:
    return plan_heuristic(loads_instance(SMALL_INSTANCE, "small-n64.toml"))


def fabric(name: str) -> FabricSpec:
    return load_fabric(FABRICS / f"{name}.toml")


def small_fabric(text: str = SMALL_FABRIC) -> FabricSpec:
    return parse_fabric(tomllib.loads(text), "small-two-level.toml")
