"""An installed wheel runs the tour outside a checkout (issue 39): the catalogues are package data.

The wheel is built from a copy of the sources (no build/ or egg-info left in the checkout),
installed without dependencies into a fresh virtual environment that borrows this one's
site-packages for them (not its editable ocsplan: ``.pth`` files there are not read), and run
from an empty directory with no PYTHONPATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the ocsplan script, an empty working directory, the environment to run it in)."""
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    built = _run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", str(base / "dist"), "-q"],
                 source, env)
    assert built.returncode == 0, built.stderr
    (wheel,) = (base / "dist").glob("ocsplan-*.whl")
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base,
                        env).stdout.strip())
    # the dependencies from this environment, after the venv's own site-packages
    (purelib / "_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
                base, env)
    assert done.returncode == 0, done.stderr
    work = base / "elsewhere"
    work.mkdir()
    where = _run([str(python), "-c", "import ocsplan; print(ocsplan.__file__)"], work, env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    return venv / "bin" / "ocsplan", work, env


def test_the_installed_wheel_finds_its_fabrics(installed: tuple[Path, Path, dict[str, str]]) -> None:
    ocsplan, work, env = installed
    listed = _run([str(ocsplan), "fabrics", "--json"], work, env)
    assert listed.returncode == 0, listed.stderr
    assert [r["name"] for r in json.loads(listed.stdout)["fabrics"]] == [
        "all-eps", "all-ocs", "all-ocs-serve576", "eps-single", "hybrid", "ocs-4to1", "ocs-single"]
    power = _run([str(ocsplan), "power", "all-ocs", "all-eps"], work, env)
    assert power.returncode == 0 and "nvl576-all-eps" in power.stdout, power.stderr
    step = work / "step.json"
    decode = _run([str(ocsplan), "decode", "gpt-oss-120b", "--world", "8", "--split", "1,8,8,1", "--fabric",
                   "all-ocs", "--json", str(step)], work, env)
    assert decode.returncode == 0, decode.stderr
    assert json.loads(step.read_text())["fabric"] == "nvl576-all-ocs"
    pareto = _run([str(ocsplan), "pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1",
                   "--fabrics", "all-eps,hybrid,all-ocs"], work, env)
    assert pareto.returncode == 0, pareto.stderr
    deployed = _run([str(ocsplan), "deploy", "gpt-oss-120b", "--world", "16", "--split", "4,4,4,4", "--fabric",
                     "ocs-single", "--baseline", "eps-single", "--out", "dep"], work, env)
    assert deployed.returncode == 0, deployed.stderr
    manifest = json.loads((work / "dep" / "manifest.json").read_text())
    assert {f["path"] for f in manifest["files"]} >= {"plan.json", "circuits.json", "report.html", "msccl/index.json"}
    assert sorted(os.listdir(work)) == ["dep", "step.json"]
