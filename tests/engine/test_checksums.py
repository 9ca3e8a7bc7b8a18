"""The checksums of an index's files: the build records them, `AddressIndex.open` checks them
(issue 37, item 3: damage written into one file of a copy of the index crashed the processes
that searched it)."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

import engine
from engine._core import ARRAYS
from engine.checksums import ALGORITHM, file_digest


def damage(file: Path, seed: int = 0) -> None:
    """Write 50 x 64 random bytes into `file` past its header, its size unchanged (what the
    issue did to a copy of the index)."""
    size = file.stat().st_size
    file.chmod(0o644)  # the build leaves the files read-only
    rng = random.Random(seed)
    with open(file, "r+b") as f:
        for _ in range(50):
            f.seek(rng.randrange(128, size - 64))
            f.write(rng.randbytes(64))
    assert file.stat().st_size == size


@pytest.fixture
def copy(sample_index_dir, tmp_path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(sample_index_dir, out)
    return out


def test_the_build_records_every_file(sample_index_dir):
    files = json.loads((sample_index_dir / "manifest.json").read_text())["files"]
    assert set(files) == {f"{name}.npy" for name in ARRAYS}
    for name, spec in files.items():
        assert spec == {"bytes": (sample_index_dir / name).stat().st_size,
                        ALGORITHM: file_digest(sample_index_dir / name)}


@pytest.mark.parametrize("victim", ["a_number.npy", "v_post.npy", "g_tokrec.npy", "del_slot.npy"])
def test_a_file_written_into_is_refused_naming_it(copy, victim):
    """Regression (issue 37, item 3): the index opened, and searching it crashed the process."""
    damage(copy / victim)
    with pytest.raises(engine.IndexOpenError, match=f"index {copy} is damaged: {victim}: its content is not "
                                                    f"what the build wrote") as e:
        engine.AddressIndex.open(copy)
    assert "rebuild" in str(e.value)
    # without the check it opens (the sizes and headers are right): the caller's choice
    engine.AddressIndex.open(copy, verify=False).close()


def test_a_file_damaged_after_it_was_verified_is_hashed_again(copy):
    """A file verified once in a process is not read again while it is unchanged; written into
    since (its times change, not its size), it is."""
    engine.AddressIndex.open(copy).close()
    engine.AddressIndex.open(copy).close()
    damage(copy / "pc_addr.npy", seed=1)
    with pytest.raises(engine.IndexOpenError, match="damaged: pc_addr.npy"):
        engine.AddressIndex.open(copy)


def test_a_file_of_another_size_is_refused_before_it_is_read(copy):
    victim = copy / "s_blob.npy"
    victim.chmod(0o644)
    with open(victim, "ab") as f:
        f.write(b"\0" * 10)
    with pytest.raises(engine.IndexOpenError, match=r"damaged: s_blob.npy: it holds [\d,]+ bytes, the build wrote"):
        engine.AddressIndex.open(copy)


def test_an_index_without_checksums_is_refused(copy):
    """An index of format 15 (before the checksums) is refused with the version's message
    ("rebuild it"); a manifest of this version without them is damaged."""
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").chmod(0o644)
    old = dict(manifest, format_version=15)
    del old["files"]
    (copy / "manifest.json").write_text(json.dumps(old))
    with pytest.raises(engine.IndexOpenError,
                       match=f"format version 15; this engine reads version {engine.FORMAT_VERSION}: rebuild it"):
        engine.AddressIndex.open(copy)
    del manifest["files"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(engine.IndexOpenError, match="damaged: manifest.json: it records no checksums"):
        engine.AddressIndex.open(copy)
    manifest["files"] = {}
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(engine.IndexOpenError, match="damaged: a_group.npy: the manifest records no xxh3_128"):
        engine.AddressIndex.open(copy)


def test_a_missing_file_is_named(copy):
    os.unlink(copy / "sa_addr.npy")
    with pytest.raises(engine.IndexOpenError, match="incomplete: sa_addr.npy is missing"):
        engine.AddressIndex.open(copy)
