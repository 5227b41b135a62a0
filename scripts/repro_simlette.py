"""Reproduce the paper's Simlette results: conformance (App. A.2), Figure 3 (§5.3), Figures 19-21 (App. C.4).

Usage: python scripts/repro_simlette.py [--figures conformance,3,19,20,21] [--out out/simlette] [--buffer BYTES]
       [--spray packet|message|flit-K] [--switch-buffer BYTES]

- conformance: ideal mode against h * lambda + v / (p R) for every schedule on
  cubes and block folds of up to 5 bits (plus FQ3, Q4+1100, Q4+1111) and for
  every demand of the named instances' plans; the same plans in message mode
  (p > 1 included); a demand whose generators have unequal multiplicities.

- Figure 3: 512-accelerator all-reduce, parallel RS+AG (the plan of
  instances/paper-fig3-n512.toml: K8^3, 21 of 36 ports), single-level OCS and
  EPS, 400 Gb/s, nominal Table 9 budget, message mode, 1 KiB to 1 MiB; ours
  against the paper's bars.
- Figure 19: one-shot all-reduce on 32 accelerators over OCS (the planner's
  topology for 8, 12, 16 and 24 ports), unlimited and limited port buffer.
- Figure 20: one-shot on the complete graph of 32 over single-level EPS, same.
- Figure 21: two-shot (RS + AG over K32) on EPS, ranks sending in rank order,
  unlimited buffers, message against flit mode, data-driven and with a
  barrier between phases.
The paper does not state its limited buffer; ``--buffer`` (default 7 KiB =
11 DL-flit credits, below the 13.6 kB / 11.6 kB bandwidth-delay products of
one OCS / EPS credit loop) is ours. ``--spray`` (Simlette's granularity over
equal EPS links) and ``--switch-buffer`` (every switch input, default unlimited)
apply to every message-mode and flit-mode run of Figures 3, 19, 20 and 21.
Writes CSV and PNG per figure and prints the tables.
"""

from __future__ import annotations

import argparse
import csv
import io
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ocsplan.cayley import Topology
from ocsplan.files import write_atomic, write_atomic_with
from ocsplan.instance import load_instance, loads_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.space import integer_partitions
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import (
    SimOptions,
    network_factory,
    program_workload,
    simulate_plan,
    simulate_program,
    simulate_workload,
)

ROOT = Path(__file__).resolve().parent.parent
FABRICS = ROOT / "simulate" / "fabrics"
KiB = 1024
SIZES = [KiB << i for i in range(11)]  # 1 KiB .. 1 MiB
PAPER_FIG3 = {  # paper Figure 3, total completion time above each bar (us)
    "ocs": [3.18, 3.18, 3.18, 3.18, 3.18, 3.21, 3.26, 3.37, 3.62, 4.11, 5.10],
    "eps": [5.21, 5.21, 5.21, 5.21, 5.24, 5.24, 5.26, 5.36, 5.49, 5.77, 6.41],
}
RADICES = (8, 12, 16, 24)


def _write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, buffer.getvalue())


def conformance(out: Path) -> None:
    lam, rate = 0.52e-6, 50e9
    spec = load_fabric(FABRICS / "ocs-single.toml")
    topologies = [Topology.from_profile(shape) for a in range(1, 6) for shape in integer_partitions(a)]
    topologies += [Topology.with_folds(3, [0b111]), Topology.with_folds(4, [0b1100]), Topology.with_folds(4, [0b1111])]
    worst, cases = 0.0, 0
    for topo in topologies:
        for sched in SCHEDULES.values():
            if sched.name == "ring" or not sched.valid(topo):
                continue
            for payload in (4096, 1000):
                result = simulate_program(sched.build(topo, payload), spec, SimOptions(mode="ideal"), ports=64,
                                          latency=lam)
                form = sched.cost(topo)
                closed = form.h * lam + float(form.v_factor * payload) / rate
                worst = max(worst, abs(result.simulated_s - closed) / closed)
                cases += 1
    print(f"Conformance, ideal mode: {cases} schedule x topology x payload cases, p = 1: "
          f"max |T_sim - T_closed| / T_closed = {worst:.1e}")
    rows = []
    print(f"{'plan':26} {'demand':26} {'schedule':24} {'p':>2} {'closed us':>10} {'ideal':>9} {'message':>9}")
    for name in ("paper-multimesh-n256", "megatron-5t-n512-b1", "paper-table7-rsag-single", "paper-fig3-n512"):
        plan = plan_heuristic(load_instance(ROOT / "instances" / f"{name}.toml"))
        ideal = simulate_plan(plan, spec, SimOptions(mode="ideal")).demands
        message = simulate_plan(plan, spec, SimOptions(mode="message")).demands
        for a, b in zip(ideal, message, strict=True):
            closed = a.closed_form_s or float("nan")
            rows.append({"plan": name, "demand": a.name, "schedule": a.schedule, "p": a.multiplicity,
                         "closed_form_us": closed * 1e6, "ideal_rel": a.simulated_s / closed - 1,
                         "message_rel": b.simulated_s / closed - 1})
            print(f"{name:26} {a.name:26} {a.schedule:24} {a.multiplicity:2d} {closed * 1e6:10.4f} "
                  f"{a.simulated_s / closed - 1:+9.1e} {b.simulated_s / closed - 1:+9.2%}")
    _write(out / "conformance.csv", rows)
    # p > 1 with unequal multiplicities: coset-factored on K2 x K2, generator 01 doubled
    sigma = 64 * KiB
    program = SCHEDULES["coset-factored"].build(Topology.from_profile((1, 1)), sigma)
    factory = network_factory(spec, SimOptions(mode="ideal"), ports=3, ideal=(lam, rate, {0b01: 2, 0b10: 1}))
    run = simulate_workload(program_workload(program, (1, 0), 4), factory, mode="ideal", rate=rate)
    closed = 2 * lam + 2 * sigma / rate
    over = closed / run.simulated_s - 1
    print(f"unequal multiplicities (p = 2 on one layer, effective p = 1): closed form {closed * 1e6:.4f} us, "
          f"simulated {run.simulated_s * 1e6:.4f} us: the closed form over-predicts by {over:.1%}")


