"""Benchmark the heuristic planner: solve time on the named instances, or on a family.

Usage:
  python scripts/bench_planner.py [--repeat K] [INSTANCE ...]
  python scripts/bench_planner.py --family wide [--count 30] [--seed 1] [--min-bits 6]
      [--max-bits 10] [--cpsat] [--time-limit S] [--cpsat-time-limit S]

Named instances: per instance, the objective, ports used and the best / median wall
time of K cold runs (the closed-form caches are cleared before each run).

``--family``: ``--count`` instances of a generated family (studies/families.py, fixed
seed), each solved once by the heuristic (cold caches) and with ``--cpsat`` by CP-SAT
(warm-started from the heuristic, so its time includes a heuristic run); per instance
the times, objectives and the gap (heuristic - CP-SAT) / CP-SAT, then median and max.
``--time-limit`` gives the heuristic a deadline (anytime: best plan so far).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ocsplan.instance import Instance, load_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.space import shape_options
from ocsplan.schedules import closed_form
from ocsplan.schedules.allreduce import balanced_parents
from ocsplan.studies.families import generate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["megatron-5t-n512-b1", "paper-multimesh-n256", "paper-table7-rsag-multi"]


def _cold() -> None:
    for cache in (closed_form, shape_options, balanced_parents):
        cache.cache_clear()


def _named(names: list[str], repeat: int) -> None:
    print(f"{'instance':28} {'objective':>14} {'ports':>7} {'best s':>8} {'median s':>9}")
    for name in names:
        path = Path(name) if name.endswith(".toml") else ROOT / "instances" / f"{name}.toml"
        inst = load_instance(path)
        times = []
        plan = None
        for _ in range(repeat):
            _cold()
            start = time.perf_counter()
            plan = plan_heuristic(inst)
            times.append(time.perf_counter() - start)
        assert plan is not None
        print(f"{inst.name:28} {plan.objective_s * 1e6:11.4f} us {plan.ports_used:3}/{plan.ports:<3}"
              f" {min(times):8.3f} {statistics.median(times):9.3f}")


def _summary(label: str, values: list[float], unit: str = "s") -> str:
    if not values:
        return f"{label}: -"
    return (f"{label}: median {statistics.median(values):.3f} {unit}, "
            f"max {max(values):.3f} {unit}, mean {statistics.fmean(values):.3f} {unit}")


def _family(instances: list[Instance], cpsat: bool, limit: float | None, cpsat_limit: float | None) -> None:
    print(f"{'instance':16} {'n':>2} {'L':>3} {'meshes':>6} {'heur s':>8} {'cpu s':>8} {'heuristic us':>14}"
          + (f" {'cpsat s':>8} {'cpu s':>8} {'status':>9} {'cpsat us':>14} {'gap %':>8}" if cpsat else ""), flush=True)
    h_times: list[float] = []
    cpu_times: list[float] = []
    c_times: list[float] = []
    c_cpu: list[float] = []
    gaps: list[float] = []
    for inst in instances:
        _cold()
        start, cpu = time.perf_counter(), time.process_time()
        deadline = None if limit is None else start + limit
        plan = plan_heuristic(inst, deadline)
        h, cpu = time.perf_counter() - start, time.process_time() - cpu
        h_times.append(h)
        cpu_times.append(cpu)
        line = (f"{inst.name:16} {inst.n:2} {inst.budget.ports:3} {len(inst.meshes):6} {h:8.3f} {cpu:8.3f}"
                f" {plan.objective_s * 1e6:14.6f}")
        if any(note.startswith("time limit") for note in plan.notes):
            line += " (deadline)"
        if cpsat:
            from ocsplan.planning.exact import plan_cpsat

            _cold()
            start, cpu = time.perf_counter(), time.process_time()
            exact = plan_cpsat(inst, time_limit=cpsat_limit)
            c, cpu = time.perf_counter() - start, time.process_time() - cpu
            c_times.append(c)
            c_cpu.append(cpu)
            gap = (plan.objective_s - exact.objective_s) / exact.objective_s * 100
            if exact.status == "optimal":
                gaps.append(gap)
            line += f" {c:8.3f} {cpu:8.3f} {exact.status:>9} {exact.objective_s * 1e6:14.6f} {gap:8.4f}"
        print(line, flush=True)
    print(_summary("heuristic time", h_times))
    print(_summary("heuristic CPU time", cpu_times))
    if cpsat:
        print(_summary("CP-SAT time (includes its heuristic seed)", c_times))
        print(_summary("CP-SAT CPU time (all threads, includes its heuristic seed)", c_cpu))
        print(f"CP-SAT proven optimal: {len(gaps)} of {len(c_times)}")
        proven = len(gaps)
        print(f"gap to CP-SAT over {proven} proven optima: "
              + (f"mean {statistics.fmean(gaps):.4f} %, max {max(gaps):.4f} %" if gaps else "-"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("instances", nargs="*", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--family", help="a generated family (e.g. wide) instead of named instances")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--min-bits", type=int, default=6)
    parser.add_argument("--max-bits", type=int, default=10)
    parser.add_argument("--cpsat", action="store_true", help="also solve with CP-SAT and print the gap")
    parser.add_argument("--time-limit", type=float, help="heuristic deadline in seconds")
    parser.add_argument("--cpsat-time-limit", type=float, help="CP-SAT time limit in seconds")
    parser.add_argument("--only", help="comma-separated instance indices of the family")
    args = parser.parse_args()
    if args.family is None:
        _named(args.instances, args.repeat)
        return
    instances = generate(args.family, args.count, args.seed, args.min_bits, args.max_bits)
    if args.only:
        keep = {int(x) for x in args.only.split(",")}
        instances = [inst for k, inst in enumerate(instances) if k in keep]
    _family(instances, args.cpsat, args.time_limit, args.cpsat_time_limit)


if __name__ == "__main__":
    main()
