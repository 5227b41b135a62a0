"""Whole-process CPU time of the command line, against a bare interpreter and a baseline.

Usage: python scripts/bench_cli.py [--repeat K] [--commands bare,help,solve,simulate] [--baseline OLD/src]

Runs, K times each and interleaved (bare, help, solve, simulate, bare, ...), as whole
processes: ``python -c pass``, ``ocsplan --help``, ``ocsplan solve
instances/paper-multimesh-n256.toml`` (the heuristic) and ``ocsplan simulate`` of the
megatron plan (instances/megatron-5t-n512-b1.toml, solved once first) on
simulate/fabrics/nvl576-all-ocs.toml in message mode (issue 12: at most 2 s of CPU).
Prints per command the median and best wall time, the median CPU time (user + sys)
with its excess over the bare interpreter (start-up goal: at most 0.3 s) and the ratio
to it; then which heavy libraries ``import ocsplan.cli`` pulls in (none is the goal).

``--baseline OLD/src`` runs every command also with the ocsplan sources under that
directory (e.g. ``git archive`` or a ``git worktree`` of an older commit, its ``src``),
each right after the current code's run, and adds that version's median CPU time and
the speed-up over it (a ratio measured in one run, which a loaded machine disturbs far
less than absolute times); the ``simulate`` tables of both versions must be the same
bytes, else the line says so.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from ocsplan.cli import main; main()"]
PLAN = "megatron.json"  # in the run's temporary directory
COMMANDS = {
    "bare": ("python -c pass", [sys.executable, "-c", "pass"]),
    "help": ("ocsplan --help", [*CLI, "--help"]),
    "solve": ("ocsplan solve n256", [*CLI, "solve", str(ROOT / "instances/paper-multimesh-n256.toml")]),
    "simulate": ("ocsplan simulate megatron", [
        *CLI, "simulate", PLAN, "--fabric", str(ROOT / "simulate/fabrics/nvl576-all-ocs.toml")]),
}
# as installed for a user: bytecode caches written (a PYTHONDONTWRITEBYTECODE=1 environment
# would recompile every module of the editable install on every run)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
HEAVY = ("ortools", "pulp", "highspy", "simpy", "matplotlib", "networkx", "scipy", "numpy", "dask")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall, cpu) seconds and the standard output of one run of ``argv`` as a child process."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    return time.perf_counter() - start, _cpu() - cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma list of " + ", ".join(COMMANDS))
    parser.add_argument("--baseline", default=None, help="src directory of another ocsplan version")
    args = parser.parse_args()
    names = [name for name in args.commands.split(",") if name]
    unknown = [name for name in names if name not in COMMANDS]
    if unknown or "bare" not in names:
        parser.error(f"--commands: unknown {', '.join(unknown)}" if unknown else "--commands needs bare")
    versions = {"new": ENV}
    if args.baseline:
        versions["old"] = dict(ENV, PYTHONPATH=str(Path(args.baseline).resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        if "simulate" in names:  # the plan, solved once by the current code
            subprocess.run([*CLI, "solve", str(ROOT / "instances/megatron-5t-n512-b1.toml"), "--json", PLAN],
                           check=True, stdout=subprocess.DEVNULL, cwd=cwd, env=ENV)
        for name in names:  # warm the file cache and write the bytecode caches
            for env in versions.values():
                _run(COMMANDS[name][1], cwd, env)
        walls: dict[tuple[str, str], list[float]] = {(n, v): [] for n in names for v in versions}
        cpus: dict[tuple[str, str], list[float]] = {(n, v): [] for n in names for v in versions}
        outputs: dict[tuple[str, str], set[bytes]] = {(n, v): set() for n in names for v in versions}
        for _ in range(args.repeat):
            for name in names:
                for version, env in versions.items():
                    wall, cpu, stdout = _run(COMMANDS[name][1], cwd, env)
                    walls[(name, version)].append(wall)
                    cpus[(name, version)].append(cpu)
                    outputs[(name, version)].add(stdout)
    # CPU seconds (user + sys) hold up on a loaded machine; wall seconds do not
    head = f"{'command':26} {'wall med':>9} {'wall best':>9} {'cpu med':>8} {'cpu excess':>10} {'cpu ratio':>9}"
    print(head + (f" {'old cpu med':>11} {'speed-up':>8}" if args.baseline else ""))
    bare = statistics.median(cpus[("bare", "new")])
    for name in names:
        wall, cpu = statistics.median(walls[(name, "new")]), statistics.median(cpus[(name, "new")])
        line = (f"{COMMANDS[name][0]:26} {wall:9.3f} {min(walls[(name, 'new')]):9.3f} {cpu:8.3f} "
                f"{cpu - bare:10.3f} {cpu / bare:9.2f}")
        if args.baseline:
            old = statistics.median(cpus[(name, "old")])
            line += f" {old:11.3f} {old / cpu:7.2f}x"
            if name == "simulate" and outputs[(name, "new")] != outputs[(name, "old")]:
                line += " (output differs!)"
        print(line)
    probe = f"import sys, ocsplan.cli; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT, env=ENV
    )
    print(f"heavy libraries imported by `import ocsplan.cli`: {loaded.stdout.strip() or 'none'}")


if __name__ == "__main__":
    main()
