"""The CLI's consoles and progress bars: COLUMNS honoured, no trailing spaces when piped, a bar
only on a terminal and never with --quiet; the progress the long commands' cores report."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.cli.app import err as cli_err
from ocsplan.cli.console import PIPED_WIDTH, Bar, StreamConsole
from ocsplan.decode.pareto import pareto_sweep
from ocsplan.decode.ranking import best_step
from ocsplan.deploy.export import export_msccl
from ocsplan.plan import load_plan
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import load_accelerator, load_model, valid_splits
from ocsplan.workload.kernels import memory_per_rank

from .conftest import ROOT, instance_path

FABRICS = ROOT / "simulate" / "fabrics"
BAR = "━"  # rich's bar glyph


def _lines(text: str) -> list[str]:
    return text.splitlines()


@pytest.mark.parametrize(("columns", "limit"), [("60", 60), ("200", 200)])
@pytest.mark.parametrize("args", [
    ["solve", str(instance_path("paper-multimesh-n256"))],
    ["splits", "megatron-5t", "--world", "512"],
    ["circulant", "--size", "72", "--degree", "14"],
])
def test_tables_honour_columns_without_trailing_spaces(columns: str, limit: int, args: list[str]) -> None:
    result = CliRunner().invoke(app, args, env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    lines = _lines(result.stdout)
    assert lines and max(len(line) for line in lines) <= limit
    assert [line for line in lines if line != line.rstrip()] == []


def test_a_narrow_terminal_wraps_what_a_wide_one_does_not() -> None:
    """The plan table of paper-multimesh-n256 is 130 characters wide: it fits in 200, not in 60."""
    args = ["solve", str(instance_path("paper-multimesh-n256"))]
    wide = CliRunner().invoke(app, args, env={"COLUMNS": "200"}).stdout
    narrow = CliRunner().invoke(app, args, env={"COLUMNS": "60"}).stdout
    assert max(map(len, _lines(wide))) == 130 and len(_lines(narrow)) > len(_lines(wide))


def test_piped_width_without_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert StreamConsole().width == PIPED_WIDTH  # pytest's stdout is no terminal
    monkeypatch.setenv("COLUMNS", "77")
    assert StreamConsole().width == 77


def test_columns_read_at_each_print(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's consoles are built by their first print, perhaps under a test's COLUMNS and LINES:
    the width and height are still those of each print's environment."""
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setenv("LINES", "30")
    console = StreamConsole()
    assert (console.width, console.height) == (60, 30)
    monkeypatch.setenv("COLUMNS", "90")
    monkeypatch.delenv("LINES")
    assert console.width == 90
    monkeypatch.delenv("COLUMNS")
    assert console.width == PIPED_WIDTH


def _bar_output(terminal: bool, quiet: bool) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=80)
    with Bar(console, "solving", 3, quiet=quiet) as bar:
        for _ in range(3):
            bar.advance(description="solving x")
    return buffer.getvalue()


def test_bar_only_on_a_terminal_and_not_quiet() -> None:
    shown = _bar_output(terminal=True, quiet=False)
    assert "solving x" in shown and "3/3" in shown and BAR in shown
    assert _bar_output(terminal=False, quiet=False) == ""
    assert _bar_output(terminal=True, quiet=True) == ""


