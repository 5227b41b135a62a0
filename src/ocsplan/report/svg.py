"""A matplotlib figure as inline SVG text for the report page."""

from __future__ import annotations

import io
from typing import Any

__all__ = ["figure_svg"]


def figure_svg(fig: Any) -> str:
    """Lay out, render and close ``fig``; the ``<svg>`` element without a date, so pages are deterministic."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]
