"""Resilience as a plan property (``solve --resilience``): the worst single circuit fault.

A circuit fault's cost is Eq. 1 on the degraded demands (a parallel circuit lost, a relay, or a
fallback schedule; :mod:`.faults`): it depends on the plan's generators and which circuit is lost,
not on where the ranks sit, so the plan is realized on an ideal single-level OCS of its own size
(one device per port index, radix = world) and every circuit fault is priced there. The worst is
named by its ranks and generator, which every realization of the plan shares.
"""

from __future__ import annotations

from ..errors import InstanceError, PlanError
from ..plan import Plan, Resilience
from ..realization.fabrics import parse_fabric
from ..realization.realize import realize
from .faults import MAX_FAULTS, analyse_faults, check_match

__all__ = ["resilience"]


def resilience(plan: Plan, option: str = "--resilience") -> Resilience:
    """Every single circuit fault of ``plan`` priced; InstanceError naming ``option`` when the plan
    has more circuits than :data:`~ocsplan.deploy.faults.MAX_FAULTS` or a construction the
    faults analysis does not handle (stacked, ring)."""
    circuits_total = plan.world * plan.ports_used // 2
    if circuits_total > MAX_FAULTS:
        raise InstanceError(option, "", f"the plan has about {circuits_total:,} circuits, more than the "
                                        f"{MAX_FAULTS:,} faults analysed at most (ocsplan faults --sample)")
    spec = parse_fabric({"name": "ideal-single-level", "accelerators": plan.world, "ports": plan.ports,
                         "link": "400Gb/s", "level": [{"technology": "ocs", "radix": plan.world}]},
                        "<ideal fabric>")
    circuits = realize(plan, spec)
    try:
        check_match(circuits, plan, option)
    except PlanError as exc:  # a stacked or ring plan
        raise InstanceError(option, "", str(exc).removeprefix(f"{option}: ")) from None
    report = analyse_faults(circuits, plan, "circuit")
    s = report.summary
    worst = s.worst_running
    if worst is None:
        return Resilience(s.count, s.stopped, None, "")
    x = circuits.circuits[int(worst.id.partition(":")[2])]
    return Resilience(s.count, s.stopped, worst.objective, f"ranks {x.a}-{x.b}, generator {x.generator}")
