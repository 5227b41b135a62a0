"""Regenerate src/ocsplan/planning/data/covering.json (issue 10): covering-code generator sets.

For every m <= 9 and every degree d from m up to the first two-layer block fold, find a
generator set of d masks with the least diameter we can reach, and record how that
diameter is known to be least (sphere bound, exhaustive search, cited l(m, R), or open).

Search, per (m, d, R):
* tabu search over the non-unit generators with the unit masks fixed (any spanning set
  contains a basis, which GL(m, 2) maps to the unit masks, so this loses nothing); the
  objective is the number of labels farther than R, every swap scored at once with a
  Walsh-Hadamard (XOR) convolution: adding u to S' covers u + Ball_{R-1}(S');
* exhaustive search over all sets of Frobenius orbits of GF(2^m) of size d (for R = 2
  where tabu failed), the found set mapped back to one that contains the unit masks;
* the lower bound of a diameter R at degree d: the sphere bound, an exhaustive search
  over all sets with the unit masks fixed when they are few enough, or a cited l(m, R - 1).

Usage: python scripts/gen_covering.py [--out PATH] [--seed 0] [--steps 2000] [--max-bits 9]
Deterministic for a given seed and step budget.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from itertools import combinations
from math import comb
from pathlib import Path
from typing import Any

import numpy as np

from ocsplan.cayley import Topology, profile_degree
from ocsplan.files import write_atomic
from ocsplan.schedules.base import closed_form

OUT = Path(__file__).resolve().parents[1] / "src" / "ocsplan" / "planning" / "data" / "covering.json"

REFERENCES = {
    "GS85": "R. L. Graham, N. J. A. Sloane, On the covering radius of codes, IEEE Trans. Inf. Theory 31 (1985) 385-401",
    "BPW89": "R. A. Brualdi, V. S. Pless, R. M. Wilson, Short codes with a given covering radius, "
             "IEEE Trans. Inf. Theory 35 (1989) 99-109",
    "CHLL97": "G. Cohen, I. Honkala, S. Litsyn, A. Lobstein, Covering Codes, North-Holland 1997, "
              "tables of l(m, R)",
    "DMP18": "A. A. Davydov, S. Marcugini, F. Pambianco, Classification of minimal 1-saturating sets in "
             "PG(v, 2), 2 <= v <= 6, arXiv 2018 (l(v + 1, 2) by exhaustive computer search)",
    "issue10": "ocsplan issue 10 (known bounds quoted there: l(8,2) in 23..26, l(9,2) <= 39, l(9,3) <= 18)",
}

# (m, R) -> (lower, upper, reference) for l(m, R), the least degree of diameter R.
# Only lower bounds above the sphere bound change a proof; upper bounds are targets.
CITED: dict[tuple[int, int], tuple[int, int, str]] = {
    (6, 2): (13, 13, "DMP18"),
    (7, 2): (19, 19, "DMP18"),
    (7, 3): (11, 11, "CHLL97"),
    (8, 2): (23, 26, "issue10"),
    (8, 3): (14, 14, "CHLL97"),
    (9, 2): (32, 39, "issue10"),
    (9, 3): (15, 18, "issue10"),
    (9, 4): (13, 13, "CHLL97"),
}

EXHAUSTIVE_LIMIT = 400_000  # unit-fixed sets checked per (m, d, R) lower-bound proof


# -- geometry ---------------------------------------------------------------------------


def fwht(a: np.ndarray) -> np.ndarray:
    """Walsh-Hadamard transform along the last axis (integer, unnormalised)."""
    n = a.shape[-1]
    lead = a.shape[:-1]
    h = 1
    while h < n:
        b = a.reshape(*lead, n // (2 * h), 2, h)
        a = np.stack((b[..., 0, :] + b[..., 1, :], b[..., 0, :] - b[..., 1, :]), axis=-2).reshape(*lead, n)
        h *= 2
    return a


def xor_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    out: np.ndarray = fwht(fwht(a.astype(np.int64)) * fwht(b.astype(np.int64))) // n
    return out


def removal_balls(gens: list[int], bits: int, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows i < k: Ball_{R-1} and Ball_R of gens without gens[i]; last row: of gens itself."""
    n = 1 << bits
    k = len(gens)
    idx = np.arange(n)
    keep = ~np.eye(k + 1, k, dtype=bool)
    keep[k, :] = True
    prev = np.zeros((k + 1, n), dtype=bool)
    prev[:, 0] = True
    before = prev
    for _ in range(radius):
        nxt = prev.copy()
        for j, s in enumerate(gens):
            rows = keep[:, j]
            nxt[rows] |= prev[rows][:, idx ^ s]
        before, prev = prev, nxt
    return before, prev


