"""``python -m server switch-index``: repoint the served index safely."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pagecache import array_files, droppable, pages, resident_pages
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


def test_every_worker_reads_the_index_in_before_it_serves(live_server, index_dir, tmp_path):
    """A new index (just built or switched to) is not in the page cache: each worker reads it
    in before its first request (server/app.py ``_warm``), so no query waits for the disk and
    no key is charged for it (the try-it page's demo key ran out on such first queries)."""
    copy = tmp_path / "cold"
    shutil.copytree(index_dir, copy)
    engine.release_page_cache(copy)
    arrays = array_files(copy)
    live = live_server(index=copy)  # ready: /readyz answered, no search asked
    if droppable(copy):
        assert {f.name: resident_pages(f) for f in arrays} == {f.name: pages(f) for f in arrays}
    deadline = time.monotonic() + 30
    while live.log.read_text().count(f"index {copy} in memory in") < 2:  # both workers
        assert time.monotonic() < deadline, live.log.read_text()
        time.sleep(0.1)
    assert live.address("hooistraat 2", limit=1)[0] == 200
