"""Report sections from other tools' files: the decode comparison and the fault summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..deploy.faults import FaultOutcome, FaultReport
from ..plotting import pyplot
from ..realization.circuits import Circuit, Circuits
from ..workload.step import Step
from .svg import cell, figure_svg

__all__ = ["DECODE_FIELDS", "decode_section", "faults_section", "step_split"]

DECODE_FIELDS = ("fabric", "technology", "network", "world", "batch", "split", "compute_s", "launch_s",
                 "comm_s", "step_s", "tokens_per_s_user", "tokens_per_s", "power_w", "tokens_per_s_mw")
_SPLIT_COLOURS = (("compute_s", "#1f77b4"), ("launch_s", "#ff7f0e"), ("comm_s", "#2ca02c"))


def step_split(step: Step) -> dict[str, float]:
    """Compute, launch and communication seconds of one decode step (compute = its kernel regions)."""
    c = step.compute
    return {"compute_s": c.attention_s + c.ffn_s + c.lm_head_s, "launch_s": c.launch_s, "comm_s": step.comm_s,
            "step_s": step.step_s}


def _values(step: Step) -> dict[str, Any]:
    """The table's values of one step (:data:`DECODE_FIELDS`)."""
    s = step.split
    return {"fabric": step.fabric, "technology": step.technology, "network": step.network, "world": step.world,
            "batch": step.batch, "split": f"kvp={s.kvp},tpa={s.tpa},ep={s.ep},tpe={s.tpe}", **step_split(step),
            "tokens_per_s_user": step.tokens_per_s_user, "tokens_per_s": step.tokens_per_s,
            "power_w": step.power_w, "tokens_per_s_mw": step.tokens_per_s_mw}


def _split_svg(labels: Sequence[str], splits: Sequence[Mapping[str, float]]) -> str:
    plt = pyplot()

    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(7, 0.8 + 0.5 * len(labels)))
        for row, split in enumerate(splits):
            left = 0.0
            for key, colour in _SPLIT_COLOURS:
                width = split[key] * 1e6
                ax.barh(row, width, left=left, color=colour, edgecolor="white",
                        label=key.removesuffix("_s") if row == 0 else None)
                left += width
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_xlabel("decode step time (us)")
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        return figure_svg(fig)


_DECODE_LABELS = {"fabric": ("fabric", None), "technology": ("technology", None), "network": ("network model", None),
                  "world": ("accelerators", None), "batch": ("users (batch)", None),
                  "split": ("split", None), "compute_s": ("compute", "s"), "launch_s": ("kernel launches", "s"),
                  "comm_s": ("communication", "s"), "step_s": ("decode step", "s"),
                  "tokens_per_s_user": ("tokens/s per user", None), "tokens_per_s": ("tokens/s", None),
                  "power_w": ("power (served share)", "W"), "tokens_per_s_mw": ("tokens/s per MW", None)}


def decode_section(steps: Sequence[tuple[str, Step]]) -> str:
    """One column per decode file (``ocsplan decode --json``, read by ``step_from_dict``): the step
    split and the throughputs."""
    if not steps:
        return ""
    columns = [_values(step) for _, step in steps]
    labels = [f"{step.fabric} ({step.technology})" + (f" on {step.circuits}" if step.circuits else "")
              for _, step in steps]
    rows = ['<tr><th data-key="file">file</th>' + "".join(f"<th>{escape(name)}</th>" for name, _ in steps)
            + "</tr>"]
    if any(step.circuits for _, step in steps):  # decode --circuits: a deployed or repaired file
        rows.append('<tr><th data-key="circuits">circuits priced</th>'
                    + "".join(f"<td>{escape(step.circuits or 'the plan')}</td>" for _, step in steps)
                    + "</tr>")
    for key in DECODE_FIELDS:
        label, unit = _DECODE_LABELS[key]
        rows.append(f'<tr><th data-key="{key}">{escape(label)}</th>'
                    + "".join(cell(c[key], unit, text=isinstance(c[key], str)) for c in columns) + "</tr>")
    return ("<h2>Decode: OCS versus EPS</h2><p>One decode step per file: compute (attention, FFN, LM head), "
            "kernel launches and communication; tokens/s per user, tokens/s, the power of the accelerators "
            "served (their share of the installed system, paper Table 12) and tokens/s per MW.</p>"
            + _split_svg(labels, [step_split(step) for _, step in steps]) + '<table class="decode">'
            + "".join(rows) + "</table>")


def _circuit_of(fault: str, circuits: Circuits | None) -> Circuit | None:
    """The circuit a ``circuit:N`` fault names, from the circuits, or None."""
    kind, _, index = fault.partition(":")
    rows = circuits.circuits if circuits is not None else ()
    if kind != "circuit" or not index.isdigit() or int(index) >= len(rows):
        return None
    return rows[int(index)]


