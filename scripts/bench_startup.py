"""Start-up time of the command line: ``ocsplan --help`` against ``python -c pass`` (issue 37 goal 5).

Usage: python scripts/bench_startup.py [--runs K] [--baseline OLD/src]

Runs both as whole processes, K times each and interleaved (pass, help, pass, help, ...) so
that a loaded machine disturbs both alike, after a warm-up run of each. The interpreter runs
as installed for a user: bytecode cached, in a temporary ``PYTHONPYCACHEPREFIX`` so that
nothing is written to the tree (``PYTHONDONTWRITEBYTECODE`` dropped: it would recompile every
ocsplan module on every run). Prints the best and the median wall time and the median CPU time
(user + sys) of each, then ``help - pass`` and ``help / pass`` (goal: ``help - pass`` at most
0.2 s). ``--baseline OLD/src`` times ``--help`` of another ocsplan source tree (a ``git
worktree`` of an older commit, its ``src``) in the same sitting, interleaved, and says whether
both print the same help. ``--no-bytecode`` runs as a ``PYTHONDONTWRITEBYTECODE=1`` environment
does with a source tree: every ocsplan module compiled on every run (the installed libraries keep
their caches). ``scripts/bench_cli.py`` times solve and simulate as well.
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

SRC = Path(__file__).resolve().parent.parent / "src"
PASS = [sys.executable, "-c", "pass"]
HELP = [sys.executable, "-m", "ocsplan", "--help"]
GOAL_S = 0.2


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall, cpu) seconds and the standard output of one run of ``argv``."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start, _cpu() - cpu, done.stdout


def _env(src: Path, cache: str | None) -> dict[str, str]:
    """The environment of a run: ``cache`` the bytecode directory, or None for no bytecode written."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update(PYTHONPATH=str(src), COLUMNS="80")
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each command (default 20)")
    parser.add_argument("--baseline", type=Path, default=None, help="src directory of another ocsplan version")
    parser.add_argument("--no-bytecode", action="store_true", help="as PYTHONDONTWRITEBYTECODE=1 on a source tree")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs: at least 1")
    with tempfile.TemporaryDirectory() as directory:
        cache = None if args.no_bytecode else directory
        commands = {"python -c pass": (PASS, _env(SRC, cache)), "ocsplan --help": (HELP, _env(SRC, cache))}
        if args.baseline is not None:
            commands["ocsplan --help (baseline)"] = (HELP, _env(args.baseline.resolve(), cache))
        for argv, env in commands.values():  # warm the file cache and write the bytecode caches
            _run(argv, env)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        outputs: dict[str, set[bytes]] = {name: set() for name in commands}
        for _ in range(args.runs):
            for name, (argv, env) in commands.items():
                wall, cpu, stdout = _run(argv, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
                outputs[name].add(stdout)
    print(f"{args.runs} runs each, interleaved{', no bytecode' if args.no_bytecode else ''}; seconds")
    print(f"{'command':28} {'wall best':>9} {'wall med':>9} {'cpu med':>8}")
    for name in commands:
        print(f"{name:28} {min(walls[name]):9.3f} {statistics.median(walls[name]):9.3f} "
              f"{statistics.median(cpus[name]):8.3f}")
    bare = "python -c pass"
    for name in commands:
        if name == bare:
            continue
        best = min(walls[name]) - min(walls[bare])
        median = statistics.median(walls[name]) - statistics.median(walls[bare])
        ratio = statistics.median(walls[name]) / statistics.median(walls[bare])
        verdict = "within" if median <= GOAL_S else "above"
        print(f"{name} - pass: best {best:.3f}, median {median:.3f} ({verdict} the {GOAL_S} s goal); "
              f"median ratio {ratio:.1f}x")
    if args.baseline is not None:
        same = outputs["ocsplan --help"] == outputs["ocsplan --help (baseline)"]
        print(f"help output identical to the baseline's: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
