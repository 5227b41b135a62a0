"""Time of ``ocsplan pareto``: the EPS contention model as it is against its pre-issue-37 loop (issue 37).

Runs the same sweep twice in one process, the baseline first: ``phase_loads`` as the
per-segment ``np.add.at`` loop (the brute force kept in tests/test_simlette_contention.py),
unmemoised, the plan circuits one Link per rank and copy (tests/test_simlette_fabric.py),
the all-OCS pricing's programs as tuples priced by a loop (``reference_compile`` and
``reference_group_analytical`` in tests/test_decode_pricing.py), built afresh for every payload;
with every split timed (no split skipped by its lower bound); then the current code.
Every memo is emptied before each run; both must give the same cells.
Prints both times and their ratio (a ratio measured in one sitting, which a loaded machine
disturbs far less than absolute times). Default: one cell (5M, batch 1) of megatron-5t on all-EPS.

``--full`` also times the whole default sweep of ``--model`` on ``--full-fabrics`` (20 cells;
the current code only, the baseline took 1,264 s) cold, then again from the ``--cache`` it
filled (a fresh process each, as a user runs them), with ``--jobs`` worker processes.

    PYTHONPATH=src python scripts/bench_pareto.py [--model megatron-5t] [--fabrics all-eps]
        [--contexts 5M] [--batches 1] [--clock wall|cpu] [--full] [--full-fabrics all-ocs,all-eps]
        [--jobs 1]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the brute forces live in the tests

from tests.test_decode_pricing import reference_compile, reference_group_analytical  # noqa: E402
from tests.test_simlette_contention import reference_phase_loads  # noqa: E402
from tests.test_simlette_fabric import _reference_links  # noqa: E402

from ocsplan.cayley import Topology  # noqa: E402
from ocsplan.decode import pareto_sweep, pricing, ranking, simulated  # noqa: E402
from ocsplan.decode.pareto import Cell, cells_csv  # noqa: E402
from ocsplan.planning import search  # noqa: E402
from ocsplan.realization.fabrics import FabricSpec, load_fabric  # noqa: E402
from ocsplan.schedules import SCHEDULES  # noqa: E402
from ocsplan.schedules.compiled import Compiled  # noqa: E402
from ocsplan.simlette import circuitmap, contention  # noqa: E402
from ocsplan.simlette.network import Network  # noqa: E402
from ocsplan.workload import load_accelerator, load_model, parse_tokens  # noqa: E402

SHORT = {"all-eps": "nvl576-all-eps", "all-ocs": "nvl576-all-ocs", "hybrid": "nvl576-hybrid"}


def _fabric(name: str) -> Path:
    return ROOT / "simulate" / "fabrics" / f"{SHORT.get(name, name)}.toml" if not name.endswith(".toml") \
        else Path(name)


def _clear() -> None:
    """Empty every memo the sweep fills (both runs start cold): every ``lru_cache`` of the
    ocsplan modules (the planner's tables too) and this script's, Simlette's memo and the
    planner's placements."""
    for name, module in list(sys.modules.items()):
        if name == "ocsplan" or name.startswith("ocsplan.") or name == __name__:
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()
    simulated._SIMULATED.clear()
    search.PLACEMENTS.clear()


def _old_circuits(gens: Sequence[tuple[int, int, int]], world: int, spec: FabricSpec) -> circuitmap.CircuitMap:
    return circuitmap.CircuitMap(_reference_links(gens, world, spec), "plan")


@lru_cache(maxsize=128)
def _old_local_program(schedule: str, topology: Topology, payload: int) -> Compiled:
    """The program built afresh for every payload as tuples (before one build served every payload)."""
    return reference_compile(SCHEDULES[schedule].build(topology, payload))  # type: ignore[return-value]


def _old_group_analytical(program: Compiled, bits: Sequence[int], net: Network, rack_size: int = 0,
                          shared: pricing.EdgeMemo | None = None) -> float:
    """The loop, which asks the network for every edge of every call (no memo shared)."""
    return reference_group_analytical(program, bits, net, rack_size)  # type: ignore[arg-type]


_QUEUES = contention._hybrid_queues.__wrapped__  # the unmemoised solver, taken before any patch


@lru_cache(maxsize=4096)
def _every_rack_queues(sends: contention.Sends, bits: tuple[int, ...], world: int, shape: contention.HybridShape,
                       hop_flits: float) -> tuple[tuple[tuple[int, float], ...] | None, ...]:
    """The hybrid's uplink queues of every rack solved (before one rack's served all)."""
    return _QUEUES(sends, bits, world, shape, hop_flits, False)


@contextmanager
def _baseline() -> Iterator[None]:
    """The pre-issue-37 code paths patched in: the phase_loads loop, no memo, the circuits loop,
    one circuits network per plan, the OCS pricing's tuple programs and loop, every split timed, and
    the hybrid's uplink queues of every rack."""
    margin = ranking.BOUND_MARGIN
    ranking.BOUND_MARGIN = math.inf  # no bound rules a split out
    saved = contention.phase_loads, contention._switched_time, circuitmap.circuits_for_generators
    queues = contention._hybrid_queues
    contention._hybrid_queues = _every_rack_queues
    names = vars(pricing)  # the names pricing calls the circuits and the compiled programs by
    priced = (pricing.group_analytical, names["compiled"], pricing.plan_network, names["circuits_for_generators"])
    contention.phase_loads = reference_phase_loads
    contention._switched_time = saved[1].__wrapped__  # type: ignore[assignment]
    circuitmap.circuits_for_generators = _old_circuits
    names["circuits_for_generators"] = _old_circuits
    pricing.group_analytical = _old_group_analytical
    names["compiled"] = _old_local_program
    pricing.plan_network = priced[2].__wrapped__  # type: ignore[assignment]
    try:
        yield
    finally:
        contention.phase_loads, contention._switched_time, circuitmap.circuits_for_generators = saved
        pricing.group_analytical, names["compiled"], pricing.plan_network = priced[:3]
        names["circuits_for_generators"] = priced[3]
        ranking.BOUND_MARGIN = margin
        contention._hybrid_queues = queues


def _timed(run: Callable[[], list[Cell]], clock: Callable[[], float]) -> tuple[float, list[Cell]]:
    start = clock()
    cells = run()
    return clock() - start, cells


def _cli(args: Sequence[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ocsplan", "pareto", *args, "--quiet"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="megatron-5t")
    parser.add_argument("--fabrics", default="all-eps", help="comma list: short names or fabric TOMLs")
    parser.add_argument("--contexts", default="5M")
    parser.add_argument("--batches", default="1")
    parser.add_argument("--world", type=int, default=512)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time the wall clock or this process's CPU (the one-cell runs)")
    parser.add_argument("--no-baseline", action="store_true", help="time the current code only")
    parser.add_argument("--full", action="store_true", help="also the default 20-cell sweep, cold and from cache")
    parser.add_argument("--full-fabrics", default="all-ocs,all-eps")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes of the --full runs")
    args = parser.parse_args()
    model, acc = load_model(args.model), load_accelerator("rx00")
    specs = [load_fabric(_fabric(f)) for f in args.fabrics.split(",")]
    contexts = [parse_tokens(c) for c in args.contexts.split(",")]
    batches = [int(b) for b in args.batches.split(",")]

    def sweep() -> list[Cell]:
        return pareto_sweep(model, acc, specs, contexts, batches, args.world)

    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    label = f"{args.model} on {args.fabrics}, contexts {args.contexts}, batches {args.batches}"
    if not args.no_baseline:
        _clear()
        with _baseline():
            old, old_cells = _timed(sweep, clock)
        print(f"{label}: baseline (pre-issue-37 phase_loads, circuits, OCS pricing, every split, "
              "every rack's uplink queues) "
              f"{old:.2f} s ({args.clock})")
    _clear()
    new, cells = _timed(sweep, clock)
    print(f"{label}: current {new:.2f} s ({args.clock})")
    if not args.no_baseline:
        same = cells_csv(cells) == cells_csv(old_cells)
        print(f"ratio {old / new:.1f}x; same cells: {same}")
        if not same:
            raise SystemExit("the baseline and the current code disagree")
    if args.full:
        fabrics = ",".join(str(_fabric(f)) for f in args.full_fabrics.split(","))
        with tempfile.TemporaryDirectory() as tmp:
            common = [args.model, "--fabrics", fabrics, "--cache", tmp, "--jobs", str(args.jobs)]
            cold = _cli(common)
            warm = _cli(common)
        print(f"full sweep {args.model} on {args.full_fabrics} (default 20 cells, --jobs {args.jobs}): "
              f"cold {cold:.1f} s, from --cache {warm:.1f} s")


if __name__ == "__main__":
    main()
