"""Workload model (paper §4, §6, App. B, D, E): decode demand, step time, power, sweeps.

From a model file (or HuggingFace ``config.json``), an accelerator, a batch,
a context and a Helix split: the per-step collective demand as an ocsplan
instance, kernel times and memory per rank, the decode step on a fabric file,
the power of the fabric and the best split per point of a sweep.
"""

from __future__ import annotations

from ..units import parse_tokens
from .accelerator import Accelerator, StepTable, accelerator_catalogue, load_accelerator, parse_accelerator
from .demand import (
    COMM,
    DemandRow,
    Precision,
    active_experts,
    busiest_rows,
    demand_rows,
    instance_for,
    instance_toml,
    precision_for,
)
from .latent import Mla
from .model import Model, catalogue, load_model, parse_model
from .splits import Split, check_split, check_world, parse_split, valid_splits

__all__ = [
    "COMM",
    "Accelerator",
    "DemandRow",
    "Mla",
    "Model",
    "Precision",
    "Split",
    "StepTable",
    "accelerator_catalogue",
    "active_experts",
    "busiest_rows",
    "catalogue",
    "check_split",
    "check_world",
    "demand_rows",
    "instance_for",
    "instance_toml",
    "load_accelerator",
    "load_model",
    "parse_accelerator",
    "parse_model",
    "parse_split",
    "parse_tokens",
    "precision_for",
    "valid_splits",
]