def figure3(out: Path, base: SimOptions) -> None:
    plan = plan_heuristic(load_instance(ROOT / "instances" / "paper-fig3-n512.toml"))
    rows = []
    print("Figure 3: 512-accelerator all-reduce, parallel RS+AG on K8^3, 36 ports, 400 Gb/s, message mode")
    print(f"{'buffer':>8} {'closed':>7} | {'OCS':>6} {'paper':>6} {'diff':>6} | {'EPS':>6} {'paper':>6} {'diff':>6}"
          f" {'model':>6}")
    for i, sigma in enumerate(SIZES):
        row: dict[str, Any] = {"buffer_bytes": sigma}
        for tech, name in (("ocs", "ocs-single"), ("eps", "eps-single")):
            d = simulate_plan(plan, load_fabric(FABRICS / f"{name}.toml"), base, payload=sigma).demands[0]
            row[f"{tech}_us"] = d.simulated_s * 1e6
            row[f"{tech}_paper_us"] = PAPER_FIG3[tech][i]
            row[f"{tech}_model_us"] = d.analytical_s * 1e6
            row["closed_form_us"] = d.closed_form_s * 1e6 if d.closed_form_s else float("nan")
        rows.append(row)
        print(f"{sigma // KiB:6d}Ki {row['closed_form_us']:7.3f} | {row['ocs_us']:6.3f} {row['ocs_paper_us']:6.2f} "
              f"{row['ocs_us'] / row['ocs_paper_us'] - 1:+6.1%} | {row['eps_us']:6.3f} {row['eps_paper_us']:6.2f} "
              f"{row['eps_us'] / row['eps_paper_us'] - 1:+6.1%} {row['eps_model_us']:6.3f}")
    _write(out / "figure3.csv", rows)
    fig, ax = plt.subplots(figsize=(7, 4))
    xs = [r["buffer_bytes"] for r in rows]
    for tech, color in (("ocs", "C0"), ("eps", "C3")):
        ax.plot(xs, [r[f"{tech}_us"] for r in rows], "o-", color=color, label=f"{tech.upper()} Simlette (ours)")
        ax.plot(xs, [r[f"{tech}_paper_us"] for r in rows], "x--", color=color, label=f"{tech.upper()} paper")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("buffer size (bytes)")
    ax.set_ylabel("completion time (us)")
    ax.set_title("Figure 3: 512-accelerator all-reduce, single level, 36 ports")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    write_atomic_with(out / "figure3.png", partial(fig.savefig, dpi=120))
    plt.close(fig)


def _oneshot_plan(ports: int, sigma: int) -> Any:
    return plan_heuristic(loads_instance(
        f'name = "fig19-L{ports}"\n[fabric]\nworld = 32\nports = {ports}\nlatency = "0.52us"\nlink = "400Gb/s"\n'
        f'[[mesh]]\nname = "m"\nshape = [32]\n'
        f'axes = [{{ collective = "all-reduce", payload = "{sigma}B", schedule = "one-shot" }}]\n'))


