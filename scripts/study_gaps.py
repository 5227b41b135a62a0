"""Optimality-gap study of the heuristic on generated instance families.

Generates ``--count`` instances of each family (n = --min-bits..--max-bits,
deterministic in --seed), solves each with the heuristic and CP-SAT through
:func:`ocsplan.studies.run_study` (cached in the CSV: a rerun only solves what
changed), prints the summary and the gap distribution, and copies every
instance whose heuristic gap exceeds --hard-gap to --hard-dir.

    PYTHONPATH=src python scripts/study_gaps.py --count 60 --jobs 2 --out build/study
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import statistics
import time
from pathlib import Path

from rich.console import Console

from ocsplan.executor import Executor
from ocsplan.files import write_atomic
from ocsplan.instance import write_instances
from ocsplan.studies import gap_image, run_study, summarize, table_rows
from ocsplan.studies.families import FAMILIES, generate

BUCKETS = (0.0, 1e-6, 1e-3, 1e-2, 5e-2, 1e-1, float("inf"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--count", type=int, default=60, help="instances per family")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--min-bits", type=int, default=4)
    parser.add_argument("--max-bits", type=int, default=8)
    parser.add_argument("--methods", default="heuristic,cpsat")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--scheduler", default=None, help="Dask scheduler ADDRESS or local (ocsplan[cluster])")
    parser.add_argument("--workers", type=int, default=1, help="CP-SAT threads per job")
    parser.add_argument("--out", type=Path, default=Path("build/study"))
    parser.add_argument(
        "--hard-gap", type=float, default=0.01, help="copy instances above this gap"
    )
    parser.add_argument("--hard-dir", type=Path, default=None)
    args = parser.parse_args()
    console = Console()

    inst_dir = args.out / "instances"
    paths = []
    for family in args.families.split(","):
        paths += write_instances(
            generate(family, args.count, args.seed, args.min_bits, args.max_bits), inst_dir
        )
    methods = args.methods.split(",")
    csv_path = args.out / "study.csv"
    start = time.perf_counter()
    done = [0]

    def report(result: object, cached: bool) -> None:
        done[0] += 1
        if done[0] % 50 == 0:
            console.print(f"{done[0]} rows, {time.perf_counter() - start:.0f} s", markup=False)

    results, interrupted = run_study(
        paths,
        methods,
        csv_path,
        time_limit=args.time_limit,
        executor=Executor(jobs=args.jobs, scheduler=args.scheduler),
        workers=args.workers,
        on_result=report,
    )
    wall = time.perf_counter() - start
    write_atomic(args.out / "gaps.png", gap_image(results, "png"))
    rows = table_rows(results)
    console.print(
        f"{len(paths)} instances, {len(results)} rows, wall {wall:.1f} s"
        + (" (interrupted)" if interrupted else ""),
        markup=False,
    )
    for s in summarize(results):
        console.print(
            f"{s.method:10s} runs {s.runs} optimal {s.optimal} feasible {s.feasible} "
            f"failed {s.failed} "
            f"at-optimum {s.at_optimum}/{s.compared} "
            + (
                f"gap mean {s.mean_gap:.4%} median {s.median_gap:.4%} max {s.max_gap:.4%} "
                if s.compared
                else ""
            )
            + f"time p50 {s.time_p50:.3f} s p90 {s.time_p90:.3f} s max {s.time_max:.3f} s",
            markup=False,
        )
    for method in methods:
        gaps = [r["gap"] for r in rows if r["method"] == method and r["gap"] is not None]
        if not gaps:
            continue
        counts = [sum(1 for g in gaps if lo <= g < hi) for lo, hi in itertools.pairwise(BUCKETS)]
        labels = ["0", "<0.1%", "0.1-1%", "1-5%", "5-10%", ">=10%"]
        console.print(
            f"{method} gap distribution: "
            + ", ".join(f"{lab}: {c}" for lab, c in zip(labels, counts, strict=True)),
            markup=False,
        )
        by_family: dict[str, list[float]] = {}
        for r in rows:
            if r["method"] == method and r["gap"] is not None:
                by_family.setdefault(r["instance"].split("-")[0], []).append(r["gap"])
        for fam, g in sorted(by_family.items()):
            console.print(
                f"  {fam:10s} n={len(g)} mean {statistics.fmean(g):.4%} max {max(g):.4%}",
                markup=False,
            )
    flagged = [r for r in rows if r["flag"] and r["method"] != "heuristic"]
    console.print(f"exact rows flagged: {len(flagged)}", markup=False)
    for r in flagged:
        console.print(f"  {r['instance']} {r['method']}: {r['flag']}", markup=False)
    hard = sorted(
        (
            r
            for r in rows
            if r["method"] == "heuristic" and r["gap"] is not None and r["gap"] > args.hard_gap
        ),
        key=lambda r: -r["gap"],
    )
    console.print(f"heuristic gap > {args.hard_gap:.0%}: {len(hard)} instances", markup=False)
    for r in hard:
        console.print(
            f"  {r['instance']}: gap {r['gap']:.3%} (n={r['n']}, L={r['L']}, meshes {r['meshes']})",
            markup=False,
        )
        if args.hard_dir is not None:
            args.hard_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(r["path"], args.hard_dir / Path(r["path"]).name)


if __name__ == "__main__":
    main()
