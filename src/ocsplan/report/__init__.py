"""One self-contained HTML page for a deployment (layer L11): summary, port budget, demands.

Pure: takes the plan and the circuits as their readers return them (``Plan``, ``Circuits``), the
other inputs as already-read JSON objects (simulation, decode, faults), and returns HTML text;
reading and the atomic write are the CLI's. Images are inline SVG drawn by matplotlib, no
network and no JavaScript.

Hook for later sections (decode comparison, faults): add a ``section_*`` function returning
an HTML fragment and append it in :func:`build_report`.
"""

from __future__ import annotations

from .html import build_report, port_budget_svg

__all__ = ["build_report", "port_budget_svg"]
