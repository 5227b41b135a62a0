"""Circuits files at scale: write (``dumps_circuits``) and read (``loads_circuits``) with and without
the cyclic collector's pause, paired in one process.

Usage: python scripts/bench_files.py [--sizes 1024,2048,4096] [--repeat 3]

The instance is bench_scale.py's Megatron-like one at N = 2**n on a single-level OCS fabric.
The baseline replaces the readers' and writer's ``paused_gc`` with a context that does nothing
(the collector runs as it did before the pause); both variants run alternately, best of
``--repeat``, in CPU seconds. Prints per size the file's MiB, both times and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ocsplan.files as files_module
import ocsplan.realization.circuits.codec as codec
import ocsplan.realization.circuits.formats as formats
from ocsplan.gcpause import paused_gc
from ocsplan.limits import MAX_CIRCUITS
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.realize import realize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import fabric, megatron


@contextlib.contextmanager
def _running(keep: bool = False) -> Iterator[None]:
    """The baseline: no pause."""
    yield


def _best(stage: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        stage()
        times.append(time.process_time() - start)
    return min(times)


def _patch(name: str, value: Any) -> None:
    """Set ``name`` in the reader's, the writer's and the format picker's modules (each imports it by name)."""
    for module in (codec, formats, files_module):
        if hasattr(module, name):
            setattr(module, name, value)


def _stages(circuits: Any, text: str) -> dict[str, Callable[[], Any]]:
    def write() -> Any:
        return formats.dumps_circuits(circuits)

    def read() -> Any:
        return codec.circuits_from_dict_1(files_module.read_json(text, "bench"), "bench")

    return {"write": write, "read": read}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1024,2048,4096")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    paused, limit = paused_gc, MAX_CIRCUITS
    print(f"{'N':>6} {'MiB':>5} {'stage':>6} {'baseline s':>11} {'paused s':>9} {'ratio':>6}")
    for world in (int(x) for x in args.sizes.split(",")):
        inst = megatron(world.bit_length() - 1)
        circuits = realize(plan_heuristic(inst), fabric(inst.budget.world, inst.budget.ports))
        _patch("MAX_CIRCUITS", max(limit, len(circuits.circuits)))  # a bench beyond the file limit, not a file
        try:
            text = formats.dumps_circuits(circuits)
            for name, stage in _stages(circuits, text).items():
                seconds = {}
                for variant, pause in (("baseline", _running), ("paused", paused)):
                    _patch("paused_gc", pause)
                    seconds[variant] = _best(stage, args.repeat)
                _patch("paused_gc", paused)
                print(f"{world:>6} {len(text) / 2**20:>5.1f} {name:>6} {seconds['baseline']:>11.3f} "
                      f"{seconds['paused']:>9.3f} {seconds['baseline'] / seconds['paused']:>5.2f}x")
        finally:
            _patch("MAX_CIRCUITS", limit)


if __name__ == "__main__":
    main()
