"""The index in 2 MiB pages: every map advised MADV_HUGEPAGE, and a new index on disk and out of
the page cache (the build, ``python -m server switch-index``), which the kernel then reads in
2 MiB pages for such a map (engine/__init__.py, ``_HUGEPAGE``); and `AddressIndex.warm`, which
reads it all in before a process serves."""

from __future__ import annotations

import shutil

import pytest
from pagecache import THP, array_files, droppable, maps_of, pages, resident_pages

import engine
from engine.__main__ import main


def test_every_map_of_an_index_asks_for_2_mib_pages(sample_index_dir, tmp_path):
    own = tmp_path / "index"  # a copy no other test's index maps
    shutil.copytree(sample_index_dir, own)
    index = engine.AddressIndex.open(own)
    try:
        flags = maps_of(own)
        assert sorted(flags) == [f.name for f in array_files(own)]  # one map per array that holds anything
        if THP.exists():  # a kernel with transparent huge pages: each map says so ("hg")
            assert {name for name, f in flags.items() if "hg" not in f.split()} == set()
        else:  # without: the madvise fails, the index is opened anyway in 4 KiB pages
            assert all("hg" not in f.split() for f in flags.values())
        assert b"Hooistraat 2" in index.suggest_json("hooistraat 2", limit=1)
    finally:
        index.close()
    assert maps_of(own) == {}  # close() unmaps them all


def test_a_new_index_is_on_disk_and_out_of_the_page_cache(sample_source, tmp_path):
    """Regression: the build left what it wrote in the page cache in small pages, so that every
    process mapped the new index in 4 KiB pages until the cache let go of it."""
    out = tmp_path / "idx"
    assert main(["build", str(sample_source), str(out), "--no-progress"]) == 0
    files = sorted(out.iterdir())
    assert len(files) > 20
    if droppable(out):
        assert {f.name: resident_pages(f) for f in files} == {f.name: 0 for f in files}
    index = engine.AddressIndex.open(out)  # and it opens and answers from disk
    assert b"Hooistraat 2" in index.suggest_json("hooistraat 2", limit=1)
    index.close()


def test_release_page_cache_keeps_every_byte(sample_index_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sample_index_dir, copy)  # written: in the page cache
    before = {f.name: f.read_bytes() for f in copy.iterdir()}
    assert sum(resident_pages(f) for f in copy.iterdir()) > 0
    engine.release_page_cache(copy)
    if droppable(copy):
        assert sum(resident_pages(f) for f in copy.iterdir()) == 0
    assert {f.name: f.read_bytes() for f in copy.iterdir()} == before


def test_warm_reads_the_whole_index_into_memory(sample_index_dir, tmp_path):
    """A process that serves reads the index in before it serves (the service does in each
    worker): on a cold page cache the first queries would wait for the disk."""
    copy = tmp_path / "cold"
    shutil.copytree(sample_index_dir, copy)
    engine.release_page_cache(copy)
    arrays = array_files(copy)
    # (opening it verified reads every file: engine.checksums; without, only warm() reads it)
    index = engine.AddressIndex.open(copy, verify=False)
    try:
        if droppable(copy):
            assert sum(resident_pages(f) for f in arrays) < sum(pages(f) for f in arrays)
        index.warm()
        assert {f.name: resident_pages(f) for f in arrays} == {f.name: pages(f) for f in arrays}
        assert b"Hooistraat 2" in index.suggest_json("hooistraat 2", limit=1)
    finally:
        index.close()
    with pytest.raises(engine.IndexClosedError):
        index.warm()
