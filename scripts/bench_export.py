"""Time and peak memory of the MSCCL export and its check on the megatron plan (issues 22, 36).

Usage: python scripts/bench_export.py [--instance instances/megatron-5t-n512-b1.toml]
       [--src DIR] [--base SRC] [--rounds N] [--max-steps 128] [--stages]

Solves the instance once (heuristic), then runs ``ocsplan export PLAN --out D`` and
``ocsplan export --check D`` as child processes, each timed (wall clock) and measured
(peak resident set size of that child, from ``wait4``). With ``--base SRC`` (the ``src``
directory of another tree, e.g. ``git archive main src | tar -x -C /tmp/base``) the
baseline and this tree run in alternating pairs in one sitting, ``--rounds`` times, and
the ratios new / base are printed (best of the rounds for each). Goal in issue 36:
export and check together under 10 s, peak RSS under 200 MB.

``--stages`` times the library calls instead, in one child per tree and round (what
``tests/test_deploy_msccl.py`` runs: the heuristic plan, ``export_msccl``, ``check_export``),
CPU seconds per stage: program build and verify, the writer, the checker's read, its two
runs and the rest (CPU time, less disturbed than wall time on a shared machine); with
``--base`` the trees alternate and each stage's best new / best base is printed.
"""

from __future__ import annotations

import argparse
import json
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


# run in the child with PYTHONPATH=<tree>: the stages' CPU seconds as one JSON line
_STAGES = r"""
import json, sys, time
from ocsplan.deploy import check, export
from ocsplan.instance import load_instance
from ocsplan.planning.heuristic import plan_heuristic

spent = {"plan": 0.0, "build+verify": 0.0, "write": 0.0, "read": 0.0, "runs": 0.0}
def timed(module, name, stage):
    inner = getattr(module, name)
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[stage] += time.process_time() - start
    setattr(module, name, run)
timed(export, "build", "build+verify")
timed(export, "verify", "build+verify")
timed(export, "program_xml", "write")
timed(check, "_parse", "read")
timed(check, "_execute", "runs")
start = time.process_time()
plan = plan_heuristic(load_instance(sys.argv[1]))
spent["plan"] = time.process_time() - start
start = time.process_time()
files = export.export_msccl(plan, max_steps=int(sys.argv[2]))
spent["export"] = time.process_time() - start
start = time.process_time()
export.check_export(files, "bench")
spent["check"] = time.process_time() - start
print(json.dumps(spent))
"""


def _stages(instance: Path, trees: dict[str, Path], rounds: int, max_steps: int) -> None:
    """``--stages``: per tree the best CPU seconds of each stage over the rounds, and new / base."""
    best: dict[str, dict[str, float]] = {}
    for r in range(rounds):
        for name, src in (trees.items() if r % 2 == 0 else reversed(trees.items())):
            out = subprocess.run([sys.executable, "-c", _STAGES, str(instance), str(max_steps)], check=True,
                                 env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True)
            spent: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in spent.items()), flush=True)
            old = best.setdefault(name, spent)
            for k, v in spent.items():
                old[k] = min(old[k], v)
    for name, spent in best.items():
        print(f"best {name} (CPU s): " + ", ".join(f"{k} {v:.2f}" for k, v in spent.items()))
    if "base" in best:
        print("new / base: " + ", ".join(f"{k} {best['new'][k] / best['base'][k]:.2f}"
                                         for k in best["new"] if best["base"][k] > 0.05))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--instance", type=Path, default=Path("instances/megatron-5t-n512-b1.toml"))
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    parser.add_argument("--base", type=Path, default=None, help="src directory of the baseline tree")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=128)
    parser.add_argument("--stages", action="store_true", help="CPU seconds per library stage, in-process")
    args = parser.parse_args()
    trees = {"new": args.src.resolve()} if args.base is None else {"base": args.base.resolve(),
                                                                  "new": args.src.resolve()}
    if args.stages:
        _stages(args.instance.resolve(), trees, args.rounds, args.max_steps)
        return
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
