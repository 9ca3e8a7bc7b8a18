"""``python -m engine build`` and ``query``: what the command line does to the user's files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import REPO

import engine
from engine.__main__ import main

HEADER = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon\n"


@pytest.fixture
def mini(tmp_path) -> Path:
    """A small source file: Damrak 1..50 in Amsterdam."""
    src = tmp_path / "mini.csv"
    row = "Damrak;{n};;;1012LG;Amsterdam;Amsterdam;Noord-Holland;52.376053;4.895985\n"
    src.write_text(HEADER + "".join(row.format(n=n) for n in range(1, 51)))
    return src


def build(*args: str | Path) -> int:
    return main(["build", *map(str, args), "--no-progress"])


def test_build_refuses_a_directory_that_holds_other_files(mini, tmp_path):
    """Regression: `python -m engine build SOURCE DIR` deleted whatever DIR held and exited 0."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "myfile").write_text("hi\n")
    result = subprocess.run([sys.executable, "-m", "engine", "build", str(mini), str(d), "--no-progress"],
                            capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 1
    assert f"refusing to replace {d}" in result.stderr and "myfile" in result.stderr
    assert "--force" in result.stderr
    assert (d / "myfile").read_text() == "hi\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "mini.csv"]  # no temporary left


def test_build_replaces_an_index_or_an_empty_directory(mini, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(mini, empty) == 0
    assert build(mini, tmp_path / "new" / "idx") == 0  # missing, parents too
    more = tmp_path / "more.csv"
    more.write_text(mini.read_text() + "Damrak;51;;;1012LG;Amsterdam;Amsterdam;Noord-Holland;52.37;4.89\n")
    assert build(more, empty) == 0  # an index is replaced
    index = engine.AddressIndex.open(empty)
    assert index.suggest("damrak 51", limit=1)[0].lines[0] == "Damrak 51"
    assert "refusing" not in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["extra file", "subdirectory", "not an index", "bad manifest", "file"])
def test_build_refuses_anything_else_and_force_replaces_it(mini, tmp_path, capsys, kind):
    target = tmp_path / "target"
    if kind == "file":
        target.write_text("my notes\n")
    else:
        if kind in ("extra file", "subdirectory"):
            assert build(mini, target) == 0
        else:
            target.mkdir()
        if kind == "extra file":
            (target / "notes.txt").write_text("mine\n")
        elif kind == "subdirectory":
            (target / "photos").mkdir()
        elif kind == "not an index":
            (target / "a.npy").write_bytes(b"")
        else:
            (target / "manifest.json").write_text('{"not": "an index"}')
    before = sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_text()
    assert build(mini, target) == 1
    err = capsys.readouterr().err
    assert f"refusing to replace {target}" in err and "--force" in err
    assert (sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_text()) == before
    assert build(mini, target, "--force") == 0
    assert engine.AddressIndex.open(target).suggest("damrak 1", limit=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mini.csv", "target"]


def test_build_refuses_a_link_and_force_replaces_only_the_link(mini, tmp_path, capsys):
    real = tmp_path / "real"
    assert build(mini, real) == 0
    link = tmp_path / "current"
    link.symlink_to(real)
    assert build(mini, link) == 1
    assert "symbolic link" in capsys.readouterr().err
    assert build(mini, link, "--force") == 0
    assert link.is_dir() and not link.is_symlink()
    assert engine.AddressIndex.open(real).suggest("damrak 1", limit=1)  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current", "mini.csv", "real"]


def test_a_csv_build_says_it_does_not_read_the_municipality_reference(mini, tmp_path, capsys):
    """A CSV names its own municipalities: --municipalities is not read (even a missing file),
    and the build says so rather than ignoring it in silence."""
    assert build(mini, tmp_path / "idx", "--municipalities", tmp_path / "gemeenten.csv") == 0
    assert f"mini.csv names its municipalities: --municipalities {tmp_path / 'gemeenten.csv'} is not read" \
        in capsys.readouterr().err
