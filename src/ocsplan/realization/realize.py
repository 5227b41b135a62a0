"""Realization: a plan as port-colored circuits and OCS cross-connects (DESIGN §6).

One entry point, one table: each plan kind's realizer
(:func:`~ocsplan.realization.shared_host.realize_shared_host`,
:func:`~ocsplan.realization.stacked.realize_stacked`) chooses the ports; both
route the circuits through the fabric with :mod:`ocsplan.realization.paths`.
Anything the fabric cannot carry raises :class:`RealizationError`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..gcpause import paused_gc
from ..plan import SHARED_HOST, STACKED, Plan, plan_kind
from .circuits import Circuits
from .fabrics import FabricSpec
from .paths import PortAssignment
from .shared_host import realize_shared_host, shared_host_ports
from .stacked import realize_stacked, stacked_ports

__all__ = ["PORT_ASSIGNERS", "REALIZERS", "port_assignment", "realize"]

# plan kind -> realizer(plan, fabric, placement, routing)
REALIZERS: dict[str, Callable[[Plan, FabricSpec, str, bool], Circuits]] = {
    SHARED_HOST: realize_shared_host,
    STACKED: lambda plan, fabric, placement, routing: realize_stacked(plan, fabric, placement),
}
# plan kind -> port assigner(plan, routing)
PORT_ASSIGNERS: dict[str, Callable[[Plan, bool], PortAssignment]] = {
    SHARED_HOST: shared_host_ports,
    STACKED: lambda plan, routing: stacked_ports(plan),
}


def realize(plan: Plan, fabric: FabricSpec, placement: str = "contiguous", routing: bool = True) -> Circuits:
    """Map every circuit of ``plan`` onto ports and OCS devices of ``fabric``.

    ``routing=False`` leaves the routing tables out (``routes`` empty): the
    simulator reads only circuits, and the tables are most of the time (stacked
    plans always carry theirs).

    Raises RealizationError (exit status 3) when the fabric cannot carry the
    plan: EPS levels, too few accelerators or ports, circuits between devices
    of a single level, more inter-rack circuits than uplinks.
    """
    with paused_gc(keep=True):  # millions of small acyclic objects at N = 65536
        return REALIZERS[plan_kind(plan)](plan, fabric, placement, routing)


def port_assignment(plan: Plan, routing: bool = True) -> PortAssignment:
    """What :func:`realize` derives from ``plan`` alone (ports per generator, reserve, routing
    tables), whatever the fabric and placement; stacked plans always carry their tables."""
    return PORT_ASSIGNERS[plan_kind(plan)](plan, routing)
