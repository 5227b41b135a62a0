"""A matplotlib figure as inline SVG text for the report page."""

from __future__ import annotations

import io
from html import escape
from typing import Any

__all__ = ["figure_svg", "number"]


def figure_svg(fig: Any) -> str:
    """Lay out, render and close ``fig``; the ``<svg>`` element without a date, so pages are deterministic."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def number(value: Any) -> str:
    """A number as the page shows it (one home for every section): integers exact, floats to 6
    significant digits, None as "-"; HTML-escaped."""
    if value is None:
        return "-"
    return escape(f"{value:.6g}" if isinstance(value, float) else str(value))
