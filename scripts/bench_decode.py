"""Benchmark ``decode --split auto --network simlette`` on packet-switched fabrics (issue 37 goal 2).

Usage: python scripts/bench_decode.py [--models megatron-5t,gpt-oss-5.3-like]
       [--fabric simulate/fabrics/nvl576-all-eps.toml] [--jobs 2] [--repeat 1]

Per model, three runs in this process, each with Simlette's memo emptied first:
- ``baseline``: the memo keyed by schedule name (before issue 37 goal 2) and every run here;
- ``traffic key``: the memo keyed by the traffic (the layered all-gather on one layer sends what
  one-shot sends), every run here;
- ``workers``: the same, the distinct runs made first in ``--jobs`` worker processes.
Each prints wall and CPU seconds (this process and its workers) and its ratio to the baseline, and
the step time, which must be the same in all three. Run from the repository root.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from pathlib import Path

from ocsplan.decode import best_step, simulated
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import Model, load_accelerator, load_model, parse_tokens
from ocsplan.workload.step import Step

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _by_name(run: simulated.NativeRun) -> tuple[object, ...]:
    """The memo's key before: the schedule's name, not its traffic."""
    routes = simulated._routes_key(run.routes)
    return (run.schedule, run.layout, run.bits, run.payload, run.world, run.spec, routes, run.spray)


def _timed(label: str, fn: Callable[[], Step], base: tuple[float, float] | None) -> tuple[float, float, Step]:
    simulated._SIMULATED.clear()
    wall, cpu = time.perf_counter(), _cpu()
    step = fn()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    ratio = "" if base is None else f"  ({base[0] / wall:.2f}x wall, {base[1] / cpu:.2f}x CPU)"
    print(f"  {label:12s} {wall:7.2f} s wall {cpu:7.2f} s CPU  step {step.step_s * 1e3:.6f} ms{ratio}", flush=True)
    return wall, cpu, step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="megatron-5t,gpt-oss-5.3-like")
    parser.add_argument("--fabric", default=str(ROOT / "simulate" / "fabrics" / "nvl576-all-eps.toml"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--context", default="5M")
    args = parser.parse_args()
    spec = load_fabric(args.fabric)
    acc = load_accelerator("rx00")
    context = parse_tokens(args.context)
    for name in args.models.split(","):
        model = load_model(name)
        print(f"{name} on {spec.name}, batch 1, context {args.context}:")

        def run(jobs: int, model: Model = model) -> Step:
            return best_step(model, acc, spec, 512, 1, context, network="simlette", jobs=jobs).best

        key = simulated.NativeRun.key
        simulated.NativeRun.key = _by_name  # type: ignore[method-assign,assignment]
        try:
            wall, cpu, first = _timed("baseline", lambda: run(1), None)
        finally:
            simulated.NativeRun.key = key  # type: ignore[method-assign]
        _, _, second = _timed("traffic key", lambda: run(1), (wall, cpu))
        _, _, third = _timed(f"workers ({args.jobs})", lambda: run(args.jobs), (wall, cpu))
        assert first == second == third, "the step changed"


if __name__ == "__main__":
    main()
