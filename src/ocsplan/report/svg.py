"""A matplotlib figure as inline SVG text, and the page's one way of writing a number.

Every number the page shows is a cell whose text is for people (units chosen per quantity:
us, MiB, MW, Tb/s) and whose ``data-value`` attribute is the exact value of the input file,
for checkers and scripts.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from html import escape
from typing import Any

from ..units import format_bytes, format_power, format_rate, format_time

__all__ = ["cell", "figure_svg", "human", "number"]


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
    """A number exactly as the input file has it: integers exact, floats as ``repr``, None as ""."""
    if value is None:
        return ""
    return escape(repr(value) if isinstance(value, float) else str(value))


_FORMATS: dict[str, Callable[[float], str]] = {"s": format_time, "B": format_bytes, "W": format_power,
                                               "B/s": format_rate}


def human(value: Any, unit: str | None = None) -> str:
    """``value`` for people: seconds, bytes, watts and bytes/s in their best unit ("1.387 ms",
    "4KiB", "1.488 MW", "400 Gb/s"), "x" a ratio to 3 digits ("1.27x"), otherwise integers
    exact and floats to 6 significant digits; None as "-". HTML-escaped."""
    if value is None or isinstance(value, str):
        return "-" if value is None else escape(value)
    if unit == "x":
        return escape(f"{value:.3g}x")
    if unit is not None:
        return escape(_FORMATS[unit](float(value)))
    return escape(f"{value:.6g}" if isinstance(value, float) else str(value))


def cell(value: Any, unit: str | None = None, *, ident: str = "", text: bool = False, wrap: bool = False) -> str:
    """One ``<td>``: the human text, the exact value in ``data-value`` (numbers only); ``text``
    aligns it left (names, lists), ``wrap`` also lets it wrap (long descriptions)."""
    attrs = f' id="{escape(ident)}"' if ident else ""
    if wrap:
        attrs += ' class="w"'
    elif text:
        attrs += ' class="t"'
    if isinstance(value, int | float) and not isinstance(value, bool):
        attrs += f' data-value="{number(value)}"'
    return f"<td{attrs}>{human(value, unit)}</td>"
