"""Fabric technologies as one table: what an all-OCS, all-EPS or hybrid fabric is and can do.

:func:`technology` decides a fabric's technology from its levels (``ocs``: circuits on
every port; ``eps``: packet switches at one or two levels; ``hybrid``: EPS level 1
under OCS level 2). Its capabilities (:data:`TECHNOLOGIES`) answer the questions the
stages used to branch on; the stages' own pieces are tables registered against these
keys (Simlette's networks :data:`ocsplan.simlette.technology.NETWORK_PIECES`, decode's
pricers :data:`ocsplan.decode.technology.PRICERS`: ``tests/test_registries.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InstanceError
from .fabrics import FabricSpec

__all__ = ["EPS", "HYBRID", "OCS", "TECHNOLOGIES", "Technology", "fabric_technology", "technology"]

OCS = "ocs"
EPS = "eps"
HYBRID = "hybrid"


@dataclass(frozen=True)
class Technology:
    """One fabric technology and its capabilities.

    ``levels``: the technology of each level, bottom first (None: every level this one);
    ``packet_switches``: some level switches packets (Simlette's spraying applies);
    ``circuits``: every port is a circuit, a fabric a plan is realized on (a circuits file,
    ``realize``; the plan prices its demands); ``stacked``: carries a stacked plan's circulants."""

    name: str
    levels: tuple[str, ...] | None
    packet_switches: bool
    circuits: bool
    stacked: bool


TECHNOLOGIES: dict[str, Technology] = {
    OCS: Technology(OCS, None, packet_switches=False, circuits=True, stacked=True),
    EPS: Technology(EPS, None, packet_switches=True, circuits=False, stacked=False),
    HYBRID: Technology(HYBRID, (EPS, OCS), packet_switches=True, circuits=False, stacked=False),
}


def technology(spec: FabricSpec) -> str:
    """"ocs", "eps" or "hybrid" (EPS level 1 under OCS level 2): the table entry whose levels
    the fabric's are; InstanceError for any other stack (OCS over EPS is not simulated)."""
    techs = tuple(level.technology for level in spec.levels)
    for name, tech in TECHNOLOGIES.items():
        if techs == tech.levels or (tech.levels is None and all(t == name for t in techs)):
            return name
    raise InstanceError(spec.source or spec.name, "level",
                        f"levels {techs} are not simulated (OCS over EPS)")


def fabric_technology(spec: FabricSpec) -> Technology:
    """The :data:`TECHNOLOGIES` entry of ``spec``."""
    return TECHNOLOGIES[technology(spec)]