def diameter(gens: list[int], bits: int) -> int:
    dist = Topology(bits, frozenset(gens)).distances
    return max(dist) if min(dist) >= 0 else 1 << 30


def sphere_length(bits: int, radius: int) -> int:
    """Least n with sum_{i <= R} C(n, i) >= 2**bits: the sphere bound on l(m, R)."""
    n = 0
    while sum(comb(n, i) for i in range(radius + 1)) < 1 << bits:
        n += 1
    return n


def sphere_diameter(bits: int, degree: int) -> int:
    radius = 0
    while sum(comb(degree, i) for i in range(radius + 1)) < 1 << bits:
        radius += 1
    return radius


# -- tabu search -------------------------------------------------------------------------


def greedy_add(gens: list[int], bits: int, radius: int, rng: np.random.Generator) -> int:
    """The non-member mask covering most labels still farther than ``radius`` (random ties)."""
    n = 1 << bits
    before, ball = removal_balls(gens, bits, radius)
    gain = xor_convolve(before[-1], ~ball[-1]).astype(float)
    gain[0] = -1
    gain[gens] = -1
    return int(rng.choice(np.flatnonzero(gain == gain.max()))) if gain.max() >= 0 else n - 1


def tabu(bits: int, degree: int, radius: int, rng: np.random.Generator, steps: int,
         start: list[int], free: bool = False) -> list[int] | None:
    """A set of ``degree`` masks with the unit masks and diameter <= radius, or None.

    ``free`` lets the unit masks move too (a larger neighbourhood); the set found is
    then mapped by a linear map onto one that contains the unit masks.
    """
    n = 1 << bits
    units = [] if free else [1 << b for b in range(bits)]
    fixed = len(units)
    others = np.array([m for m in range(1, n) if free or m & (m - 1)])
    gens = units + sorted(g for g in start if free or g & (g - 1))[: degree - fixed]
    while len(gens) < degree:
        gens.append(greedy_add(gens, bits, radius, rng))
    folds = gens[fixed:]
    tabu_add = np.zeros(n, dtype=np.int64)
    tabu_remove = np.zeros(n, dtype=np.int64)
    big = 1 << 30
    best = big
    for step in range(steps + 1):
        before, ball = removal_balls(gens, bits, radius)
        if ball[-1].all():
            return to_units(gens, bits) if free else sorted(gens)
        best = min(best, int((~ball[-1]).sum()))
        if step == steps or not folds:
            return None
        before, ball = before[fixed:degree], ball[fixed:degree]
        uncovered = ~ball
        value = uncovered.sum(axis=1)[:, None] - xor_convolve(before, uncovered)[:, others]
        member = np.zeros(n, dtype=bool)
        member[gens] = True
        value[:, member[others]] = big
        forbidden = (tabu_remove[np.array(folds)][:, None] > step) | (tabu_add[others][None, :] > step)
        allowed = np.where(forbidden & (value >= best), big, value)
        low = int(allowed.min())
        if low >= big:
            tabu_add[:] = 0
            tabu_remove[:] = 0
            continue
        choices = np.argwhere(allowed == low)
        i, p = choices[rng.integers(len(choices))]
        removed, added = folds[i], int(others[p])
        folds[i] = added
        gens = units + folds
        tabu_add[removed] = step + int(rng.integers(4, 11))
        tabu_remove[added] = step + int(rng.integers(4, 11))
    return None


# -- exhaustive searches -------------------------------------------------------------------


