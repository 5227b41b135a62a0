"""Reproduce the paper's Figure 28 (App. E): sensitivity of the hybrid and all-OCS advantage over all-EPS.

Usage: python scripts/repro_fig28.py [--out out/fig28] [--sweeps bandwidth,radix,switch,accelerator]
                                     [--network analytical] [--jobs K] [--cache DIR]

GPT-OSS-5.3-like at batch 1 and 5M context on 512 of the 576 accelerators of
simulate/fabrics/nvl576-{all-eps,hybrid,all-ocs}.toml; one parameter at a time,
as ``ocsplan pareto --link-rate / --radix / --switch-latency /
--accelerator-latency`` set it (``ocsplan.realization.fabrics.override_fabric``):
per-port rate 400G, 800G, 1.6T; accelerator radix 36, 48, 64, 96, 128; switch-core
latency 100, 200, 400 ns (the 810 ns switch hop constant); accelerator egress +
ingress 300, 490, 600 ns. The split is re-optimized at every point (the best of
all 45). Each row: the advantage of hybrid and all-OCS over all-EPS in
tokens/s/user and tokens/s/MW, the paper's value beside ours where App. E states
it in its text (the rest of Figure 28 is read off a plot and left blank). Writes
fig28.csv and fig28.png and prints the table.
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ocsplan.decode import pareto_sweep
from ocsplan.executor import Executor
from ocsplan.files import write_atomic
from ocsplan.realization.fabrics import FabricSpec, Overrides, load_fabric, override_fabric
from ocsplan.workload import load_accelerator, load_model

ROOT = Path(__file__).resolve().parent.parent
FABRICS = ("all-eps", "hybrid", "all-ocs")
NS = 1e-9
G = 1e9 / 8  # bytes per second of 1 Gb/s

# (sweep, label, overrides, baseline?)
SWEEPS: dict[str, list[tuple[str, Overrides]]] = {
    "bandwidth": [("400G", Overrides(link=400 * G)), ("800G", Overrides(link=800 * G)),
                  ("1.6T", Overrides(link=1600 * G))],
    "radix": [(str(p), Overrides(ports=p)) for p in (36, 48, 64, 96, 128)],
    "switch": [(f"{c} ns", Overrides(switch_core=c * NS)) for c in (100, 200, 400)],
    "accelerator": [(f"{a} ns", Overrides(accelerator=a * NS)) for a in (300, 490, 600)],
}

# App. E text (Figure 28's stated points): all-OCS over all-EPS, percent (interactivity, energy efficiency)
PAPER: dict[tuple[str, str], tuple[float | None, float | None]] = {
    ("bandwidth", "400G"): (64.8, 118.7),
    ("bandwidth", "800G"): (65.2, None),  # "between 62.8 % and 65.2 %"
    ("bandwidth", "1.6T"): (62.8, 161.0),
    ("radix", "36"): (65.0, 118.7),
    ("radix", "48"): (88.0, None),
    ("radix", "64"): (100.0, None),
    ("radix", "96"): (104.0, None),
    ("radix", "128"): (103.0, 293.0),
    ("switch", "100 ns"): (30.0, None),
    ("switch", "200 ns"): (65.0, 118.7),
    ("switch", "400 ns"): (160.0, None),
    ("accelerator", "300 ns"): (88.0, None),
    ("accelerator", "490 ns"): (64.8, 118.7),
    ("accelerator", "600 ns"): (55.0, None),
}

COLUMNS = ("sweep", "point", "eps_split", "hybrid_split", "ocs_split", "eps_tps_user", "hybrid_tps_user",
           "ocs_tps_user", "hybrid_interactivity_pct", "ocs_interactivity_pct", "hybrid_energy_pct",
           "ocs_energy_pct", "paper_ocs_interactivity_pct", "paper_ocs_energy_pct")


def point(specs: list[FabricSpec], network: str, executor: Executor, cache: Path | None) -> list[object]:
    """The best split on each fabric and the advantages over all-EPS (percent)."""
    model, acc = load_model("gpt-oss-5.3-like"), load_accelerator("rx00")
    cells = pareto_sweep(model, acc, specs, [5_000_000], [1], 512, network=network, executor=executor, cache=cache)
    best = [c.best for c in cells]
    if any(b is None for b in best):
        raise SystemExit("a fabric has no feasible split at batch 1")
    eps, hybrid, ocs = best
    assert eps is not None and hybrid is not None and ocs is not None

    def pct(a: float, b: float) -> float:
        return round((a / b - 1) * 100, 1)

    return [str(eps.split), str(hybrid.split), str(ocs.split), round(eps.tokens_per_s_user, 1),
            round(hybrid.tokens_per_s_user, 1), round(ocs.tokens_per_s_user, 1),
            pct(hybrid.tokens_per_s_user, eps.tokens_per_s_user), pct(ocs.tokens_per_s_user, eps.tokens_per_s_user),
            pct(hybrid.tokens_per_s_mw, eps.tokens_per_s_mw), pct(ocs.tokens_per_s_mw, eps.tokens_per_s_mw)]


def write_png(rows: list[list[object]], path: Path) -> None:
    sweeps = list(dict.fromkeys(str(r[0]) for r in rows))
    fig, axes = plt.subplots(1, len(sweeps), figsize=(4.2 * len(sweeps), 4), squeeze=False, sharey=True)
    for ax, sweep in zip(axes[0], sweeps, strict=True):
        got = [r for r in rows if r[0] == sweep]
        xs = list(range(len(got)))
        for col, color, label in ((9, "#1f77b4", "all-OCS"), (8, "#ff7f0e", "hybrid")):
            ax.plot(xs, [r[col] for r in got], "o-", color=color, label=f"{label} interactivity")
            ax.plot(xs, [r[col + 2] for r in got], "o--", color=color, label=f"{label} energy efficiency")
        paper = [(x, r[12]) for x, r in zip(xs, got, strict=True) if r[12] != ""]
        paper_e = [(x, r[13]) for x, r in zip(xs, got, strict=True) if r[13] != ""]
        ax.plot([p[0] for p in paper], [p[1] for p in paper], "k^", label="paper all-OCS interactivity")
        ax.plot([p[0] for p in paper_e], [p[1] for p in paper_e], "kv", label="paper all-OCS energy")
        ax.set_xticks(xs, [str(r[1]) for r in got])
        ax.set_title(sweep)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("advantage over all-EPS (%)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("Figure 28: GPT-OSS-5.3-like, batch 1, 5M context, 512 of 576 accelerators")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_atomic(path, buf.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("out/fig28"))
    parser.add_argument("--sweeps", default=",".join(SWEEPS))
    parser.add_argument("--network", default="analytical")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=None, help="plan cache directory")
    args = parser.parse_args()
    chosen = [s.strip() for s in args.sweeps.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SWEEPS]
    if unknown:
        parser.error(f"unknown sweep {unknown[0]!r} (use {', '.join(SWEEPS)})")
    base = [load_fabric(ROOT / "simulate" / "fabrics" / f"nvl576-{f}.toml") for f in FABRICS]
    executor = Executor(jobs=args.jobs).check()
    rows: list[list[object]] = []
    for sweep in chosen:
        for label, over in SWEEPS[sweep]:
            specs = [override_fabric(spec, over) for spec in base]
            paper = PAPER.get((sweep, label), (None, None))
            row = [sweep, label, *point(specs, args.network, executor, args.cache),
                   "" if paper[0] is None else paper[0], "" if paper[1] is None else paper[1]]
            rows.append(row)
            print(", ".join(f"{k}={v}" for k, v in zip(COLUMNS, row, strict=True)), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    write_atomic(args.out / "fig28.csv", text.getvalue())
    write_png(rows, args.out / "fig28.png")
    print(f"wrote {args.out / 'fig28.csv'} and {args.out / 'fig28.png'}")


if __name__ == "__main__":
    main()
