"""Benchmark Simlette against the paper's Figure 22.

Usage: python scripts/bench_simlette.py [--accelerators 32,64,128,256] [--modes message,flit] [--repeat K]

The paper's case (App. C.5, Figure 22): one all-reduce on a single-level EPS
fabric with 8 ports per accelerator and a 40 KiB buffer; one-shot on the
complete graph, so every message is the whole 40 KiB = 64 DL flits, sprayed
over the 8 ports. Unlimited buffers. The paper needed 827 s flit by flit and
90 s in its optimized (message) mode at 256 accelerators on one Ryzen 9 9950X
core. Prints, per size and mode, the best wall time of K runs, SimPy events
and events per second, DL-flit hops per second, the simulated and analytical
completion times, and the speed-up over the paper at 256.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from ocsplan.cayley import Topology
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, simulate_program

ROOT = Path(__file__).resolve().parent.parent
PAPER_256 = {"flit": 827.0, "message": 90.0}  # seconds, paper App. C.5 / Figure 22


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accelerators", default="256", help="comma list of powers of two")
    parser.add_argument("--modes", default="message,flit")
    parser.add_argument("--ports", type=int, default=8)
    parser.add_argument("--buffer", type=int, default=40 * 1024, help="all-reduce buffer sigma in bytes")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    fabric = load_fabric(ROOT / "simulate" / "fabrics" / "eps-single.toml")
    print(f"one-shot all-reduce, sigma = {args.buffer} B, single-level EPS, {args.ports} ports, 400 Gb/s, "
          f"unlimited port buffers; best of {args.repeat}")
    print(f"{'N':>5} {'mode':8} {'wall s':>8} {'events':>10} {'events/s':>10} {'flit-hops/s':>12} "
          f"{'T sim us':>9} {'T model us':>10} {'vs paper':>9}")
    for n in (int(x) for x in args.accelerators.split(",")):
        spec = replace(fabric, accelerators=max(n, 2), ports=args.ports)
        program = SCHEDULES["one-shot"].build(Topology.from_profile((n.bit_length() - 1,)), args.buffer)
        for mode in args.modes.split(","):
            best = None
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = simulate_program(program, spec, SimOptions(mode=mode), ports=args.ports)
                wall = time.perf_counter() - start
                if best is None or wall < best[0]:
                    best = (wall, result)
            assert best is not None
            wall, result = best
            hops = 2 * result.flits  # accelerator port -> switch -> accelerator
            paper = f"{PAPER_256[mode] / wall:8.1f}x" if n == 256 and mode in PAPER_256 else ""
            print(f"{n:5d} {mode:8} {wall:8.2f} {result.events:10d} {result.events / wall:10.0f} "
                  f"{hops / wall:12.0f} {result.simulated_s * 1e6:9.3f} {result.analytical_s * 1e6:10.3f} {paper:>9}")


if __name__ == "__main__":
    main()
