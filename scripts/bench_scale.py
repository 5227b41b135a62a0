"""Scale figures: plan, realize, validate and simulate a Megatron-like instance at growing N.

Usage: python scripts/bench_scale.py [--sizes 512,1024,2048,4096] [--mode message] [--no-simulate] [--rss]
       [--clock wall|cpu]

The instance is megatron-5t-n512-b1 (paper Table 1: Helix KVP 4, TPA N/4, EP
N/8, TPE 8, batch 1) scaled to N = 2**n accelerators with L = n + 27 ports
(36 at N = 512): a world mesh [N] (all-reduce 4 KiB x 128, all-gather 25 KiB),
attention [4, N/4] (all-to-all 66 B x 128), FFN [8, N/8] (all-reduce 4 KiB x
128, all-gather 256 KiB x 128). The fabric is single-level OCS (one plane
per port, radix N, nominal Table 9 latency). Every stage runs once in this
process, timed with perf_counter; peak memory is tracemalloc's peak of Python
allocations during that stage (tracemalloc slows Python code down, so the
times are measured in a separate untraced pass first). ``--rss`` skips the
traced pass and reports the process's peak resident set after each stage
instead (a high-water mark over the stages so far; one pass, half the time).
``--clock cpu`` times the stages in process CPU seconds (steadier on a shared machine).
Prints per size and stage the seconds and MiB, then each stage's growth
factor per doubling.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from ocsplan.instance import Instance, loads_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.fabrics import FabricSpec, parse_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate
from ocsplan.simlette import SimOptions, simulate_plan

STAGES = ("plan", "realize", "validate", "simulate")


def megatron(n: int) -> Instance:
    world = 1 << n
    return loads_instance(f"""
name = "megatron-like-n{world}"
[fabric]
world = {world}
ports = {n + 27}
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "world"
shape = [{world}]
axes = [{{ demands = [
  {{ collective = "all-reduce", payload = "4KiB", weight = 128 }},
  {{ collective = "all-gather", payload = "25KiB", weight = 1 }} ] }}]
[[mesh]]
name = "attention"
shape = [4, {world // 4}]
axes = [{{ collective = "all-to-all", payload = "66B", weight = 128 }}, {{ collective = "none" }}]
[[mesh]]
name = "ffn"
shape = [8, {world // 8}]
axes = [{{ collective = "all-reduce", payload = "4KiB", weight = 128 }},
        {{ collective = "all-gather", payload = "256KiB", weight = 128 }}]
""", f"megatron-like-n{world}")


def fabric(world: int, ports: int) -> FabricSpec:
    return parse_fabric({
        "name": f"ocs-single-{world}", "accelerators": world, "ports": ports, "link": "400Gb/s",
        "latency": "nominal", "level": [{"technology": "ocs", "radix": world}],
    }, f"ocs-single-{world}")


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def measure(stage: Callable[[], Any], memory: bool) -> tuple[Any, float, float]:
    """(result, seconds, peak MiB); the peak only when ``memory`` (then the time is not used)."""
    gc.collect()
    if memory:
        tracemalloc.start()
    start = clock()
    result = stage()
    seconds = clock() - start
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    else:  # the process's high-water mark so far (Linux reports KiB)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result, seconds, peak


def run(n: int, mode: str, simulate: bool, memory: bool) -> dict[str, tuple[float, float]]:
    inst = megatron(n)
    spec = fabric(inst.budget.world, inst.budget.ports)
    out: dict[str, tuple[float, float]] = {}
    plan, secs, peak = measure(lambda: plan_heuristic(inst), memory)
    out["plan"] = (secs, peak)
    circuits, secs, peak = measure(lambda: realize(plan, spec), memory)
    out["realize"] = (secs, peak)
    faults, secs, peak = measure(lambda: validate(circuits, plan), memory)
    assert not faults, faults[:3]
    out["validate"] = (secs, peak)
    if simulate:
        _, secs, peak = measure(
            lambda: simulate_plan(plan, spec, SimOptions(mode=mode), circuits=circuits), memory)
        out["simulate"] = (secs, peak)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="512,1024,2048,4096")
    parser.add_argument("--mode", default="message", help="simulation mode")
    parser.add_argument("--no-simulate", action="store_true")
    parser.add_argument("--rss", action="store_true", help="one pass; memory = peak RSS so far")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="seconds of the wall or of CPU")
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    sizes = [int(x) for x in args.sizes.split(",")]
    stages = [s for s in STAGES if s != "simulate" or not args.no_simulate]
    what = "peak RSS so far" if args.rss else "tracemalloc peak of the stage"
    print(f"megatron-like, L = n + 27, single-level OCS, simulate in {args.mode} mode; {args.clock} seconds; "
          f"MiB = {what}")
    print(f"{'N':>5} {'L':>3} " + " ".join(f"{s + ' s':>11} {s[:4] + ' MiB':>9}" for s in stages))
    rows = {}
    for world in sizes:
        n = world.bit_length() - 1
        timed = run(n, args.mode, not args.no_simulate, memory=False)
        traced = timed if args.rss else run(n, args.mode, not args.no_simulate, memory=True)
        rows[world] = {s: (timed[s][0], traced[s][1]) for s in stages}
        print(f"{world:5d} {n + 27:3d} " + " ".join(
            f"{rows[world][s][0]:11.2f} {rows[world][s][1]:9.1f}" for s in stages), flush=True)
    if len(sizes) > 1:
        print("growth per doubling of N (geometric mean of successive ratios): time, memory")
        for s in stages:
            first, last = rows[sizes[0]][s], rows[sizes[-1]][s]
            steps = (sizes[-1].bit_length() - sizes[0].bit_length())
            grow = [(b / a) ** (1 / steps) if a > 0 else float("nan") for a, b in zip(first, last, strict=True)]
            print(f"  {s:9} x{grow[0]:.2f} time, x{grow[1]:.2f} memory")


if __name__ == "__main__":
    main()
