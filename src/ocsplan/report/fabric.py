"""The fabric as built, for an architect: a physical picture (racks, OCS levels, circuits by
scope), circuits between racks, and the hardware installed and used.

Pure: takes the realized :class:`~ocsplan.realization.circuits.Circuits` (its fabric, counts,
placement and circuits, as ``load_circuits`` reads them) and returns HTML with inline SVG.
Racks are the wiring's groups of ``rack_size`` accelerators; a rank's rack is its accelerator's
(``placement.accelerator``) divided by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ..plotting import pyplot
from ..realization.circuits import Circuits
from ..realization.wiring import LevelCount
from .svg import cell, figure_svg, human

__all__ = ["fabric_section", "rack_matrix"]


def rack_matrix(circuits: Circuits) -> list[list[int]]:
    """Circuits between every pair of racks (symmetric; the diagonal counts circuits inside a rack)."""
    size, racks = circuits.fabric.rack_size, circuits.fabric.groups
    accelerator = circuits.placement.accelerator
    matrix = [[0] * racks for _ in range(racks)]
    for row in circuits.circuits:
        ra, rb = accelerator[row.a] // size, accelerator[row.b] // size
        matrix[ra][rb] += 1
        if ra != rb:
            matrix[rb][ra] += 1
    return matrix


def _levels(circuits: Circuits) -> list[tuple[LevelCount, LevelCount | None]]:
    """(installed, used) counts per level, level 1 first (used None: no device of it in use)."""
    used = {lv.level: lv for lv in circuits.counts.used.levels}
    return [(lv, used.get(lv.level)) for lv in circuits.counts.installed.levels]


def _picture(circuits: Circuits) -> str:
    """Racks at the bottom, each with its level-1 devices; the level-2 devices above; lines as
    wide as the circuits a rack sends to level 2. One-level fabrics: accelerators and their planes."""
    plt = pyplot()
    from matplotlib.patches import Rectangle

    fabric, counts = circuits.fabric, circuits.counts
    levels = _levels(circuits)
    racks = fabric.groups
    serving = fabric.serving_racks or racks
    matrix = rack_matrix(circuits)
    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(11, 3.8))
        width = 1.0 / max(racks, 1)
        out = [sum(matrix[r]) - matrix[r][r] for r in range(racks)]
        top = max(out, default=0) or 1
        for r in range(racks):
            x = r * width
            colour = "#c6dbef" if r < serving else "#dddddd"
            ax.add_patch(Rectangle((x + 0.1 * width, 0.0), 0.8 * width, 0.9, facecolor=colour, edgecolor="black",
                                   linewidth=0.6))
            ax.text(x + 0.5 * width, 0.45, f"rack {r}\n{fabric.rack_size} acc.", ha="center", va="center",
                    fontsize=6)
            ax.add_patch(Rectangle((x + 0.1 * width, 1.3), 0.8 * width, 0.5, facecolor="#fdd0a2",
                                   edgecolor="black", linewidth=0.6))
            if len(levels) > 1 and out[r]:
                ax.plot([x + 0.5 * width, x + 0.5 * width], [1.8, 2.8], color="#d94801",
                        linewidth=0.5 + 3.0 * out[r] / top)
        first = levels[0][0]
        per_rack = first.devices // max(racks, 1)
        ax.text(0.5, 1.95 if len(levels) == 1 else 2.3, f"level 1: {first.devices} {first.technology.upper()} "
                f"devices ({per_rack} per rack, one per port), cabled by {first.medium}",
                ha="center", va="bottom", fontsize=8,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5})
        if len(levels) > 1:
            second = levels[1][0]
            ax.add_patch(Rectangle((0.0, 2.8), 1.0, 0.6, facecolor="#fdae6b", edgecolor="black", linewidth=0.6))
            ax.text(0.5, 3.1, f"level 2: {second.devices} {second.technology.upper()} devices "
                    f"({fabric.spines} per port index), {second.links_below} links from level 1",
                    ha="center", va="center", fontsize=8)
        ax.text(0.0, -0.35, f"{counts.circuits} circuits: {counts.intra_rack} inside a rack (level 1 only), "
                f"{counts.inter_rack} between racks (level 1 > level 2 > level 1; line width: a rack's "
                f"circuits to other racks); {serving} of {racks} racks serve (blue), the others are spare",
                ha="left", va="top", fontsize=7)
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.6, 3.5)
        ax.set_axis_off()
        return figure_svg(fig)


def _heatmap(circuits: Circuits) -> str:
    plt = pyplot()

    matrix = rack_matrix(circuits)
    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(5.2, 4.2))
        image = ax.imshow(matrix, cmap="Oranges", interpolation="nearest")
        fig.colorbar(image, ax=ax, label="circuits")
        ax.set_xlabel("rack")
        ax.set_ylabel("rack")
        ax.set_title("circuits between racks (diagonal: inside a rack)", fontsize="small")
        return figure_svg(fig)


def _hardware(circuits: Circuits) -> str:
    """Installed and used: accelerators, their ports, each level's devices, ports and links, converters."""
    installed, used = circuits.counts.installed, circuits.counts.used
    rows: list[tuple[str, str, int, int]] = [
        ("accelerators", "accelerators", installed.accelerators, used.accelerators),
        ("accelerator_ports", "accelerator ports (transceivers)", installed.accelerator_ports,
         used.accelerator_ports),
    ]
    for level, busy in _levels(circuits):
        k, tech = level.level, level.technology.upper()
        rows += [(f"level{k}_devices", f"level {k} {tech} devices", level.devices, busy.devices if busy else 0),
                 (f"level{k}_ports", f"level {k} {tech} ports", level.ports, busy.ports if busy else 0),
                 (f"level{k}_links", f"links into level {k} ({level.medium})", level.links_below,
                  busy.links_below if busy else 0)]
    rows.append(("converters", f"optical converters ({installed.converter_kind})", installed.converters,
                 used.converters))
    body = ['<tr><th data-key="item">hardware</th><th data-key="installed">installed</th>'
            '<th data-key="used">used by the plan</th><th data-key="share">used</th></tr>']
    for key, label, have, use in rows:
        share = f"{100 * use / have:.0f} %" if have else "-"
        body.append(f'<tr><th data-key="{key}">{escape(label)}</th>{cell(have)}{cell(use)}'
                    f"<td>{escape(share)}</td></tr>")
    return '<table class="hardware">' + "".join(body) + "</table>"


