"""Benchmark the heuristic planner: solve time on the named instances.

Usage: python scripts/bench_planner.py [--repeat K] [INSTANCE ...]
Prints, per instance, the objective, ports used and the best / median wall time
of K cold runs (the closed-form caches are cleared before each run).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ocsplan.instance import load_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.space import shape_options
from ocsplan.schedules import closed_form
from ocsplan.schedules.allreduce import balanced_parents

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["megatron-5t-n512-b1", "paper-multimesh-n256", "paper-table7-rsag-multi"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("instances", nargs="*", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'instance':28} {'objective':>14} {'ports':>7} {'best s':>8} {'median s':>9}")
    for name in args.instances:
        path = Path(name) if name.endswith(".toml") else ROOT / "instances" / f"{name}.toml"
        inst = load_instance(path)
        times = []
        plan = None
        for _ in range(args.repeat):
            for cache in (closed_form, shape_options, balanced_parents):
                cache.cache_clear()
            start = time.perf_counter()
            plan = plan_heuristic(inst)
            times.append(time.perf_counter() - start)
        assert plan is not None
        print(f"{inst.name:28} {plan.objective_s * 1e6:11.4f} us {plan.ports_used:3}/{plan.ports:<3}"
              f" {min(times):8.3f} {statistics.median(times):9.3f}")


if __name__ == "__main__":
    main()
