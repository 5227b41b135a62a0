"""Constructions as one table: how a plan builds its fabric, and what each construction can do.

A ``shared-host`` plan shares Cayley generators of (Z2)^n among every mesh (cube and
fold masks, rings on a single mesh); a ``stacked`` plan gives each axis its own
circulant C_N(offsets) on stacked links (paper App. A.6).
:func:`ocsplan.plan.types.construction` gives a plan's entry; every stage keeps a table of its pieces
keyed by :data:`CONSTRUCTIONS` (check, codec, realize, simulate, sweep, render:
``tests/test_registries.py``) and asks an entry's capabilities instead of branching.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kinds import CIRCULANT, PLAN_KINDS

__all__ = ["CONSTRUCTIONS", "SCHEMA", "SCHEMA_STACKED", "SHARED_HOST", "STACKED", "Construction"]

SHARED_HOST = "shared-host"  # Cayley generators of (Z2)^n shared by every mesh
STACKED = "stacked"  # a circulant per axis, stacked links (paper App. A.6)

SCHEMA = "ocsplan.plan/1"
SCHEMA_STACKED = "ocsplan.plan/2"  # stacked-link plans (construction "stacked")


@dataclass(frozen=True)
class Construction:
    """One construction and its capabilities.

    ``schema``: the plan file schema it is written in; ``generator_kinds``: the kinds of
    generator its circuits are made of; ``cayley``: a Cayley graph of (Z2)^n whose plan
    lists its generators (a circuits file restates them, the plan reference and the port
    budget; else circulant sets on row-major ranks, any world); ``generators``: what a
    circuits file's generator list holds, in words; ``msccl``: exported to MSCCL;
    ``faults``: priced by the faults analysis (and ``solve --resilience``)."""

    name: str
    schema: str
    generator_kinds: tuple[str, ...]
    cayley: bool
    generators: str
    msccl: bool
    faults: bool


CONSTRUCTIONS: dict[str, Construction] = {
    SHARED_HOST: Construction(SHARED_HOST, SCHEMA, PLAN_KINDS, cayley=True, generators="generators",
                              msccl=True, faults=True),
    STACKED: Construction(STACKED, SCHEMA_STACKED, (CIRCULANT,), cayley=False, generators="circulant sets",
                          msccl=False, faults=False),
}

