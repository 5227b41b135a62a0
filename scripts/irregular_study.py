"""How much irregular (covering-code) folds gain on latency-bound instances (issue 10).

Usage: python scripts/irregular_study.py [--family latency] [--count 200] [--seed 1]
                                         [--min-bits 4] [--max-bits 9] [--exact 40] [--time-limit 60]

Generates ``count`` instances of the family (``ocsplan generate``), plans each
with the heuristic in the paper's space (block folds) and in the extended space
(block and irregular folds), and prints the relative improvement of the
objective (mean, max, how many improve) and how often an irregular fold is
chosen (instances, axes). The first ``exact`` instances are also solved by
CP-SAT and the MILP in both spaces: both must prove the same optimum, and the
extended optimum is never above the block one.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from ocsplan.plan import Plan
from ocsplan.planning.exact import plan_cpsat, plan_milp
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.studies.families import generate


def _irregular_axes(plan: Plan) -> int:
    return sum(1 for mesh in plan.meshes for axis in mesh.axes if any(d.fold for d in axis.demands))


def _sweep() -> None:
    """One collective on one axis of 2^m ranks, every port budget from the cube to the
    two-layer block fold: where an irregular fold wins, and by how much."""
    from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh

    print("one collective on one axis, lambda 0.52 us, 400 Gb/s: port budgets where irregular folds win")
    print(f"{'collective':>11} {'m':>2} {'payload':>8} {'budgets':>8} {'wins':>5} {'max gain %':>11} {'at L':>5}")
    for collective in ("all-reduce", "all-to-all", "all-gather"):
        for m in range(4, 10):
            for payload in (256, 4096):
                wins, best, at = 0, 0.0, 0
                budgets = range(m, 2 ** (m // 2 + 1) + 2 ** ((m + 1) // 2) - 2)  # up to the two-layer block fold
                for ports in budgets:
                    axis = Axis(1 << m, (Demand(collective, payload, 1.0),))
                    inst = Instance(f"sweep-{m}-{ports}", Budget(1 << m, ports, 0.52e-6, 5e10),
                                    (Mesh("axis", (1 << m,), (axis,)),))
                    block = plan_heuristic(inst, irregular=False).objective_s
                    gain = 1 - plan_heuristic(inst).objective_s / block
                    wins += gain > 1e-12
                    if gain > best:
                        best, at = gain, ports
                print(f"{collective:>11} {m:>2} {payload:>8} {len(budgets):>8} {wins:>5} {100 * best:>11.1f} {at:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--family", default="latency")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--min-bits", type=int, default=4)
    parser.add_argument("--max-bits", type=int, default=9)
    parser.add_argument("--exact", type=int, default=40, help="instances also solved by CP-SAT and the MILP")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per exact solve")
    parser.add_argument("--sweep", action="store_true", help="first the single-axis port-budget sweep")
    args = parser.parse_args()
    if args.sweep:
        _sweep()
    instances = generate(args.family, args.count, args.seed, args.min_bits, args.max_bits)
    if not instances:
        return
    gains: list[float] = []
    chosen = axes_total = axes_chosen = 0
    t_block = t_irr = 0.0
    by_n: dict[int, list[float]] = {}
    for inst in instances:
        start = time.perf_counter()
        block = plan_heuristic(inst, irregular=False)
        mid = time.perf_counter()
        extended = plan_heuristic(inst)
        t_block += mid - start
        t_irr += time.perf_counter() - mid
        gain = 1 - extended.objective_s / block.objective_s
        gains.append(gain)
        by_n.setdefault(inst.n, []).append(gain)
        used = _irregular_axes(extended)
        chosen += used > 0
        axes_chosen += used
        axes_total += sum(1 for mesh in inst.meshes for axis in mesh.axes if axis.demands)
    print(f"{args.family} family, seed {args.seed}, {len(instances)} instances, n = {args.min_bits}..{args.max_bits}")
    print(f"heuristic: objective lower with irregular folds on {sum(g > 1e-12 for g in gains)} instances; "
          f"mean improvement {100 * statistics.fmean(gains):.3f} %, max {100 * max(gains):.2f} %; "
          f"never worse: {min(gains) >= -1e-12}")
    print(f"irregular folds chosen on {chosen} of {len(instances)} instances, "
          f"{axes_chosen} of {axes_total} active axes")
    print(f"heuristic time: block folds {t_block:.2f} s, extended {t_irr:.2f} s (ratio {t_irr / t_block:.2f})")
    print(f"{'n':>3} {'count':>6} {'mean %':>8} {'max %':>7} {'improved':>9}")
    for n in sorted(by_n):
        g = by_n[n]
        improved = sum(x > 1e-12 for x in g)
        print(f"{n:>3} {len(g):>6} {100 * statistics.fmean(g):>8.3f} {100 * max(g):>7.2f} {improved:>9}")
    if args.exact <= 0:
        return
    agree = proven = 0
    worst_gap = 0.0
    exact_gains = []
    for inst in instances[: args.exact]:
        runs = {}
        for irregular in (False, True):
            cp = plan_cpsat(inst, time_limit=args.time_limit, irregular=irregular)
            mi = plan_milp(inst, time_limit=args.time_limit, irregular=irregular)
            both = cp.status == "optimal" and mi.status == "optimal"
            proven += both
            agree += both and math.isclose(cp.objective_s, mi.objective_s, rel_tol=1e-6)
            runs[irregular] = cp
        heur = plan_heuristic(inst)
        if runs[True].status == "optimal":
            worst_gap = max(worst_gap, heur.objective_s / runs[True].objective_s - 1)
        exact_gains.append(1 - runs[True].objective_s / runs[False].objective_s)
    print(f"exact, first {args.exact} instances x 2 spaces: both backends proved {proven} of {2 * args.exact}, "
          f"agreeing on {agree}; extended optimum never above block: {min(exact_gains) >= -1e-9}; "
          f"mean gain {100 * statistics.fmean(exact_gains):.3f} %, max {100 * max(exact_gains):.2f} %; "
          f"heuristic max gap in the extended space {100 * worst_gap:.3f} %")


if __name__ == "__main__":
    main()
