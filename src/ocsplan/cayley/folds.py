"""Block folds: products of complete graphs K_{2^k} on sub-blocks of bits, their layers and names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .masks import bits_of, popcount, sub_masks

__all__ = [
    "block_fold",
    "block_fold_groups",
    "block_fold_profile",
    "fold_name",
    "profile_degree",
    "profile_folds",
]


def profile_degree(sizes: Iterable[int]) -> int:
    """Degree of the block fold with sub-blocks of these bit counts."""
    return sum((1 << k) - 1 for k in sizes)


def profile_folds(sizes: Iterable[int]) -> int:
    """Fold generators (weight >= 2) of that block fold."""
    return sum((1 << k) - 1 - k for k in sizes)


def fold_name(sizes: Sequence[int]) -> str:
    """Name of a block fold: ``Q5``, ``K4``, ``Q6[3,3] = K8□K8``."""
    parts = sorted(sizes, reverse=True)
    a = sum(parts)
    if a == 0:
        return "K1"
    if all(k == 1 for k in parts):
        return f"Q{a}"
    if len(parts) == 1:
        return f"K{1 << a}"
    product = "□".join(f"K{1 << k}" for k in parts)
    return f"Q{a}[{','.join(map(str, parts))}] = {product}"


def block_fold(sizes: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Layers (local masks) of the block fold with these sub-block sizes.

    Sub-blocks are laid out from the most significant local bit down, largest first,
    so ``block_fold((3, 3))`` puts one K8 on bits 5..3 and one on bits 2..0.
    """
    a = sum(sizes)
    layers = []
    top = a
    for k in sorted(sizes, reverse=True):
        bits = range(top - k, top)
        layers.append(tuple(sub_masks(bits)))
        top -= k
    return tuple(layers)


def block_fold_groups(gens: Iterable[int], bits: int) -> tuple[int, ...] | None:
    """The sub-blocks (as masks, largest first) if ``gens`` is exactly a block fold."""
    gset = set(gens)
    parent = list(range(bits))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for g in gset:
        if g <= 0 or g >> bits:
            return None
        support = bits_of(g)
        for b in support[1:]:
            parent[find(b)] = find(support[0])
    groups: dict[int, int] = {}
    for b in range(bits):
        groups[find(b)] = groups.get(find(b), 0) | 1 << b
    expected: set[int] = set()
    for grp in groups.values():
        expected.update(sub_masks(bits_of(grp)))
    if expected != gset:
        return None
    return tuple(sorted(groups.values(), key=lambda m: (-popcount(m), -m)))


def block_fold_profile(gens: Iterable[int], bits: int) -> tuple[int, ...] | None:
    """Sub-block sizes (largest first) if ``gens`` is exactly a block fold, else None."""
    groups = block_fold_groups(gens, bits)
    return None if groups is None else tuple(popcount(g) for g in groups)
