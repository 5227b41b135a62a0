"""Cayley graphs of (Z2)^a: masks, blocks, folds, balls, tilings into layers.

Everything here works in *local* coordinates of one axis: an axis of ``a`` bits
has labels ``0 .. 2**a - 1`` and generators are non-zero masks below ``2**a``.
:mod:`.masks` holds the masks and the maps between global and local bits,
:mod:`.distances` the one shortest-path routine, :mod:`.folds` the block folds,
:mod:`.tiling` the tilings into layers and their search, :mod:`.topology` the
axis graph :class:`Topology` and its name.
"""

from __future__ import annotations

from .distances import ball_sizes, block_distance_counts, cayley_distances, distance_array, group_distances
from .folds import block_fold, block_fold_groups, block_fold_profile, fold_name, profile_degree, profile_folds
from .masks import (
    axis_generators,
    bits_of,
    compress,
    coset_bases,
    expand,
    fold_masks,
    folds_of_mask,
    gf2_rank,
    mask_of,
    mask_to_str,
    members,
    popcount,
    str_to_mask,
    sub_masks,
)
from .tiling import TILING_BUDGET, TilingSearch, is_tiling, min_tilings, sumset
from .topology import Topology, topology_name

__all__ = [
    "TILING_BUDGET",
    "TilingSearch",
    "Topology",
    "axis_generators",
    "ball_sizes",
    "bits_of",
    "block_distance_counts",
    "block_fold",
    "block_fold_groups",
    "block_fold_profile",
    "cayley_distances",
    "compress",
    "coset_bases",
    "distance_array",
    "expand",
    "fold_masks",
    "fold_name",
    "folds_of_mask",
    "gf2_rank",
    "group_distances",
    "is_tiling",
    "mask_of",
    "mask_to_str",
    "members",
    "min_tilings",
    "popcount",
    "profile_degree",
    "profile_folds",
    "str_to_mask",
    "sub_masks",
    "sumset",
    "topology_name",
]
