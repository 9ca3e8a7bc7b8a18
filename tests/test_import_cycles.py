"""No import cycle in ``engine/`` or ``server/`` (issue 38, item 3), and
the check itself (``tests/import_cycles.py``, run by ``make lint``) finds the cycles it must."""

from __future__ import annotations

import textwrap
from pathlib import Path

import import_cycles
import pytest


def test_engine_and_server_import_in_one_direction():
    graph = import_cycles.import_graph([import_cycles.ROOT / "engine", import_cycles.ROOT / "server"])
    assert "server.keys" in graph and "engine._core" in graph
    assert import_cycles.check(graph) == []


def package(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``pkg`` of these files (name -> source) under ``tmp_path``."""
    root = tmp_path / "pkg"
    root.mkdir(parents=True)
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).write_text(textwrap.dedent(text))
    return root


def problems(tmp_path: Path, files: dict[str, str]) -> list[str]:
    root = package(tmp_path, files)
    return import_cycles.check(import_cycles.import_graph([root], tmp_path))


def test_an_import_inside_a_function_closes_a_cycle(tmp_path):
    found = problems(tmp_path, {
        "a.py": "from pkg.b import B\nA = 1\n",
        "b.py": "B = 2\n\ndef late():\n    from .a import A  # dodges the cycle at import time\n    return A\n",
    })
    assert found == ["import cycle among pkg.a, pkg.b: pkg.a -> pkg.b; pkg.b -> pkg.a"]


@pytest.mark.parametrize("spelling", ["import pkg.a", "from pkg import a", "from . import a",
                                      "from .a import A", "from pkg.a import (\n    A,\n)"])
def test_every_spelling_of_an_import_is_an_edge(tmp_path, spelling):
    b = f"try:\n    {spelling}\nexcept ImportError:\n    pass\n"
    found = problems(tmp_path, {"a.py": "import pkg.b\nA = 1\n", "b.py": b})
    assert len(found) == 1 and "pkg.b -> pkg.a" in found[0], found


def test_a_cimport_and_an_included_pxi_are_edges_of_the_compiled_module(tmp_path):
    found = problems(tmp_path / "one", {
        "a.py": "from pkg import _fast\n",
        "_fast.pyx": 'include "_stage.pxi"\n',
        "_fast.pxd": "from libc.stdint cimport int32_t\n",
        "_stage.pxi": "cdef int x = 0\nfrom pkg.a import thing\n",
    })
    assert found == ["import cycle among pkg._fast, pkg.a: pkg._fast -> pkg.a; pkg.a -> pkg._fast"]
    found = problems(tmp_path / "two", {"a.py": "import pkg._fast\n", "_fast.pxd": "cimport pkg.a\n"})
    assert len(found) == 1 and "pkg._fast -> pkg.a" in found[0], found


def test_an_import_for_the_type_checker_only_is_no_edge(tmp_path):
    assert problems(tmp_path, {
        "a.py": "from pkg.b import B\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nelse:\n    B = 1\n",
    }) == []
