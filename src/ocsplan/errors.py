"""The exception hierarchy: one base class, a few kinds the CLI maps to exit codes."""

from __future__ import annotations

__all__ = [
    "InfeasibleError",
    "InstanceError",
    "OcsplanError",
    "PlanError",
    "RealizationError",
    "SolverUnavailable",
]


class OcsplanError(Exception):
    """Base class of every error ocsplan raises on purpose."""


class InstanceError(OcsplanError):
    """Invalid instance (or other input) file; the message names file and field."""

    def __init__(self, source: str, field: str, message: str) -> None:
        self.source = source
        self.field = field
        self.detail = message
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {message}")


class PlanError(OcsplanError):
    """A plan (JSON) that is malformed or inconsistent with its own numbers."""


class InfeasibleError(OcsplanError):
    """No plan fits the port budget (or no realization fits the fabric)."""


class RealizationError(InfeasibleError):
    """The fabric cannot carry the plan's circuits."""


class SolverUnavailable(OcsplanError):
    """A requested solver backend is not installed or cannot run."""
