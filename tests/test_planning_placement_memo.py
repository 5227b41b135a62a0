"""The placements remembered across instances (planning.search.PLACEMENTS) give the plans fresh ones give."""

from __future__ import annotations

import json

import pytest

from ocsplan.plan import dumps_plan
from ocsplan.planning import search
from ocsplan.planning.registry import solve
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import Split, instance_for, load_model

from .conftest import ROOT

CASES = [("megatron-5t", Split(4, 128, 16, 32), 1), ("megatron-5t", Split(4, 128, 16, 32), 4),
         ("megatron-5t", Split(4, 128, 8, 64), 2), ("megatron-5t", Split(4, 128, 4, 128), 1),
         ("gpt-oss-5.3-like", Split(32, 16, 16, 32), 1), ("gpt-oss-5.3-like", Split(32, 16, 16, 32), 8)]


def _plan(model: str, split: Split, batch: int) -> dict[str, object]:
    spec = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-ocs.toml")
    instance = instance_for(load_model(model), 512, split, batch, ports=spec.ports,
                            latency=spec.latency.hop(ocs=1), link=spec.link, name="memo")
    body: dict[str, object] = json.loads(dumps_plan(solve(instance)))
    body.pop("solve_seconds")
    return body


def test_remembered_placements_give_the_fresh_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each instance planned with the memo emptied first, then all in turn sharing it: the same plans,
    with fewer placements made (the shared run took some made for an earlier instance)."""
    monkeypatch.setattr(search, "PLACEMENTS", {})
    made = [0]
    real = search.Search._place

    def counted(self: search.Search, *args: object) -> object:
        made[0] += 1
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(search.Search, "_place", counted)
    fresh = []
    for case in CASES:
        search.PLACEMENTS.clear()
        fresh.append(_plan(*case))
    fresh_made, made[0] = made[0], 0
    search.PLACEMENTS.clear()
    shared = [_plan(*case) for case in CASES]
    assert shared == fresh
    assert 0 < made[0] < fresh_made


def test_the_memo_is_emptied_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "PLACEMENTS", {("x",): ()})
    monkeypatch.setattr(search, "PLACEMENTS_MAX", 1)
    plan = _plan(*CASES[0])
    search.PLACEMENTS.clear()
    assert plan == _plan(*CASES[0])
    assert len(search.PLACEMENTS) <= 1
