"""One self-contained HTML page for a deployment (layer L11): summary, port budget, demands.

Pure: takes the already-read JSON objects (plan, optional simulation) and returns HTML text;
reading and the atomic write are the CLI's. Images are inline SVG drawn by matplotlib, no
network and no JavaScript.

Hook for later sections (decode comparison, faults): add a ``section_*`` function returning
an HTML fragment and append it in :func:`build_report`.
"""

from __future__ import annotations

from .html import build_report, port_budget_svg

__all__ = ["build_report", "port_budget_svg"]
