"""Start-up: the command line imports heavy libraries only in the commands that use them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("ortools", "pulp", "highspy", "simpy", "matplotlib", "networkx", "scipy", "numpy", "dask")


# What building the app and printing any command's help may import of ocsplan (issue 37 goal 5):
# the command modules, the L0 modules and the file helpers, and the planner registry (the names
# --method lists); the core (instance, plan, schedules, cayley, realization, workload, ...) is
# imported by the command that runs.
LIGHT = {"ocsplan", "ocsplan.errors", "ocsplan.limits", "ocsplan.units", "ocsplan.files", "ocsplan.gcpause",
         "ocsplan.planning", "ocsplan.planning.registry"}


def _ocsplan_modules(code: str) -> set[str]:
    """The ocsplan modules (and rich, if imported) after running ``code`` in a fresh interpreter."""
    probe = (f"import sys\n{code}\n"
             "sys.stderr.write(' '.join(m for m in sys.modules if m.startswith('ocsplan') or m == 'rich'))")
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT)
    return set(result.stderr.split())


def _loaded(code: str) -> set[str]:
    """The heavy libraries imported after running ``code`` in a fresh interpreter."""
    probe = f"import sys\n{code}\nsys.stderr.write(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT)
    return set(result.stderr.split())


def _command(args: list[str]) -> str:
    return f"from ocsplan.cli import app\ntry:\n    app({args!r})\nexcept SystemExit:\n    pass"


def test_importing_the_cli_imports_no_heavy_library() -> None:
    assert _loaded("import ocsplan.cli") == set()
    assert _loaded("import ocsplan") == set()


@pytest.mark.parametrize("args", [["--help"], ["solve", "--help"], ["simulate", "--help"], ["study", "--help"]])
def test_help_imports_no_heavy_library(args: list[str]) -> None:
    assert _loaded(_command(args)) == set()


def _commands() -> list[str]:
    import typer.main

    from ocsplan.cli import app

    return sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [[], ["--help"], *([name, "--help"] for name in _commands())])
def test_help_imports_no_core_module(args: list[str]) -> None:
    """Building the app and every command's --help import the command modules and the light
    modules only: no instance, plan, schedule, planner, realization, workload or simulator, and
    no rich (the consoles are built by the first print)."""
    loaded = _ocsplan_modules(_command(args) if args else "import ocsplan.cli")
    assert "ocsplan.cli.plan" in loaded  # the probe sees the command modules (a probe that sees nothing passes)
    assert {m for m in loaded if not m.startswith("ocsplan.cli")} <= LIGHT
    assert "ocsplan.cli.console" not in loaded


def test_running_a_command_imports_the_core() -> None:
    """The counterpart: the core modules the help leaves out are imported once a command runs."""
    loaded = _ocsplan_modules(_command(["solve", "instances/paper-multimesh-n256.toml"]))
    assert {"ocsplan.instance", "ocsplan.plan", "ocsplan.schedules", "ocsplan.cli.console", "rich"} <= loaded - LIGHT


def test_the_heuristic_needs_numpy_only() -> None:
    assert _loaded(_command(["solve", "instances/paper-multimesh-n256.toml"])) == {"numpy"}


@pytest.mark.parametrize(("fabric", "mode", "events"), [
    ("nvl576-all-ocs", "message", False),  # circuits into unlimited buffers: a direct run, no events
    ("nvl576-all-ocs", "flit", True),
    ("eps-single", "message", True),
])
def test_simulating_imports_simpy_only_for_events_and_never_networkx(
    tmp_path: Path, fabric: str, mode: str, events: bool
) -> None:
    """The realizer asks whether a rail's rack graph is bipartite in plain Python; a run
    that schedules no event makes no SimPy environment."""
    plan = tmp_path / "plan.json"
    solve = _command(["solve", "instances/paper-multimesh-n256.toml", "--json", str(plan)])
    simulate = _command(["simulate", str(plan), "--fabric", f"simulate/fabrics/{fabric}.toml",
                         "--mode", mode, "--demand", "attention:0"])
    loaded = _loaded(f"{solve}\n{simulate}")
    assert "networkx" not in loaded
    assert ("simpy" in loaded) is events


def test_shell_completion_is_offered() -> None:
    """Typer's completion (issue 42): ocsplan --install-completion / --show-completion, still no heavy import."""
    from typer.testing import CliRunner

    from ocsplan.cli import app

    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout
