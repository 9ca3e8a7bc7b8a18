"""Reading input files, plain, gzip or zstd, with the checks every reader of them shares.

The one home of these rules for the build's sources (`engine.ingest`), the municipality
reference it reads, and ``engine match``'s input (`engine.match`): the name must say what the
file holds (`compression_of`), and a truncated or corrupt compressed file is an error where the
damage is found, after every byte before it was given (`decompressed`, `open_decompressed`),
never a quiet end.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, cast

import zstandard
from tqdm import tqdm

__all__ = ["CHUNK_SIZE", "DECOMPRESS_ERRORS", "CountingReader", "SourceError", "compression_of",
           "decompressed", "open_decompressed"]

#: Decompressed bytes handed to the parser per call.
CHUNK_SIZE = 4 << 20

#: Compressed bytes read at a time from a .zst file (about 600 KB decompressed). Small, so that
#: the blocks before a damaged one are given before the error (the decompressor gives nothing of
#: a piece it fails in); it is also a little faster than 256 KB (0.93 against 1.36 s for the
#: whole-country CSV, 1.1 GB: the output stays in the cache).
_ZSTD_READ_SIZE = 32 << 10
#: Decompressed bytes a stream of `open_decompressed` hands on at a time.
_PIECE_SIZE = 1 << 20

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"

class SourceError(ValueError):
    """The source file is missing, unreadable, or has too many bad rows."""

class CountingReader:
    """A read-only file wrapper that hashes and counts the bytes read through it."""

    def __init__(self, raw: BinaryIO, progress: tqdm) -> None:
        self._raw = raw
        self._progress = progress
        self.sha256 = hashlib.sha256()
        self.bytes_read = 0

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.sha256.update(data)
        self.bytes_read += len(data)
        self._progress.update(len(data))
        return data

    def drain(self) -> None:
        """Read (and hash) whatever the decompressor left unread."""
        while self.read(1 << 20):
            pass


#: What reading a truncated or corrupt .gz or .zst file raises (`decompressed`): the one list of
#: them, for every reader of compressed input (the build's, the municipality reference's,
#: ``engine match``'s)
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (zstandard.ZstdError, gzip.BadGzipFile, EOFError, zlib.error)


def decompressed(reader: BinaryIO, kind: str, chunk_size: int = CHUNK_SIZE) -> Iterator[memoryview]:
    """The decompressed bytes of `reader`, in pieces of at most `chunk_size` bytes.

    `kind` is 'plain', 'gzip' or 'zstd' (`compression_of`). A truncated or corrupt gzip or
    zstd stream raises one of DECOMPRESS_ERRORS once the pieces before the damage are given,
    instead of ending quietly.
    """
    if kind == "zstd":
        yield from _zstd_chunks(reader, chunk_size)
    elif kind == "gzip":
        yield from _gzip_chunks(reader, chunk_size)
    else:
        while data := reader.read(chunk_size):
            yield memoryview(data)


def _gzip_chunks(reader: BinaryIO, chunk_size: int) -> Iterator[memoryview]:
    # GzipFile.read(n) drops what it decompressed of n when the stream breaks off, so gather a
    # piece from read1 (what one step of the decompressor gives) and hand it on before raising
    stream = gzip.GzipFile(fileobj=reader, mode="rb")
    while True:
        parts: list[bytes] = []
        size = 0
        try:
            while size < chunk_size and (data := stream.read1(chunk_size - size)):
                parts.append(data)
                size += len(data)
        except DECOMPRESS_ERRORS:
            if parts:
                yield memoryview(b"".join(parts))
            raise
        if not parts:
            return
        yield memoryview(parts[0] if len(parts) == 1 else b"".join(parts))


def _zstd_chunks(reader: BinaryIO, chunk_size: int) -> Iterator[memoryview]:
    # zstandard's stream_reader ends quietly on a truncated frame, so drive a
    # decompressobj per frame ourselves and check that the last one finished.
    dctx = zstandard.ZstdDecompressor()
    dobj, fed = dctx.decompressobj(), False
    while compressed := reader.read(_ZSTD_READ_SIZE):
        while compressed:
            out = memoryview(dobj.decompress(compressed))
            fed = True
            for start in range(0, len(out), chunk_size):
                yield out[start:start + chunk_size]
            # A frame ended inside this piece: the rest starts the next frame.
            compressed = dobj.unused_data if dobj.eof else b""
            if dobj.eof:
                dobj, fed = dctx.decompressobj(), False
    if fed and not dobj.eof:
        raise EOFError("compressed file ended before the end of the zstd frame")


def compression_of(path: Path, head: bytes) -> str:
    """'plain', 'gzip' or 'zstd': the decompressor the file name asks for, checked against the
    file's first bytes `head` (SourceError when they disagree)."""
    suffix = path.suffix.lower()
    if suffix in (".zst", ".zstd"):
        if not head.startswith(_ZSTD_MAGIC) and head:
            raise SourceError(f"{path}: named {path.suffix} but is not zstd-compressed")
        return "zstd"
    if suffix == ".gz":
        if not head.startswith(_GZIP_MAGIC) and head:
            raise SourceError(f"{path}: named .gz but is not gzip-compressed")
        return "gzip"
    if head.startswith(_ZSTD_MAGIC) or head.startswith(_GZIP_MAGIC):
        raise SourceError(f"{path}: looks compressed; name it .csv.zst or .csv.gz")
    return "plain"


class _Pieces(io.RawIOBase):
    """A read-only stream over the pieces `decompressed` gives (`open_decompressed`)."""

    def __init__(self, raw: BinaryIO, pieces: Iterator[memoryview]) -> None:
        self._raw = raw
        self._pieces = pieces
        self._piece = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # noqa: ANN001 (a writable buffer)
        while not self._piece:
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._piece = piece
        n = min(len(b), len(self._piece))
        b[:n] = self._piece[:n]
        self._piece = self._piece[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def open_decompressed(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a plain, .gz or .zst file for reading its decompressed bytes, with the build's
    checks: the name must agree with the content (`compression_of`, SourceError), and a
    truncated or corrupt compressed file raises one of DECOMPRESS_ERRORS where the damage
    is found, after every byte before it was read."""
    path = Path(path)
    raw = open(path, "rb")
    try:
        kind = compression_of(path, raw.read(4))
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    return cast(BinaryIO, io.BufferedReader(_Pieces(raw, decompressed(raw, kind, _PIECE_SIZE)), _PIECE_SIZE))


def sha256_of(path: Path) -> tuple[str, int]:
    """sha256 and size of a file, or of every file of a directory in name order."""
    h, n = hashlib.sha256(), 0
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for p in files:
        if path.is_dir():
            h.update(p.relative_to(path).as_posix().encode() + b"\0")
        with open(p, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
                n += len(block)
    return h.hexdigest(), n
