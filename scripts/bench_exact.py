"""Solve times of the exact backends (CP-SAT, MILP) on the named instances.

For each instance and backend: the status, objective and proven bound, the
total time of ``ocsplan solve --method ...`` (heuristic seed + model + solve)
and the time of the same model without the heuristic's seed and upper bound
(a measure of the model alone). Median of --repeat runs.

    PYTHONPATH=src python scripts/bench_exact.py [--repeat 3] [--workers 1] [PATHS...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ocsplan.instance import Instance, load_instance
from ocsplan.plan import Plan
from ocsplan.planning.exact import ExactRun
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.milp import MilpBackend
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.units import format_time

ROOT = Path(__file__).resolve().parents[1]


def _timed(
    instance: Instance, method: str, seeded: bool, args: argparse.Namespace
) -> tuple[float, Plan]:
    start = time.perf_counter()
    run = ExactRun(instance, use_heuristic=seeded)
    backend = (
        CpSatBackend(args.time_limit, args.workers)
        if method == "cpsat"
        else MilpBackend(args.time_limit, args.workers)
    )
    plan = run.solve(backend, method, start)
    return time.perf_counter() - start, plan


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--workers", type=int, default=None, help="solver threads (default: backend's)"
    )
    parser.add_argument("--time-limit", type=float, default=600.0)
    args = parser.parse_args()
    paths = args.paths or sorted((ROOT / "instances").glob("*.toml"))
    console = Console(width=160)
    table = Table(title=f"exact backends: median of {args.repeat} runs", title_justify="left")
    for col in (
        "instance",
        "heuristic",
        "method",
        "status",
        "objective",
        "bound",
        "seeded s",
        "unseeded s",
    ):
        table.add_column(
            col, justify="left" if col in ("instance", "method", "status") else "right"
        )
    for path in paths:
        inst = load_instance(path)
        start = time.perf_counter()
        heur = plan_heuristic(inst)
        heur_time = time.perf_counter() - start
        for method in ("cpsat", "milp"):
            seeded = [_timed(inst, method, True, args) for _ in range(args.repeat)]
            unseeded = [_timed(inst, method, False, args) for _ in range(args.repeat)]
            plan = seeded[-1][1]
            table.add_row(
                inst.name,
                f"{format_time(heur.objective_s)} ({heur_time:.2f} s)",
                method,
                plan.status,
                format_time(plan.objective_s),
                format_time(plan.bound_s) if plan.bound_s is not None else "",
                f"{statistics.median(t for t, _ in seeded):.3f}",
                f"{statistics.median(t for t, _ in unseeded):.3f}",
            )
        console.print(f"done {inst.name}", markup=False)
    console.print(table)


if __name__ == "__main__":
    main()
