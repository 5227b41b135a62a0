"""Array forms of the one cached :func:`~ocsplan.schedules.program`, for the all-OCS pricing.

:func:`compiled` is ``compile_program(program(name, topology, payload))``: each phase's
(src, dst, gen) and float bytes as read-only arrays, empty transfers dropped. It is reached
by scaling the payload-free :func:`shape` of (schedule, topology), so one build serves every
payload (the batches of a sweep). :func:`program_shape` reads the shape off the program
built for payload 1 (every catalogue schedule); :func:`layered_shape` writes it straight
from the layers for the layered schedules, which send every node's same messages on every
generator of a layer in a phase (chunk c through the layers in its rotated order): the same
transfers in the same order as their builds, without the symbolic items the pricing never
reads (the sweep's builds were 90 % of them). The tests compare every form with
:func:`compile_program` of the general program, on every such schedule and many topologies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from ..cayley import Topology
from .base import SCHEDULES, Program, program
from .layered import chunk_orders, chunk_steps

__all__ = [
    "LAYERED", "Compiled", "CompiledPhase", "ProgramShape", "ShapePhase", "compile_program", "compiled",
    "layered_shape", "program_shape", "scale_program", "shape",
]

# per phase: the (src, dst, gen) array, each transfer's index into the phase's distinct
# shares of the payload, and those shares (exact Fractions)
ShapePhase = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], tuple[Fraction, ...]]
ProgramShape = tuple[int, tuple[ShapePhase, ...]]  # size, phases

_NBYTES = attrgetter("nbytes")
_EDGE = attrgetter("src", "dst", "gen")


def program_shape(program: Program) -> ProgramShape:
    """``program`` (built for payload 1) as its edges and each transfer's share of the payload.

    Every catalogue schedule's byte counts are ``Fraction(payload * a, b)``: linear in the
    payload, so the program for payload P carries exactly P times these shares (the tests
    compare :func:`scale_program` with :func:`compile_program` of the program built for P)."""
    phases: list[ShapePhase] = []
    for phase in program.phases:
        sizes = list(map(_NBYTES, phase))
        ids = np.fromiter(map(id, sizes), dtype=np.uint64, count=len(sizes))
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        shares: dict[Fraction, int] = {}
        slots = [shares.setdefault(Fraction(sizes[i]), len(shares)) for i in first.tolist()]
        index = np.array(slots, dtype=np.int64)[inverse.reshape(-1)]
        edges = np.array(list(map(_EDGE, phase)), dtype=np.int64).reshape(-1, 3)
        edges.setflags(write=False)
        index.setflags(write=False)
        phases.append((edges, index, tuple(shares)))
    return program.size, tuple(phases)


# (prefix size, suffix size, chunks, size, layers) of chunk c's phase t -> its share of the payload
Share = Callable[[int, int, int, int, int], Fraction]


@dataclass(frozen=True)
class Layered:
    """How a layered schedule's build sends: its chunks' layer orders (rotated or one),
    each message's share, and whether the phases run again mirrored (RS then AG)."""

    parallel: bool
    share: Share
    mirrored: bool = False


LAYERED: dict[str, Layered] = {
    # coset-factored-parallel: Fraction(payload, l) per message (allreduce._cfp_build)
    "coset-factored-parallel": Layered(True, lambda pre, suf, chunks, size, count: Fraction(1, count)),
    # layered all-gather: Fraction(payload * |prefix_t|, chunks * size) (allgather._build)
    "layered": Layered(False, lambda pre, suf, chunks, size, count: Fraction(pre, chunks * size)),
    "layered-parallel": Layered(True, lambda pre, suf, chunks, size, count: Fraction(pre, chunks * size)),
    # Bruck: Fraction(payload * |prefix_t| * |suffix_t|, chunks * size) (alltoall._build)
    "bruck": Layered(False, lambda pre, suf, chunks, size, count: Fraction(pre * suf, chunks * size)),
    "bruck-parallel": Layered(True, lambda pre, suf, chunks, size, count: Fraction(pre * suf, chunks * size)),
    # RS then AG mirrored: Fraction(payload * |suffix_t|, chunks * size) (allreduce._rsag_phases)
    "rs-ag": Layered(False, lambda pre, suf, chunks, size, count: Fraction(suf, chunks * size), mirrored=True),
    "rs-ag-parallel": Layered(True, lambda pre, suf, chunks, size, count: Fraction(suf, chunks * size),
                              mirrored=True),
}


