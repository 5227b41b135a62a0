"""Report sections from other tools' files: the decode comparison and the fault summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..errors import PlanError
from .svg import figure_svg
from .svg import number as _num

__all__ = ["DECODE_FIELDS", "decode_section", "faults_section", "step_split"]

DECODE_FIELDS = ("fabric", "technology", "network", "world", "batch", "split", "compute_s", "launch_s",
                 "comm_s", "step_s", "tokens_per_s_user", "tokens_per_s", "power_w", "tokens_per_s_mw")
_SPLIT_COLOURS = (("compute_s", "#1f77b4"), ("launch_s", "#ff7f0e"), ("comm_s", "#2ca02c"))


def step_split(step: Mapping[str, Any], name: str) -> dict[str, float]:
    """Compute, launch and communication seconds of one decode step (compute = its kernel regions)."""
    try:
        compute = float(step["attention_s"]) + float(step["ffn_s"]) + float(step["lm_head_s"])
        return {"compute_s": compute, "launch_s": float(step["launch_s"]), "comm_s": float(step["comm_s"]),
                "step_s": float(step["step_s"])}
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError(f"{name}: missing or malformed field {exc}") from None


def _split_text(split: Any) -> str:
    if isinstance(split, Mapping):
        return ",".join(f"{k}={v}" for k, v in split.items())
    return str(split)


def _split_svg(labels: Sequence[str], splits: Sequence[Mapping[str, float]]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.hashsalt": "ocsplan", "svg.fonttype": "none"}):
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


def decode_section(steps: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """One column per decode file (``ocsplan decode --json``): the step split and the throughputs."""
    if not steps:
        return ""
    columns: list[dict[str, Any]] = []
    labels: list[str] = []
    splits: list[dict[str, float]] = []
    for name, step in steps:
        if step.get("schema") != "ocsplan.decode/1":
            raise PlanError(f"{name}: schema {step.get('schema')!r}, expected 'ocsplan.decode/1'")
        split = step_split(step, name)
        try:
            values = {**{k: step[k] for k in DECODE_FIELDS if k not in split}, **split}
        except KeyError as exc:
            raise PlanError(f"{name}: missing field {exc}") from None
        values["split"] = _split_text(values["split"])
        columns.append(values)
        labels.append(f"{step['fabric']} ({step['technology']})")
        splits.append(split)
    rows = ["<tr><th>file</th>" + "".join(f"<th>{escape(name)}</th>" for name, _ in steps) + "</tr>"]
    for key in DECODE_FIELDS:
        rows.append(f"<tr><th>{key}</th>" + "".join(
            f'<td class="t">{escape(c[key])}</td>' if isinstance(c[key], str) else f"<td>{_num(c[key])}</td>"
            for c in columns) + "</tr>")
    return ("<h2>Decode: OCS versus EPS</h2><p>One decode step per file: compute (attention, FFN, LM head), "
            "kernel launches and communication, in seconds; tokens/s per user, tokens/s and tokens/s/MW.</p>"
            + _split_svg(labels, splits) + '<table class="decode">' + "".join(rows) + "</table>")


def _fault_row(fault: Mapping[str, Any], index: int, name: str) -> tuple[str, float, list[str], int]:
    try:
        objective = float(fault["objective"])
        stopped = [str(s) for s in fault.get("stopped", [])]
        return str(fault["id"]), objective, stopped, len(fault.get("demands", []))
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError(f"{name}: faults[{index}]: missing or malformed field {exc}") from None


def faults_section(faults: Mapping[str, Any], name: str = "faults") -> str:
    """The fault summary and the 10 worst faults in the faults analysis's own ranking
    (:func:`~ocsplan.deploy.faults.rank_key`: stopping faults first, then by objective)."""
    from ..deploy.faults import rank_key

    if faults.get("schema") != "ocsplan.faults/1":
        raise PlanError(f"{name}: schema {faults.get('schema')!r}, expected 'ocsplan.faults/1'")
    try:
        summary = faults["summary"]
        worst = summary.get("worst") or {}
        items = [("kind", faults["kind"]), ("healthy objective_s", faults["healthy"]["objective"]),
                 ("count", summary["count"]), ("worst", worst.get("id")),
                 ("worst objective_s", worst.get("objective")), ("median objective_s", summary["median"]),
                 ("stopped", summary["stopped"])]
    except (KeyError, TypeError, AttributeError) as exc:
        raise PlanError(f"{name}: missing or malformed field {exc}") from None
    head = "".join(f'<tr><th>{escape(k)}</th><td class="t" id="faults-{escape(k.replace(" ", "-"))}">'
                   f"{escape(v) if isinstance(v, str) else _num(v)}</td></tr>" for k, v in items)
    rows = [_fault_row(f, i, name) for i, f in enumerate(faults.get("faults", []))]
    rows.sort(key=lambda r: rank_key(len(r[2]), r[1], r[0]))
    body = ["<tr><th>rank</th><th>id</th><th>objective_s</th><th>stopped</th><th>demands</th></tr>"]
    body += [f'<tr><td>{i + 1}</td><td class="t">{escape(fid)}</td><td>{_num(obj)}</td>'
             f'<td class="t">{escape(",".join(stop)) or "-"}</td><td>{n}</td></tr>'
             for i, (fid, obj, stop, n) in enumerate(rows[:10])]
    return ("<h2>Faults</h2><table>" + head + "</table>"
            "<h3>Worst 10 faults (stopping faults first, then by objective)</h3>"
            '<table class="faults">' + "".join(body) + "</table>")
