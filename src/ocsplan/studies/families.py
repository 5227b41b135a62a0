"""Generated instance families for batch studies (``ocsplan generate``).

Every family is a pure function of (seed, index): the same arguments give the
same instances byte for byte. Families:

- ``random``: n = 4..9, 1-4 meshes of 1-2 axes, L from n to 4n, payloads
  log-uniform 64 B..64 MiB, mixed collectives, weights 1..128, now and then a
  requested schedule;
- ``helix``: Helix-style decode (paper Table 1): a world mesh (all-reduce after
  the output projection, logits all-gather), attention (KVP all-to-all, TPA
  without collective) and FFN (TPE all-reduce, EP all-gather or all-to-all)
  from random (KVP, TPA, EP, TPE) splits, batch and model sizes;
- ``latency``: as ``random`` with payloads 64 B..64 KiB (latency-bound);
- ``bandwidth``: as ``random`` with payloads 1 MiB..64 MiB (bandwidth-bound);
- ``small-messages``: payloads 64 B..8 KiB on active axes of 16-256 ranks (4-8 bits),
  1-3 meshes of 1-2 axes (an axis too small idles), L from n to 3n: where irregular
  folds can beat block folds (issue 10; use n = 4..12);
- ``wide``: 3-4 meshes of 2-3 axes each, 1-3 demands per axis, payloads
  64 B..64 MiB, weights log-uniform 0.01..100 (issue 12: the instances where
  the heuristic's partition enumeration grows; use n = 6..12).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..instance import Axis, Budget, Demand, Instance, Mesh
from ..units import format_bytes

__all__ = ["FAMILIES", "generate", "generate_instance"]

LATENCY = 0.52e-6  # seconds per phase (paper App. A.5.1)
LINK = 5e10  # bytes per second of one circuit (400 Gb/s)
COLLECTIVES = ("all-reduce", "all-gather", "all-to-all")
WEIGHTS = (1.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
# schedules an instance may request instead of "auto", per collective
REQUESTS = {
    "all-reduce": ("ring", "rs-ag-parallel", "coset-factored-parallel", "one-shot-dvo"),
    "all-gather": ("layered-parallel",),
    "all-to-all": ("bruck-parallel",),
}


def _payload(rng: random.Random, low: int, high: int) -> int:
    """Log-uniform whole number of bytes in [low, high]."""
    return max(low, min(high, round(2 ** rng.uniform(low.bit_length() - 1, high.bit_length() - 1))))


def _random_family(low: int, high: int) -> Callable[[random.Random, int, int, str], Instance]:
    def make(rng: random.Random, min_bits: int, max_bits: int, name: str) -> Instance:
        n = rng.randint(min_bits, max_bits)
        ports = rng.randint(n, 4 * n)
        count = rng.randint(1, 4)
        meshes = []
        for m in range(count):
            if rng.random() < 0.6:
                first = rng.randint(1, n - 1)
                sizes = [first, n - first]
            else:
                sizes = [n]
            axes = []
            for a in sizes:
                demands = []
                if rng.random() < 0.75:
                    for _ in range(1 if rng.random() < 0.7 else 2):
                        collective = rng.choice(COLLECTIVES)
                        schedule = "auto"
                        if rng.random() < 0.08:
                            schedule = rng.choice(REQUESTS[collective])
                        demands.append(
                            Demand(
                                collective, _payload(rng, low, high), rng.choice(WEIGHTS), schedule
                            )
                        )
                axes.append(Axis(1 << a, tuple(demands)))
            meshes.append(Mesh(f"m{m}", tuple(1 << a for a in sizes), tuple(axes)))
        if not any(ax.demands for mesh in meshes for ax in mesh.axes):
            first_axis = meshes[0].axes[0]
            demand = Demand("all-reduce", _payload(rng, low, high), 1.0, "auto")
            meshes[0] = Mesh(
                meshes[0].name,
                meshes[0].shape,
                (Axis(first_axis.size, (demand,)), *meshes[0].axes[1:]),
            )
        return Instance(
            name,
            Budget(1 << n, ports, LATENCY, LINK),
            tuple(meshes),
            f"generated: payloads {format_bytes(low)}..{format_bytes(high)}",
        )

    return make


def _helix(rng: random.Random, min_bits: int, max_bits: int, name: str) -> Instance:
    n = rng.randint(max(min_bits, 2), max_bits)
    ports = rng.randint(n, 4 * n)
    kvp = rng.randint(1, n - 1)
    ep = rng.randint(1, n - 1)
    layers = float(rng.choice((32, 61, 96, 128)))
    batch = rng.choice((1, 2, 4, 8, 16, 32, 64))
    hidden = rng.choice((4096, 7168, 8192, 16384))
    token = hidden // 2  # FP4 activations: half a byte per element
    world = Mesh(
        "world",
        (1 << n,),
        (
            Axis(
                1 << n,
                (
                    Demand("all-reduce", batch * token, layers),
                    Demand("all-gather", batch * rng.choice((12800, 25600, 51200)), 1.0),
                ),
            ),
        ),
    )
    attention = Mesh(
        "attention",
        (1 << kvp, 1 << (n - kvp)),
        (
            Axis(1 << kvp, (Demand("all-to-all", batch * rng.choice((66, 130, 258)), layers),)),
            Axis(1 << (n - kvp)),
        ),
    )
    ep_collective = rng.choice(("all-gather", "all-to-all"))
    ffn = Mesh(
        "ffn",
        (1 << (n - ep), 1 << ep),
        (
            Axis(1 << (n - ep), (Demand("all-reduce", batch * token, layers),)),
            Axis(
                1 << ep, (Demand(ep_collective, batch * token * rng.choice((8, 16, 64)), layers),)
            ),
        ),
    )
    return Instance(
        name,
        Budget(1 << n, ports, LATENCY, LINK),
        (world, attention, ffn),
        f"generated Helix decode: (KVP, TPA, EP, TPE) = ({1 << kvp}, {1 << (n - kvp)}, "
        f"{1 << ep}, {1 << (n - ep)}), batch {batch}, hidden {hidden}",
    )


def _wide(rng: random.Random, min_bits: int, max_bits: int, name: str) -> Instance:
    """3-4 meshes of 2-3 axes (fewer when n is too small), 1-3 demands on every axis,
    weights log-uniform in 0.01..100: the instances whose partition classes multiply."""
    n = rng.randint(max(min_bits, 2), max_bits)
    ports = rng.randint(n, 4 * n)
    meshes = []
    for m in range(rng.randint(3, 4)):
        count = min(rng.randint(2, 3), n)
        cuts = sorted(rng.sample(range(1, n), count - 1))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
        axes = []
        for a in sizes:
            demands = []
            for _ in range(rng.randint(1, 3)):
                collective = rng.choice(COLLECTIVES)
                weight = float(f"{10 ** rng.uniform(-2, 2):.3g}")
                demands.append(Demand(collective, _payload(rng, 64, 64 << 20), weight))
            axes.append(Axis(1 << a, tuple(demands)))
        meshes.append(Mesh(f"m{m}", tuple(1 << a for a in sizes), tuple(axes)))
    return Instance(
        name,
        Budget(1 << n, ports, LATENCY, LINK),
        tuple(meshes),
        "generated wide: 3-4 meshes of 2-3 axes, 1-3 demands per axis, weights 0.01..100",
    )


def _small_messages(rng: random.Random, min_bits: int, max_bits: int, name: str) -> Instance:
    """Latency-bound demands (64 B..8 KiB) on axes of 4-8 bits; smaller axes idle."""
    n = rng.randint(max(min_bits, 4), max(max_bits, 4))
    ports = rng.randint(n, 3 * n)
    meshes = []
    for m in range(rng.randint(1, 3)):
        first = rng.randint(1, n - 1) if n >= 5 and rng.random() < 0.6 else n
        sizes = [first, n - first] if first < n else [n]
        axes = []
        for a in sizes:
            demands = []
            if 4 <= a <= 8:
                for _ in range(rng.randint(1, 2)):
                    collective = rng.choice(COLLECTIVES)
                    demands.append(Demand(collective, _payload(rng, 64, 8 << 10), rng.choice(WEIGHTS)))
            axes.append(Axis(1 << a, tuple(demands)))
        meshes.append(Mesh(f"m{m}", tuple(1 << a for a in sizes), tuple(axes)))
    if not any(ax.demands for mesh in meshes for ax in mesh.axes):
        a = min(n, 8)
        sizes = [a] if a == n else [a, n - a]
        axes = [Axis(1 << a, (Demand("all-reduce", _payload(rng, 64, 8 << 10), 1.0),))]
        axes += [Axis(1 << s) for s in sizes[1:]]
        meshes[0] = Mesh(meshes[0].name, tuple(1 << s for s in sizes), tuple(axes))
    return Instance(
        name,
        Budget(1 << n, ports, LATENCY, LINK),
        tuple(meshes),
        "generated small messages: payloads 64 B..8 KiB on axes of 16-256 ranks",
    )


FAMILIES: dict[str, Callable[[random.Random, int, int, str], Instance]] = {
    "random": _random_family(64, 64 << 20),
    "helix": _helix,
    "latency": _random_family(64, 64 << 10),
    "bandwidth": _random_family(1 << 20, 64 << 20),
    "wide": _wide,
    "small-messages": _small_messages,
}


def generate_instance(
    family: str, seed: int, index: int, min_bits: int = 4, max_bits: int = 9
) -> Instance:
    """Instance ``index`` of ``family`` under ``seed`` (n drawn from min_bits..max_bits)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    if not 2 <= min_bits <= max_bits:
        raise ValueError(f"need 2 <= min bits <= max bits, got {min_bits}..{max_bits}")
    rng = random.Random(f"{family}/{seed}/{index}")
    name = f"{family}-s{seed}-{index:04d}"
    return FAMILIES[family](rng, min_bits, max_bits, name)


def generate(
    family: str, count: int, seed: int, min_bits: int = 4, max_bits: int = 9
) -> list[Instance]:
    """``count`` instances of ``family``."""
    return [generate_instance(family, seed, k, min_bits, max_bits) for k in range(count)]