def _link(circuit: Circuit | None) -> str:
    """"rank 0 port 3 - rank 256 port 3 via L1.k03.r00 > L2.k03.d00 > L1.k03.r08"."""
    if circuit is None:
        return "-"
    via = " > ".join(hop.device for hop in circuit.path)
    return f"rank {circuit.a} port {circuit.a_port} - rank {circuit.b} port {circuit.b_port}" \
        + (f" via {via}" if via else "")


def _fallback(fault: FaultOutcome) -> str:
    """What the affected demands do instead: "world[0].1 all-gather: parallel, p=2" per changed demand."""
    changed = [f"{d.mesh}[{d.axis}].{d.demand}: {d.how}"
               + (f" {d.schedule}" if d.schedule else "") + (f", p={d.p}" if d.p else "")
               for d in fault.demands if d.how != "intact"]
    return "; ".join(changed) or "-"


def _fault_chart(slowdowns: Sequence[float], stopped: int) -> str:
    """Histogram of the analysed faults' objective over the healthy one (faults that stop a demand aside)."""
    plt = pyplot()

    with plt.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(7, 2.6))
        if slowdowns:
            low, high = min(slowdowns), max(slowdowns)
            ax.hist(slowdowns, bins=40, range=(low, high if high > low else low + 1e-3), color="#1f77b4")
        ax.set_xlabel("communication per step after the fault / healthy")
        ax.set_ylabel("faults")
        ax.set_title(f"{len(slowdowns)} faults that stop nothing; {stopped} stop a demand", fontsize="small")
        return figure_svg(fig)


def faults_section(faults: FaultReport, *, circuits: Circuits | None = None) -> str:
    """The fault summary, a chart of what each fault costs, and the worst fault classes in the faults
    analysis's own ranking (:func:`~ocsplan.deploy.faults.ranked`: stopping faults first, then by
    objective). Faults with the same outcome (cost, stopped demands, fallback, generator) form one
    class, shown once with its count and its first fault named by link, generator and path."""
    from ..deploy.faults import ranked

    summary, worst = faults.summary, faults.summary.worst
    healthy = float(faults.healthy)
    items: list[tuple[str, str, str | float | None, str | None]] = [
        ("kind", "fault kind", faults.kind, None), ("healthy-objective_s", "healthy, sum w*T", faults.healthy, "s"),
        ("count", "faults analysed" + (" (a sample)" if faults.sampled else ""), summary.count, None),
        ("worst", "worst fault", None if worst is None else worst.id, None),
        ("worst-objective_s", "worst fault, sum w*T", None if worst is None else worst.objective, "s"),
        ("median-objective_s", "median fault, sum w*T", summary.median, "s"),
        ("stopped", "faults that stop a demand", summary.stopped, None)]
    head = "".join(f'<tr><th data-key="{k}">{escape(label)}</th>{cell(v, unit, ident=f"faults-{k}", text=True)}</tr>'
                   for k, label, v, unit in items)
    rows = [(f.id, float(f.objective), list(f.stopped), f) for f in ranked(faults)]
    classes: dict[tuple[Any, ...], list[Any]] = {}
    for fid, obj, stop, fault in rows:
        circuit = _circuit_of(fid, circuits)
        key = (obj, tuple(stop), _fallback(fault), None if circuit is None else circuit.generator)
        classes.setdefault(key, []).append((fid, obj, stop, fault, circuit))
    kinds = {g.label: g.kind for g in circuits.generators} if circuits is not None else {}
    body = ['<tr><th data-key="rank">rank</th><th data-key="faults">faults alike</th><th data-key="id">fault</th>'
            '<th data-key="link">link</th><th data-key="generator">generator</th>'
            '<th data-key="objective_s">sum w*T</th><th data-key="slowdown">vs healthy</th>'
            '<th data-key="stopped">stopped demands</th><th data-key="fallback">fallback</th></tr>']
    for rank, members in enumerate(list(classes.values())[:10], start=1):
        fid, obj, stop, fault, circuit = members[0]
        label = "-" if circuit is None else circuit.generator
        kind = kinds.get(label)
        body.append(f"<tr>{cell(rank)}{cell(len(members))}{cell(fid, text=True)}{cell(_link(circuit), wrap=True)}"
                    f"{cell(label + (f' ({kind})' if kind else ''), text=True)}{cell(obj, 's')}"
                    f"{cell(obj / healthy if healthy else None, 'x')}{cell(','.join(stop) or '-', text=True)}"
                    f"{cell(_fallback(fault), wrap=True)}</tr>")
    slowdowns = [obj / healthy for _, obj, stop, _ in rows if not stop and healthy]
    return ("<h2>Faults</h2><table>" + head + "</table>"
            + _fault_chart(slowdowns, sum(1 for r in rows if r[2]))
            + f"<h3>The worst fault classes ({min(10, len(classes))} of {len(classes)}): stopping faults first, "
              "then by cost</h3>"
            '<table class="faults">' + "".join(body) + "</table>")
