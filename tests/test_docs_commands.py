"""Every `ocsplan` command the README and docs/ show in a code block parses as pasted (issue 42 goal 2).

The runner reads the fenced blocks (and ``$ `` lines indented as code) of README.md and docs/*.md,
joins backslash continuations, splits ``&&``, ``;`` and pipes, expands shell variables the block sets
(``F=...``), and hands each ``ocsplan`` command to the CLI's own parser (Typer's click): the command must
exist, every option must exist and take the value given. A bracketed optional part (``[--comm fp4|bf16]``)
does not survive a paste and is refused here too. The commands are parsed, not run.
"""

from __future__ import annotations

import functools
import re
import shlex
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import typer

from ocsplan.cli import app

from .conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def code_lines(text: str) -> list[str]:
    """Lines of fenced blocks and indented ``$ `` lines, continuations joined, prompts dropped."""
    lines, fence, pending = [], False, ""
    for raw in text.splitlines():
        if raw.strip().startswith("```"):
            fence = not fence
            continue
        if not (fence or raw.startswith("    $ ")):
            continue
        line = raw.strip().removeprefix("$ ")
        line = f"{pending} {line}" if pending else line
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        lines.append(line)
    return lines


def commands(path: Path) -> list[tuple[str, list[str]]]:
    """(the line as written, its words with the block's variables expanded) of every ocsplan command."""
    out: list[tuple[str, list[str]]] = []
    variables: dict[str, str] = {}
    for line in code_lines(path.read_text(encoding="utf-8")):
        for part in re.split(r"&&|;|\|(?![^\[]*\])", line):
            part = part.strip()
            assignment = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(\S+)", part.split("#")[0].strip())
            if assignment:
                variables[assignment[1]] = assignment[2]
                continue
            if not part.startswith("ocsplan "):
                continue
            words = shlex.split(part, comments=True)
            words = [re.sub(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", lambda m: variables.get(m[1], m[0]), w) for w in words]
            out.append((part, [w for w in words[1:] if not w.startswith(">")]))
    return out


ALL = [(path.relative_to(ROOT).as_posix(), line, words) for path in DOCS for line, words in commands(path)]


@pytest.mark.parametrize(("words", "ok"), [
    (["solve", "instances/paper-multimesh-n256.toml", "--json", "out/plan.json"], True),
    (["solve", "x.toml", "--no-such-option"], False),
    (["no-such-command"], False),
    (["decode", "megatron-5t", "--fabric", "all-ocs", "[--split", "auto]"], False),
    (["faults", "c.json", "--plan", "p.json", "--sample", "many"], False),
])
def test_the_runner_refuses_what_a_shell_would(words: list[str], ok: bool) -> None:
    """The check itself: a bad option, command, value or bracket fails it."""
    if ok:
        test_every_documented_command_parses("t", " ".join(words), words)
    else:
        with pytest.raises(pytest.fail.Exception):
            test_every_documented_command_parses("t", " ".join(words), words)


def test_the_docs_show_commands() -> None:
    assert len(ALL) >= 60
    assert {name for name, _, _ in ALL} >= {"README.md", "docs/faults.md", "docs/workload.md"}


@functools.cache
def _group() -> Any:
    """The app's click group, built once (typer evaluates every command's annotations per build)."""
    return typer.main.get_command(app)


@pytest.mark.parametrize(("doc", "line", "words"), ALL, ids=[f"{d}:{i}" for i, (d, _, _) in enumerate(ALL)])
def test_every_documented_command_parses(doc: str, line: str, words: list[str]) -> None:
    brackets = [w for w in words if w.startswith("[") or w.endswith("]")]
    if brackets:
        pytest.fail(f"{doc}: {line}: optional part {brackets[0]!r} does not survive a paste")
    group = _group()
    ctx = group.make_context("ocsplan", list(words), resilient_parsing=False)
    try:
        name, command, rest = group.resolve_command(ctx, list(words))
        assert command is not None and name is not None
        command.make_context(name, rest, parent=ctx)
    except Exception as exc:  # click's UsageError and BadParameter, whichever click Typer ships
        if type(exc).__name__ == "Exit":  # --help and friends
            return
        if not hasattr(exc, "format_message"):
            raise
        pytest.fail(f"{doc}: {line}: {exc.format_message()}")


OUTPUTS = ("--out", "--json", "--csv", "--png", "--emit", "--cache", "--diff", "--diff-dir", "--plot", "--demands",
           "--export")


def test_documented_outputs_go_under_out() -> None:
    """Following the docs leaves nothing in the checkout but out/ (git ignores it): every output
    option of every documented command names a path under out/ (or - for stdout)."""
    stray = []
    for doc, line, words in ALL:
        for option, value in pairwise(words):
            if option in OUTPUTS and value != "-" and not value.startswith(("out/", "/tmp/")):
                stray.append(f"{doc}: {option} {value} ({line[:60]})")
    assert not stray, "\n".join(stray)


# -- the numbers the docs print, printed again -------------------------------------------------

QUICK = ("solve instances/paper-multimesh-n256.toml", "schedules ", "frontier ", "circulant --size 9 ",
         "workload megatron-5t ", "solve instances/stacked/n576-8x72.toml")
TIMING = re.compile(r"(?<=solved in )[0-9.]+ ?(s|ms)\b|(?<=in )[0-9.]+ s\b")


def masked(line: str) -> str:
    """The line with its wall-clock figures ("solved in 0.0167 s") masked: they differ run to run."""
    return TIMING.sub("<time>", line.rstrip())


def examples(path: Path) -> list[tuple[str, list[str]]]:
    """(command, documented output lines) of every ``$ ocsplan`` line of a fenced block."""
    out: list[tuple[str, list[str]]] = []
    fence, current = False, False
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip().startswith("```"):
            fence, current = not fence, False  # an example's output ends with its block
            continue
        if not fence:
            continue
        if raw.startswith("$ ocsplan "):
            out.append((raw[2:].split("  #")[0].strip(), []))
            current = True
        elif raw.startswith("$"):
            current = False
        elif current:
            out[-1][1].append(raw.rstrip())
    return [(cmd, lines) for cmd, lines in out if cmd and lines]


RUN = [(path.relative_to(ROOT).as_posix(), cmd, lines) for path in DOCS for cmd, lines in examples(path)
       if cmd.removeprefix("ocsplan ").startswith(QUICK)]


def test_quick_examples_are_found() -> None:
    assert len(RUN) >= 5


@pytest.mark.parametrize(("doc", "cmd", "lines"), RUN, ids=[f"{d}:{c[8:40]}" for d, c, _ in RUN])
def test_documented_output_is_what_the_command_prints(doc: str, cmd: str, lines: list[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Every documented output line with a number in it (timings aside) is a line the command prints now."""
    from typer.testing import CliRunner

    monkeypatch.chdir(ROOT)
    words = [w.replace("out/", f"{tmp_path}/", 1) if w.startswith("out/") else w
             for w in shlex.split(cmd, comments=True)[1:]]
    result = CliRunner().invoke(app, words)
    assert result.exit_code in (0, 2), result.output  # 2: a documented refusal, compared like any output
    printed = {masked(line) for line in (result.stdout + result.stderr).splitlines()}
    stale = [line for line in lines if re.search(r"\d", line) and "..." not in line and masked(line) not in printed]
    assert not stale, f"{doc}: {cmd}: lines the command no longer prints:\n" + "\n".join(stale[:5])
