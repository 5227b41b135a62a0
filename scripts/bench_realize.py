"""Benchmark realization and validation: N = 512 accelerators, L = 36 ports.

Usage: python scripts/bench_realize.py [--repeat K] [--instance NAME] [--fabric NAME] [--placement P]
Solves the instance once (default megatron-5t-n512-b1, 35 of 36 ports), then K
times: realize on the fabric (default nvl576-all-ocs), write the circuits JSON,
read it back and validate it against the plan (every schedule transfer).
Prints best and median seconds per step and for realize + validate end to end.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ocsplan.instance import load_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import load_circuits, write_circuits
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--instance", default="megatron-5t-n512-b1")
    parser.add_argument("--fabric", default="nvl576-all-ocs")
    parser.add_argument("--placement", default="contiguous")
    args = parser.parse_args()
    plan = plan_heuristic(load_instance(ROOT / "instances" / f"{args.instance}.toml"))
    fabric = load_fabric(ROOT / "simulate" / "fabrics" / f"{args.fabric}.toml")
    steps: dict[str, list[float]] = {"realize": [], "write": [], "read": [], "validate": [], "total": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "circuits.json"
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            circuits = realize(plan, fabric, args.placement)
            t1 = time.perf_counter()
            write_circuits(circuits, path)
            t2 = time.perf_counter()
            again = load_circuits(path)
            t3 = time.perf_counter()
            faults = validate(again, plan)
            t4 = time.perf_counter()
            assert not faults, faults[:3]
            for key, value in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0), strict=True):
                steps[key].append(value)
        size = path.stat().st_size
    print(f"{plan.instance} (N = {plan.world}, {plan.ports_used} of L = {plan.ports} ports) on {fabric.name}, "
          f"placement {args.placement}: {len(circuits.circuits)} circuits, {len(circuits.devices)} devices, "
          f"{size / 1e6:.2f} MB JSON, {args.repeat} runs")
    print(f"{'step':10} {'best s':>8} {'median s':>9}")
    for key, values in steps.items():
        print(f"{key:10} {min(values):8.3f} {statistics.median(values):9.3f}")


if __name__ == "__main__":
    main()
