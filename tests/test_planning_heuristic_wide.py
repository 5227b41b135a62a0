"""The heuristic's shortlist of partition classes (issue 12 item 5, the `wide` family).

With more than SHORTLIST_FROM classes it screens a shortlist ranked by two cheap
proxies, then hill-climbs on the screening over swap neighbours. The reference is the
same heuristic screening every class (the shortlist switched off), an independent path
through the partition loop.
"""

from __future__ import annotations

import pytest

from ocsplan.plan import dumps_plan
from ocsplan.planning import shortlist
from ocsplan.planning.check import check_plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.studies.families import generate_instance

# n = 6: 72 and 117 partition classes
CASES = [("wide", 5, 0), ("wide", 5, 29)]


@pytest.mark.parametrize(("family", "seed", "index"), CASES)
def test_shortlist_matches_screening_every_class(
    family: str, seed: int, index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    inst = generate_instance(family, seed, index, 4, 6)
    plan = plan_heuristic(inst)
    assert check_plan(plan, inst) == []
    assert any("shortlist" in note for note in plan.notes)
    monkeypatch.setattr(shortlist, "SHORTLIST_FROM", 10**9)
    full = plan_heuristic(inst)
    assert not any("shortlist" in note for note in full.notes)
    assert plan.objective_s <= full.objective_s * (1 + 1e-12)


def test_shortlist_is_deterministic() -> None:
    inst = generate_instance("wide", 5, 29, 4, 6)
    first, second = plan_heuristic(inst), plan_heuristic(inst)

    def body(text: str) -> str:
        return "\n".join(line for line in text.splitlines() if "solve_seconds" not in line)

    assert body(dumps_plan(first)) == body(dumps_plan(second))
