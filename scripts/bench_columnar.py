"""Columnar circuits files (``ocsplan.circuits/2``) at scale: size, write and read, beside /1 where /1 fits.

Usage: python scripts/bench_columnar.py [--sizes 4096,16384] [--repeat 1] [--memory]

The instance is bench_scale.py's Megatron-like one at N = 2**n on a single-level OCS fabric. Per size
and format: the file's MiB, the seconds of ``dumps_circuits`` and of ``loads_circuits`` (wall clock,
best of ``--repeat``) and, with ``--memory``, tracemalloc's peak of the read in a separate pass (the
Circuits read, with the parsed JSON while it is built). /1 is measured only within its limits.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ocsplan.errors import PlanError
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import Circuits, dumps_circuits, loads_circuits
from ocsplan.realization.realize import realize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import fabric, megatron


def _best(stage: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    result, best = None, float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = stage()
        best = min(best, time.perf_counter() - start)
    return result, best


def _peak(stage: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    stage()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def _row(world: int, circuits: Circuits, fmt: str, repeat: int, memory: bool) -> str:
    try:
        text, write_s = _best(partial(dumps_circuits, circuits, fmt), repeat)
    except PlanError as exc:
        return f"{world:>6} {len(circuits.circuits):>9} {'/' + fmt:>6} {exc}"
    again, read_s = _best(partial(loads_circuits, text, "bench"), repeat)
    assert again == circuits
    del again
    peak = f"{_peak(partial(loads_circuits, text, 'bench')):>13.0f}" if memory else ""
    return (f"{world:>6} {len(circuits.circuits):>9} {'/' + fmt:>6} {len(text) / 2**20:>7.1f} {write_s:>8.2f} "
            f"{read_s:>7.2f} {peak}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="4096,16384")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--memory", action="store_true", help="also the read's tracemalloc peak")
    args = parser.parse_args()
    print(f"{'N':>6} {'circuits':>9} {'format':>6} {'MiB':>7} {'write s':>8} {'read s':>7} {'read peak MiB':>13}")
    for world in (int(x) for x in args.sizes.split(",")):
        inst = megatron(world.bit_length() - 1)
        circuits = realize(plan_heuristic(inst), fabric(inst.budget.world, inst.budget.ports))
        for fmt in ("1", "2"):
            print(_row(world, circuits, fmt, args.repeat, args.memory), flush=True)


if __name__ == "__main__":
    main()
