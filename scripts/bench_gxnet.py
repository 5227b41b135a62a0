"""Benchmark the Figure 4 sweep (analytical network): cold, then rerun from the plan cache.

Usage: python scripts/bench_gxnet.py [--models megatron-5t,gpt-oss-5.3-like] [--jobs 2]
       [--contexts 32Ki,5M] [--batches 1,2,4,8,16] [--fabrics all-eps,hybrid,all-ocs] [--csv-dir DIR]

Per model: the points timed (splits x contexts x batches x fabrics; App. B.6: 2160 for
Megatron 5T, 1350 for GPT-OSS-5.3-like), the cold sweep time (planning every
(batch, split) of the all-OCS fabric) and the rerun time with the plan cache, as a
ratio of the cold run. Run from the repository root (fabric short names).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ocsplan.decode import cells_csv, pareto_sweep
from ocsplan.executor import Executor
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import load_accelerator, load_model, parse_tokens

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="megatron-5t,gpt-oss-5.3-like")
    parser.add_argument("--contexts", default="32Ki,5M")
    parser.add_argument("--batches", default="1,2,4,8,16")
    parser.add_argument("--fabrics", default="all-eps,hybrid,all-ocs")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--csv-dir", type=Path, default=None)
    args = parser.parse_args()
    acc = load_accelerator("rx00")
    executor = Executor(jobs=args.jobs)
    contexts = [parse_tokens(c) for c in args.contexts.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    specs = [load_fabric(ROOT / "simulate" / "fabrics" / f"nvl576-{f}.toml") for f in args.fabrics.split(",")]
    print(f"{'model':18} {'points':>7} {'cold s':>8} {'cached s':>9} {'ratio':>7}")
    for name in args.models.split(","):
        model = load_model(name)
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()  # every sweep starts with no plans in memory
            cells = pareto_sweep(model, acc, specs, contexts, batches, 512, executor=executor, cache=Path(cache))
            cold = time.perf_counter() - start
            start = time.perf_counter()
            again = pareto_sweep(model, acc, specs, contexts, batches, 512, executor=executor, cache=Path(cache))
            warm = time.perf_counter() - start
        assert cells_csv(cells) == cells_csv(again), "the cached rerun must reproduce the sweep"
        points = sum(c.timed + c.infeasible for c in cells)
        print(f"{name:18} {points:7} {cold:8.1f} {warm:9.1f} {warm / cold:7.3f}")
        if args.csv_dir is not None:
            args.csv_dir.mkdir(parents=True, exist_ok=True)
            (args.csv_dir / f"{name}.csv").write_text(cells_csv(cells), encoding="utf-8")


if __name__ == "__main__":
    main()