def _links(circuits: Circuits) -> str:
    fabric, counts = circuits.fabric, circuits.counts
    rate = float(fabric.link_Bps)
    items: Sequence[tuple[str, str, Any, str | None]] = (
        ("link_Bps", "link rate", rate, "B/s"),
        ("accelerator_Bps", f"per accelerator ({fabric.ports} ports)", rate * fabric.ports, "B/s"),
        ("used_Bps", f"per accelerator in circuits ({counts.ports_per_node} ports)",
         rate * counts.ports_per_node, "B/s"),
        ("circuits", "circuits", counts.circuits, None),
        ("intra_rack", "inside a rack", counts.intra_rack, None),
        ("inter_rack", "between racks", counts.inter_rack, None))
    return '<table class="links">' + "".join(
        f'<tr><th data-key="{k}">{escape(label)}</th>{cell(v, unit)}</tr>' for k, label, v, unit in items) + "</table>"


def fabric_section(circuits: Circuits) -> str:
    """The fabric section: picture, circuits between racks (two-level fabrics), links and hardware."""
    fabric = circuits.fabric
    parts = [f"<h2>The fabric: {escape(fabric.name)}</h2>",
             f"<p>{human(fabric.accelerators)} accelerators in racks of {human(fabric.rack_size)}, "
             f"{human(fabric.ports)} ports each at {human(float(fabric.link_Bps), 'B/s')}; "
             f"{len(fabric.levels)} switching level(s): "
             f"{escape(' / '.join(lv.technology.upper() for lv in fabric.levels))}.</p>",
             _picture(circuits)]
    row = [_links(circuits), _hardware(circuits)]
    if fabric.groups > 1:
        row.append(_heatmap(circuits))
    parts.append('<div class="axis">' + "".join(row) + "</div>")
    return "".join(parts)
