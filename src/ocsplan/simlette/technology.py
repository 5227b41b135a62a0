"""Each fabric technology's network pieces (DESIGN §7), registered against the keys of
:data:`ocsplan.realization.technologies.TECHNOLOGIES` (the technologies and their capabilities).

``ocs``: circuits (from the plan's realization) on every port, one network of
circuit links. ``eps``: packet switches at one or two levels, messages sprayed
over the ports. ``hybrid``: EPS level 1 under OCS level 2, the level-2 circuits
between racks (:func:`ocsplan.simlette.circuitmap.hybrid_uplinks`). Each
technology says what its network needs from a plan's set-up or from a bare
program, and builds the network of a run; the ``ideal`` mode needs none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import OcsplanError
from ..realization.fabrics import FabricSpec
from ..realization.technologies import EPS, HYBRID, OCS, technology
from .circuitmap import CircuitMap, RackRoutes, circuits_for_generators
from .circuits_net import CircuitNetwork, CircuitWiring
from .devices import Spray, parse_spray
from .ideal import IdealNetwork
from .runs import Factory, SimOptions
from .setup import Setup
from .switched import SwitchedNetwork
from .timing import DL_FLIT, TL_FLIT, Stages

__all__ = ["NETWORK_PIECES", "NetworkArgs", "Pieces", "Technology", "network_factory"]


@dataclass(frozen=True)
class Pieces:
    """What a technology's network is built from besides the fabric: circuits (OCS), level-2 routes (hybrid)."""

    circuits: CircuitMap | None = None
    routes: RackRoutes | None = None


@dataclass(frozen=True)
class NetworkArgs:
    """The network of a run: the fabric, its stages, ports, buffers (in flits) and pieces."""

    spec: FabricSpec
    stages: Stages
    ports: int
    buffer: int | None  # receive buffer of every accelerator port, DL flits
    switch: int | None  # input buffer of every switch port, DL flits
    rsp: int | None  # response credits, TL flits
    pieces: Pieces
    setup: Setup | None  # shares the port wiring with every other run of the set-up
    spray: Spray = ("message", 0)  # EPS switches' granularity over equal links


@dataclass(frozen=True)
class Technology:
    """One technology's network pieces."""

    name: str
    pieces: Callable[[Setup], Pieces]  # from a plan's set-up (message and flit modes)
    program_pieces: Callable[[Sequence[int], int, int, FabricSpec], Pieces]  # (generators, p, size, fabric)
    network: Callable[[NetworkArgs], Factory]


def _ocs_network(a: NetworkArgs) -> Factory:
    cmap = a.pieces.circuits
    if cmap is None:
        raise OcsplanError("an OCS fabric needs circuits")
    wiring = a.setup.wiring(a.stages) if a.setup is not None else CircuitWiring()  # shared by the runs
    return lambda eng, deliver: CircuitNetwork(eng, a.stages, a.spec.link, deliver, cmap, a.buffer, a.rsp, wiring)


def _switched(a: NetworkArgs, routes: RackRoutes | None) -> Factory:
    return lambda eng, deliver: SwitchedNetwork(
        eng, a.stages, a.spec.link, deliver, a.spec, a.ports, a.buffer, a.switch, a.rsp, routes, a.spray)


def _hybrid_network(a: NetworkArgs) -> Factory:
    if a.pieces.routes is None:
        raise OcsplanError("a hybrid fabric needs its level-2 circuits")
    return _switched(a, a.pieces.routes)


def _program_circuits(gens: Sequence[int], multiplicity: int, size: int, spec: FabricSpec) -> Pieces:
    return Pieces(circuits=circuits_for_generators([(g, multiplicity, 0) for g in gens], size, spec))


NETWORK_PIECES: dict[str, Technology] = {
    OCS: Technology(OCS, lambda setup: Pieces(circuits=setup.circuits()), _program_circuits, _ocs_network),
    EPS: Technology(EPS, lambda setup: Pieces(), lambda gens, p, size, spec: Pieces(), lambda a: _switched(a, None)),
    HYBRID: Technology(HYBRID, lambda setup: Pieces(routes=setup.routes()), lambda gens, p, size, spec: Pieces(),
                       _hybrid_network),
}


def _flits(nbytes: int | None) -> int | None:
    return None if nbytes is None else nbytes // DL_FLIT


def _rsp(nbytes: int | None) -> int | None:
    return None if nbytes is None else nbytes // TL_FLIT


def network_factory(
    spec: FabricSpec,
    options: SimOptions,
    *,
    ports: int,
    circuits: CircuitMap | None = None,
    routes: RackRoutes | None = None,
    ideal: tuple[float, float, dict[int, int]] | None = None,
    setup: Setup | None = None,
) -> Factory:
    """Build the network of a run; ``ideal`` = (lambda, R, multiplicity per generator).

    ``setup``: share the port wiring with every other run of that set-up.
    """
    if not options.on_fabric:
        if ideal is None:
            raise OcsplanError("ideal mode needs lambda, R and the multiplicities")
        lam, rate, mult = ideal
        return lambda eng, deliver: IdealNetwork(eng, lam, rate, mult, deliver)
    stages = Stages.from_budget(options.latency or spec.latency)
    tech = NETWORK_PIECES[technology(spec)]
    spray = parse_spray(options.spray) or ("message", 0)  # SimOptions.check refuses the rest
    args = NetworkArgs(spec, stages, ports, _flits(options.buffer), _flits(options.switch_buffer),
                       _rsp(options.buffer), Pieces(circuits, routes), setup, spray)
    return tech.network(args)
