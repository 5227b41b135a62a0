"""Benchmark Simlette against the paper's Figure 22.

Usage: python scripts/bench_simlette.py [--accelerators 32,64,128,256] [--modes message,flit] [--repeat K]
                                      [--baseline OLD/src] [--clock wall|cpu] [--ports L]

The paper's case (App. C.5, Figure 22): one all-reduce on a single-level EPS
fabric with 8 ports per accelerator and a 40 KiB buffer; one-shot on the
complete graph, so every message is the whole 40 KiB = 64 DL flits, sprayed
over the 8 ports. Unlimited buffers. The paper needed 827 s flit by flit and
90 s in its optimized (message) mode at 256 accelerators on one Ryzen 9 9950X
core. Prints, per size and mode, the best wall time of K runs, SimPy events
and events per second, DL-flit hops per second, the simulated and analytical
completion times, and the speed-up over the paper at 256. ``--baseline``
runs every case also with the ocsplan sources under that directory (e.g. a
``git worktree`` of an older commit, its ``src``) in a subprocess, right after
the current code's run, and prints the speed-up over it: a ratio measured in
one run, which a loaded machine disturbs far less than absolute times.
``--clock cpu`` times the process's CPU instead of the wall clock (the run is
single-threaded: on an idle machine the two agree; on a shared one the CPU time
is what the run itself cost).

With 8 ports every 64-flit message of the paper's case splits evenly, so the
eight rails run in lockstep and Simlette simulates one of them (exact; see
``SwitchedNetwork.start``). ``--ports 7`` (or any L that does not divide 64)
measures the general path, every rail simulated.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from ocsplan.cayley import Topology
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import DemandResult, SimOptions, simulate_program

ROOT = Path(__file__).resolve().parent.parent
PAPER_256 = {"flit": 827.0, "message": 90.0}  # seconds, paper App. C.5 / Figure 22


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accelerators", default="256", help="comma list of powers of two")
    parser.add_argument("--modes", default="message,flit")
    parser.add_argument("--ports", type=int, default=8)
    parser.add_argument("--buffer", type=int, default=40 * 1024, help="all-reduce buffer sigma in bytes")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--baseline", default=None, help="src directory of another ocsplan version")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="time wall clock or process CPU")
    parser.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)  # one 'wall events' line per case
    args = parser.parse_args()
    if args.raw:
        for n in (int(x) for x in args.accelerators.split(",")):
            for mode in args.modes.split(","):
                wall, result = _best(n, mode, args)
                print(wall, result.events, result.simulated_s)
        return
    print(f"one-shot all-reduce, sigma = {args.buffer} B, single-level EPS, {args.ports} ports, 400 Gb/s, "
          f"unlimited port buffers; best of {args.repeat}, {args.clock} clock")
    print(f"{'N':>5} {'mode':8} {args.clock + ' s':>8} {'events':>10} {'events/s':>10} {'flit-hops/s':>12} "
          f"{'T sim us':>9} {'T model us':>10} {'vs paper':>9}" + (f" {'vs baseline':>11}" if args.baseline else ""))
    for n in (int(x) for x in args.accelerators.split(",")):
        for mode in args.modes.split(","):
            wall, result = _best(n, mode, args)
            hops = 2 * result.flits  # accelerator port -> switch -> accelerator
            paper = f"{PAPER_256[mode] / wall:8.1f}x" if n == 256 and mode in PAPER_256 else ""
            line = (f"{n:5d} {mode:8} {wall:8.2f} {result.events:10d} {result.events / wall:10.0f} "
                    f"{hops / wall:12.0f} {result.simulated_s * 1e6:9.3f} {result.analytical_s * 1e6:10.3f} {paper:>9}")
            if args.baseline:
                old_wall, _, old_sim = _baseline(n, mode, args)
                same = "" if old_sim == result.simulated_s else " (T sim differs!)"
                line += f" {old_wall / wall:10.2f}x{same}"
            print(line, flush=True)


def _best(n: int, mode: str, args: argparse.Namespace) -> tuple[float, DemandResult]:
    """Best wall time of ``--repeat`` runs of the case (and its result)."""
    fabric = load_fabric(ROOT / "simulate" / "fabrics" / "eps-single.toml")
    spec = replace(fabric, accelerators=max(n, 2), ports=args.ports)
    program = SCHEDULES["one-shot"].build(Topology.from_profile((n.bit_length() - 1,)), args.buffer)
    best: tuple[float, DemandResult] | None = None
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for _ in range(args.repeat):
        start = clock()
        result = simulate_program(program, spec, SimOptions(mode=mode), ports=args.ports)
        wall = clock() - start
        if best is None or wall < best[0]:
            best = (wall, result)
    assert best is not None
    return best


def _baseline(n: int, mode: str, args: argparse.Namespace) -> tuple[float, int, float]:
    """(wall, events, simulated s) of the same case with the sources under ``--baseline``."""
    env = dict(os.environ, PYTHONPATH=str(Path(args.baseline).resolve()))
    out = subprocess.run(
        [sys.executable, __file__, "--raw", "--accelerators", str(n), "--modes", mode, "--ports", str(args.ports),
         "--buffer", str(args.buffer), "--repeat", str(args.repeat), "--clock", args.clock],
        env=env, capture_output=True, text=True, check=True, cwd="/")
    wall, events, sim = out.stdout.split()
    return float(wall), int(events), float(sim)


if __name__ == "__main__":
    main()
