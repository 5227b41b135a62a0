"""The report page: summary table, per-axis port-budget bars (SVG), per-demand table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..deploy.faults import FaultReport
from ..errors import PlanError
from ..plan import CIRCULANT, CUBE, FOLD, Plan, construction
from ..plotting import pyplot
from ..realization.circuits import Circuits
from ..realization.plan_check import axis_uses
from ..workload.step import Step
from .provenance import Provenance, provenance_section
from .svg import cell, figure_svg

__all__ = ["build_report", "port_budget_svg"]

_KIND_COLOURS = {CUBE: "#1f77b4", FOLD: "#ff7f0e", CIRCULANT: "#2ca02c"}
_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:80em}"
          "table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #bbb;padding:0.2em 0.6em;text-align:right}"
          "th{background:#eee;white-space:nowrap}td{white-space:nowrap}td.t{text-align:left}"
          "td.w{text-align:left;white-space:normal;min-width:14em;max-width:30em}"
          "div.axis{display:flex;flex-wrap:wrap;align-items:flex-start;gap:1em}"
          "div.axis h3{flex-basis:100%;margin:0.5em 0 0}")


def _row(cells: Sequence[str]) -> str:
    """A table row of whole ``<td>``/``<th>`` elements."""
    return "<tr>" + "".join(cells) + "</tr>"


def port_budget_svg(plan: Plan) -> str:
    """Stacked bar per mesh axis: ports per accelerator, one segment per generator or circulant
    set its demands use (coloured by kind)."""
    plt = pyplot()

    labels: list[str] = []
    stacks: list[list[tuple[int, str]]] = []
    for mesh, index, uses in axis_uses(plan):
        labels.append(f"{mesh}[{index}]")
        stacks.append([(use.ports, use.kind) for use in uses])
    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        return _draw_budget(plt, plan, labels, stacks)


def _draw_budget(plt: Any, plan: Plan, labels: list[str], stacks: list[list[tuple[int, str]]]) -> str:
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.5 * max(1, len(labels))))
    for row, stack in enumerate(stacks):
        left = 0
        for mult, kind in stack:
            ax.barh(row, mult, left=left, color=_KIND_COLOURS.get(kind, "#7f7f7f"), edgecolor="white")
            left += mult
    ax.axvline(plan.ports, color="black", linestyle="--", label=f"L = {plan.ports}")
    for kind, colour in _KIND_COLOURS.items():
        if (kind == CIRCULANT) != construction(plan).cayley:  # a stacked plan's axes are circulants only
            ax.barh(0, 0, color=colour, label=kind)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("ports per accelerator")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlim(0, plan.ports + 1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return figure_svg(fig)


def _th(key: str, label: str) -> str:
    """A header cell for people (``label``) that names its input field (``data-key``)."""
    return f'<th data-key="{escape(key)}">{escape(label)}</th>'


def _summary(plan: Plan) -> str:
    rows: list[tuple[str, str, str | float | None, str | None]] = [
        ("instance", "instance", plan.instance, None), ("method", "planner", plan.method, None),
        ("status", "status", plan.status, None),
        ("objective_s", "communication per step, sum w*T (Eq. 1)", plan.objective_s, "s"),
        ("bound_s", "lower bound (exact planner)", plan.bound_s, "s"),
        ("ports_used", "ports used per accelerator", plan.ports_used, None),
        ("ports", "ports per accelerator (L)", plan.ports, None), ("world", "accelerators", plan.world, None)]
    body = "".join(f"<tr>{_th(k, label)}{cell(v, unit, ident=f'summary-{k}', text=True)}</tr>"
                   for k, label, v, unit in rows)
    return f"<h2>Deployment</h2><table>{body}</table>"


_DEMAND_COLUMNS = (("mesh", "mesh", None), ("axis", "axis", None), ("collective", "collective", None),
                   ("schedule", "schedule", None), ("payload_bytes", "payload", "B"), ("phases", "phases h", None),
                   ("volume_bytes", "volume v", "B"), ("multiplicity", "parallel circuits p", None),
                   ("time_s", "T (Eq. 1)", "s"))


def _demands(plan: Plan, simulation: Mapping[str, Any] | None) -> str:
    sims: list[Mapping[str, Any]] = list(simulation["demands"]) if simulation is not None else []
    head = [_th(k, label) for k, label, _ in _DEMAND_COLUMNS]
    if simulation is not None:
        head += [_th("simulated_s", "simulated"), _th("ratio", "simulated / Eq. 1")]
    rows = [_row(head)]
    flat = 0
    for mesh in plan.meshes:
        for index, axis in enumerate(mesh.axes):
            for demand in axis.demands:
                values = (mesh.name, index, demand.collective, demand.schedule, demand.payload_bytes, demand.phases,
                          demand.volume_bytes, demand.multiplicity, demand.time_s)
                cells = [cell(v, unit, text=isinstance(v, str))
                         for v, (_, _, unit) in zip(values, _DEMAND_COLUMNS, strict=True)]
                if simulation is not None:
                    if flat >= len(sims) or sims[flat].get("collective") != demand.collective:
                        raise PlanError(f"simulation: demand {flat} does not match the plan's")
                    sim_s = sims[flat]["simulated_s"]
                    cells += [cell(sim_s, "s"), cell(sim_s / demand.time_s if demand.time_s else None, "x")]
                rows.append(_row(cells))
                flat += 1
    if simulation is not None and flat != len(sims):
        raise PlanError(f"simulation: {len(sims)} demands, the plan has {flat}")
    return ("<h2>Demands</h2><p>Per collective: the schedule the plan runs, its phases h and per-rank volume v, "
            "the parallel circuits p it stripes over, and its Eq. 1 time T = h*lambda + v/(p*R).</p>"
            '<table class="demands">' + "".join(rows) + "</table>")


def build_report(plan: Plan, simulation: Mapping[str, Any] | None = None, *,
                 circuits: Circuits | None = None,
                 decode: Sequence[tuple[str, Step]] = (),
                 faults: FaultReport | None = None, provenance: Provenance | None = None) -> str:
    """The whole page as text (deterministic: same inputs and provenance, same bytes).

    ``circuits`` realize the plan (``plan_mismatch``, checked by the caller); ``decode`` is
    (file name, step) per ``ocsplan decode --json`` file (``step_from_dict``), in the order given;
    ``faults`` the faults analysis (``deploy.faults.report_from_dict`` of a checked faults file)."""
    from .fabric import fabric_section
    from .graphs import host_graph_section
    from .sections import decode_section, faults_section

    try:
        parts = [_summary(plan)]
        if circuits is not None:
            parts.append(fabric_section(circuits))
        parts += ["<h2>Port budget per accelerator</h2>", port_budget_svg(plan), _demands(plan, simulation)]
        if circuits is not None:
            parts.append(host_graph_section(plan, circuits))
        parts.append(decode_section(decode))
        if faults is not None:
            parts.append(faults_section(faults, circuits=circuits))
        if provenance is not None:
            parts.append(provenance_section(provenance))
    except (KeyError, TypeError, IndexError) as exc:
        raise PlanError(f"plan: missing or malformed field {exc}") from None
    title = escape(plan.instance)
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ocsplan report: {title}</title>"
            f"<style>{_STYLE}</style></head><body><h1>ocsplan report: {title}</h1>"
            + "".join(parts) + "</body></html>\n")
