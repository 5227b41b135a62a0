"""Host graph per mesh axis (networkx + matplotlib, inline SVG), circuits colored by generator.

An axis's host graph on the whole world is many copies of one group (its cosets); the page
draws the copy that holds rank 0: the ranks reachable from 0 over the circuits of the
generators that axis's demands use. Each generator keeps one color on every axis, in the
order of the circuits' generator list (the realizer's port order: color = port). Pure: takes
the plan and the realized :class:`~ocsplan.realization.circuits.Circuits`; the component is
found over the circuits themselves, so the page shows what was realized.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from ..plan import Plan
from ..plotting import pyplot
from ..realization.circuits import Circuits
from ..realization.plan_check import axis_uses
from .svg import figure_svg

__all__ = ["AxisGraph", "axis_graphs", "host_graph_section"]

_MAX_DRAWN = 256  # nodes drawn per axis; a larger component gets its table only


@dataclass(frozen=True)
class AxisGraph:
    """One axis's component of rank 0: nodes, and circuits per generator label."""

    mesh: str
    axis: int
    nodes: tuple[int, ...]
    edges: tuple[tuple[int, int, str], ...]  # (a, b, generator label), one per circuit


def axis_graphs(plan: Plan, circuits: Circuits) -> list[AxisGraph]:
    """Every axis's component of rank 0 in the realized circuits (deterministic). The circuits
    realize the plan (``plan_mismatch``, checked by the caller)."""
    import networkx as nx

    ends = [(c.a, c.b, c.generator) for c in circuits.circuits]
    out: list[AxisGraph] = []
    for mesh, index, axis_use in axis_uses(plan):
        uses = {use.label for use in axis_use}
        graph = nx.MultiGraph()
        graph.add_node(0)
        graph.add_edges_from((a, b, {"generator": g}) for a, b, g in ends if g in uses)
        component = nx.node_connected_component(graph, 0)
        edges = tuple(sorted((min(a, b), max(a, b), g) for a, b, g in ends if g in uses and a in component))
        out.append(AxisGraph(mesh, index, tuple(sorted(component)), edges))
    return out


def _palette() -> list[str]:
    """58 distinct colors (tab10, tab20b, tab20c, Dark2), then they repeat."""
    import matplotlib
    from matplotlib.colors import to_hex

    return [to_hex(c) for name in ("tab10", "tab20b", "tab20c", "Dark2")
            for c in matplotlib.colormaps[name].colors]  # type: ignore[attr-defined]


def _colours(circuits: Circuits) -> dict[str, str]:
    labels = [g.label for g in circuits.generators]
    palette = _palette()
    return {label: palette[i % len(palette)] for i, label in enumerate(labels)}


def _draw(graph: AxisGraph, colours: Mapping[str, str]) -> str:
    import networkx as nx

    plt = pyplot()

    g = nx.Graph()
    g.add_nodes_from(graph.nodes)
    for a, b, label in graph.edges:
        g.add_edge(a, b, generator=label)
    position = nx.circular_layout(sorted(g.nodes))
    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(5.0, 3.6))
        labels = sorted({lab for _, _, lab in graph.edges}, key=lambda s: (list(colours).index(s)
                                                                           if s in colours else 1 << 30, s))
        for label in labels:
            edges = [(a, b) for a, b, lab in g.edges(data="generator") if lab == label]
            nx.draw_networkx_edges(g, position, edgelist=edges, ax=ax, width=1.0,
                                   edge_color=colours.get(label, "#000000"), label=label)
        nx.draw_networkx_nodes(g, position, ax=ax, node_size=40 if len(g) > 32 else 160,
                               node_color="white", edgecolors="black", linewidths=0.6)
        if len(g) <= 32:
            nx.draw_networkx_labels(g, position, ax=ax, font_size=6)
        ax.set_axis_off()
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="x-small", title="generator")
        return figure_svg(fig)


def _rack_of(circuits: Circuits) -> tuple[Sequence[int], int] | None:
    """Each rank's accelerator and the rack size, or None for a fabric without racks."""
    size = circuits.fabric.rack_size
    return None if size < 1 else (circuits.placement.accelerator, size)


