"""Reproduce the paper's Figure 15 (App. A.6): shared-host against stacked-link allocation.

Usage: python scripts/repro_fig15.py [--radices 9:80] [--out out/fig15] [--seed 0] [--simulate]
                                     [--jobs K] [--scheduler ADDRESS|local]

512 accelerators on a single-level OCS fabric, one 2-D mesh (8 x 64), an 8 kB
all-reduce on both axes (64 groups of 8 and 8 groups of 64: 72 collective
groups, all running at once), lambda = 0.52 us, 400 Gb/s per circuit. For every
accelerator radix L the shared-host plan (``--method heuristic``) and the
stacked-link plan (``--method stacked``) are priced by Eq. 1; the completion
time is the sum of the two axes' all-reduce times (they run one after the
other). ``--simulate`` also runs both plans in Simlette's message mode at the
reported radices on simulate/fabrics/ocs-single.toml (one OCS level, nominal
Table 9 latency) with its ports raised to the largest L (the file has 64):
all 72 groups of an axis at once, the two axes one after the other. One task
per radix on the batch executor (``--jobs`` local processes, ``--scheduler`` a
Dask cluster); the rows are the same whichever runs them. Writes fig15.csv and
fig15.png and prints the table.
"""

from __future__ import annotations

import argparse
import csv
import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ocsplan.executor import Executor, Failure
from ocsplan.files import write_atomic
from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh
from ocsplan.plan import Plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.stacked import plan_stacked
from ocsplan.realization.fabrics import FabricSpec, load_fabric
from ocsplan.simlette import SimOptions, simulate_plan

REPORTED = (9, 12, 16, 24, 36, 48, 64, 70, 80)
FABRIC = Path(__file__).resolve().parent.parent / "simulate" / "fabrics" / "ocs-single.toml"


def simulated_us(plan: Plan, spec: FabricSpec) -> float:
    """Message-mode completion time: the demands' simulated times, summed."""
    report = simulate_plan(plan, spec, SimOptions(mode="message"))
    return round(sum(d.simulated_s for d in report.demands) * 1e6, 6)


def instance(ports: int) -> Instance:
    axes = tuple(Axis(size, (Demand("all-reduce", 8000, 1.0),)) for size in (8, 64))
    return Instance(f"fig15-L{ports}", Budget(512, ports, 0.52e-6, 5e10), (Mesh("mesh", (8, 64), axes),))


def describe(plan: Plan) -> str:
    parts = []
    for axis in plan.meshes[0].axes:
        (d,) = axis.demands
        parts.append(f"{axis.topology} {d.schedule} h={d.phases} p={d.multiplicity}")
    return "; ".join(parts)


def row(task: tuple[int, int, bool, FabricSpec]) -> dict[str, object]:
    """Both plans (and their simulations) at one radix: one executor task."""
    ports, seed, sim, spec = task
    inst = instance(ports)
    shared, stacked = plan_heuristic(inst), plan_stacked(inst, seed=seed)
    return {
        "L": ports,
        "shared_host_us": round(shared.objective_s * 1e6, 6),
        "stacked_us": round(stacked.objective_s * 1e6, 6),
        "ratio": round(stacked.objective_s / shared.objective_s, 4),
        "shared_host_sim_us": simulated_us(shared, spec) if sim else "",
        "stacked_sim_us": simulated_us(stacked, spec) if sim else "",
        "shared_host": describe(shared),
        "stacked": describe(stacked),
        "stacked_search": ",".join(a.circulant.search for a in stacked.meshes[0].axes if a.circulant),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--radices", default="9:80", help="first:last accelerator radix L")
    parser.add_argument("--out", type=Path, default=Path("out/fig15"))
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled circulant search")
    parser.add_argument("--simulate", action="store_true", help="also Simlette message mode at the reported L")
    parser.add_argument("--jobs", type=int, default=1, help="local worker processes")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler ADDRESS or local (ocsplan[cluster])")
    args = parser.parse_args()
    low, _, high = args.radices.partition(":")
    radices = range(int(low), int(high or low) + 1)
    spec = replace(load_fabric(FABRIC), ports=max(radices))
    tasks = [(ports, args.seed, args.simulate and ports in REPORTED, spec) for ports in radices]
    found: dict[int, dict[str, Any]] = {}

    def done(index: int, result: dict[str, Any] | Failure) -> None:
        if isinstance(result, Failure):
            raise SystemExit(f"L = {tasks[index][0]}: {result.error}")
        found[index] = result

    Executor(jobs=args.jobs, scheduler=args.scheduler).run(row, tasks, done)
    rows = [found[i] for i in range(len(tasks))]
    args.out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(args.out / "fig15.csv", buf.getvalue())
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs = [r["L"] for r in rows]
    ax.plot(xs, [r["shared_host_us"] for r in rows], label="shared-host allocation", marker=".")
    ax.plot(xs, [r["stacked_us"] for r in rows], label="stacked-link allocation", marker=".")
    simulated = [r for r in rows if r["shared_host_sim_us"] != ""]
    if simulated:
        ax.plot([r["L"] for r in simulated], [r["shared_host_sim_us"] for r in simulated], "o", mfc="none",
                color="C0", label="shared-host, Simlette")
        ax.plot([r["L"] for r in simulated], [r["stacked_sim_us"] for r in simulated], "s", mfc="none",
                color="C1", label="stacked-link, Simlette")
    ax.set_xscale("log")
    ax.set_xticks([9, 12, 16, 24, 36, 48, 64, 80], labels=["9", "12", "16", "24", "36", "48", "64", "80"])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("ports per accelerator (radix L)")
    ax.set_ylabel("completion time (us)")
    ax.set_title("2-D mesh (8 x 64), 8 kB all-reduce, 512 accelerators")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "fig15.png", dpi=150)
    print(f"{'L':>3} {'shared-host':>12} {'stacked':>9} {'ratio':>6} {'sim shared':>11} {'sim stacked':>11}"
          "  shared-host plan | stacked plan")
    for r in rows:
        if r["L"] in REPORTED or len(rows) <= 12:
            sims = "".join(f" {v:>8.3f} us" if v != "" else f" {'':>11}"
                           for v in (r["shared_host_sim_us"], r["stacked_sim_us"]))
            print(f"{r['L']:>3} {r['shared_host_us']:>9.3f} us {r['stacked_us']:>6.3f} us {r['ratio']:>6.3f}{sims}  "
                  f"{r['shared_host']} | {r['stacked']}")
    print(f"wrote {args.out / 'fig15.csv'} and {args.out / 'fig15.png'}")


if __name__ == "__main__":
    main()
