"""Start-up time of the command line, against a bare interpreter in the same run.

Usage: python scripts/bench_cli.py [--repeat K]

Runs, K times each and interleaved (bare, help, solve, bare, help, ...), as whole
processes: ``python -c pass``, ``ocsplan --help`` and ``ocsplan solve
instances/paper-multimesh-n256.toml`` (the heuristic). Prints per command the median
and best wall time, the median CPU time (user + sys) with its excess over the bare
interpreter (the goal: at most 0.3 s) and the ratio to it; then which heavy
libraries ``import ocsplan.cli`` pulls in (none is the goal).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from ocsplan.cli import main; main()"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "ocsplan --help": [*CLI, "--help"],
    "ocsplan solve n256": [*CLI, "solve", str(ROOT / "instances/paper-multimesh-n256.toml")],
}
# as installed for a user: bytecode caches written (a PYTHONDONTWRITEBYTECODE=1 environment
# would recompile every module of the editable install on every run)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
HEAVY = ("ortools", "pulp", "highspy", "simpy", "matplotlib", "networkx", "scipy", "numpy", "dask")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``argv`` as a child process."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=ENV)
    return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    for argv in COMMANDS.values():  # warm the file cache and write the bytecode caches
        _run(argv)
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpus: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, argv in COMMANDS.items():
            wall, cpu = _run(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    # CPU seconds (user + sys) hold up on a loaded machine; wall seconds do not
    print(f"{'command':22} {'wall med':>9} {'wall best':>9} {'cpu med':>8} {'cpu excess':>10} {'cpu ratio':>9}")
    bare = statistics.median(cpus["python -c pass"])
    for name in COMMANDS:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:22} {wall:9.3f} {min(walls[name]):9.3f} {cpu:8.3f} {cpu - bare:10.3f} {cpu / bare:9.2f}")
    probe = f"import sys, ocsplan.cli; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT, env=ENV
    )
    print(f"heavy libraries imported by `import ocsplan.cli`: {loaded.stdout.strip() or 'none'}")


if __name__ == "__main__":
    main()
