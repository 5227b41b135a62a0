"""One option name per quantity (issue 42 goal 3): every rename of ``cli/options.py:RENAMED``.

The new name is in ``--help``, the old one hidden; the old one still works, the same answer with
one warning line on stderr after it; both together are refused; a bad value under either name is
one line naming the option as typed, exit 2, nothing written and no warning (the hostile contract);
no documented command uses an old name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.cli.options import RENAMED

from .conftest import ROOT, instance_path
from .test_docs_commands import ALL

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"
OCS = str(FABRICS / "nvl576-all-ocs.toml")
SINGLE = str(FABRICS / "ocs-single.toml")
PARETO = ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1", "--fabrics", OCS]
SWEEP = ["sweep", "{plan}", "--fabric", SINGLE, "--demand", "attention:0", "--payloads", "1KiB", "--csv",
         "{tmp}/s.csv"]

# (command, old name): the command without the option, a good value, a bad value, and whether the
# two runs print the same stdout (a study's summary holds the wall-clock time of its solves)
CASES: dict[tuple[str, str], tuple[list[str], str, str, bool]] = {
    ("power", "--rate"): (["power", OCS], "1600G", "300G", True),
    ("power", "--ports"): (["power", OCS], "128", "0", True),
    ("decode", "--ports"): (["decode", "gpt-oss-120b", "--fabric", OCS, "--world", "8", "--batch", "4", "--context",
                             "32Ki", "--split", "1,8,8,1"], "48", "0", True),
    ("pareto", "--ports"): (PARETO, "48", "0", True),
    ("simulate", "--latency"): (["simulate", "{plan}", "--fabric", SINGLE, "--demand", "attention:0"], "high",
                                "bogus", True),
    ("sweep", "--latency"): (SWEEP, "high", "bogus", True),
    ("study", "--out"): (["study", str(instance_path("paper-multimesh-n256")), "--methods", "heuristic"],
                         "{tmp}/study.csv", "{tmp}", False),
    ("pareto", "--png"): (PARETO, "{tmp}/p.png", "{tmp}/p.xyz", True),
    ("sweep", "--png"): (SWEEP, "{tmp}/p.png", "{tmp}/p.xyz", True),
}


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vocab") / "plan.json"
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), "--json", str(path)])
    assert result.exit_code == 0, result.output
    return path


def argv(words: list[str], plan: Path, tmp: Path) -> list[str]:
    return [w.format(plan=plan, tmp=tmp) for w in words]


def test_every_rename_is_exercised() -> None:
    assert set(CASES) == set(RENAMED)


@pytest.mark.parametrize(("command", "old"), sorted(RENAMED))
def test_help_names_the_new_option_only(command: str, old: str) -> None:
    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout
    assert re.search(rf"{RENAMED[(command, old)]}(?![\w-])", text)
    assert not re.search(rf"(?<![\w-]){old}(?![\w-])", text)


@pytest.mark.parametrize(("command", "old"), sorted(RENAMED))
def test_the_old_name_works_and_warns_after(command: str, old: str, plan: Path, tmp_path: Path) -> None:
    words, good, _, same = CASES[(command, old)]
    new = RENAMED[(command, old)]
    results = []
    for name in (new, old):
        target = Path(good.format(tmp=tmp_path))
        target.unlink(missing_ok=True)
        result = runner.invoke(app, argv([*words, name, good], plan, tmp_path))
        assert result.exit_code == 0, result.output
        if "{tmp}" in good:
            assert target.exists()  # the value went where the option said
        results.append(result)
    by_new, by_old = results
    warning = f"warning: {command} {old} is now {new}; the old name goes in the next release"
    assert by_old.stderr.strip().splitlines()[-1] == warning and "warning" not in by_new.stderr
    if same:
        assert by_old.stdout == by_new.stdout
    default = runner.invoke(app, argv(words, plan, tmp_path))
    if good[0] != "{" and same:
        assert default.stdout != by_new.stdout  # the option took effect


@pytest.mark.parametrize("which", ["new", "old"])
@pytest.mark.parametrize(("command", "old"), sorted(RENAMED))
def test_a_bad_value_is_one_line_naming_the_option_as_typed(command: str, old: str, which: str, plan: Path,
                                                             tmp_path: Path) -> None:
    words, _, bad, _ = CASES[(command, old)]
    name = old if which == "old" else RENAMED[(command, old)]
    before = set(tmp_path.iterdir())
    result = runner.invoke(app, argv([*words, name, bad], plan, tmp_path))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0] and "warning" not in lines[0], lines
    assert set(tmp_path.iterdir()) == before  # nothing written


@pytest.mark.parametrize(("command", "old"), sorted(RENAMED))
def test_both_names_are_refused(command: str, old: str, plan: Path, tmp_path: Path) -> None:
    words, good, _, _ = CASES[(command, old)]
    new = RENAMED[(command, old)]
    result = runner.invoke(app, argv([*words, old, good, new, good], plan, tmp_path))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"{old}: is the old name of {new}: give one of them"]


def test_the_docs_use_the_new_names() -> None:
    stale = [f"{doc}: {line[:70]}" for doc, line, words in ALL for command, old in RENAMED
             if words[:1] == [command] and old in words]
    assert not stale, "\n".join(stale)
