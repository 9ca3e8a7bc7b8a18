"""Sphinx configuration of the API reference (``make docs``; warnings are errors there).

The command-line help and the OpenAPI document are generated here, at build time, into
``_generated/`` (not in git): the pages include them, so they never drift from the code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import engine
from server.openapi import spec_bytes

project = "nl-address-autocomplete"
release = version = engine.__version__
extensions = ["sphinx.ext.autodoc", "numpydoc", "myst_parser"]
# the manual's pages are Markdown (MyST): ``[text](page.md#a-heading)`` links between them
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3
exclude_patterns = ["_build", "_generated"]
html_theme = "alabaster"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()

generated = Path(__file__).parent / "_generated"
generated.mkdir(exist_ok=True)
(generated / "openapi.json").write_text(json.dumps(json.loads(spec_bytes()), indent=2) + "\n")
for name, command in {
    "engine": ["engine", "--help"], "engine-build": ["engine", "build", "--help"],
    "engine-update": ["engine", "update", "--help"],
    "engine-query": ["engine", "query", "--help"], "server": ["server", "--help"],
    "server-keys": ["server", "keys", "--help"], "server-switch-index": ["server", "switch-index", "--help"],
}.items():
    help_text = subprocess.run([sys.executable, "-m", *command], capture_output=True, text=True,
                               check=True, env={**os.environ, "COLUMNS": "100"}).stdout
    (generated / f"{name}.txt").write_text(help_text)
