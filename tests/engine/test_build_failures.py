"""A build that cannot succeed ends in one clear `build failed: ...` line, never a traceback,
and leaves the old index as it was (issue 11, defect 8)."""

from __future__ import annotations

import errno
import os
import shutil

import numpy as np
import zstandard

from engine.__main__ import main


def run_build(source, out, capsys) -> tuple[int, str]:
    status = main(["build", str(source), str(out), "--no-progress"])
    return status, capsys.readouterr().err


def test_a_source_with_a_header_and_no_rows(sample_source, tmp_path, capsys):
    with zstandard.open(sample_source, "rt", encoding="utf-8") as f:
        header = f.readline()
    for name, text in [("header.csv", header), ("header-no-newline.csv", header.rstrip("\n"))]:
        source = tmp_path / name
        source.write_text(text)
        status, err = run_build(source, tmp_path / "out", capsys)
        assert status == 1
        assert err.strip().splitlines()[-1].startswith("build failed: ")
        assert "no address rows" in err
        assert "Traceback" not in err
        assert not (tmp_path / "out").exists()


def test_a_full_disk_during_the_build(sample_source, sample_index_dir, tmp_path, capsys, monkeypatch):
    out = tmp_path / "nl"
    shutil.copytree(sample_index_dir, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    saved = []
    real_save = np.save

    def save_until_full(file, arr, **kw):
        if len(saved) == 5:  # the disk fills up while the arrays are written
            with open(file, "wb") as f:
                f.write(b"\x93NUMPY partial")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        saved.append(file)
        return real_save(file, arr, **kw)

    monkeypatch.setattr(np, "save", save_until_full)
    status, err = run_build(sample_source, out, capsys)
    assert status == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("build failed: cannot write the index")
    assert "No space left on device" in last
    assert "Traceback" not in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the old index, intact
    assert [p.name for p in tmp_path.iterdir()] == ["nl"]  # no half-written directory left