def exists_unit_fixed(bits: int, degree: int, radius: int, chunk: int = 2048) -> tuple[str, list[int]]:
    """("none", []) if no set of ``degree`` masks containing the units has diameter <= radius,
    ("found", set) if one has, ("skipped", []) if there are too many sets to check."""
    n = 1 << bits
    others = [m for m in range(1, n) if m & (m - 1)]
    k = degree - bits
    if k < 0:
        return "none", []
    if comb(len(others), k) > EXHAUSTIVE_LIMIT:
        return "skipped", []
    units = np.array([1 << b for b in range(bits)], dtype=np.int64)
    idx = np.arange(n)
    combos = combinations(others, k)
    while True:
        block = np.array([c for _, c in zip(range(chunk), combos, strict=False)], dtype=np.int64).reshape(-1, k)
        if len(block) == 0:
            return "none", []
        sets = np.concatenate([np.broadcast_to(units, (len(block), bits)), block], axis=1)
        rows = np.arange(len(block))[:, None]
        ball = np.zeros((len(block), n), dtype=bool)
        ball[:, 0] = True
        for _ in range(radius):
            grown = ball.copy()
            for j in range(degree):
                grown |= ball[rows, idx[None, :] ^ sets[:, j : j + 1]]
            ball = grown
        full = np.flatnonzero(ball.all(axis=1))
        if len(full):
            return "found", sorted(int(x) for x in sets[full[0]])
        if len(block) < chunk:
            return "none", []


def radius_two_exists(bits: int, degree: int) -> bool:
    """Exhaustive: does some set of ``degree`` masks containing the units have diameter <= 2?

    Depth first over the folds in increasing order with 64-bit label masks (bits <= 6):
    Q[g] holds the labels g and g + s for every s chosen so far (units included); the
    last two folds are checked together for all pairs at once.
    """
    assert bits <= 6
    n = 1 << bits
    full = np.uint64((1 << n) - 1)
    others = [m for m in range(1, n) if m & (m - 1)]
    k = degree - bits
    units = [1 << b for b in range(bits)]
    one = [np.uint64(1) << np.uint64(x) for x in range(n)]
    cover = np.uint64(1)  # label 0
    for u in units:
        cover |= one[u]
    for a, b in combinations(units, 2):
        cover |= one[a ^ b]
    q0 = np.array([int(one[g]) | sum(1 << (g ^ u) for u in units) for g in others], dtype=np.uint64)
    shift = np.array([[1 << (g ^ f) for g in others] for f in others], dtype=np.uint64)
    pair = np.array([[1 << (g ^ h) for h in others] for g in others], dtype=np.uint64)
    upper = np.triu(np.ones((len(others), len(others)), dtype=bool), 1)

    def rec(start: int, left: int, cover: np.uint64, q: np.ndarray) -> bool:
        if left == 0:
            return bool(cover == full)
        if left == 1:
            return bool(((cover | q[start:]) == full).any())
        if left == 2:
            sub = q[start:]
            both = cover | sub[:, None] | sub[None, :] | pair[start:, start:]
            return bool(((both == full) & upper[start:, start:]).any())
        last = len(others) - left + 1
        return any(rec(i + 1, left - 1, cover | q[i], q | shift[i]) for i in range(start, last))

    return rec(0, k, cover, q0)


PRIMITIVE = {2: 0b111, 3: 0b1011, 4: 0b10011, 5: 0b100101, 6: 0b1000011, 7: 0b10000011,
             8: 0b100011101, 9: 0b1000010001}


def frobenius_orbits(bits: int) -> list[list[int]]:
    """Orbits of x -> x^2 on the non-zero elements of GF(2^bits) (polynomial basis)."""
    poly = PRIMITIVE[bits]

    def square(x: int) -> int:
        out, a, b = 0, x, x
        while b:
            if b & 1:
                out ^= a
            b >>= 1
            a <<= 1
            if a >> bits:
                a ^= poly
        return out

    seen: set[int] = set()
    orbits = []
    for x in range(1, 1 << bits):
        if x in seen:
            continue
        orbit = [x]
        y = square(x)
        while y != x:
            orbit.append(y)
            y = square(y)
        seen.update(orbit)
        orbits.append(orbit)
    return orbits


