"""Time and peak memory of the MSCCL export and its check on the megatron plan (issues 22, 36).

Usage: python scripts/bench_export.py [--instance instances/megatron-5t-n512-b1.toml]
       [--src DIR] [--base SRC] [--rounds N] [--max-steps 128]

Solves the instance once (heuristic), then runs ``ocsplan export PLAN --out D`` and
``ocsplan export --check D`` as child processes, each timed (wall clock) and measured
(peak resident set size of that child, from ``wait4``). With ``--base SRC`` (the ``src``
directory of another tree, e.g. ``git archive main src | tar -x -C /tmp/base``) the
baseline and this tree run in alternating pairs in one sitting, ``--rounds`` times, and
the ratios new / base are printed (best of the rounds for each). Goal in issue 36:
export and check together under 10 s, peak RSS under 200 MB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

Run = tuple[float, float]  # seconds, peak RSS in MB


def _child(argv: list[str], src: Path) -> Run:
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} (PYTHONPATH={src}): exit {proc.returncode}: {err.strip()}")
    return seconds, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def _pair(plan: Path, src: Path, work: Path, max_steps: int) -> tuple[Run, Run, int]:
    out = work / "export"
    shutil.rmtree(out, ignore_errors=True)
    py = [sys.executable, "-m", "ocsplan", "export"]
    export = _child([*py, str(plan), "--out", str(out), "--max-steps", str(max_steps), "--quiet"], src)
    check = _child([*py, "--check", str(out)], src)
    size = sum(p.stat().st_size for p in out.iterdir())
    shutil.rmtree(out)
    return export, check, size


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--instance", type=Path, default=Path("instances/megatron-5t-n512-b1.toml"))
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    parser.add_argument("--base", type=Path, default=None, help="src directory of the baseline tree")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=128)
    args = parser.parse_args()
    trees = {"new": args.src.resolve()} if args.base is None else {"base": args.base.resolve(),
                                                                  "new": args.src.resolve()}
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        work = Path(tmp)
        plan = work / "plan.json"
        subprocess.run([sys.executable, "-m", "ocsplan", "solve", str(args.instance), "--json", str(plan)],
                       env={**os.environ, "PYTHONPATH": str(trees["new"])}, check=True,
                       stdout=subprocess.DEVNULL)
        best: dict[str, tuple[Run, Run, int]] = {}
        for r in range(args.rounds):
            for name, src in trees.items():
                export, check, size = _pair(plan, src, work, args.max_steps)
                print(f"round {r + 1} {name}: export {export[0]:.2f} s {export[1]:.0f} MB, check {check[0]:.2f} s "
                      f"{check[1]:.0f} MB, files {size / 1e6:.1f} MB", flush=True)
                old = best.get(name)
                if old is None or export[0] + check[0] < old[0][0] + old[1][0]:
                    best[name] = (export, check, size)
    for name, (export, check, size) in best.items():
        print(f"best {name}: export {export[0]:.2f} s + check {check[0]:.2f} s = {export[0] + check[0]:.2f} s, "
              f"peak RSS {max(export[1], check[1]):.0f} MB, files {size / 1e6:.1f} MB")
    if "base" in best:
        (be, bc, bs), (ne, nc, ns) = best["base"], best["new"]
        print(f"new / base: export {ne[0] / be[0]:.2f}, check {nc[0] / bc[0]:.2f}, together "
              f"{(ne[0] + nc[0]) / (be[0] + bc[0]):.2f}, peak RSS {max(ne[1], nc[1]) / max(be[1], bc[1]):.2f}, "
              f"files {ns / bs:.2f}")


if __name__ == "__main__":
    main()
