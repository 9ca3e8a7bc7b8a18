"""``python -m server switch-index``: repoint the served index safely."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pagecache import droppable, resident_pages
from testdata import REPO

import engine


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_switch_index_refuses_a_broken_index_and_keeps_the_link(tmp_path, index_dir):
    link = tmp_path / "indexes" / "current"
    assert run("switch-index", str(index_dir), "--link", str(link), cwd=tmp_path).returncode == 0
    assert os.path.realpath(link) == str(index_dir)
    bad = run("switch-index", str(tmp_path / "nothing"), "--link", str(link), cwd=tmp_path)
    assert bad.returncode == 2
    assert "no index at" in bad.stderr
    assert os.path.realpath(link) == str(index_dir)
    engine.AddressIndex.open(link)


def test_switch_index_never_replaces_a_real_directory(tmp_path, index_dir):
    (tmp_path / "current").mkdir()
    result = run("switch-index", str(index_dir), "--link", str(tmp_path / "current"), cwd=tmp_path)
    assert result.returncode == 1
    assert (tmp_path / "current").is_dir() and not (tmp_path / "current").is_symlink()


def test_switch_index_leaves_a_copied_index_on_disk_and_out_of_the_page_cache(tmp_path, index_dir):
    """An index copied to a replica (rsync, cp) is in the page cache in small pages; served from
    there, every worker would map it in 4 KiB pages (engine/__init__.py, ``_HUGEPAGE``)."""
    copy = tmp_path / "indexes" / "nl-copied"
    shutil.copytree(index_dir, copy)
    before = {f.name: f.read_bytes() for f in copy.iterdir()}
    assert sum(resident_pages(f) for f in copy.iterdir()) > 0
    link = tmp_path / "indexes" / "current"
    assert run("switch-index", str(copy), "--link", str(link), cwd=tmp_path).returncode == 0
    assert os.path.realpath(link) == str(copy)
    if droppable(copy):
        assert {f.name: resident_pages(f) for f in copy.iterdir()} == {f.name: 0 for f in copy.iterdir()}
    assert {f.name: f.read_bytes() for f in copy.iterdir()} == before
