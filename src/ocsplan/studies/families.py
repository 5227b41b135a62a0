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
- ``bandwidth``: as ``random`` with payloads 1 MiB..64 MiB (bandwidth-bound).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from ..files import write_atomic
from ..instance import Axis, Budget, Demand, Instance, Mesh, dumps_instance, loads_instance
from ..units import format_bytes

__all__ = ["FAMILIES", "generate", "generate_instance", "write_family"]

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


FAMILIES: dict[str, Callable[[random.Random, int, int, str], Instance]] = {
    "random": _random_family(64, 64 << 20),
    "helix": _helix,
    "latency": _random_family(64, 64 << 10),
    "bandwidth": _random_family(1 << 20, 64 << 20),
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


def write_family(instances: list[Instance], out: str | Path) -> list[Path]:
    """Write each instance to ``out/<name>.toml`` (atomically, re-read to validate)."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for inst in instances:
        text = dumps_instance(inst)
        path = directory / f"{inst.name}.toml"
        loads_instance(text, str(path))
        write_atomic(path, text)
        paths.append(path)
    return paths