@pytest.fixture
def terminal_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's stderr console believes it is a terminal (CliRunner's is not)."""
    monkeypatch.setattr(cli_err.console, "_force_terminal", True)
    monkeypatch.setattr(cli_err.console, "is_interactive", True)


def _compare(*extra: str) -> tuple[str, str]:
    fig15 = ROOT / "instances" / "stacked" / "fig15-n512-L16.toml"
    result = CliRunner().invoke(app, ["compare", str(fig15), "--methods", "heuristic,stacked", *extra],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_compare_bar_on_a_terminal_off_when_quiet_or_piped(terminal_stderr: None, monkeypatch: pytest.MonkeyPatch,
                                                           ) -> None:
    table, stderr = _compare()
    assert BAR in stderr and "2/2" in stderr  # one unit per (instance, method)
    quiet_table, quiet_err = _compare("--quiet")
    assert BAR not in quiet_err and "\x1b" not in quiet_err
    assert "\x1b" not in table + quiet_table  # the bar never touches stdout (tables differ only in times)
    assert len(_lines(quiet_table)) == len(_lines(table))
    monkeypatch.setattr(cli_err.console, "_force_terminal", None)
    monkeypatch.setattr(cli_err.console, "is_interactive", False)
    _, piped = _compare()
    assert BAR not in piped


@pytest.mark.parametrize(("split", "shown"), [("auto", True), ("8,2,8,2", False)])
def test_decode_bar_with_split_auto(terminal_stderr: None, split: str, shown: bool) -> None:
    """decode --split auto times every split (tens of seconds on the paper's models): a bar on a terminal,
    analytical network too; one given split is quick and shows none."""
    result = CliRunner().invoke(app, ["decode", "gpt-oss-120b", "--world", "16", "--fabric", "ocs-single",
                                      "--split", split], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert ("decode (analytical)" in result.stderr) == shown and "\x1b" not in result.stdout
    quiet = CliRunner().invoke(app, ["decode", "gpt-oss-120b", "--world", "16", "--fabric", "ocs-single",
                                     "--split", split, "--quiet"], env={"COLUMNS": "200"})
    assert "decode (" not in quiet.stderr and "\x1b" not in quiet.stderr


def test_study_bar_is_gone_when_piped(tmp_path: Path) -> None:
    """Before, rich printed the finished bar into a piped stderr; now nothing but the summary."""
    gen = tmp_path / "gen"
    assert CliRunner().invoke(app, ["generate", "--family", "helix", "--count", "2", "--max-bits", "4",
                                    "--out", str(gen)]).exit_code == 0
    result = CliRunner().invoke(app, ["study", str(gen), "--methods", "heuristic", "--csv", str(tmp_path / "s.csv")])
    assert result.exit_code == 0, result.output
    assert BAR not in result.stderr and result.stderr.startswith("2 rows (0 cached, 2 solved)")


def test_pareto_progress_counts_every_point() -> None:
    """One unit per (fabric, batch, split) point: 1 fabric x 2 batches x the splits of 8 ranks."""
    model = load_model("gpt-oss-120b")
    seen: list[tuple[int, int]] = []
    pareto_sweep(model, load_accelerator("rx00"), [load_fabric(FABRICS / "nvl576-all-eps.toml")], [32768], [1, 64],
                 8, progress=lambda done, total: seen.append((done, total)))
    points = 2 * len(valid_splits(model, 8))
    assert seen == [(k, points) for k in range(1, points + 1)]


def test_best_step_progress_counts_the_fitting_splits() -> None:
    model, acc = load_model("gpt-oss-120b"), load_accelerator("rx00")
    spec = load_fabric(FABRICS / "nvl576-all-eps.toml")
    seen: list[tuple[int, int]] = []
    choice = best_step(model, acc, spec, 8, 1, 32768, progress=lambda done, total: seen.append((done, total)))
    fitting = [s for s in valid_splits(model, 8) if memory_per_rank(model, acc, 8, s, 1, 32768).fits]
    assert choice.fitting == len(choice.ranked) == len(fitting)  # EPS: no bound, every split timed
    assert seen == [(k, len(fitting)) for k in range(1, len(fitting) + 1)]


def test_export_progress_counts_every_demand(tmp_path: Path) -> None:
    """paper-multimesh-n256: 2 meshes x 2 axes, one demand each (Table 6)."""
    plan_path = tmp_path / "pm.json"
    assert CliRunner().invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), "--json",
                                    str(plan_path)]).exit_code == 0
    seen: list[tuple[int, int]] = []
    files = export_msccl(load_plan(plan_path), progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)] and len(files) == 5


def test_messages_print_emoji_codes_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    """A value such as ``accelerator:x:`` in an error is the user's text, not an emoji code."""
    from ocsplan.cli.app import err

    err.print("--failed: 'accelerator:x:' is not an id", markup=False)
    assert capsys.readouterr().err == "--failed: 'accelerator:x:' is not an id\n"


# issue 42: the tables a new user meets first fit an 80-column terminal with every number whole
_NUMBERS = __import__("re").compile(r"\d+\.\d+|\d{2,}")


@pytest.fixture(scope="module")
def small_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("fit")
    plan, circuits = folder / "p.json", folder / "c.json"
    for argv in (["solve", str(instance_path("paper-multimesh-n256")), "--json", str(plan)],
                 ["realize", str(plan), "--fabric", str(FABRICS / "ocs-single.toml"), "--out", str(circuits)]):
        assert CliRunner().invoke(app, argv).exit_code == 0
    return plan, circuits


def _fit_commands(plan: Path, circuits: Path) -> list[list[str]]:
    return [
        ["solve", str(instance_path("paper-multimesh-n256"))],
        ["decode", "megatron-5t", "--fabric", str(FABRICS / "nvl576-all-ocs.toml"), "--split", "4,128,64,8"],
        ["faults", str(circuits), "--plan", str(plan), "--sample", "20"],
        ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1,2", "--fabrics",
         str(FABRICS / "nvl576-all-eps.toml")],
    ]


@pytest.mark.parametrize("which", range(4), ids=["solve", "decode", "faults", "pareto"])
@pytest.mark.parametrize("columns", [80, 120])
def test_tables_fit_the_terminal_with_every_number_whole(small_plan: tuple[Path, Path], which: int,
                                                         columns: int) -> None:
    args = _fit_commands(*small_plan)[which]
    wide = CliRunner().invoke(app, args, env={"COLUMNS": "250"})
    narrow = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    assert wide.exit_code == 0 and narrow.exit_code == 0, narrow.output
    assert "…" not in narrow.stdout
    assert max(len(line) for line in _lines(narrow.stdout)) <= columns
    # every number in the wide table's rows appears whole in the narrow rendering
    rows = [line for line in _lines(wide.stdout) if "│" in line]
    assert rows
    for number in sorted({n for line in rows for n in _NUMBERS.findall(line)}):
        assert number in narrow.stdout, (number, narrow.stdout)
