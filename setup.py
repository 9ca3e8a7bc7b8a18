"""Declare the compiled extensions; all metadata lives in pyproject.toml.

Environment switches:
  ENGINE_DEBUG=1     turn bounds/wraparound/initialized checks back on (slow, for debugging)
  ENGINE_ANNOTATE=1  write `cython -a` HTML annotation next to each .pyx
"""

import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ENGINE_DEBUG") == "1"

directives = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

compile_args = ["-O3"] if not DEBUG else ["-O0", "-g"]

extensions = [
    Extension(
        name,
        [path],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
    )
    for name, path in [
        ("engine._core", "engine/_core.pyx"),
        ("engine._csv", "engine/_csv.pyx"),
    ]
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        annotate=os.environ.get("ENGINE_ANNOTATE") == "1",
    ),
)