def _draw_racks(graph: AxisGraph, circuits: Circuits) -> str | None:
    """A component too large to draw rank by rank, drawn rack by rack: one node per rack it
    touches (with its ranks and the circuits inside it), one edge per pair of racks (width: circuits)."""
    found = _rack_of(circuits)
    if found is None:
        return None
    import networkx as nx

    plt = pyplot()

    accelerator, size = found
    racks = nx.Graph()
    for node in graph.nodes:
        rack = accelerator[node] // size
        if rack not in racks:
            racks.add_node(rack, ranks=0, inside=0)
        racks.nodes[rack]["ranks"] += 1
    for a, b, _ in graph.edges:
        ra, rb = accelerator[a] // size, accelerator[b] // size
        if ra == rb:
            racks.nodes[ra]["inside"] += 1
        else:
            weight = racks.edges[ra, rb]["w"] + 1 if racks.has_edge(ra, rb) else 1
            racks.add_edge(ra, rb, w=weight)
    position = nx.circular_layout(sorted(racks.nodes))
    top = max((w for _, _, w in racks.edges(data="w")), default=1)
    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(5.0, 3.8))
        edges = sorted(racks.edges(data="w"))
        nx.draw_networkx_edges(racks, position, edgelist=[(a, b) for a, b, _ in edges], ax=ax,
                               width=[0.3 + 2.5 * w / top for _, _, w in edges], edge_color="#d94801")
        nx.draw_networkx_nodes(racks, position, ax=ax, node_size=420, node_color="#c6dbef", edgecolors="black",
                               linewidths=0.6)
        nx.draw_networkx_labels(racks, position, ax=ax, font_size=6, labels={
            r: f"r{r}\n{racks.nodes[r]['ranks']}/{racks.nodes[r]['inside']}" for r in racks.nodes})
        ax.set_title("rack by rack: label r<rack>, ranks / circuits inside;\nedge width: circuits between racks",
                     fontsize="x-small")
        ax.set_axis_off()
        return figure_svg(fig)


def _table(graph: AxisGraph, circuits: Circuits) -> str:
    uses = {g.label: g for g in circuits.generators}
    rows = ["<tr><th>generator</th><th>kind</th><th>ports</th><th>circuits_drawn</th>"
            "<th>circuits_total</th></tr>"]
    for label in sorted({lab for _, _, lab in graph.edges}):
        use = uses.get(label)
        ports = "" if use is None else ",".join(str(p) for p in use.ports)
        kind, total = ("-", "-") if use is None else (use.kind, str(use.circuits))
        drawn = sum(1 for _, _, lab in graph.edges if lab == label)
        rows.append(f'<tr><td class="t">{escape(label)}</td><td class="t">{escape(kind)}'
                    f'</td><td class="t">{escape(ports)}</td><td>{drawn}</td>'
                    f'<td>{escape(total)}</td></tr>')
    return f'<table class="host" data-mesh="{escape(graph.mesh)}" data-axis="{graph.axis}">' + "".join(rows) \
        + "</table>"


def host_graph_section(plan: Plan, circuits: Circuits) -> str:
    """The page's host-graph section: per axis, the drawing and its circuits per generator."""
    colours = _colours(circuits)
    parts: list[str] = ["<h2>Host graph per axis</h2>",
                        "<p>Per mesh axis, the ranks reachable from rank 0 over the circuits of the "
                        "generators its demands use; one color per generator (the realizer's port order).</p>"]
    graphs: Sequence[AxisGraph] = axis_graphs(plan, circuits)
    sizes = {(mesh.name, i): extent for mesh in plan.meshes for i, extent in enumerate(mesh.shape)}
    for graph in graphs:
        n, m = len(graph.nodes), len(graph.edges)
        extent = sizes.get((graph.mesh, graph.axis), n)
        if not graph.edges:
            parts.append(f'<div class="axis"><h3>{escape(graph.mesh)}[{graph.axis}]: {extent} '
                         f'rank{"s" * (extent != 1)}, no circuits of its own</h3><p>'
                         + ("The axis has one rank." if extent == 1 else
                            "The axis has no collectives in this deployment, so no circuits serve it.")
                         + "</p></div>")
            continue
        parts.append(f'<div class="axis"><h3>{escape(graph.mesh)}[{graph.axis}]: {n} rank{"s" * (n != 1)}, '
                     f'{m} circuit{"s" * (m != 1)}</h3>')
        drawing = _draw(graph, colours) if n <= _MAX_DRAWN else _draw_racks(graph, circuits)
        parts.append(drawing if drawing is not None else
                     f"<p>{n} ranks on a fabric without racks: the table lists its circuits.</p>")
        parts.append(_table(graph, circuits) + "</div>")
    return "".join(parts)
