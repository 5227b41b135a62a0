"""Generator kinds as one table: what each kind of circuit generator is and can do.

A plan's generators are ``cube`` (a unit mask of the host cube (Z2)^n), ``fold``
(a mask of weight two or more) or ``ring`` (a degree-2 ring over the bits of its
mask); a stacked plan's circuits add ``circulant`` (x -> x +- s on one axis).
Every stage asks this table (:data:`GENERATOR_KINDS`) for a kind's capability
instead of branching on its name, so a new kind is one entry here and one entry
in each stage table registered against its key (``tests/test_registries.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CIRCULANT", "CUBE", "FOLD", "GENERATOR_KINDS", "PLAN_KINDS", "RING", "GeneratorKind",
           "generator_kind", "host_kind"]

CUBE = "cube"
FOLD = "fold"
RING = "ring"
CIRCULANT = "circulant"


@dataclass(frozen=True)
class GeneratorKind:
    """One kind of generator and its capabilities.

    ``host``: a generator of the host cube, x -> x xor mask (its circuits are a matching);
    ``ports_per_circuit``: ports one unit of multiplicity takes at a node (a ring reaches
    both neighbours); ``label_prefix``: how circuit files name it before its mask;
    ``min_weight``/``max_weight``: the popcount its mask may have in a plan (None: no bound);
    ``in_plan``: listed among a plan's generators (circulants live in stacked axes);
    ``order``: its rank in a plan's generator list; ``peer``: the validator's words for
    the node a circuit of it must reach (``{peer}`` is x xor mask)."""

    name: str
    host: bool
    ports_per_circuit: int
    label_prefix: str
    min_weight: int
    max_weight: int | None
    in_plan: bool
    order: int
    peer: str

    def weight_ok(self, mask: int) -> bool:
        """The mask's popcount is one a plan may give this kind."""
        w = mask.bit_count()
        return self.min_weight <= w and (self.max_weight is None or w <= self.max_weight)


GENERATOR_KINDS: dict[str, GeneratorKind] = {
    CUBE: GeneratorKind(CUBE, host=True, ports_per_circuit=1, label_prefix="", min_weight=1, max_weight=1,
                        in_plan=True, order=0, peer="node {peer}"),
    FOLD: GeneratorKind(FOLD, host=True, ports_per_circuit=1, label_prefix="", min_weight=2, max_weight=None,
                        in_plan=True, order=1, peer="node {peer}"),
    RING: GeneratorKind(RING, host=False, ports_per_circuit=2, label_prefix="ring:", min_weight=0, max_weight=None,
                        in_plan=True, order=2, peer="a ring neighbour"),
    CIRCULANT: GeneratorKind(CIRCULANT, host=False, ports_per_circuit=1, label_prefix="circulant:", min_weight=0,
                             max_weight=None, in_plan=False, order=3, peer="node x +- s on its axis"),
}
# the kinds a plan file may list, in the order its generators are sorted
PLAN_KINDS = tuple(k.name for k in sorted(GENERATOR_KINDS.values(), key=lambda k: k.order) if k.in_plan)


# what a kind name the table lacks reads as: a host generator of one port per circuit, as every
# stage read a name other than "ring" (the plan checker prices such a plan, then refuses it)
_UNKNOWN = GeneratorKind("?", host=True, ports_per_circuit=1, label_prefix="", min_weight=0, max_weight=None,
                         in_plan=False, order=len(GENERATOR_KINDS), peer="node {peer}")


def generator_kind(kind: str) -> GeneratorKind:
    """The table entry of a kind name (an unknown name: a one-port host generator, not in plans)."""
    return GENERATOR_KINDS.get(kind, _UNKNOWN)


def host_kind(mask: int) -> str:
    """The kind of a host-cube generator: ``cube`` for a unit mask, ``fold`` otherwise."""
    return CUBE if mask.bit_count() == 1 else FOLD
