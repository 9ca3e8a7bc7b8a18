"""Checksums of the files of an index: recorded by the build, verified when an index is opened.

The build writes, in ``manifest.json``, the size and the digest of every file it writes::

    "files": {"a_group.npy": {"bytes": 36518952, "xxh3_128": "5f0c..."}, ...}

and `engine.AddressIndex.open` (so ``python -m server switch-index`` and every reload of the
service) refuses an index whose files do not match it, naming the file. A damaged array is
not an error the search can meet gracefully: a wrong offset or id read from it is a read out
of bounds, a crash of the process (issue 37: damage written into one file of a copy of the
index, then switched to, crashed the workers in a loop).

PERF: the digest is XXH3-128 (the `xxhash` package), not a cryptographic hash: it guards
against damage (a disk, a copy cut short, a write into a file), not against someone who can
write the index (who can write its manifest too). Over the whole-country index (433 MiB, in
the page cache, one core of this machine): XXH3-128 0.05-0.07 s, BLAKE2b-128 (hashlib) 0.75-0.8
s; from a cold cache both wait for the disk, reading what a serving process reads anyway
(`AddressIndex.warm`).

A file is hashed once per process and version of it: what was verified is remembered by the
file's device, inode, size, modification and change times (`_VERIFIED`), so that opening the
same index again (a worker forked from the process that verified it, a test re-opening its
fixture) costs a `stat` per file, and a file written into since (which changes its times,
even when its size stays) is hashed again.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import xxhash

__all__ = ["ALGORITHM", "ChecksumError", "file_digest", "file_checksums", "verify_files"]

#: the digest recorded for each file (the key beside "bytes" in the manifest's "files")
ALGORITHM = "xxh3_128"

# (device, inode, size, mtime_ns, ctime_ns) of a file -> the digest it was found to have
_VERIFIED: dict[tuple[int, int, int, int, int], str] = {}


class ChecksumError(ValueError):
    """A file of an index does not match the checksum the build recorded (or none was)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"{name}: {why}")
        self.name = name


def file_digest(path: str | os.PathLike[str], advice: int | None = None) -> str:
    """Return the XXH3-128 digest of the file at `path`, as hex.

    The file is read through a map of its own, advised `advice` first (an index is hashed
    with the advice it is mapped with, ``MADV_HUGEPAGE``, so that the pages it reads into the
    cache are the big ones the search then maps) and unmapped after."""
    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return h.hexdigest()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if advice is not None:
                try:
                    mm.madvise(advice)
                except OSError:
                    pass
            h.update(mm)
    return h.hexdigest()


def file_checksums(directory: str | os.PathLike[str], names: Iterable[str]) -> dict[str, dict[str, object]]:
    """The manifest's ``files``: the size and digest of each named file of `directory`."""
    out: dict[str, dict[str, object]] = {}
    for name in sorted(names):
        path = Path(directory, name)
        out[name] = {"bytes": path.stat().st_size, ALGORITHM: file_digest(path)}
    return out


def _key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def verify_files(directory: str | os.PathLike[str], files: object, names: Iterable[str], *,
                 advice: int | None = None) -> None:
    """Check that each named file of `directory` has the size and digest `files` (the
    manifest's ``files``) records for it; raise ChecksumError naming the first that does not.

    A file verified before in this process, and not changed since, is not read again."""
    if not isinstance(files, Mapping):
        raise ChecksumError("manifest.json", "it records no checksums of the files (\"files\")")
    for name in names:
        spec = files.get(name)
        if not isinstance(spec, Mapping) or not isinstance(spec.get("bytes"), int) \
                or not isinstance(spec.get(ALGORITHM), str):
            raise ChecksumError(name, f"the manifest records no {ALGORITHM} checksum of it")
        path = Path(directory, name)
        st = os.stat(path)
        if st.st_size != spec["bytes"]:
            raise ChecksumError(name, f"it holds {st.st_size:,} bytes, the build wrote {spec['bytes']:,}")
        key = _key(st)
        if _VERIFIED.get(key) == spec[ALGORITHM]:
            continue
        digest = file_digest(path, advice)
        if digest != spec[ALGORITHM]:
            raise ChecksumError(name, f"its content is not what the build wrote ({ALGORITHM} {digest}, "
                                      f"the manifest records {spec[ALGORITHM]})")
        # NOTE: the times read before the hash: a write while it ran changes them, and the
        # next open hashes the file again
        _VERIFIED[key] = digest
