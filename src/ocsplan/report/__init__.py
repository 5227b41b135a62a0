"""One self-contained HTML page for a deployment (layer L11): summary, port budget, demands.

Pure: takes the plan, the circuits and the faults analysis as their readers return them
(``Plan``, ``Circuits``, ``FaultReport``), the simulation and decode steps as already-read JSON
objects (they have no reader of their own), and returns HTML text;
reading and the atomic write are the CLI's. Images are inline SVG drawn by matplotlib, no
network and no JavaScript.

A new section: a function returning an HTML fragment, appended in :func:`build_report`.
"""

from __future__ import annotations

from .html import build_report, port_budget_svg

__all__ = ["build_report", "port_budget_svg"]
