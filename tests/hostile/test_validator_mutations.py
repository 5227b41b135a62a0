"""Random single corruptions of two realizations: each is rejected or semantically equal.

Issue 13's validator holes: a circuits file must not state anything the validator
(with the plan and the fabric) does not re-derive. Two realizations, Table 6
(paper App. A.5.1, ``paper-multimesh-n256``) on ``ocs-single`` and Megatron 5T
(Table 1) on ``nvl576-all-ocs``, get seeded random corruptions of one field each;
every corrupted file must be refused by the reader, faulted by ``validate`` plus
the fabric check, or read back to the same realization (up to the order of the
unordered lists). The counts are printed and in the test ids.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from functools import cache
from typing import Any

import pytest

from ocsplan.errors import PlanError
from ocsplan.plan import Plan
from ocsplan.realization.circuits import Circuits, circuits_from_dict, circuits_to_dict
from ocsplan.realization.fabric_check import fabric_faults
from ocsplan.realization.fabrics import FabricSpec
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate

from ..realize_cases import fabric, named_plan

CASES = {  # name: (instance, fabric, corruptions)
    "table6-ocs-single": ("paper-multimesh-n256", "ocs-single", 200),
    "megatron-nvl576-all-ocs": ("megatron-5t-n512-b1", "nvl576-all-ocs", 16),
}
# free text and provenance: stated for people, not claims (a changed path to the same fabric is fine)
COMMENTS = {"notes", "source"}


@cache
def realized(case: str) -> tuple[Plan, FabricSpec, Circuits]:
    instance, fabric_name, _ = CASES[case]
    plan = named_plan(instance)
    spec = fabric(fabric_name)
    return plan, spec, realize(plan, spec)


def canonical(c: Circuits) -> Any:
    """The realization with its unordered lists sorted and its comments dropped."""
    data = circuits_to_dict(c)
    data.pop("notes")
    data["fabric"].pop("source")
    data["circuits"].sort(key=json.dumps)
    for d in data["devices"]:
        d["cross_connects"] = sorted(sorted(pair) for pair in d["cross_connects"])
    data["devices"].sort(key=json.dumps)
    data["nodes"] = [sorted(node) for node in data["nodes"]]
    for r in data["routes"]:
        r["table"] = [[sorted([peer, sorted(ports)] for peer, ports in phase) for phase in node] for node in r["table"]]
    data["routes"].sort(key=json.dumps)
    return json.dumps(data, sort_keys=True)


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every scalar and every list (lists can lose, repeat or swap items)."""
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(leaves(item, (*path, key)))
    elif isinstance(value, list):
        out.append(path)
        for k, item in enumerate(value):
            out.extend(leaves(item, (*path, k)))
    else:
        out.append(path)
    return out


def sample_paths(data: dict[str, Any], rng: random.Random) -> Any:
    """A random path: a top-level section first (uniformly), then a leaf within it."""
    sections = [k for k in data if k not in ("schema", "notes")]
    while True:
        section = rng.choice(sections)
        value = data[section]
        path: tuple[Any, ...] = (section,)
        # descend a few random levels to keep the big lists cheap
        while isinstance(value, (dict, list)) and value and rng.random() < 0.85:
            key = rng.choice(list(value)) if isinstance(value, dict) else rng.randrange(len(value))
            value = value[key]
            path = (*path, key)
        if path[-1] in COMMENTS:
            continue
        return path


def get(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def mutate(value: Any, rng: random.Random) -> tuple[str, Any]:
    """(description, new value) of one corruption of ``value``."""
    if isinstance(value, bool) or value is None:
        return "toggled", (not value) if isinstance(value, bool) else 0
    if isinstance(value, int):
        delta = rng.choice([1, -1, 7, -7, 2])
        return f"{value} -> {value + delta}", value + delta
    if isinstance(value, float):
        factor = rng.choice([0.25, 0.5, 2.0, 1.0 + 1e-6])
        return f"x {factor}", value * factor
    if isinstance(value, str):
        options = ["intra-rack", "inter-rack", "single-level", "mixed", value + "x", value[:-1],
                   "ring:" + value, "contiguous", "bits", "ocs", "eps"]
        new = rng.choice([o for o in options if o != value])
        return f"{value!r} -> {new!r}", new
    if isinstance(value, list):
        if not value:
            return "empty list gains an item", [0]
        op = rng.choice(["drop", "repeat", "swap"] if len(value) > 1 else ["drop", "repeat"])
        items = list(value)
        k = rng.randrange(len(items))
        if op == "drop":
            del items[k]
        elif op == "repeat":
            items.insert(k, json.loads(json.dumps(items[k])))
        else:
            j = (k + 1 + rng.randrange(len(items) - 1)) % len(items)
            items[k], items[j] = items[j], items[k]
        return f"{op} item {k}", items
    assert isinstance(value, dict)
    key = rng.choice(sorted(value))
    return f"key {key!r} dropped", {k: v for k, v in value.items() if k != key}


def verdict(data: dict[str, Any], plan: Plan, spec: FabricSpec, original: str) -> str:
    try:
        c = circuits_from_dict(data, "mutant.json")
    except PlanError:
        return "refused by the reader"
    if fabric_faults(c, spec) or validate(c, plan):
        return "faulted by the validator"
    if canonical(c) == original:
        return "semantically equal"
    return "ACCEPTED"


@pytest.mark.parametrize("case", [f"{name}-{CASES[name][2]}-corruptions" for name in CASES])
def test_every_single_corruption_is_caught(case: str) -> None:
    name = case.rsplit("-", 2)[0]
    plan, spec, circuits = realized(name)
    assert not validate(circuits, plan) and not fabric_faults(circuits, spec)
    data = circuits_to_dict(circuits)
    original = canonical(circuits)
    rng = random.Random(f"issue13/{name}")
    tally: Counter[str] = Counter()
    accepted = []
    for _ in range(CASES[name][2]):
        path = sample_paths(data, rng)
        parent, key = get(data, path[:-1]), path[-1]
        old = parent[key]
        what, parent[key] = mutate(old, rng)
        result = verdict(data, plan, spec, original)
        parent[key] = old
        tally[result] += 1
        if result == "ACCEPTED":
            accepted.append(f"{'.'.join(map(str, path))}: {what}")
    print(f"{name}: {sum(tally.values())} corruptions: " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
    assert not accepted, accepted[:10]
    assert sum(tally.values()) == CASES[name][2]
