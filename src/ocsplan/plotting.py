"""matplotlib's pyplot for the figures the tools draw (study gaps, sweeps, Pareto fronts, the report).

The one place that picks the backend: Agg (files and SVG text, no display), imported on first use
so that commands without a figure never import matplotlib.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pyplot"]


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
