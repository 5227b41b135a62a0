"""Hostile sweep (issue 13): every case of tests/hostile/cases.py in a subprocess.

Each run gets 1 GiB of address space and a 60 s timeout; a case keeps the
contract when it exits with its documented status, prints one line on stderr
that names the file/field or option, no traceback, and writes no output file.

    .venv/bin/python scripts/hostile_sweep.py            # this tree
    .venv/bin/python scripts/hostile_sweep.py --src DIR  # another tree's src/ (e.g. before the fix)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile.cases import CASES, Case, build  # noqa: E402
from tests.hostile.round4 import CASES4, Case4, digests  # noqa: E402
from tests.hostile.round4 import build as build4  # noqa: E402

LIMIT = 1 << 30


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run(case: Case | Case4, files: dict[str, str], src: str, timeout: float) -> tuple[str, str]:
    argv = [a.format(**files) for a in case.argv]
    env = dict(os.environ, PYTHONPATH=src, COLUMNS="200")
    stdout = case.stdout if isinstance(case, Case4) else ""
    before = digests(case, files) if isinstance(case, Case4) else {}
    try:
        with open(stdout.format(**files) if stdout else os.devnull, "w") as sink:
            proc = subprocess.run([sys.executable, "-m", "ocsplan", *argv], stdout=sink if stdout else None,
                                  capture_output=not stdout, stderr=subprocess.PIPE if stdout else None, text=True,
                                  timeout=timeout, env=env, preexec_fn=_limit, cwd=files["dir"])
    except subprocess.TimeoutExpired:
        return "hang", f"no answer in {timeout:g} s"
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    written = [o for o in case.outputs if Path(o.format(**files)).exists()]
    if isinstance(case, Case4):
        written += [f"{p} (changed)" for p, digest in digests(case, files).items() if before[p] != digest]
    if "Traceback" in proc.stderr:
        return "traceback", lines[-1] if lines else ""
    if proc.returncode != case.status:
        return "wrong status", f"exit {proc.returncode}: {(lines or [''])[-1][:100]}"
    if len(lines) != 1:
        return "not one line", f"{len(lines)} lines"
    if (case.line(files) if isinstance(case, Case4) else case.names) not in lines[0]:
        return "unnamed", lines[0][:100]
    if written:
        return "wrote output", ", ".join(written)
    return "ok", lines[0][:100]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=str(ROOT / "src"))
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    tally: Counter[str] = Counter()
    per_command: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    cases: list[Case | Case4] = [*CASES, *CASES4]
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            files = build4(Path(tmp)) if isinstance(case, Case4) else build(Path(tmp))
            verdict, detail = run(case, files, args.src, args.timeout)
        command = case.argv[0] if case.argv else "?"
        per_command[command] += 1
        tally[verdict] += 1
        if verdict != "ok":
            broken[command] += 1
        if verdict != "ok" or args.verbose:
            print(f"{verdict:13s} {case.id}: {detail}", flush=True)
    print(f"{len(cases)} hostile inputs over {len(per_command)} commands; "
          + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items())))
    print("per command (inputs/broken): " + ", ".join(f"{c} {n}/{broken[c]}" for c, n in per_command.items()))


if __name__ == "__main__":
    main()