def to_units(gens: list[int], bits: int) -> list[int]:
    """Image of a spanning set under a linear map sending a basis inside it to the unit masks."""
    basis: list[int] = []
    reduced: list[tuple[int, int]] = []  # (pivot-reduced vector, combination of basis indices)
    for g in sorted(gens):
        v, combo = g, 1 << len(basis)
        for r, c in reduced:
            if v ^ r < v:
                v, combo = v ^ r, combo ^ c
        if v:
            reduced.append((v, combo))
            reduced.sort(reverse=True)
            basis.append(g)
        if len(basis) == bits:
            break
    if len(basis) < bits:
        raise ValueError("set does not span")
    # coordinates of x in the basis by elimination on the columns
    cols = list(basis)

    def coords(x: int) -> int:
        rows = [(cols[i], 1 << i) for i in range(bits)]
        out = 0
        for bit in range(bits - 1, -1, -1):
            pivot = next((r for r in rows if r[0] >> bit & 1), None)
            if pivot is None:
                continue
            rows.remove(pivot)
            rows = [(r ^ pivot[0], c ^ pivot[1]) if r >> bit & 1 else (r, c) for r, c in rows]
            if x >> bit & 1:
                x ^= pivot[0]
                out ^= pivot[1]
        return out

    return sorted(coords(g) for g in gens)


