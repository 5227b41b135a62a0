"""Time of every single fault of the megatron plan (issue 23), as a ratio to realizing it.

Usage: python scripts/bench_faults.py [--instance instances/megatron-5t-n512-b1.toml]
                                      [--fabric simulate/fabrics/nvl576-all-ocs.toml]

Solves the instance, realizes it on the fabric (the baseline, timed in the same process), then
prices every circuit, device and accelerator fault (``analyse_faults``) and prints per kind the
count, the seconds, the ratio to the realization, and the worst and median against healthy.
Goal in the issue: all single circuit faults of megatron under 60 s.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ocsplan.deploy.faults import analyse_faults
from ocsplan.instance import load_instance
from ocsplan.planning.registry import solve
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", type=Path, default=Path("instances/megatron-5t-n512-b1.toml"))
    parser.add_argument("--fabric", type=Path, default=Path("simulate/fabrics/nvl576-all-ocs.toml"))
    args = parser.parse_args()
    plan = solve(load_instance(args.instance), method="heuristic")
    start = time.perf_counter()
    circuits = realize(plan, load_fabric(args.fabric))
    base = time.perf_counter() - start
    print(f"realize: {len(circuits.circuits)} circuits in {base:.2f} s (baseline)")
    for kind in ("circuit", "device", "accelerator"):
        start = time.perf_counter()
        report = analyse_faults(circuits, plan, kind)
        took = time.perf_counter() - start
        s = report.summary
        median = f"{s.median / report.healthy:.3f}x" if s.median is not None else "-"
        worst = f"{s.worst_running.objective / report.healthy:.3f}x" if s.worst_running is not None else "-"
        print(f"{kind:>11}: {len(report.faults)} faults in {took:.2f} s ({took / base:.2f}x realize); "
              f"worst that stops nothing {worst}, median {median} healthy; {s.stopped} stop a demand")


if __name__ == "__main__":
    main()
