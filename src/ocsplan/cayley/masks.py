"""Masks of (Z2)^a: bit strings, sub-masks and folds, local and global coordinates, ranks.

An axis of ``a`` bits has labels ``0 .. 2**a - 1`` and generators are non-zero masks
below ``2**a``. :func:`compress` and :func:`expand` map between an axis's global bit
positions and local ones (local bit i is the i-th lowest global bit of the block).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import compress as _pick

__all__ = [
    "axis_generators",
    "bits_of",
    "compress",
    "coset_bases",
    "expand",
    "fold_masks",
    "folds_of_mask",
    "gf2_rank",
    "mask_of",
    "mask_to_str",
    "members",
    "popcount",
    "str_to_mask",
    "sub_masks",
]


def popcount(mask: int) -> int:
    """Hamming weight of a mask."""
    return mask.bit_count()


def mask_to_str(mask: int, width: int) -> str:
    """Bit string, most significant bit first (``0b1100`` on 4 bits is ``"1100"``)."""
    return format(mask, f"0{width}b") if width else ""


def str_to_mask(text: str) -> int:
    """Inverse of :func:`mask_to_str`; raises ValueError on anything but 0/1."""
    if not text or any(c not in "01" for c in text):
        raise ValueError(f"not a bit string: {text!r}")
    return int(text, 2)


def bits_of(mask: int) -> tuple[int, ...]:
    """Bit positions set in ``mask``, highest first."""
    return tuple(reversed(members(mask)))


_BIT = bytes.maketrans(b"01", b"\x00\x01")


def members(mask: int) -> list[int]:
    """Bit positions set in ``mask``, lowest first, in time linear in the bits set (a bitset of
    ranks, blocks or segments may be wide and sparse); a dense mask (an eighth of its width or more
    set) is read from its binary digits in C, 4x faster than bit by bit at 1536 bits."""
    if mask > 0 and (n := mask.bit_count()) > 4 and mask.bit_length() <= 8 * n:
        digits = bin(mask)[:1:-1]  # lowest first, without "0b"
        return list(_pick(range(len(digits)), digits.encode("ascii").translate(_BIT)))
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(bits: Iterable[int]) -> int:
    """Mask with the given bit positions set."""
    mask = 0
    for b in bits:
        mask |= 1 << b
    return mask


def sub_masks(bits: Iterable[int]) -> list[int]:
    """All non-zero masks supported on ``bits`` (a complete layer), ascending."""
    return list(_sub_masks(mask_of(bits)))


def fold_masks(bits: Iterable[int]) -> list[int]:
    """The folds (weight >= 2) among :func:`sub_masks`."""
    return list(_fold_masks(mask_of(bits)))


def folds_of_mask(block: int) -> tuple[int, ...]:
    """:func:`fold_masks` of the bits of ``block``, ascending (remembered)."""
    return _fold_masks(block)


@lru_cache(maxsize=8192)
def _sub_masks(block: int) -> tuple[int, ...]:
    out = []
    sub = block
    while sub:
        out.append(sub)
        sub = (sub - 1) & block
    return tuple(sorted(out))


@lru_cache(maxsize=8192)
def _fold_masks(block: int) -> tuple[int, ...]:
    return tuple(m for m in _sub_masks(block) if m & (m - 1))


def compress(mask: int, block_bits: Sequence[int]) -> int:
    """Global mask supported on ``block_bits`` to the axis's local mask."""
    local = 0
    for i, b in enumerate(sorted(block_bits)):
        if mask >> b & 1:
            local |= 1 << i
    if mask & ~mask_of(block_bits):
        raise ValueError(f"mask {mask:b} leaves the block {sorted(block_bits)}")
    return local


def expand(local: int, block_bits: Sequence[int]) -> int:
    """Local mask of an axis to the global mask."""
    mask = 0
    for i, b in enumerate(sorted(block_bits)):
        if local >> i & 1:
            mask |= 1 << b
    return mask


def axis_generators(gens: Iterable[int], block_bits: Sequence[int]) -> list[int]:
    """The support rule: the host generators whose set bits all lie in the block, ascending."""
    block = mask_of(block_bits)
    return sorted(g for g in gens if g and g & ~block == 0)


def coset_bases(block_bits: Sequence[int], n: int) -> list[int]:
    """One label per collective group of an axis: every label with zeros on the block.

    The group of base b is {b | expand(x, block_bits) for every local label x}.
    """
    outside = [b for b in range(n) if b not in set(block_bits)]
    return sorted(expand(x, outside) for x in range(1 << len(outside)))


def gf2_rank(vectors: Iterable[int]) -> int:
    """Rank over GF(2) of the masks (the dimension of the subgroup they generate)."""
    basis: dict[int, int] = {}  # leading bit -> basis vector
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in basis:
                basis[top] = v
                break
            v ^= basis[top]
    return len(basis)
