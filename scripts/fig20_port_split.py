"""Figure 20 what-if: the split of a message over an accelerator's L ports (not an ocsplan option).

Usage: python scripts/fig20_port_split.py [--start pointer|first]

Simlette cuts a message into L contiguous pieces, the first ``flits mod L`` one flit
longer, starting at a per-node pointer that advances by the message's flits
(``split_flits``): over a phase every port carries within one flit of the mean.
``--start first`` starts every message at port 0 instead (the patch below, this
process only), so the longer pieces always land on the same ports. Prints, per
radix, the unlimited-buffer ratio to the analytical model of the one-shot
all-reduce on 32 accelerators over single-level EPS (Figure 20, as
``repro_simlette.py --figures 20``) at 1 KiB to 1 MiB.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import ocsplan.simlette.switched as switched
from ocsplan.cayley import Topology
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, simulate_program
from ocsplan.simlette.ports import split_flits

ROOT = Path(__file__).resolve().parent.parent
KiB = 1024
SIZES = [KiB << i for i in range(0, 11, 2)]  # 1, 4, 16, 64, 256 KiB, 1 MiB
RADICES = (8, 12, 16, 24)


def _first(flits: int, ways: int, offset: int) -> list[tuple[int, int]]:
    """``split_flits`` from port 0 whatever the pointer."""
    return split_flits(flits, ways, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", choices=("pointer", "first"), default="pointer")
    args = parser.parse_args()
    if args.start == "first":
        switched.split_flits = _first  # type: ignore[attr-defined]
    print(f"Figure 20, unlimited buffers, split from {args.start}: Simlette / model")
    print(f"{'L':>3} " + " ".join(f"{s // KiB:>6}Ki" for s in SIZES))
    for ports in RADICES:
        spec = replace(load_fabric(ROOT / "simulate" / "fabrics" / "eps-single.toml"), accelerators=32, ports=ports)
        ratios = [simulate_program(SCHEDULES["one-shot"].build(Topology.from_profile((5,)), sigma), spec,
                                   SimOptions(), ports=ports).ratio for sigma in SIZES]
        print(f"{ports:3d} " + " ".join(f"{r:8.3f}" for r in ratios))


if __name__ == "__main__":
    main()