def frobenius_search(bits: int, degree: int, radius: int, limit: int = 2_000_000) -> list[int] | None:
    """A union of Frobenius orbits of size ``degree`` with diameter <= radius (unit masks mapped in)."""
    orbits = frobenius_orbits(bits)
    by_size: dict[int, list[list[int]]] = {}
    for orbit in orbits:
        by_size.setdefault(len(orbit), []).append(orbit)
    sizes = sorted(by_size, reverse=True)
    n = 1 << bits
    idx = np.arange(n)

    def compositions(rest: int, pos: int) -> list[list[int]]:
        if pos == len(sizes):
            return [[]] if rest == 0 else []
        out = []
        for count in range(min(rest // sizes[pos], len(by_size[sizes[pos]])) + 1):
            out += [[count, *tail] for tail in compositions(rest - count * sizes[pos], pos + 1)]
        return out

    for counts in compositions(degree, 0):
        total = 1
        for size, count in zip(sizes, counts, strict=True):
            total *= comb(len(by_size[size]), count)
        if total > limit:
            continue
        parts = [list(combinations(range(len(by_size[s])), c)) for s, c in zip(sizes, counts, strict=True)]
        sets: list[list[int]] = [[]]
        for size, choice in zip(sizes, parts, strict=True):
            sets = [s + [x for j in ch for x in by_size[size][j]] for s in sets for ch in choice]
        for start in range(0, len(sets), 2048):
            block = np.array(sets[start : start + 2048], dtype=np.int64)
            rows = np.arange(len(block))[:, None]
            ball = np.zeros((len(block), n), dtype=bool)
            ball[:, 0] = True
            for _ in range(radius):
                grown = ball.copy()
                for j in range(degree):
                    grown |= ball[rows, idx[None, :] ^ block[:, j : j + 1]]
                ball = grown
            full = np.flatnonzero(ball.all(axis=1))
            if len(full):
                return to_units([int(x) for x in block[full[0]]], bits)
    return None


# -- the table -----------------------------------------------------------------------------


def top_degree(bits: int) -> int:
    """Degree of the first block fold with at most two layers (diameter <= 2)."""
    if bits <= 1:
        return bits
    return profile_degree(((bits + 1) // 2, bits // 2))


def lower_length(bits: int, radius: int) -> tuple[int, str]:
    """Best lower bound on l(bits, radius) and where it comes from."""
    sphere = sphere_length(bits, radius)
    cited = CITED.get((bits, radius))
    if cited is not None and cited[0] > sphere:
        return cited[0], "cited"
    return sphere, "sphere"


def costs(gens: list[int], bits: int) -> dict[str, dict[str, Any]]:
    topo = Topology(bits, frozenset(gens))
    out = {}
    for key, name in (("one_shot", "one-shot"), ("one_shot_dvo", "one-shot-dvo")):
        form = closed_form(name, topo)
        out[key] = {"h": form.h, "v": str(Fraction(form.v_factor))}
    return out


def radius_two_sets(bits: int, seed: int, steps: int, log: bool, restarts: int = 3) -> dict[int, list[int]]:
    """Diameter-2 sets from the two-layer block fold's degree downwards until the search fails.

    Free tabu (every generator may move) from the unit masks, ``restarts`` seeds per
    degree; going down costs one failed search instead of one per degree below the threshold.
    """
    found: dict[int, list[int]] = {}
    degree = top_degree(bits)
    units = [1 << b for b in range(bits)]
    while degree > lower_length(bits, 2)[0]:
        degree -= 1
        t0 = time.perf_counter()
        result = None
        for attempt in range(restarts):
            result = tabu(bits, degree, 2, np.random.default_rng(seed + attempt), steps, units, free=True)
            if result is not None:
                break
        if log:
            print(f"m={bits} d={degree}: radius 2 {'found' if result else 'not found'} "
                  f"{time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
        if result is None:
            break
        found[degree] = result
    return found


def build(max_bits: int, seed: int, steps: int, log: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    entries = []
    for bits in range(1, max_bits + 1):
        current = [1 << b for b in range(bits)]
        cur_diam = bits
        known = radius_two_sets(bits, seed, 5000, log) if bits >= 8 else {}
        for degree in range(bits, top_degree(bits) + 1):
            t0 = time.perf_counter()
            if degree > bits:  # adding a generator never lengthens a path
                current = sorted([*current, greedy_add(current, bits, max(cur_diam - 1, 1), rng)])
                cur_diam = diameter(current, bits)
            if degree in known and cur_diam > 2:
                current, cur_diam = known[degree], 2
            while cur_diam > 1:
                radius = cur_diam - 1
                if degree < lower_length(bits, radius)[0]:
                    break
                if radius == 2 and bits >= 8:
                    break  # settled by radius_two_sets
                found = tabu(bits, degree, radius, rng, steps, current)
                if found is None and radius == 2 and 6 <= bits <= 7:
                    found = frobenius_search(bits, degree, radius)
                if found is None:
                    break
                current, cur_diam = found, diameter(found, bits)
            proof, lower = _proof(bits, degree, cur_diam)
            entries.append({
                "bits": bits, "degree": degree, "diameter": cur_diam, "generators": sorted(current),
                "proof": proof, "lower_bound": lower, **costs(current, bits),
            })
            if log:
                print(f"m={bits} d={degree}: diameter {cur_diam} ({proof}, >= {lower}) "
                      f"{time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    return {
        "format": "ocsplan-covering/1",
        "description": "least known diameter of Cay((Z2)^m, S) per degree |S| (covering radius of binary "
                       "linear codes of codimension m); generators as integers, local bit 0 = value 1",
        "generator": f"scripts/gen_covering.py --seed {seed} --steps {steps} --max-bits {max_bits}",
        "references": REFERENCES,
        "cited_lengths": [
            {"bits": m, "radius": r, "lower": lo, "upper": hi, "reference": ref}
            for (m, r), (lo, hi, ref) in sorted(CITED.items())
        ],
        "sets": entries,
    }


def _proof(bits: int, degree: int, diam: int) -> tuple[str, int]:
    """How diameter ``diam`` is known to be least at ``degree``, and the proven lower bound."""
    sphere = sphere_diameter(bits, degree)
    if diam <= sphere:
        return "sphere", sphere
    status, found = exists_unit_fixed(bits, degree, diam - 1)
    if status == "found":
        raise RuntimeError(f"m={bits} d={degree}: exhaustive search beat the search: {found}")
    if status == "skipped" and diam - 1 == 2 and bits <= 6 and not radius_two_exists(bits, degree):
        status = "none"
    if status == "none":
        return "exhaustive", diam
    lower = next(r for r in range(1, diam + 1) if lower_length(bits, r)[0] <= degree)
    return ("cited", diam) if lower == diam else ("open", lower)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--max-bits", type=int, default=9)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    table = build(args.max_bits, args.seed, args.steps, not args.quiet)
    lines = ",\n".join("    " + json.dumps(e, separators=(", ", ": ")) for e in table.pop("sets"))
    head = json.dumps(table, indent=2)[:-2]
    write_atomic(args.out, f'{head},\n  "sets": [\n{lines}\n  ]\n}}\n')
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
