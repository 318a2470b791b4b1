"""The package's layering: imports point down only, no import cycle, modules stay small.

The layers, bottom to top (docs/architecture.md). A module may import modules of its own
layer or of a lower one; every import counts, including those inside functions and under
``TYPE_CHECKING``, because any of them can close a cycle at run time.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "treecert"

LAYERS: list[tuple[str, ...]] = [
    ("treecert._version", "treecert.errors", "treecert.parallel", "treecert.sklearn_base"),
    ("treecert.data",),
    ("treecert.tree",),
    ("treecert.pruning",),
    ("treecert.transductive",),
    ("treecert.methods",),
    ("treecert.evaluation",),
    ("treecert.api", "treecert.estimator", "treecert.estimator_tree",
     "treecert.estimator_model", "treecert.estimator_options"),
    ("treecert.cli", "treecert.__main__", "treecert"),
]
MAX_LINES = 600


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The package modules ``name`` imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")[: len(name.split(".")) - node.level + is_package]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    files = module_files(package)
    return {name: imports_of(name, path, set(files)) for name, path in files.items()}


def layer_of(module: str) -> int:
    """Index of the layer holding ``module`` (the longest matching prefix wins)."""
    best, best_len = None, -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and the docs")
    return best


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps
                  if layer_of(b) > layer_of(a))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_imports_point_down_only():
    upward = upward_imports(import_graph())
    assert not upward, "imports that point up a layer (move the shared part down):\n" + \
        "\n".join(upward)


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "modules that import each other in a circle:\n" + \
        "\n".join(" <-> ".join(c) for c in found)


def test_every_module_is_in_a_layer_and_every_subpackage_says_what_it_holds():
    for name, path in module_files().items():
        layer_of(name)
        if path.name == "__init__.py":
            assert ast.get_docstring(ast.parse(path.read_text())), f"{name} has no docstring"


@pytest.mark.parametrize("name", sorted(module_files()))
def test_module_is_small(name):
    n = len(module_files()[name].read_text().splitlines())
    assert n <= MAX_LINES, f"{name} has {n} lines; split it where its ideas separate"


def test_the_checks_catch_a_cycle_and_an_upward_import():
    graph = {"treecert.data.a": {"treecert.tree.b"}, "treecert.tree.b": {"treecert.data.a"},
             "treecert.methods.c": set()}
    assert cycles(graph) == [["treecert.data.a", "treecert.tree.b"]]
    assert upward_imports(graph) == ["treecert.data.a -> treecert.tree.b"]
    assert cycles({"treecert.api": {"treecert.errors"}, "treecert.errors": set()}) == []


def test_imports_inside_functions_and_relative_imports_count(tmp_path):
    pkg = tmp_path / "treecert"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""root"""\n')
    (pkg / "data" / "__init__.py").write_text('"""data"""\n')
    (pkg / "data" / "x.py").write_text("def f():\n    from treecert import api\n")
    (pkg / "data" / "y.py").write_text("from . import x\n")
    (pkg / "api.py").write_text("from treecert.data.y import x\n")
    graph = import_graph(pkg)
    assert graph["treecert.data.x"] == {"treecert.api"}
    assert graph["treecert.data.y"] == {"treecert.data.x"}
    assert cycles(graph) == [["treecert.api", "treecert.data.x", "treecert.data.y"]]


def test_the_command_line_starts_without_scipy_or_matplotlib():
    """Start-up cost is paid by every shell call: scipy.stats alone imports in over a second,
    so the modules every command loads must not import it (or matplotlib) at module level."""
    code = ("import sys, treecert.cli.main, treecert.api; "
            "print(sorted(m for m in ('scipy', 'matplotlib', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True).stdout
    assert out.strip() == "[]"
