"""Time of the axis frontier per axis size: the table-backed frontier against the old search.

For each m: the time of ``frontier_rows(m)`` (table load included, cache cleared), the
least degree of diameter 2 and 3, the proof status counts, and, for m <= --baseline-bits,
the time of the previous frontier (exhaustive up to 5 bits, local search above) in the
same process with the ratio. Median of --repeat runs.

    PYTHONPATH=src python scripts/bench_frontier.py [--repeat 3] [--baseline-bits 6]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from rich.console import Console
from rich.table import Table

from ocsplan.cayley import profile_degree
from ocsplan.planning.covering import COVERING_MAX_BITS, CoveringSet, covering_sets, covering_table
from ocsplan.planning.frontier import diameter_frontier, frontier_rows
from ocsplan.planning.space import integer_partitions, shape_options

LAMBDA = 0.52e-6  # s per phase (paper Table 6)
RATE = 50e9  # B/s per circuit (400 Gb/s)


def _time_rows(bits: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        covering_table.cache_clear()
        start = time.perf_counter()
        frontier_rows(bits)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _time_old(bits: int) -> float:
    diameter_frontier.cache_clear()
    start = time.perf_counter()
    diameter_frontier(bits)
    return time.perf_counter() - start


def _block_time(bits: int, degree: int, payload: float) -> float:
    """Best all-reduce time (p = 1) on any block fold (or its cube) of at most ``degree``."""
    best = float("inf")
    for shape in integer_partitions(bits):
        if profile_degree(shape) > degree:
            continue
        for opt in shape_options("all-reduce", "auto", shape):
            best = min(best, opt.h * LAMBDA + opt.v_factor * payload / RATE)
    return best


def _irregular_time(entry: CoveringSet, payload: float) -> float:
    return min(h * LAMBDA + float(v) * payload / RATE
               for h, v in ((entry.one_shot_h, entry.one_shot_v), (entry.dvo_h, entry.dvo_v)))


def _gains(repeat_payloads: tuple[float, ...]) -> Table:
    table = Table(title="all-reduce on the table's sets (one-shot or one-shot-dvo) against the best block fold "
                        "of the same degree (p = 1, lambda 0.52 us, 50 GB/s)", title_justify="left")
    for col in ("m", "degrees better", *(f"best gain at {int(p)} B (degree)" for p in repeat_payloads)):
        table.add_column(col, justify="right")
    for bits in range(3, COVERING_MAX_BITS + 1):
        better = 0
        best: dict[float, tuple[float, int]] = {p: (0.0, 0) for p in repeat_payloads}
        for entry in covering_sets(bits):
            gains = {}
            for payload in repeat_payloads:
                block = _block_time(bits, entry.degree, payload)
                gains[payload] = 1 - _irregular_time(entry, payload) / block
                best[payload] = max(best[payload], (gains[payload], entry.degree))
            better += gains[repeat_payloads[0]] > 1e-9
        table.add_row(str(bits), str(better), *(f"{g:.0%} ({d})" if d else "-" for g, d in best.values()))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-bits", type=int, default=6)
    args = parser.parse_args()
    table = Table(title="frontier per axis size (table-backed)", title_justify="left")
    for col in ("m", "rows", "time", "old search", "ratio", "l(m,2) found", "l(m,3) found", "proofs"):
        table.add_column(col, justify="left" if col == "proofs" else "right")
    total = 0.0
    for bits in range(1, COVERING_MAX_BITS + 1):
        seconds = _time_rows(bits, args.repeat)
        total += seconds
        old = _time_old(bits) if bits <= args.baseline_bits else None
        sets = covering_sets(bits)
        least = {r: min((s.degree for s in sets if s.diameter <= r), default=None) for r in (2, 3)}
        proofs = Counter(s.proof for s in sets)
        table.add_row(
            str(bits), str(len(frontier_rows(bits))), f"{seconds * 1e3:.2f} ms",
            "" if old is None else f"{old * 1e3:.1f} ms",
            "" if old is None else f"{old / seconds:.3g}x",
            str(least[2] or ""), str(least[3] or ""),
            ", ".join(f"{k} {v}" for k, v in sorted(proofs.items())),
        )
    Console(width=160).print(table)
    print(f"all m <= {COVERING_MAX_BITS}: {total:.3f} s")
    Console(width=160).print(_gains((256.0, 4096.0)))


if __name__ == "__main__":
    main()
