#!/usr/bin/env python3
"""Fail on any import cycle among the modules of the given packages (``make lint``).

    python tests/import_cycles.py engine server

Packages import in one direction (HOUSE-STYLE, "One home for each rule"), so the modules of
each package, with the imports between them as edges, must form no cycle. Every import
statement counts wherever it stands, in a function or a ``try`` too: an import placed inside
a function to dodge a cycle is a cycle all the same. Only one under ``if TYPE_CHECKING:``,
which never runs, does not count. Python files are read with :mod:`ast`; Cython's (``.pyx``,
``.pxd``, ``.pxi``) by their import lines (``import``, ``from ... import``, ``cimport``); a
``.pxd`` is the module of its ``.pyx``, and a ``.pxi`` is part of the ``.pyx`` that includes it.

Exit 1 with each cycle named, 0 when there is none.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CYTHON = (".pyx", ".pxd", ".pxi")
_FROM = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*c?import[ \t]+([^\n#]+)", re.M)
_INCLUDE = re.compile(r"""^[ \t]*include[ \t]+["']([^"']+)["']""", re.M)

Graph = dict[str, set[str]]


def module_name(path: Path, root: Path) -> str:
    """``engine/_core.pyx`` -> ``engine._core``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _names(text: str) -> list[str]:
    """The names of ``a as b, c`` or ``(a, b)`` (the ``as`` part dropped)."""
    return [n.split()[0] for n in text.strip("() \t\n").replace("\n", " ").split(",") if n.strip()]


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _python_imports(tree: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
    """``(level, module, names)`` of each import that runs (``import a.b``: ``(0, "a.b", [])``)."""
    nodes: list[ast.AST] = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.If) and _type_checking(node.test):
            nodes.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield 0, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or "", [alias.name for alias in node.names]
        nodes.extend(ast.iter_child_nodes(node))


def _cython_imports(text: str) -> Iterator[tuple[int, str, list[str]]]:
    for m in _FROM.finditer(text):
        dotted = m.group(1)
        level = len(dotted) - len(dotted.lstrip("."))
        yield level, dotted[level:], _names(m.group(2))
    for m in _IMPORT.finditer(text):
        for name in _names(m.group(1)):
            yield 0, name, []


def _resolve(modules: set[str], current: str, is_package: bool, level: int, module: str, names: list[str]) -> set[str]:
    """The known modules an import statement of ``current`` runs."""
    if level:
        base = current.split(".") if is_package else current.split(".")[:-1]
        base = base[: len(base) - (level - 1)]
        module = ".".join([*base, module] if module else base)
    targets = set()
    for name in names or [""]:
        candidate = f"{module}.{name}" if name else module
        # the longest known prefix: ``from a import b`` is module a.b if there is one, else a
        while candidate and candidate not in modules:
            candidate = candidate.rpartition(".")[0]
        if candidate:
            targets.add(candidate)
    return targets


def import_graph(packages: Iterable[Path], root: Path = ROOT) -> Graph:
    """Each module of ``packages`` -> the modules of ``packages`` it imports."""
    files = sorted(p for package in packages for p in package.rglob("*") if p.suffix in (".py", *CYTHON))
    includes = {}  # a .pxi -> the module of the .pyx that includes it
    for path in files:
        if path.suffix == ".pyx":
            for m in _INCLUDE.finditer(path.read_text()):
                includes[(path.parent / m.group(1)).resolve()] = module_name(path, root)
    owner = {p: includes.get(p.resolve(), module_name(p, root)) for p in files}
    modules = set(owner.values())
    graph: Graph = {name: set() for name in modules}
    for path in files:
        text = path.read_text()
        current = owner[path]
        found = _python_imports(ast.parse(text, str(path))) if path.suffix == ".py" else _cython_imports(text)
        for level, module, names in found:
            graph[current] |= _resolve(modules, current, path.stem == "__init__", level, module, names)
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (or one importing itself),
    each as one cycle through all of them in import order (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def check(graph: Graph) -> list[str]:
    """Each cycle, with the edges that close it; empty when there is none."""
    problems = []
    for component in cycles(graph):
        edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
        problems.append(f"import cycle among {', '.join(component)}: " + "; ".join(edges))
    return problems


def main(argv: list[str]) -> int:
    packages = [ROOT / name for name in argv or ["engine", "server"]]
    problems = check(import_graph(packages))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
