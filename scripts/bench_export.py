"""Time and size of the MSCCL export and its check on the megatron plan (issue 22).

Usage: python scripts/bench_export.py [--instance instances/megatron-5t-n512-b1.toml] [--max-steps 128]

Solves the instance with the heuristic, then exports every demand's schedule as
MSCCL XML and runs the independent checker on the files, in process. Prints the
wall time of export and check, the number of files and their total bytes, and per
file the measured (h, v) against the cost model's. Goal in the issue: under 10 s for both.

Measured (2 shared cores, load about 1, run back to back with main's tree): before the
phase join 302.6 MB, export 15.26 s + check 37.30 s; after 201.1 MB, 11.96 s + 17.77 s
(0.57 of the time, 0.66 of the size). Not yet under 10 s: world.0.1 (layered-parallel
all-gather on 512 ranks, 3 chunks per rank) needs 1.57 M send/receive steps of one chunk
each, since MSCCL's all-gather output is rank-major and each message carries one chunk of
every origin; xml.etree alone parses its 180 MB in about 4-8 s.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ocsplan.deploy.export import check_export, export_msccl
from ocsplan.deploy.msccl import MAX_STEPS
from ocsplan.instance import load_instance
from ocsplan.planning.registry import solve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", type=Path, default=Path("instances/megatron-5t-n512-b1.toml"))
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS)
    args = parser.parse_args()
    plan = solve(load_instance(args.instance), method="heuristic")
    start = time.perf_counter()
    files = export_msccl(plan, "Simple", args.max_steps)
    exported = time.perf_counter()
    costs = check_export(files, str(args.instance))
    checked = time.perf_counter()
    size = sum(len(text.encode()) for text in files.values())
    print(f"{args.instance}: {len(files) - 1} XML files + index.json, {size / 1e6:.1f} MB")
    print(f"export {exported - start:.2f} s, check {checked - exported:.2f} s")
    for name, cost in sorted(costs.items()):
        print(f"  {name}: h={cost.h}, v={float(cost.v):.6g} bytes per link (equal to the closed form)")


if __name__ == "__main__":
    main()
