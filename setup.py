"""Declare the compiled extensions; all metadata lives in pyproject.toml.

Environment switches:
  ENGINE_DEBUG=1     turn bounds/wraparound/initialized checks back on (slow, for debugging)
  ENGINE_ANNOTATE=1  write `cython -a` HTML annotation next to each .pyx

Every Cython warning is a build error (`cython -Werror`): a warning such as "the result of using
negative indices inside of code sections marked as 'wraparound=False' is undefined" names code
that misbehaves on some numpy versions (`a[-1]` broke every index on numpy 2.5).
"""

import os

import numpy as np
from Cython.Build import cythonize
from Cython.Compiler import Options
from setuptools import Extension, setup

DEBUG = os.environ.get("ENGINE_DEBUG") == "1"

DIRECTIVES = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

COMPILE_ARGS = ["-O3"] if not DEBUG else ["-O0", "-g"]

MODULES = [
    ("engine._core", "engine/_core.pyx"),
    ("engine._csv", "engine/_csv.pyx"),
    ("server._rules", "server/_rules.pyx"),  # the rules server/ and its gate share (server/_rules.pxd)
    ("server._gate", "server/_gate.pyx"),  # the usual answer of /v1/address (server/_gate.pyx)
]


def extension(name: str, path: str) -> Extension:
    return Extension(
        name,
        [path],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=COMPILE_ARGS,
    )


def cythonize_strict(extensions: list[Extension], **kwargs) -> list[Extension]:
    """Cythonize with the project's directives; any Cython warning fails (CompileError)."""
    Options.warning_errors = True
    return cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        annotate=os.environ.get("ENGINE_ANNOTATE") == "1",
        **kwargs,
    )


if __name__ == "__main__":  # pip and `python setup.py` run it so; tests import it
    setup(ext_modules=cythonize_strict([extension(name, path) for name, path in MODULES]))
