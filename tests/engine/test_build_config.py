"""The build configuration of the compiled extensions (setup.py)."""

from __future__ import annotations

import importlib.util

import pytest
from Cython.Compiler import Options
from Cython.Compiler.Errors import CompileError
from testdata import REPO

SETUP_PY = REPO / "setup.py"


@pytest.fixture
def setup_py(monkeypatch):
    """setup.py imported as a module (its `setup()` call runs only as __main__)."""
    monkeypatch.setattr(Options, "warning_errors", Options.warning_errors)  # restored after
    spec = importlib.util.spec_from_file_location("engine_setup", SETUP_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("index, fails", [("a[-1]", True), ("a[len(a) - 1]", False)])
def test_a_negative_index_without_wraparound_fails_the_build(setup_py, tmp_path, index, fails):
    """Regression: `a[-1]` under wraparound=False broke opening any index on numpy 2.5 (Python
    3.12, 3.13); Cython warned at build time and the build went on. Now that warning stops it."""
    src = tmp_path / "last.pyx"
    src.write_text(f"def last(a):\n    return {index}\n")
    ext = setup_py.extension("last", str(src))
    if fails:
        with pytest.raises(CompileError):
            setup_py.cythonize_strict([ext], force=True, quiet=True)
        assert not (tmp_path / "last.c").exists()
    else:
        setup_py.cythonize_strict([ext], force=True, quiet=True)
        assert (tmp_path / "last.c").exists()
