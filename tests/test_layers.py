"""The package's import structure: no circle between modules, no import up a layer.

The layer order is the one written in the package docstring (``ocsplan.__doc__``),
so the documentation and the check cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

import ocsplan

ROOT = Path(ocsplan.__file__).parent
FACADES = {"ocsplan", "ocsplan.__main__"}

def _layers() -> dict[str, int]:
    """Top-level module or package name -> layer index, parsed from the package docstring."""
    doc = ocsplan.__doc__ or ""
    layers: dict[str, int] = {}
    for match in re.finditer(r"^\s+L(\d+)\s+(.+?)\s{2,}", doc, re.M):
        for name in match.group(2).split():
            layers[name] = int(match.group(1))
    return layers


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every ocsplan module ``name`` imports, anywhere in the file (functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known and m != name}


def _graph() -> nx.DiGraph:
    modules = _modules()
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        for target in _imports(name, path, set(modules)):
            # a package's __init__ importing its own modules is a re-export, not a dependency
            if not target.startswith(name + "."):
                graph.add_edge(name, target)
    return graph


def _layer_of(module: str, layers: dict[str, int]) -> int | None:
    parts = module.split(".")
    return layers.get(parts[1]) if len(parts) > 1 else None


def test_docstring_lists_layers() -> None:
    layers = _layers()
    assert len(set(layers.values())) >= 10
    assert layers["errors"] == 0 and layers["cli"] == max(layers.values())


def test_every_module_has_a_layer() -> None:
    layers = _layers()
    missing = sorted(m for m in _modules() if m not in FACADES and _layer_of(m, layers) is None)
    assert missing == []


def test_no_import_circle() -> None:
    graph = _graph()
    graph.remove_nodes_from(FACADES)
    cycles = sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    assert cycles == []


def test_no_import_up_a_layer() -> None:
    layers = _layers()
    graph = _graph()
    upward = sorted(
        f"{a} (L{_layer_of(a, layers)}) -> {b} (L{_layer_of(b, layers)})"
        for a, b in graph.edges
        if a not in FACADES
        and b not in FACADES
        and (_layer_of(a, layers) or 0) < (_layer_of(b, layers) or 0)
    )
    assert upward == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ..errors import X\n", {"ocsplan.errors"}),
        ("def f():\n    from ..planning import check\n", {"ocsplan.planning.check"}),
        ("import ocsplan.units\n", {"ocsplan.units"}),
    ],
)
def test_imports_are_found(tmp_path: Path, source: str, expected: set[str]) -> None:
    """The walker sees relative, function-level and absolute imports (a checker that finds nothing passes)."""
    path = tmp_path / "mod.py"
    path.write_text(source)
    known = {"ocsplan.errors", "ocsplan.units", "ocsplan.planning", "ocsplan.planning.check", "ocsplan.cli.x"}
    assert _imports("ocsplan.cli.x", path, known) == expected


# the modules that write files besides cli/: the files helpers, each format's writer beside its
# reader, the study's results cache and the exact models' LP/MPS export (through the solver's writer)
WRITERS = {"ocsplan.files", "ocsplan.instance", "ocsplan.plan.codec",
           "ocsplan.realization.circuits.formats",
           "ocsplan.studies.results", "ocsplan.planning.exact.milp", "ocsplan.planning.exact.cpsat"}
_WRITES = {"write_atomic", "write_atomic_with", "write_atomic_all", "write_text", "write_bytes"}


def test_only_cli_and_the_writers_write_files() -> None:
    """The core does no I/O (issue 43 goal 5): a module outside cli/ that calls a file writer is one
    of the format writers; the rest return text or bytes for cli/ to write."""
    writing = set()
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if called in _WRITES:
                    writing.add(name)
    assert {m for m in writing if not m.startswith("ocsplan.cli.")} <= WRITERS
    assert "ocsplan.cli.studies" in writing  # the check sees a writer where there is one
