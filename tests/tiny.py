"""Tiny instances (n <= 4) for the exact backends' shared suite and the brute force."""

from __future__ import annotations

from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh

__all__ = ["TINY", "tiny"]

Spec = tuple[tuple[int, ...], list[list[tuple[str, int, float, str]]]]


def tiny(name: str, n: int, ports: int, meshes: list[Spec]) -> Instance:
    """An instance at lambda = 0.52 us and R = 400 Gb/s (paper App. A.5.1)."""
    built = []
    for m, (shape, axes) in enumerate(meshes):
        built.append(
            Mesh(
                f"m{m}",
                shape,
                tuple(
                    Axis(size, tuple(Demand(*d) for d in demands)) for size, demands in zip(shape, axes, strict=True)
                ),
            )
        )
    return Instance(name, Budget(1 << n, ports, 0.52e-6, 5e10), tuple(built))


AR, AG, A2A = "all-reduce", "all-gather", "all-to-all"
KiB, MiB = 1024, 1 << 20

TINY = [
    tiny("one-axis-latency", 3, 6, [((8,), [[(AR, 4 * KiB, 1.0, "auto")]])]),
    tiny("one-axis-bandwidth", 3, 7, [((8,), [[(AR, 8 * MiB, 1.0, "auto")]])]),
    tiny("two-axes", 4, 7, [((4, 4), [[(AR, 4 * KiB, 1.0, "auto")], [(A2A, 64 * KiB, 1.0, "auto")]])]),
    tiny(
        "shared-folds",
        4,
        7,
        [
            ((4, 4), [[(AR, KiB, 1.0, "auto")], [(AR, KiB, 1.0, "auto")]]),
            ((2, 8), [[], [(AG, 2 * KiB, 4.0, "auto")]]),
        ],
    ),
    tiny("ring-single", 3, 8, [((2, 4), [[], [(AR, 16 * MiB, 1.0, "ring")]])]),
    tiny("ring-multi", 3, 8, [((2, 4), [[], [(AR, 16 * MiB, 1.0, "ring")]]), ((4, 2), [[], []])]),
    tiny(
        "no-spare-port",
        4,
        4,
        [((4, 4), [[(AR, 4 * KiB, 1.0, "auto")], [(AG, 4 * KiB, 1.0, "auto")]])],
    ),
    tiny("two-demands", 3, 6, [((8,), [[(AR, 4 * KiB, 8.0, "auto"), (AG, 100 * KiB, 1.0, "auto")]])]),
    tiny("requested", 4, 8, [((16,), [[(AR, 64 * KiB, 1.0, "rs-ag-parallel")]])]),
    tiny(
        "three-meshes",
        3,
        6,
        [
            ((8,), [[(A2A, 512, 1.0, "auto")]]),
            ((2, 4), [[(AR, 2 * KiB, 1.0, "auto")], []]),
            ((4, 2), [[], [(AG, 32 * KiB, 1.0, "auto")]]),
        ],
    ),
    tiny(
        "mixed-weights",
        4,
        9,
        [
            ((16,), [[(AR, 256, 128.0, "auto")]]),
            ((4, 4), [[(A2A, MiB, 2.0, "auto")], []]),
        ],
    ),
    tiny(
        "size-one-axis",
        3,
        5,
        [((1, 8), [[(AR, 4 * KiB, 1.0, "auto")], [(AR, 4 * KiB, 1.0, "auto")]])],
    ),
]
