"""Workload commands (issue 9): splits, workload, decode, power (and pareto)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import InstanceError
from ..limits import MAX_JOBS, MAX_PORTS
from ..units import format_bytes, format_count, format_time, parse_time, parse_tokens
from .app import app, emit_json, err, handle_errors, out
from .checks import check_count, check_outputs, check_suffix, parse_option, refuse_unused
from .options import DEFAULT_CONNECT_TIMEOUT, FABRIC_HELP, SPRAY_HELP, ConnectTimeoutOpt, refuse_spray, renamed_as
from .rows import RowsJsonOpt, dumps_rows

if TYPE_CHECKING:
    from rich.table import Table

    from ..workload import Split
    from .render import Cell

# the workload, decode and realization modules are imported by the commands that use them

__all__ = ["decode", "pareto", "power", "splits", "workload"]

ModelArg = Annotated[str, typer.Argument(metavar="MODEL",
                                         help="catalogue name, model TOML or HuggingFace config.json")]
WorldOpt = Annotated[int, typer.Option(help="accelerators N (a power of two)")]
AccOpt = Annotated[str, typer.Option(help="accelerator: b200, rx00 or a TOML file")]
BatchOpt = Annotated[int, typer.Option(help="users B (tokens per step)")]
TokensOpt = Annotated[int, typer.Option("--tokens-per-step",
                                        help="tokens k verified per user per step (speculative decoding, MTP)")]
AcceptOpt = Annotated[float, typer.Option("--accept-rate", help="mean fraction a of the k tokens accepted")]
MAX_TOKENS_PER_STEP = 64
VerboseOpt = Annotated[bool, typer.Option("--verbose", help="list the keys of a config.json the model does not use")]


def _load_model(spec: str, verbose: bool) -> Any:
    """The model; with ``--verbose`` the ignored keys of a HuggingFace config.json on stderr
    (a TOML model has none: unknown keys are refused there)."""
    from ..workload import load_model

    m = load_model(spec)
    if verbose and m.unused:
        err.print(f"{m.source}: keys not used by the model: {', '.join(m.unused)}", markup=False, soft_wrap=True)
    return m


def _verify(tokens_per_step: int, accept_rate: float) -> tuple[int, float]:
    """--tokens-per-step in 1..64 and --accept-rate in (0, 1]."""
    check_count(tokens_per_step, "--tokens-per-step", 1, MAX_TOKENS_PER_STEP)
    if not 0.0 < accept_rate <= 1.0:
        raise InstanceError("--accept-rate", "", f"must be in (0, 1], got {accept_rate:g}")
    if accept_rate != 1.0 and tokens_per_step == 1:
        raise InstanceError("--accept-rate", "", f"{accept_rate:g} needs --tokens-per-step above 1 "
                                                 "(the one token of a step is always accepted)")
    return tokens_per_step, accept_rate
ContextOpt = Annotated[str, typer.Option(help="context tokens, e.g. 5M (10^6), 32Ki (2^10)")]
CommOpt = Annotated[str, typer.Option(help="communication precision: fp4 or bf16")]


def _batch(batch: int) -> int:
    if not 1 <= batch <= 1 << 20:
        raise InstanceError("--batch", "", f"must be in 1..{1 << 20}, got {batch}")
    return batch


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1e12:.4g} TB" if nbytes >= 1e12 else f"{nbytes / 1e9:.4g} GB"


LinkRateOpt = Annotated[str | None, typer.Option("--link-rate", help="override the fabric's per-port rate: "
                                                                  "400G, 800G or 1600G (App. E)")]
RadixOpt = Annotated[int | None, typer.Option("--radix", help="override the fabric's ports per accelerator "
                                                             "(rails, devices and power scale)")]
OldPortsOpt = Annotated[int | None, typer.Option("--ports", hidden=True, help="old name of --radix")]
SwitchOpt = Annotated[str | None, typer.Option("--switch-latency", help="EPS switch-core latency, e.g. 400ns; "
                                                                       "the 810 ns switch hop stays constant")]
AccLatencyOpt = Annotated[str | None, typer.Option("--accelerator-latency",
                                                   help="accelerator egress + ingress latency, e.g. 300ns "
                                                        "(490ns nominal)")]


def _overridden(specs: list[Any], xpu_w: float, link_rate: str | None, ports: int | None, switch_latency: str | None,
                accelerator_latency: str | None, radix_option: str = "--radix") -> list[Any]:
    """The fabrics with the command-line overrides applied (each validated, the rate against Table 12);
    ``radix_option`` names the radix override as given (--radix or its old name)."""
    from ..realization.fabrics import Overrides, override_fabric
    from ..workload.power import fabric_power

    check_count(ports, radix_option, 1, MAX_PORTS)
    over = Overrides(
        link=None if link_rate is None else _rate_option(link_rate, "--link-rate"),
        ports=ports,
        switch_core=None if switch_latency is None else parse_option(parse_time, switch_latency, "--switch-latency"),
        accelerator=(None if accelerator_latency is None
                     else parse_option(parse_time, accelerator_latency, "--accelerator-latency")),
    )
    if over.empty:
        return specs
    result = [override_fabric(spec, over) for spec in specs]
    for spec in result:
        try:
            fabric_power(spec, xpu_w)
        except InstanceError as exc:
            raise InstanceError("--link-rate" if over.link is not None else spec.source, "", exc.detail) from None
    return result


def _rate_option(text: str, option: str) -> float:
    """``1600G``, ``1.6T``, ``400Gb/s`` as bytes per second."""
    from ..units import parse_rate

    value = text.strip()
    if value.endswith(("G", "T")):
        value += "b/s"
    return float(parse_option(parse_rate, value, option))


@app.command()
@handle_errors
def splits(model: ModelArg, world: WorldOpt = 512, verbose: VerboseOpt = False, json_out: RowsJsonOpt = None) -> None:
    """List the valid Helix splits (KVP, TPA, EP, TPE) of a model on N accelerators."""
    from rich.table import Table

    from ..workload import check_world, valid_splits

    check_outputs((json_out, "--json"))
    m = _load_model(model, verbose)
    check_world(world, "--world")
    found = valid_splits(m, world)
    title = f"{m.name}: Helix splits on {world} accelerators"
    table = Table(title=title, title_justify="left")
    for col in ("KVP", "TPA", "EP", "TPE", "KV heads/rank", "experts/rank"):
        table.add_column(col, justify="right")
    rows = [{"kvp": s.kvp, "tpa": s.tpa, "ep": s.ep, "tpe": s.tpe, "kv_heads_per_rank": m.kv_heads // s.tpa,
             "experts_per_rank": m.experts // s.ep} for s in found]
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
    caption = (f"{len(found)} splits: KVP*TPA = EP*TPE = {world}, powers of two, TPA | {m.kv_heads} KV heads, "
               f"EP | {m.experts} experts, TPE | width {m.width}")
    table.caption = caption
    table.caption_justify = "left"
    (err if json_out == "-" else out).print(table)
    emit_json(dumps_rows("splits", title, rows, [caption]), json_out)


def _resolve(model: str, accelerator: str, world: int, batch: int, context: str, comm: str,
             verbose: bool = False) -> tuple[Any, ...]:
    from ..workload import check_world, load_accelerator, precision_for

    m = _load_model(model, verbose)
    acc = load_accelerator(accelerator)
    check_world(world, "--world")
    tokens = parse_option(parse_tokens, context, "--context")
    return m, acc, world, _batch(batch), tokens, precision_for(comm)


@app.command()
@handle_errors
def workload(
    model: ModelArg,
    split: Annotated[str, typer.Option(help="KVP,TPA,EP,TPE, e.g. 4,128,64,8")],
    accelerator: AccOpt = "rx00",
    world: WorldOpt = 512,
    batch: BatchOpt = 1,
    context: ContextOpt = "5M",
    comm: CommOpt = "fp4",
    emit: Annotated[Path | None, typer.Option(help="write the instance TOML for `ocsplan solve`")] = None,
    ports: Annotated[int | None, typer.Option(help="instance ports L (default: the accelerator's)")] = None,
    latency: Annotated[str, typer.Option(help="instance per-phase latency lambda")] = "0.52us",
    tokens_per_step: TokensOpt = 1,
    accept_rate: AcceptOpt = 1.0,
    verbose: VerboseOpt = False,
    json_out: RowsJsonOpt = None,
) -> None:
    """Demand table (paper Table 1), memory per rank and the instance of one deployment."""
    from rich.table import Table

    from ..files import write_atomic
    from ..workload import check_split, demand_rows, instance_toml, parse_split
    from ..workload.kernels import compute_time, memory_per_rank, require_fit
    from .render import add_rows

    check_outputs((emit, "--emit"), (json_out, "--json"), inputs=((model, "MODEL"), (accelerator, "--accelerator")))
    m, acc, world, batch, tokens, precision = _resolve(model, accelerator, world, batch, context, comm, verbose)
    k, _ = _verify(tokens_per_step, accept_rate)
    refuse_unused("--accept-rate", accept_rate != 1.0,
                  "on the demand table (it sets tokens per second: give it to decode)")
    s = check_split(m, world, parse_split(split))
    lam = parse_option(parse_time, latency, "--latency")
    check_count(ports, "--ports", 1, MAX_PORTS)
    mem = memory_per_rank(m, acc, world, s, batch, tokens, precision)
    console = err if json_out == "-" else out
    notes = [f"{m.name}: {format_count(m.total_params)} parameters, {format_count(m.active_params)} active, "
             f"KV cache {format_bytes(m.kv_elements_per_token * precision.kv)} per token; "
             f"{s.label} on {world} x {acc.name}, batch {batch}, context {tokens}, {precision.name} communication"]
    extras = _extras(m)
    if extras:
        notes.append(extras)
    title = "demand per decode step"
    table = Table(title=title, title_justify="left")
    for col in ("region", "axis", "collective", "G x R", "calls", "payload"):
        table.add_column(col, justify="right" if col in ("calls", "payload") else "left")
    if k != 1:
        notes.append(f"{k} tokens per user per step: payloads and GEMM rows x {k}, the KV cache read once")
    demands = demand_rows(m, world, s, batch * k, precision)
    add_rows(table, [[r.region, r.axis, r.collective, f"{r.groups} x {r.ranks}", str(r.calls),
                      r.payload if r.calls else "-"] for r in demands], [5])
    for note in notes:
        console.print(note, markup=False)
    console.print(table)
    kv_user = m.kv_elements_per_user(tokens) * precision.kv
    c = compute_time(m, acc, world, s, batch, tokens, precision, k)
    after = [f"memory per rank: {_gb(mem.weights)} weights + {_gb(mem.kv)} KV cache = {_gb(mem.total)} "
             f"of {_gb(mem.capacity)} HBM; KV cache per user {_gb(kv_user)}",
             f"compute per step: attention {format_time(c.attention_s)}, FFN {format_time(c.ffn_s)}, "
             f"LM head {format_time(c.lm_head_s)}, launches {c.windows} x {format_time(acc.launch)} = "
             f"{format_time(c.launch_s)}; total {format_time(c.total_s)}"]
    for note in after:
        console.print(note, markup=False)
    require_fit(mem, batch)
    if emit is not None:
        text = instance_toml(m, world, s, batch * k, ports=ports or acc.ports, latency=lam, link=acc.link,
                             precision=precision, context=tokens)
        write_atomic(emit, text)
        console.print(f"wrote {emit}", markup=False)
    rows = [{"region": r.region, "axis": r.axis, "collective": r.collective, "groups": r.groups, "ranks": r.ranks,
             "calls": r.calls, "payload_bytes": r.payload} for r in demands]
    emit_json(dumps_rows("workload", title, rows, [*notes, *after]), json_out)


def _extras(m: Any) -> str:
    """What the first line leaves out: MLA, shared experts, dense layers, MTP modules, parts ignored."""
    parts = []
    if m.mla is not None:
        parts.append(f"MLA latent {m.mla.kv_lora_rank} + rope {m.mla.qk_rope_head_dim} per token and layer "
                     f"(replicated over TPA)")
    if m.chunked_layers:
        parts.append(f"{m.chunked_layers} chunked-attention layers of {m.chunk} tokens (priced at a full chunk, "
                     f"not in the per-token KV)")
    if m.shared_width:
        parts.append(f"shared experts of width {m.shared_width} in {m.moe_layers} MoE layers")
    if m.dense_layers:
        parts.append(f"{len(m.dense_layers)} dense FFN layers of width {m.dense_width}")
    if m.mtp_layers:
        parts.append(f"{m.mtp_layers} MTP module(s) of {format_count(m.mtp_params)} parameters, not in the totals")
    if m.ignored:
        parts.append(f"ignored: {', '.join(m.ignored)}")
    return "; ".join(parts)


def _step_tables(step: Any, spray: str | None = None) -> tuple[Table, str]:
    from rich.table import Table

    from .render import add_rows

    c = step.compute
    network = step.network if spray is None else f"{step.network}, spray {spray}"
    table = Table(title=f"{step.model} on {step.fabric} ({step.technology}, {network}): {step.split.label}, "
                        f"batch {step.batch}, context {step.context}", title_justify="left")
    for col in ("part", "schedule", "payload", "calls", "per call", "total", "share"):
        table.add_column(col, justify="left" if col in ("part", "schedule") else "right")
    total = step.step_s
    rows: list[list[Cell]] = []

    def row(part: str, schedule: str, payload: Cell, calls: str, per: str, value: float) -> None:
        rows.append([part, schedule, payload, calls, per, format_time(value), f"{value / total:.1%}"])

    row("attention", "", "", "", "", c.attention_s)
    row("FFN", "", "", "", "", c.ffn_s)
    row("LM head", "", "", "", "", c.lm_head_s)
    row("launches", "", "", str(c.windows), format_time(c.launch_s / c.windows), c.launch_s)
    for x in step.collectives:
        r = x.row
        dense = " dense" if r.region == "ffn-dense" else ""
        row(f"{r.axis}{dense} {r.collective} ({r.groups} x {r.ranks})", x.schedule, r.payload,
            str(r.calls), format_time(x.time_s), x.total_s)
    add_rows(table, rows, [2])
    summary = (f"step {format_time(total)} (compute {format_time(c.total_s)}, communication "
               f"{format_time(step.comm_s)}); {step.tokens_per_s_user:.1f} tokens/s/user, "
               f"{step.tokens_per_s:.1f} tokens/s; power {step.power_w / 1e3:.1f} kW "
               f"({step.world} of {step.installed} accelerators' share), {step.tokens_per_s_mw:.0f} tokens/s/MW; "
               f"memory per rank {_gb(step.memory.total)} of {_gb(step.memory.capacity)}")
    if step.tokens_per_step != 1 or step.accept_rate != 1.0:
        summary += (f"; {step.tokens_per_step} tokens verified per user per step, {step.accept_rate:g} accepted "
                    f"({step.accepted:g} tokens per step counted)")
    return table, summary


@app.command()
@handle_errors
def decode(
    model: ModelArg,
    fabric: Annotated[str, typer.Option(help=FABRIC_HELP)],
    accelerator: AccOpt = "rx00",
    world: WorldOpt = 512,
    batch: BatchOpt = 1,
    context: ContextOpt = "5M",
    split: Annotated[str, typer.Option(help="auto (the best feasible split) or KVP,TPA,EP,TPE")] = "auto",
    network: Annotated[str, typer.Option(help="analytical or simlette (message mode)")] = "analytical",
    comm: CommOpt = "fp4",
    json_out: Annotated[str | None, typer.Option("--json", help="write the step JSON to PATH, or - for stdout")] = None,
    tokens_per_step: TokensOpt = 1,
    accept_rate: AcceptOpt = 1.0,
    quiet: Annotated[bool, typer.Option(help="no progress bar (shown on a terminal with --split auto or "
                                                 "--network simlette)")] = False,
    verbose: VerboseOpt = False,
    link_rate: LinkRateOpt = None,
    radix: RadixOpt = None,
    switch_latency: SwitchOpt = None,
    accelerator_latency: AccLatencyOpt = None,
    circuits: Annotated[Path | None, typer.Option(
        help="all-OCS: the deployed (or repaired) circuits of this split's plan, priced on their real "
             "OCS paths; needs --split")] = None,
    spray: Annotated[str | None, typer.Option(help=f"with --network simlette: {SPRAY_HELP}")] = None,
    jobs: Annotated[int | None, typer.Option(
        help="with --network simlette on an EPS or hybrid fabric: worker processes for the distinct "
             "simulations (default: one per core; the same step whatever the count)")] = None,
    ports: OldPortsOpt = None,
) -> None:
    """Time one decode step on a fabric: compute, launches, every collective; interactivity and power."""
    from dataclasses import replace

    from ..decode import NETWORKS, best_step, decode_step
    from ..realization.fabrics import load_fabric
    from ..realization.technologies import fabric_technology
    from ..simlette import SimOptions
    from ..workload import check_split, parse_split
    from ..workload.step import step_to_dict
    from .console import Bar

    check_outputs((json_out, "--json"), inputs=((model, "MODEL"), (accelerator, "--accelerator"),
                                                (fabric, "--fabric")))
    m, acc, world, batch, tokens, precision = _resolve(model, accelerator, world, batch, context, comm, verbose)
    if network not in NETWORKS:
        raise InstanceError("--network", "", f"unknown network {network!r} (use {', '.join(NETWORKS)})")
    refuse_unused("--spray", spray is not None and network != "simlette",
                  f"with --network {network} (Simlette's spraying: --network simlette)")
    k, a = _verify(tokens_per_step, accept_rate)
    radix, radix_option = renamed_as("decode", "--ports", ports, radix)
    spec = _overridden([load_fabric(fabric, "--fabric")], acc.power, link_rate, radix, switch_latency,
                       accelerator_latency, radix_option)[0]
    refuse_spray(spray, spec, fabric)
    check_count(jobs, "--jobs", 1, MAX_JOBS)
    refuse_unused("--jobs", jobs is not None and (network != "simlette" or circuits is not None
                                                  or not fabric_technology(spec).packet_switches),
                  "outside --network simlette on an EPS or hybrid fabric (it runs the packet-switched simulations)")
    sprayed = SimOptions(spray="message" if spray is None else spray).check().spray
    console = err if json_out == "-" else out
    # --split auto times every feasible split (40-70 s for the paper's models): a bar whatever the network
    bar = Bar(err.console, f"decode ({network})", 1, quiet=quiet or (network != "simlette" and split != "auto"))
    realized = None
    if circuits is not None:
        from ..realization.circuits import load_circuits

        if split == "auto":
            raise InstanceError("--circuits", "", "needs --split, the split the circuits were deployed for "
                                                  "(deploy's manifest.json names it)")
        realized = load_circuits(circuits)
    if split == "auto":
        with bar:
            choice = best_step(m, acc, spec, world, batch, tokens, network=network, precision=precision,
                               tokens_per_step=k, accept_rate=a, progress=bar.update, spray=sprayed, jobs=jobs)
        step = choice.best
        skipped = choice.fitting - len(choice.ranked)
        console.print(f"split auto: {choice.fitting} feasible splits, {len(choice.ranked)} timed analytically "
                      f"({skipped} ruled out by a lower bound), best {step.split}", markup=False)
    else:
        s: Split = check_split(m, world, parse_split(split))
        with bar:
            step = decode_step(m, acc, spec, world, s, batch, tokens, network=network, precision=precision,
                               tokens_per_step=k, accept_rate=a, circuits=realized, spray=sprayed,
                               jobs=jobs if circuits is None else 1)
            if circuits is not None and realized is not None:
                step = replace(step, circuits=f"{circuits.name} ({len(realized.circuits)} circuits)")
            bar.update(1)
    table, summary = _step_tables(step, spray)
    console.print(table)
    console.print(summary, markup=False)
    emit_json(json.dumps(step_to_dict(step), indent=1) + "\n", json_out)


@app.command()
@handle_errors
def power(
    fabrics: Annotated[list[str], typer.Argument(metavar="FABRIC...", help="catalogue names (ocsplan fabrics) or "
                                                                       "fabric files; ratios are to the first")],
    accelerator: AccOpt = "rx00",
    link_rate: Annotated[str | None, typer.Option(
        "--link-rate", help="per-port rate: 400G, 800G or 1600G (default: the fabric's)")] = None,
    radix: Annotated[int | None, typer.Option("--radix", help="accelerator radix L' (rescales the levels)")] = None,
    json_out: RowsJsonOpt = None,
    rate: Annotated[str | None, typer.Option("--rate", hidden=True, help="old name of --link-rate")] = None,
    ports: OldPortsOpt = None,
) -> None:
    """Table 12 power of each fabric (TDP, every installed port) and the ratio of the first to each."""
    from rich.table import Table

    from ..realization.fabrics import load_fabric
    from ..workload import load_accelerator
    from ..workload.power import fabric_power, rate_label

    check_outputs((json_out, "--json"))
    given, rate_option = renamed_as("power", "--rate", rate, link_rate)
    radix, radix_option = renamed_as("power", "--ports", ports, radix)
    acc = load_accelerator(accelerator)
    bps = None if given is None else _rate_option(given, rate_option)
    check_count(radix, radix_option, 1, MAX_PORTS)

    def priced(text: str) -> Any:
        spec = load_fabric(text, "FABRIC")
        try:
            return fabric_power(spec, acc.power, rate=bps, ports=radix)
        except InstanceError as exc:  # a rate with no Table 12 figure: the option's, if given
            if bps is None:
                raise
            raise InstanceError(rate_option, "", exc.detail) from None

    results = [priced(f) for f in fabrics]
    first = results[0].total
    title = f"system power (Table 12, {acc.name} {acc.power:.0f} W per XPU)"
    table = Table(title=title, title_justify="left")
    ratio = f"{results[0].fabric} / this"
    for col in ("fabric", "rate", "ports", "devices", "XPUs", "switches", "pluggables", "CPO", "total", ratio):
        table.add_column(col, justify="left" if col in ("fabric", "devices") else "right")
    rows = []
    for b in results:
        devices = ", ".join(f"L{lv} {n} {tech.upper()} x {radix} @ {w:g} W" for lv, tech, n, radix, w in b.devices)
        table.add_row(b.fabric, rate_label(b.rate_gbps), str(b.ports), devices, f"{b.xpus_total / 1e3:.1f} kW",
                      f"{b.switches_total / 1e3:.1f} kW", f"{b.pluggables} = {b.pluggables_total / 1e3:.1f} kW",
                      f"{b.cpo} = {b.cpo_total / 1e3:.1f} kW", f"{b.total / 1e3:.1f} kW", f"{first / b.total:.3f}")
        rows.append({"fabric": b.fabric, "rate_gbps": b.rate_gbps, "ports": b.ports,
                     "devices": [{"level": lv, "technology": tech, "count": n, "radix": radix, "watts": w}
                                 for lv, tech, n, radix, w in b.devices],
                     "xpus_w": b.xpus_total, "switches_w": b.switches_total, "pluggables": b.pluggables,
                     "pluggables_w": b.pluggables_total, "cpo": b.cpo, "cpo_w": b.cpo_total, "total_w": b.total,
                     "first_over_this": first / b.total})
    (err if json_out == "-" else out).print(table)
    emit_json(dumps_rows("power", title, rows), json_out)


def _int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InstanceError(option, "", f"expected comma-separated integers, got {text!r}") from None
    if not values:
        raise InstanceError(option, "", "empty list")
    return [_batch(v) for v in values]


@app.command()
@handle_errors
def pareto(
    model: ModelArg,
    contexts: Annotated[str, typer.Option(help="context lengths, e.g. 32Ki,5M")] = "32Ki,5M",
    batches: Annotated[str, typer.Option(help="batch sizes")] = "1,2,4,8,16",
    fabrics: Annotated[str, typer.Option(help="comma-separated catalogue names (ocsplan fabrics) or fabric "
                                              "files")] = "all-eps,hybrid,all-ocs",
    accelerator: AccOpt = "rx00",
    world: WorldOpt = 512,
    comm: CommOpt = "fp4",
    network: Annotated[str, typer.Option(help="analytical, or simlette to re-simulate each cell's "
                                              "splits within 7 % of its best")] = "analytical",
    jobs: Annotated[int, typer.Option(help="worker processes (or Dask workers with --scheduler local)")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="run on a Dask cluster: scheduler ADDRESS, or local (needs ocsplan[cluster])")
    ] = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    cache: Annotated[Path | None, typer.Option(help="plan cache directory (reruns skip the planner)")] = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="write one row per cell")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="write Figures 4 and 5 (PNG)")] = None,
    quiet: Annotated[bool, typer.Option(help="no progress bar (there is none unless stderr is a terminal)")] = False,
    verbose: VerboseOpt = False,
    link_rate: LinkRateOpt = None,
    radix: RadixOpt = None,
    switch_latency: SwitchOpt = None,
    accelerator_latency: AccLatencyOpt = None,
    tokens_per_step: TokensOpt = 1,
    accept_rate: AcceptOpt = 1.0,
    spray: Annotated[str | None, typer.Option(
        help=f"with --network simlette, on the fabrics with packet switches: {SPRAY_HELP}")] = None,
    json_out: RowsJsonOpt = None,
    ports: OldPortsOpt = None,
    png: Annotated[Path | None, typer.Option("--png", hidden=True, help="old name of --plot")] = None,
) -> None:
    """Best split per (context, batch, fabric): interactivity against throughput (Figures 4 and 5)."""
    from rich.table import Table

    from ..decode import NETWORKS, cells_csv, pareto_sweep, png_bytes
    from ..executor import Executor
    from ..files import write_atomic_all
    from ..realization.fabrics import load_fabric
    from ..simlette import SimOptions
    from ..workload import check_world, load_accelerator, precision_for
    from .console import Bar

    radix, radix_option = renamed_as("pareto", "--ports", ports, radix)
    plot, plot_option = renamed_as("pareto", "--png", png, plot)
    m = _load_model(model, verbose)
    acc = load_accelerator(accelerator)
    check_world(world, "--world")
    k, accept = _verify(tokens_per_step, accept_rate)
    precision = precision_for(comm)
    ctx = [parse_option(parse_tokens, c.strip(), "--contexts") for c in contexts.split(",") if c.strip()]
    if not ctx:
        raise InstanceError("--contexts", "", "empty list")
    sizes = _int_list(batches, "--batches")
    specs = _overridden([load_fabric(f.strip(), "--fabrics") for f in fabrics.split(",") if f.strip()], acc.power,
                        link_rate, radix, switch_latency, accelerator_latency, radix_option)
    if network not in NETWORKS:
        raise InstanceError("--network", "", f"unknown network {network!r} (use {', '.join(NETWORKS)})")
    refuse_unused("--spray", spray is not None and network != "simlette",
                  f"with --network {network} (Simlette's spraying: --network simlette)")
    refuse_unused("--spray", spray is not None and all(level.technology == "ocs" for s in specs for level in s.levels),
                  "when every fabric is optical (no packet switch to spray)")
    sprayed = SimOptions(spray="message" if spray is None else spray).check().spray
    check_count(jobs, "--jobs", 1, MAX_JOBS)
    check_suffix(plot, plot_option, (".png",))
    check_outputs((csv_out, "--csv"), (plot, plot_option), (json_out, "--json"),
                  inputs=((model, "MODEL"), (accelerator, "--accelerator"),
                          *((f.strip(), "--fabrics") for f in fabrics.split(",") if f.strip())))
    executor = Executor(jobs=jobs, scheduler=scheduler, connect_timeout=connect_timeout).check()
    with Bar(err.console, f"pareto ({network})", quiet=quiet) as bar:
        cells = pareto_sweep(m, acc, specs, ctx, sizes, world, precision=precision, network=network,
                             executor=executor, cache=cache, progress=bar.update, tokens_per_step=k,
                             accept_rate=accept, spray=sprayed)
    title = f"{m.name} on {world} x {acc.name}: best split per cell ({network}"
    title += ")" if spray is None else f", spray {spray})"
    table = Table(title=title, title_justify="left")
    for col in ("context", "batch", "fabric", "split", "step", "comm", "tokens/s/user", "tokens/s", "tokens/s/MW"):
        table.add_column(col, justify="left" if col in ("fabric", "split") else "right")
    rows: list[dict[str, Any]] = []
    for c in cells:
        s = c.best
        rows.append({"context": c.context, "batch": c.batch, "fabric": c.fabric,
                     "split": None if s is None else str(s.split), "timed": c.timed, "infeasible": c.infeasible,
                     **({} if s is None else {
                         "kvp": s.split.kvp, "tpa": s.split.tpa, "ep": s.split.ep, "tpe": s.split.tpe,
                         "step_s": s.step_s, "comm_s": s.comm_s, "tokens_per_s_user": s.tokens_per_s_user,
                         "tokens_per_s": s.tokens_per_s, "power_w": s.power_w, "tokens_per_s_mw": s.tokens_per_s_mw})})
        if s is None:
            table.add_row(str(c.context), str(c.batch), c.fabric, "does not fit", "", "", "", "", "", style="dim")
            continue
        table.add_row(str(c.context), str(c.batch), c.fabric, str(s.split), format_time(s.step_s),
                      format_time(s.comm_s), f"{s.tokens_per_s_user:.1f}", f"{s.tokens_per_s:.1f}",
                      f"{s.tokens_per_s_mw:.0f}")
    points = sum(c.timed + c.infeasible for c in cells)
    table.caption = f"{points} points ({len(cells)} cells x {points // max(1, len(cells))} splits)"
    table.caption_justify = "left"
    (err if json_out == "-" else out).print(table)
    outputs: list[tuple[str | Path, str | bytes]] = []
    if csv_out is not None:
        outputs.append((csv_out, cells_csv(cells)))
    if plot is not None:
        outputs.append((plot, png_bytes(cells)))
    if json_out is not None and json_out != "-":
        outputs.append((json_out, dumps_rows("pareto", title, rows, [table.caption])))
    write_atomic_all(outputs)  # all or none
    if json_out == "-":
        emit_json(dumps_rows("pareto", title, rows, [table.caption]), json_out)
