"""Rich tables of plans, comparisons, studies and realizations (the commands print them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table

from ..plan import CUBE, FOLD, RING, SHARED_HOST, STACKED, AxisPlan, Plan, plan_kind
from ..units import byte_family, format_bytes, format_time

if TYPE_CHECKING:
    from ..realization.circuits import Circuits

__all__ = ["AXIS_NAMES", "CAPTIONS", "Cell", "add_rows", "compare_table", "plan_table", "realization_tables",
           "summary_table"]

Cell = str | int | float


def add_rows(table: Table, rows: Sequence[Sequence[Cell]], sizes: Sequence[int],
             styles: Sequence[str | None] | None = None) -> None:
    """Add ``rows`` to ``table``; the cells of the columns ``sizes`` that are numbers are byte counts,
    each column written in one prefix family (:func:`~ocsplan.units.byte_family`: never 4KiB beside
    3.584kB); every other cell is text."""
    family = {c: byte_family([v for r in rows if not isinstance(v := r[c], str)]) for c in sizes}
    for n, row in enumerate(rows):
        cells = [format_bytes(v, family[c]) if c in family and not isinstance(v, str) else str(v)
                 for c, v in enumerate(row)]
        table.add_row(*cells, style=None if styles is None else styles[n])


def _stacked_caption(plan: Plan) -> str:
    per_axis = ", ".join(
        f"{axis.circulant.ports}" + (f" ({axis.circulant.multiplicity}x)" if axis.circulant.multiplicity > 1 else "")
        for mesh in plan.meshes for axis in mesh.axes if axis.circulant is not None
    )
    return (f"objective sum w*T = {format_time(plan.objective_s)}; ports {plan.ports_used} of "
            f"{plan.ports}; stacked-link: {per_axis} ports per axis; solved in {plan.solve_seconds:.3g} s")


def _shared_host_caption(plan: Plan) -> str:
    folds = sum(1 for g in plan.generators if g.kind == FOLD)
    cubes = sum(1 for g in plan.generators if g.kind == CUBE)
    rings = sum(1 for g in plan.generators if g.kind == RING)
    return (
        f"objective sum w*T = {format_time(plan.objective_s)}; ports {plan.ports_used} of "
        f"{plan.ports}; {cubes} cube + {folds} fold generators"
        + (f" + {rings} ring" if rings else "")
        + (f"; bound {format_time(plan.bound_s)}" if plan.bound_s is not None else "")
        + (f" (gap {plan.gap:.3%})" if plan.gap is not None else "")
        + f"; solved in {plan.solve_seconds:.3g} s"
    )


# per plan kind: how an axis's ranks are named (label bits, or Z_N for a circulant) and the table's caption
AXIS_NAMES: dict[str, Callable[[AxisPlan], str]] = {
    SHARED_HOST: lambda axis: ",".join(map(str, axis.bits)),
    STACKED: lambda axis: f"Z{axis.size}",
}
CAPTIONS: dict[str, Callable[[Plan], str]] = {SHARED_HOST: _shared_host_caption, STACKED: _stacked_caption}


def plan_table(plan: Plan) -> Table:
    status = "" if plan.status == plan.method else f" ({plan.status})"
    table = Table(title=f"{plan.instance}: {plan.method}{status}", title_justify="left")
    for col in ("mesh", "axis", "bits", "topology", "deg", "collective", "payload", "w",
                "schedule", "h", "p", "T"):
        table.add_column(col, justify="right" if col in ("axis", "deg", "w", "h", "p", "T") else "left")
    kind = plan_kind(plan)
    rows: list[list[Cell]] = []
    styles: list[str | None] = []
    for mesh in plan.meshes:
        for i, axis in enumerate(mesh.axes):
            bits = AXIS_NAMES[kind](axis)
            if not axis.demands:
                rows.append([mesh.name, str(i), bits, "-", "-", "none", "", "", "", "", "", ""])
                styles.append("dim")
            for d in axis.demands:
                rows.append([
                    mesh.name, str(i), bits, axis.topology, str(axis.degree), d.collective,
                    d.payload_bytes, f"{d.weight:g}", d.schedule, str(d.phases),
                    str(d.multiplicity), format_time(d.time_s),
                ])
                styles.append(None)
    add_rows(table, rows, [6], styles)
    table.caption = CAPTIONS[kind](plan) + _resilience_caption(plan)
    table.caption_justify = "left"
    return table


def _resilience_caption(plan: Plan) -> str:
    """``solve --resilience``: the worst single circuit fault, beside the healthy objective."""
    r = plan.resilience
    if r is None:
        return ""
    stops = f"{r.stopped} of {r.faults} circuit faults stop a demand"
    if r.worst_s is None:
        return f"\nresilience: {stops}"
    ratio = f" ({r.worst_s / plan.objective_s:.4g}x)" if plan.objective_s > 0 else ""
    return (f"\nresilience: worst single circuit fault that stops nothing {format_time(r.worst_s)}{ratio}, "
            f"{r.worst}; {stops}")


def _seconds(value: float | None) -> str:
    return "" if value is None else format_time(value)


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:.3%}"


def _worst(row: dict[str, Any] | None) -> str:
    if row is None or row["error"]:
        return "-" if row is None else f"- ({row['error'][:40]})"
    if row["worst_s"] is None:
        return f"all {row['faults']} stop"
    return f"{_seconds(row['worst_s'])} {row['worst_x']:.3f}x"


def compare_table(name: str, rows: list[dict[str, Any]], faults: dict[str, dict[str, Any]] | None = None) -> Table:
    """One instance's methods; with ``faults`` (compare --resilience) each plan's worst circuit fault."""
    table = Table(title=name, title_justify="left")
    cols = ["method", "status", "source", "objective", "bound", "gap", "ports", "time", "better", "flag"]
    if faults is not None:
        cols.insert(cols.index("time"), "worst fault")
    for col in cols:
        table.add_column(col, justify="left" if col in ("method", "status", "source", "better", "flag")
                         else "right")
    for row in rows:
        ports = "" if row["ports_used"] is None else f"{row['ports_used']}/{row['L']}"
        cells = [row["method"], row["status"], row["source"], _seconds(row["objective_s"]), _seconds(row["bound_s"]),
                 _percent(row["gap"]), ports, f"{row['seconds']:.3g} s", row["better"], row["flag"] or row["error"]]
        if faults is not None:
            cells.insert(cols.index("worst fault"), _worst(faults.get(row["method"])))
        table.add_row(*cells, style="bold red" if row["flag"] else None)
    table.caption = ("gap: to the proven optimum of this instance (when a method proved one); source: "
                     "the planner whose plan it is (heuristic: the exact run found nothing better than its seed); "
                     "better: the smallest objective of the methods compared")
    table.caption_justify = "left"
    return table


def summary_table(summaries: list[Any], instances: int) -> Table:
    table = Table(title=f"study of {instances} instances", title_justify="left")
    for col in ("method", "runs", "optimal", "feasible", "failed", "at optimum", "mean gap",
                "median gap", "max gap", "time p50", "time p90", "time max"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for s in summaries:
        table.add_row(
            s.method, str(s.runs), str(s.optimal), str(s.feasible), str(s.failed),
            f"{s.at_optimum}/{s.compared}", _percent(s.mean_gap), _percent(s.median_gap),
            _percent(s.max_gap), f"{s.time_p50:.3g} s", f"{s.time_p90:.3g} s",
            f"{s.time_max:.3g} s",
        )
    table.caption = "gaps to proven optima (instances where cpsat or milp proved one)"
    table.caption_justify = "left"
    return table


def realization_tables(c: Circuits) -> tuple[Table, Table]:
    """Generators with their ports and scope; Figure-25-style hardware counts."""
    gens = Table(title=f"{c.plan.instance} on {c.fabric.name}: {c.ports_used} of {c.fabric.ports} ports "
                 f"per node, placement {c.placement.method}", title_justify="left")
    for col in ("generator", "kind", "p", "ports", "circuits", "inter-rack", "scope"):
        gens.add_column(col, justify="right" if col in ("p", "circuits", "inter-rack") else "left")
    for g in c.generators:
        ports = ",".join(map(str, g.ports)) if len(g.ports) <= 4 else f"{g.ports[0]}-{g.ports[-1]}"
        gens.add_row(g.label, g.kind, str(g.multiplicity), ports, str(g.circuits), str(g.inter_rack), g.scope)
    k = c.counts
    counts = Table(title=f"counts: {k.circuits} circuits, {k.intra_rack} through one OCS, "
                   f"{k.inter_rack} through three (inter-rack)", title_justify="left")
    for col in ("", "installed", "used"):
        counts.add_column(col, justify="left" if not col else "right")
    inst, used = k.installed, k.used
    counts.add_row("accelerators", str(inst.accelerators), str(used.accelerators))
    counts.add_row("accelerator ports", str(inst.accelerator_ports), str(used.accelerator_ports))
    for a, b in zip(inst.levels, used.levels, strict=True):
        below = "accelerator" if a.level == 1 else f"level {a.level - 1}"
        counts.add_row(f"level {a.level} {a.technology} devices", str(a.devices), str(b.devices))
        counts.add_row(f"level {a.level} device ports", str(a.ports), str(b.ports))
        counts.add_row(f"level {a.level} logical switches", str(a.logical), str(b.logical))
        counts.add_row(f"{below} - level {a.level} {a.medium} links", str(a.links_below), str(b.links_below))
    counts.add_row(f"converters ({inst.converter_kind})", str(inst.converters), str(used.converters))
    return gens, counts
