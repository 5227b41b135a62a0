"""Start-up: the command line imports heavy libraries only in the commands that use them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("ortools", "pulp", "highspy", "simpy", "matplotlib", "networkx", "scipy", "numpy", "dask")


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