def figures_19_20(out: Path, buffer: int, which: Sequence[int], base: SimOptions) -> None:
    sizes = [KiB << i for i in range(0, 11, 2)]  # 1, 4, 16, 64, 256 KiB, 1 MiB
    for fig in which:
        tech = "OCS" if fig == 19 else "EPS"
        rows = []
        print(f"Figure {fig}: one-shot all-reduce on 32 accelerators over {tech}, buffer unlimited vs {buffer} B/port")
        print(f"{'L':>3} {'sigma':>8} {'topology':>22} {'model us':>9} {'unlimited':>9} {'limited':>8} {'stall us':>9}")
        for ports in RADICES:
            for sigma in sizes:
                if fig == 19:
                    plan = _oneshot_plan(ports, sigma)
                    spec = replace(load_fabric(FABRICS / "ocs-single.toml"), accelerators=32, ports=ports)
                    runs = [simulate_plan(plan, spec, replace(base, buffer=b)).demands[0] for b in (None, buffer)]
                    topo = plan.meshes[0].axes[0].topology + f" p={plan.meshes[0].axes[0].demands[0].multiplicity}"
                else:
                    program = SCHEDULES["one-shot"].build(Topology.from_profile((5,)), sigma)
                    spec = replace(load_fabric(FABRICS / "eps-single.toml"), accelerators=32, ports=ports)
                    runs = [simulate_program(program, spec, replace(base, buffer=b), ports=ports)
                            for b in (None, buffer)]
                    topo = "K32 (any to any)"
                free, tight = runs
                rows.append({"ports": ports, "sigma": sigma, "topology": topo, "model_us": free.analytical_s * 1e6,
                             "unlimited_us": free.simulated_s * 1e6, "limited_us": tight.simulated_s * 1e6,
                             "unlimited_ratio": free.ratio, "limited_ratio": tight.ratio,
                             "worst_port_stall_us": tight.credit_stall_s * 1e6})
                print(f"{ports:3d} {sigma // KiB:6d}Ki {topo:>22} {free.analytical_s * 1e6:9.3f} {free.ratio:9.3f} "
                      f"{tight.ratio:8.3f} {tight.credit_stall_s * 1e6:9.2f}")
        _write(out / f"figure{fig}.csv", rows)
        fig_, ax = plt.subplots(figsize=(7, 4))
        for n, ports in enumerate(RADICES):
            sel = [r for r in rows if r["ports"] == ports]
            xs = [r["sigma"] for r in sel]
            ax.plot(xs, [r["model_us"] for r in sel], ":", color=f"C{n}")
            ax.plot(xs, [r["unlimited_us"] for r in sel], "o-", color=f"C{n}", label=f"radix {ports} unlimited")
            ax.plot(xs, [r["limited_us"] for r in sel], "s--", color=f"C{n}", label=f"radix {ports} limited")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("buffer size (bytes)")
        ax.set_ylabel("completion time (us)")
        ax.set_title(f"Figure {fig}: one-shot, 32 accelerators, {tech} (dotted: model)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, which="both")
        fig_.tight_layout()
        write_atomic_with(out / f"figure{fig}.png", partial(fig_.savefig, dpi=120))
        plt.close(fig_)


def figure21(out: Path, base: SimOptions) -> None:
    sizes = [KiB << i for i in range(0, 11, 2)]
    rows = []
    print("Figure 21: two-shot (RS+AG on K32) over EPS, rank order, unlimited buffers")
    print(f"{'L':>3} {'sigma':>8} {'model us':>9} {'message':>8} {'flit':>8} {'msg/flit':>9} {'barrier':>8}"
          f" {'wall msg/flit s':>16}")
    for ports in RADICES:
        spec = replace(load_fabric(FABRICS / "eps-single.toml"), accelerators=32, ports=ports)
        for sigma in sizes:
            program = SCHEDULES["rs-ag"].build(Topology.from_profile((5,)), sigma)
            runs = {}
            for mode, barrier in (("message", False), ("flit", False), ("message", True)):
                start = time.perf_counter()
                result = simulate_program(program, spec, replace(base, mode=mode, order="rank", barrier=barrier),
                                          ports=ports)
                runs[(mode, barrier)] = (result, time.perf_counter() - start)
            (msg, tm), (flit, tf), (sync, _) = runs[("message", False)], runs[("flit", False)], runs[("message", True)]
            rows.append({"ports": ports, "sigma": sigma, "model_us": msg.analytical_s * 1e6,
                         "message_us": msg.simulated_s * 1e6, "flit_us": flit.simulated_s * 1e6,
                         "barrier_us": sync.simulated_s * 1e6, "message_ratio": msg.ratio,
                         "flit_ratio": flit.ratio, "barrier_ratio": sync.ratio})
            print(f"{ports:3d} {sigma // KiB:6d}Ki {msg.analytical_s * 1e6:9.3f} {msg.ratio:8.3f} {flit.ratio:8.3f} "
                  f"{msg.simulated_s / flit.simulated_s - 1:+9.4f} {sync.ratio:8.3f} {tm:7.2f}/{tf:.2f}")
    _write(out / "figure21.csv", rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--figures", default="conformance,3,19,20,21")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "simlette")
    parser.add_argument("--buffer", type=int, default=7 * KiB, help="the limited per-port buffer, bytes")
    parser.add_argument("--spray", default="message", help="EPS spraying granularity: packet, message or flit-K")
    parser.add_argument("--switch-buffer", type=int, default=None, help="input buffer per switch port, bytes")
    args = parser.parse_args()
    base = SimOptions(spray=args.spray, switch_buffer=args.switch_buffer).check()
    names = set(args.figures.split(","))
    figures = {int(f) for f in names - {"conformance"}}
    args.out.mkdir(parents=True, exist_ok=True)
    if "conformance" in names:
        conformance(args.out)
    if 3 in figures:
        figure3(args.out, base)
    if figures & {19, 20}:
        figures_19_20(args.out, args.buffer, sorted(figures & {19, 20}), base)
    if 21 in figures:
        figure21(args.out, base)
    print(f"CSV and PNG in {args.out}")


if __name__ == "__main__":
    main()
