"""No import circle between the modules of ``openvx_nn``, read from the source with ``ast``.

Every import counts: at the top, inside a function, under ``if TYPE_CHECKING``. A circle means no
module in it can be read, tested or replaced alone; break one by moving the shared piece down a layer.
"""
from __future__ import annotations

import ast
from pathlib import Path

import openvx_nn

ROOT = Path(openvx_nn.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (``from pkg import name`` counts as
    importing ``pkg.name`` when that is a module, else ``pkg``)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start, successors_of_start in graph.items():
        if start in index:
            continue
        work = [(start, iter(sorted(successors_of_start)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_package_has_no_import_circle():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_import_graph_reads_relative_function_level_and_type_checking_imports():
    graph = import_graph()
    assert "openvx_nn.core.enums" in graph["openvx_nn.core.errors"]  # from .enums import ...
    assert "openvx_nn.kernels.support.jit" in graph["openvx_nn.kernels.support.warm"]  # from . import jit
    assert "openvx_nn.operations" in graph["openvx_nn.cli"]  # inside a function


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _upward(layer: str, above: tuple[str, ...]) -> dict[str, list[str]]:
    graph = import_graph()
    wrong = {m: sorted(t for t in targets if _within(t, above)) for m, targets in graph.items() if _within(m, (layer,))}
    return {m: t for m, t in wrong.items() if t}


def test_kernels_import_nothing_above_them():
    above = ("openvx_nn.core", "openvx_nn.operations", "openvx_nn.api", "openvx_nn.capi", "openvx_nn.nnapi",
             "openvx_nn.coreml", "openvx_nn.distributed")
    assert _upward("openvx_nn.kernels", above) == {}


def test_core_imports_nothing_above_it():
    above = ("openvx_nn.operations", "openvx_nn.api", "openvx_nn.capi", "openvx_nn.nnapi", "openvx_nn.coreml",
             "openvx_nn.distributed", "openvx_nn.runner", "openvx_nn.cli")
    assert _upward("openvx_nn.core", above) == {}
