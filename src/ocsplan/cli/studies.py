"""Instance families and batch studies: generate and study."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InstanceError
from ..limits import MAX_COUNT, MAX_JOBS, MAX_SEED
from .app import app, emit_json, err, handle_errors, out
from .checks import check_count, check_outputs, check_suffix, check_time_limit, refuse_unused
from .options import DEFAULT_CONNECT_TIMEOUT, ConnectTimeoutOpt, renamed_as
from .plan import MAX_WORKERS, parse_methods

__all__ = ["PLOT_SUFFIXES", "generate", "study"]

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


@app.command()
@handle_errors
def generate(
    family: Annotated[str, typer.Option(help="random, helix, latency, bandwidth, wide or small-messages")],
    out_dir: Annotated[Path, typer.Option("--out", help="directory for the instance files")],
    count: Annotated[int, typer.Option(help="how many instances")] = 10,
    seed: Annotated[int, typer.Option(help="random seed (same seed, same files)")] = 0,
    min_bits: Annotated[int, typer.Option(help="smallest n (world 2**n)")] = 4,
    max_bits: Annotated[int, typer.Option(help="largest n")] = 9,
) -> None:
    """Write generated instances of a family (valid instance files, deterministic)."""
    from ..instance import write_instances
    from ..studies.families import FAMILIES
    from ..studies.families import generate as make

    if family not in FAMILIES:
        known = ", ".join(FAMILIES)
        raise InstanceError("--family", "", f"unknown family {family!r} (known: {known})")
    check_count(count, "--count", 0, MAX_COUNT)
    check_count(seed, "--seed", 0, MAX_SEED)
    existing = next(p for p in (out_dir.absolute(), *out_dir.absolute().parents) if p.exists())
    if not existing.is_dir():  # the directory (created with its parents) would lie below a file
        raise InstanceError("--out", "", f"{out_dir}: {existing} is not a directory")
    if not 2 <= min_bits <= max_bits <= 16:
        raise InstanceError(
            "--min-bits", "", f"need 2 <= min bits <= max bits <= 16, got {min_bits}..{max_bits}"
        )
    paths = write_instances(make(family, count, seed, min_bits, max_bits), out_dir)
    out.print(f"wrote {len(paths)} {family} instances to {out_dir}", markup=False)


@app.command()
@handle_errors
def study(
    paths: Annotated[list[Path], typer.Argument(help="instance files or directories")],
    csv_path: Annotated[Path | None, typer.Option("--csv", help="CSV of results (also the cache); required")] = None,
    methods: Annotated[str, typer.Option(help="comma-separated planners")] = "heuristic,cpsat",
    time_limit: Annotated[float | None, typer.Option(help="seconds per exact solve")] = 60.0,
    jobs: Annotated[int, typer.Option(help="instances solved in parallel (local processes)")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="run on a Dask cluster: scheduler ADDRESS, or local (needs ocsplan[cluster])")
    ] = None,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    workers: Annotated[int | None, typer.Option(help="solver threads per job")] = None,
    plot: Annotated[
        Path | None, typer.Option(help="write a gap-vs-size figure (PNG, PDF, SVG)")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="ignore cached rows in the CSV")] = False,
    json_out: Annotated[
        str | None, typer.Option("--json", help="write the rows as JSON (ocsplan.study/1) to PATH, or - for stdout")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="no progress bar (there is none unless stderr is a terminal)")] = False,
    old_out: Annotated[Path | None, typer.Option("--out", hidden=True, help="old name of --csv")] = None,
) -> None:
    """Batch study: every method on every instance, a CSV row each, a summary, a figure."""
    from ..executor import Executor
    from ..files import write_atomic
    from ..planning.registry import EXACT_METHODS
    from ..studies.results import dumps_study_json, read_study
    from ..studies.runner import collect_paths, default_workers, run_study
    from ..studies.summary import gap_image, summarize
    from .console import Bar
    from .render import summary_table

    given, csv_option = renamed_as("study", "--out", old_out, csv_path)
    if given is None:
        raise InstanceError("--csv", "", "missing: the CSV of results (also the study's cache)")
    out_csv: Path = given
    chosen = parse_methods(methods)
    check_time_limit(time_limit)
    check_count(workers, "--workers", 1, MAX_WORKERS)
    check_count(jobs, "--jobs", 1, MAX_JOBS)
    refuse_unused("--workers", workers is not None and not EXACT_METHODS & set(chosen), "without an exact method")
    check_suffix(plot, "--plot", PLOT_SUFFIXES)  # before any solving
    check_outputs((out_csv, csv_option), (plot, "--plot"), (json_out, "--json"), inputs=[(p, "PATHS") for p in paths])
    files = collect_paths(paths)
    if not files:
        raise InstanceError("PATHS", "", "no instance files found")
    _, dropped = read_study(out_csv)  # a foreign file is refused here, before any solving
    if dropped:
        err.print(f"note: {out_csv}: the last row was cut off; kept the complete rows, dropped {dropped}",
                  markup=False)
    executor = Executor(jobs=jobs, scheduler=scheduler, connect_timeout=connect_timeout).check()
    state: dict[str, Any] = {}
    bar = Bar(err.console, "study", quiet=quiet)

    def on_start(total: int, cached: int) -> None:
        bar.update(0, total, f"study ({cached} cached)")

    def on_result(result: Any, cached: bool) -> None:
        state["cached"] = state.get("cached", 0) + cached
        bar.advance(description=f"{result.instance} {result.method}")

    with bar:
        results, interrupted = run_study(
            files, chosen, out_csv, time_limit=time_limit, executor=executor,
            workers=workers if workers is not None else default_workers(executor.parallel), fresh=fresh,
            on_start=on_start, on_result=on_result,
        )
    cached = state.get("cached", 0)
    err.print(f"{len(results)} rows ({cached} cached, {len(results) - cached} solved) in {out_csv}",
              markup=False)
    (err if json_out == "-" else out).print(summary_table(summarize(results), len(files)))
    emit_json(dumps_study_json(results, len(files)), json_out)
    if plot is not None and results:
        write_atomic(plot, gap_image(results, plot.suffix[1:].lower()))
    if interrupted:
        err.print(f"interrupted: {len(results)} rows kept in {out_csv}", markup=False)
        raise typer.Exit(130)