def layered_shape(name: str, topo: Topology) -> ProgramShape:
    """The shape of the layered schedule ``name`` (a key of :data:`LAYERED`) on ``topo``, from
    its layers: per phase, chunk by chunk, every node x sends to x XOR s for s in the layer
    (x-major), the chunk's share on each; phases without transfers dropped, as builds do."""
    how = LAYERED[name]
    layers = SCHEDULES[name].layers(topo)
    if layers is None:
        raise ValueError(f"{name} declares no layers")
    size, count = topo.size, len(layers)
    seqs = chunk_orders(layers, how.parallel)
    chunks = len(seqs)
    nodes = np.arange(size, dtype=np.int64)
    blocks: list[list[tuple[npt.NDArray[np.int64], Fraction]]] = [[] for _ in range(count)]
    for _, t, layer, before, after in chunk_steps(seqs):
        gens = np.array(layer, dtype=np.int64)
        src = np.repeat(nodes, len(gens))
        gen = np.tile(gens, size)
        edges = np.stack([src, src ^ gen, gen], axis=1)
        blocks[t].append((edges, how.share(len(before), len(after), chunks, size, count)))
    if how.mirrored:  # the AG phases: RS phase t again as phase 2l - 1 - t
        blocks = blocks + blocks[::-1]
    phases: list[ShapePhase] = []
    for phase in blocks:
        if not phase or not sum(len(edges) for edges, _ in phase):
            continue
        shares: dict[Fraction, int] = {}
        slots = [shares.setdefault(share, len(shares)) for _, share in phase]
        edges = np.concatenate([e for e, _ in phase]).reshape(-1, 3)
        index = np.repeat(np.array(slots, dtype=np.int64), [len(e) for e, _ in phase])
        edges.setflags(write=False)
        index.setflags(write=False)
        phases.append((edges, index, tuple(shares)))
    return size, tuple(phases)


@lru_cache(maxsize=256)
def shape(name: str, topology: Topology) -> ProgramShape:
    """The shape of ``name`` on ``topology``: from the layers where :data:`LAYERED` knows how it
    sends, else read off the program for payload 1 (also on a 0-bit axis, where some builds raise)."""
    if name in LAYERED and topology.bits > 0:
        return layered_shape(name, topology)
    return program_shape(program(name, topology, 1))


# per phase: (src, dst, gen) local labels as an (n x 3) int64 array and the bytes as floats
CompiledPhase = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]
Compiled = tuple[int, tuple[CompiledPhase, ...]]  # size, phases


def compile_program(program: Program) -> Compiled:
    """A program's transfers as read-only arrays (bytes as floats), empty transfers dropped.

    A program shares its byte counts (one Fraction per chunk and phase): each distinct
    object is compared with 0 and converted once (the program keeps them alive, so
    their ids are distinct)."""
    phases: list[CompiledPhase] = []
    for phase in program.phases:
        sizes = list(map(_NBYTES, phase))
        ids = np.fromiter(map(id, sizes), dtype=np.uint64, count=len(sizes))
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        distinct = np.array([float(sizes[i]) if sizes[i] > 0 else -1.0 for i in first.tolist()], dtype=np.float64)
        values = distinct[inverse.reshape(-1)]
        keep = values >= 0
        edges = np.array(list(map(_EDGE, phase)), dtype=np.int64).reshape(-1, 3)[keep]
        nbytes = values[keep]
        edges.setflags(write=False)
        nbytes.setflags(write=False)
        phases.append((edges, nbytes))
    return program.size, tuple(phases)


def scale_program(shape: ProgramShape, payload: int) -> Compiled:
    """:func:`compile_program` of the program for ``payload`` from its :func:`program_shape`:
    each share times the payload converted once (``float`` of a Fraction rounds correctly,
    so every byte count is the one the built program gives)."""
    size, phases = shape
    out: list[CompiledPhase] = []
    for edges, index, shares in phases:
        values = np.array([float(v) if (v := payload * c) > 0 else -1.0 for c in shares], dtype=np.float64)
        nbytes = values[index]
        if bool((values < 0).any()):
            keep = nbytes >= 0
            kept_edges, nbytes = edges[keep], nbytes[keep]
            kept_edges.setflags(write=False)
        else:
            kept_edges = edges
        nbytes.setflags(write=False)
        out.append((kept_edges, nbytes))
    return size, tuple(out)


@lru_cache(maxsize=128)
def compiled(name: str, topology: Topology, payload: int) -> Compiled:
    """``compile_program(program(name, topology, payload))``, scaled from the one :func:`shape` of
    (``name``, ``topology``) that serves every payload."""
    return scale_program(shape(name, topology), payload)
