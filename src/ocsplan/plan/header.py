"""The JSON fields both plan schemas share (instance, method, status, budget, objective,
bound, notes), and the readers' bounds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cayley import str_to_mask
from ..fields import Fields
from ..limits import MAX_LATENCY_S, MAX_LINK_BPS, MAX_PORTS, MIN_LATENCY_S, MIN_LINK_BPS, check_float
from .types import Plan, Resilience

__all__ = ["BIG", "HEADER_KEYS", "footer_to_dict", "header_from_dict", "header_to_dict", "read_mask"]

BIG = 1e30  # bound of every time and volume field (the limits keep real values far below)
BIG_COUNT = 1 << 40  # bound of a count of circuits or faults


# the plan-level keys both schemas share (header and footer); each codec adds its own
HEADER_KEYS = frozenset({
    "schema", "instance", "method", "status", "world", "ports", "ports_used", "latency_s", "link_Bps",
    "objective_s", "bound_s", "gap", "resilience", "notes", "solve_seconds",
})
RESILIENCE_KEYS = ("faults", "stopped", "worst_s", "worst")


def header_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan-level fields before ``generators`` (in file order)."""
    return {
        "instance": plan.instance,
        "method": plan.method,
        "status": plan.status,
        "world": plan.world,
        "ports": plan.ports,
        "ports_used": plan.ports_used,
        "latency_s": plan.latency_s,
        "link_Bps": plan.link_Bps,
    }


def footer_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan-level fields after ``meshes`` (in file order)."""
    r = plan.resilience
    return {
        "objective_s": plan.objective_s,
        "bound_s": plan.bound_s,
        "gap": plan.gap,
        **({} if r is None else {"resilience": {"faults": r.faults, "stopped": r.stopped, "worst_s": r.worst_s,
                                                "worst": r.worst}}),
        "notes": list(plan.notes),
        "solve_seconds": plan.solve_seconds,
    }


def _resilience(data: Mapping[str, Any], f: Fields) -> Resilience | None:
    """The optional ``resilience`` object (solve --resilience), typed and bounded."""
    if "resilience" not in data:
        return None
    r = data["resilience"]
    if not isinstance(r, dict):
        raise f.fail("resilience", "expected an object")
    f.strict(r, RESILIENCE_KEYS, "resilience")
    worst_s = r.get("worst_s")
    faults = f.integer(r, "faults", "resilience", 0, BIG_COUNT)
    stopped = f.integer(r, "stopped", "resilience", 0, faults)
    worst = r.get("worst", "")
    if not isinstance(worst, str) or len(worst) > 200:
        raise f.fail("resilience.worst", "expected a string of at most 200 characters")
    return Resilience(faults, stopped,
                      None if worst_s is None else check_float(worst_s, f.fail, "resilience.worst_s", 0.0, BIG),
                      worst)


def header_from_dict(data: Mapping[str, Any], f: Fields, world: int, ports: int) -> dict[str, Any]:
    """The plan-level fields both constructions share, typed and bounded."""
    bound = data.get("bound_s")
    notes = data.get("notes", [])
    if not isinstance(notes, list):
        raise f.fail("notes", "expected a list")
    return {
        "instance": f.string(data, "instance", ""),
        "method": f.string(data, "method", ""),
        "status": f.string(data, "status", ""),
        "world": world,
        "ports": ports,
        "ports_used": f.integer(data, "ports_used", "", 0, 2 * MAX_PORTS * MAX_PORTS),
        "latency_s": f.number(data, "latency_s", "", MIN_LATENCY_S, MAX_LATENCY_S),
        "link_Bps": f.number(data, "link_Bps", "", MIN_LINK_BPS, MAX_LINK_BPS),
        "objective_s": f.number(data, "objective_s", "", 0.0, BIG),
        "bound_s": None if bound is None else check_float(bound, f.fail, "bound_s", 0.0, BIG),
        "solve_seconds": check_float(data.get("solve_seconds", 0.0), f.fail, "solve_seconds", 0.0, BIG),
        "notes": tuple(str(x) for x in notes),
        "resilience": _resilience(data, f),
    }


def read_mask(f: Fields, text: object, field: str, n: int) -> int:
    """A generator mask written as ``n`` binary digits."""
    if not isinstance(text, str) or len(text) != n:
        raise f.fail(field, f"expected a mask of {n} bits, got {str(text)[:40]!r}")
    try:
        return str_to_mask(text)
    except ValueError as exc:
        raise f.fail(field, str(exc)) from None
