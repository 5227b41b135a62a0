"""Writing the exact model to a file, format by suffix."""

from __future__ import annotations

from pathlib import Path

from ...errors import InstanceError
from .model import Formulation

__all__ = ["EXPORT_FORMATS", "export_model"]

EXPORT_FORMATS = (".mps", ".lp", ".pb.txt", ".pb")


def export_model(form: Formulation, path: str | Path) -> None:
    """``.mps`` / ``.lp``: the linear model (identical for both methods) via PuLP;
    ``.pb.txt`` / ``.pb``: the CP-SAT model proto."""
    name = str(path).lower()
    if name.endswith((".mps", ".lp")):
        from .milp import export_lp

        export_lp(form, path)
    elif name.endswith((".pb.txt", ".pbtxt", ".pb")):
        from .cpsat import export_cpsat

        export_cpsat(form, path)
    else:
        raise InstanceError(
            "--export", "", f"{path}: unknown model format (use {', '.join(EXPORT_FORMATS)})"
        )
