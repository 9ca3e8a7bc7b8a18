"""Address autocomplete for the Netherlands: the public Python API of the engine.

    >>> import engine
    >>> index = engine.AddressIndex.open("indexes/nl")
    >>> index.suggest_json("damrak 1 amsterdam", limit=5)   # the HTTP response body, as bytes
    >>> index.suggest("1012lg 1")                            # the same, as Python objects

An index is a directory written by ``python -m engine build SOURCE OUT_DIR``; opening it
memory-maps its arrays (no copy), so every process that opens the same index shares its pages.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as _metadata
import json
import math
import mmap
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from ._core import (
    AREA_PARAMETERS,
    ARRAYS,
    COORDINATE_BOUNDS,
    SIZES,
    Index,
    IndexClosedError,
    QueryError,
    _search_scored,
    read_house_number,
    read_plain_lookup,
    read_plain_query,
    read_plain_reverse,
)
from .checksums import ChecksumError, verify_files
from .explain import WordMatch
from .explain import explain as _explain
from .hits import Hit, make_hits
from .match import Match, match_texts
from .params import FORMAT_VERSION

_Names = str | list[str] | None            # area names: one str (commas between several) or a list
_Box = str | tuple[float, float, float, float] | None   # minlon, minlat, maxlon, maxlat

__all__ = ["AddressIndex", "IndexOpenError", "IndexClosedError", "QueryError", "FORMAT_VERSION", "__version__",
           "Hit", "Match", "MAX_QUERY_LENGTH", "MAX_LIMIT", "DEFAULT_LIMIT", "MAX_HOUSE_NUMBER",
           "MAX_ADDITION_LENGTH", "read_plain_query", "release_page_cache",
           "register_date", "AREA_PARAMETERS", "COORDINATE_BOUNDS", "read_house_number", "read_plain_lookup",
           "read_plain_reverse"]

# what a query may be (QueryError beyond): q of at most MAX_QUERY_LENGTH code points, limit from
# 1 to MAX_LIMIT (DEFAULT_LIMIT when none is given), a house number from 1 to MAX_HOUSE_NUMBER
# and an addition of 1 to MAX_ADDITION_LENGTH letters and digits (the register's rules); the
# service states the same limits by reading these
MAX_QUERY_LENGTH: int = SIZES["MAX_Q"]
MAX_LIMIT: int = SIZES["MAXLIMIT"]
DEFAULT_LIMIT: int = SIZES["DEFAULT_LIMIT"]
MAX_HOUSE_NUMBER: int = SIZES["NUMBER_MAX"]
MAX_ADDITION_LENGTH: int = SIZES["ADDITION_MAX"]

try:  # NOTE: one source, pyproject.toml's version, read from the installed package's metadata
    __version__ = _metadata.version("nl-address-autocomplete")
except _metadata.PackageNotFoundError:  # the source tree on sys.path without an install
    __version__ = "0+unknown"


def register_date(manifest: dict) -> _dt.date | None:
    """The date of the register an index holds, from its manifest: the LVBAG extract's
    (`StandTechnischeDatum`) or the last mutation delivery's applied to it (`python -m engine
    update`), a GeoPackage's; None for an index built from a CSV, which names none."""
    text = manifest.get("register_date") or manifest.get("extract_date")   # extract_date: before updates
    try:
        return _dt.date.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


class IndexOpenError(Exception):
    """The index directory is missing, truncated, of another format version, or inconsistent."""


# PERF: a query reads the arrays at random over hundreds of MB, and mapped in 4 KiB pages nearly
# every cold read also misses the TLB. A map advised MADV_HUGEPAGE (Linux, transparent huge pages
# "madvise" or "always") is mapped in 2 MiB pages wherever the page cache holds the file in 2 MiB
# folios, which is how the kernel reads a file that is not cached into such a map: the build and
# `python -m server switch-index` drop a new index from the cache (`release_page_cache`) for that.
# Whole-country index, least of 6 per query, 4 KiB -> 2 MiB pages: garbage p99 137.0 -> 126.8 µs,
# clean p99 22.4 -> 21.4 µs (benchmarks/ab_kinds.py, limit 10; docs/operations.md). Answers are the same.
_HUGEPAGE: int | None = getattr(mmap, "MADV_HUGEPAGE", None)
# MADV_POPULATE_READ (Linux 5.14+; the mmap module has no name for it): fault a whole map in
_POPULATE_READ: int | None = 22 if sys.platform.startswith("linux") else None


def release_page_cache(directory: str | os.PathLike) -> None:
    """Write every file of the index in `directory` to disk and drop it from the page cache,
    so that the next process to map it reads it in 2 MiB pages (see `_HUGEPAGE`).

    Only a hint to the kernel: pages that a running process maps stay where they are, and
    nothing is lost (the data is on disk first). Without ``posix_fadvise`` (not Linux) it only
    writes the files to disk."""
    for entry in os.scandir(directory):
        if not entry.is_file():
            continue
        fd = os.open(entry.path, os.O_RDONLY)
        try:
            os.fsync(fd)
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _map_npy(file: Path, dtype: np.dtype, shape: list[int]) -> tuple[np.ndarray, mmap.mmap | None]:
    """Memory-map one `.npy` file of the index read-only, as the manifest describes it; return
    the array and its map (None for an empty array, which maps nothing).

    PERF: `np.load(mmap_mode="r")` parses each header with `ast` and builds a `np.memmap`
    (about 0.3 ms a file); this checks the header bytes and the file size instead and maps the
    data with one `mmap`, so opening the index costs a few ms."""
    with open(file, "rb") as f:
        head = f.read(12)
        if len(head) < 10 or head[:6] != b"\x93NUMPY":
            raise ValueError("not a .npy file")
        if head[6] == 1:
            start = 10 + int.from_bytes(head[8:10], "little")
        elif head[6] in (2, 3) and len(head) == 12:
            start = 12 + int.from_bytes(head[8:12], "little")
        else:
            raise ValueError(f"unknown .npy version {head[6]}")
        f.seek(0)
        header = f.read(start).decode("latin-1")
        if f"'descr': '{dtype.str}'" not in header or "'fortran_order': False" not in header \
                or f"'shape': {tuple(shape)!r}" not in header:
            raise ValueError(f"its header does not say {dtype.str} {tuple(shape)}: {header[10:].strip()}")
        count = math.prod(shape)
        size = os.fstat(f.fileno()).st_size
        if size != start + count * dtype.itemsize:
            raise ValueError(f"it holds {size} bytes, not {start + count * dtype.itemsize}")
        if count == 0:
            return np.zeros(shape, dtype=dtype), None
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if _HUGEPAGE is not None:
            try:
                mm.madvise(_HUGEPAGE)
            except OSError:  # a kernel without transparent huge pages: 4 KiB pages, as before
                pass
    return np.frombuffer(mm, dtype=dtype, count=count, offset=start).reshape(shape), mm


def _close_maps(maps: list[mmap.mmap]) -> None:
    """Unmap and close each map that no array uses any more."""
    for mm in maps:
        try:
            mm.close()
        except BufferError:  # an array taken from `arrays` still uses it: freed with that array
            pass


class AddressIndex(Index):
    """A memory-mapped address index; open one with :meth:`open`.

    Every search (`suggest`, `suggest_json`, `search_ids`) takes the same arguments, each
    with one rule. A wrong type raises `TypeError`; a wrong value raises `QueryError` (a
    `ValueError` whose `code` and `parameter` name it as the HTTP contract does).

    Parameters
    ----------
    q : str
        The typed text (a `str` subclass too), at most 128 code points, else `QueryError`
        with code ``query_too_long``. Blank text has no hits.
    limit : int, keyword-only
        An integer (`numbers.Integral`: `int`, numpy integers; not `bool`, not a float such
        as 5.0) from 1 to 10; default 5. Never rounded or truncated.
    lat, lon : real number or None, keyword-only
        A focus point: both or neither (the absent one is named in the `QueryError`). Each a
        real number (`numbers.Real`: `int`, `float`, numpy floating or integer, `Fraction`;
        or `Decimal`; not `bool`, not `str`) with -90 <= lat <= 90 and -180 <= lon <= 180;
        NaN and infinities are out of range.

    Notes
    -----
    An open index holds one memory map (and one file descriptor) per array. `close()`, or
    leaving a ``with`` block, releases them; searches running in other threads finish
    first, and any later use raises `IndexClosedError`. An array taken from `arrays` keeps
    its own file mapped until it is dropped. ``AddressIndex(path)`` is a `TypeError`: the
    constructor takes the arrays; `open` takes the directory.
    """

    path: str
    manifest: dict

    @classmethod
    def open(cls, path: str | os.PathLike, *, verify: bool = True) -> AddressIndex:
        """Memory-map the index in directory `path`; raise IndexOpenError if it is unusable.

        `verify` (the default): first check every file against the checksum the build
        recorded in the manifest (`engine.checksums`), and refuse a damaged index, naming the
        file: a search over damaged arrays may crash the process. It reads the whole index
        (the whole country, 433 MiB: 0.05-0.07 s from the page cache), once per process and
        version of each file: opening the same files again costs a `stat` each. With
        ``verify=False`` only the sizes and headers are checked (a few ms), for a caller that
        checked the files itself."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        path = Path(os.path.abspath(path))
        manifest_path = path / "manifest.json"
        try:
            manifest = json.loads(manifest_path.read_text())
        except FileNotFoundError:
            raise IndexOpenError(f"no index at {path}: {manifest_path} is missing") from None
        except (OSError, ValueError) as e:
            raise IndexOpenError(f"unreadable index manifest {manifest_path}: {e}") from None
        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if version != FORMAT_VERSION:
            raise IndexOpenError(
                f"index {path} has format version {version!r}; this engine reads version "
                f"{FORMAT_VERSION}: rebuild it with `python -m engine build`")
        if verify:
            try:
                verify_files(path, manifest.get("files"), [f"{name}.npy" for name in ARRAYS], advice=_HUGEPAGE)
            except FileNotFoundError as e:
                raise IndexOpenError(f"index {path} is incomplete: {Path(e.filename or '?').name} is missing") from None
            except ChecksumError as e:
                raise IndexOpenError(f"index {path} is damaged: {e}; copy it again, or rebuild it with "
                                     f"`python -m engine build`") from None
            except OSError as e:
                raise IndexOpenError(f"index {path} is unreadable: {e}") from None
        arrays: dict[str, np.ndarray] = {}
        maps: list[mmap.mmap] = []
        try:
            for name, dtype in ARRAYS.items():
                spec = manifest.get("arrays", {}).get(name)
                file = path / f"{name}.npy"
                if not isinstance(spec, dict) or spec.get("dtype") != np.dtype(dtype).name \
                        or not isinstance(spec.get("shape"), list):
                    raise IndexOpenError(f"index {path} is damaged: the manifest says {name} is {spec}")
                try:
                    arrays[name], mm = _map_npy(file, np.dtype(dtype), spec["shape"])
                except FileNotFoundError:
                    raise IndexOpenError(f"index {path} is incomplete: {file.name} is missing") from None
                except (OSError, ValueError) as e:
                    raise IndexOpenError(f"index {path} is damaged: {file.name}: {e}") from None
                if mm is not None:
                    maps.append(mm)
            try:
                index = cls(arrays)
            except ValueError as e:
                raise IndexOpenError(f"index {path} is inconsistent: {e}") from None
        except BaseException:
            arrays.clear()  # the arrays go first, then their files close
            _close_maps(maps)
            raise
        index.path = str(path)
        index.manifest = manifest
        index._maps = maps
        return index

    @property
    def register_date(self) -> _dt.date | None:
        """The date of the register this index holds (see :func:`register_date`): how current
        its addresses are. None for an index built from a CSV."""
        return register_date(self.manifest)

    def suggest(self, q: str, *, limit: int = DEFAULT_LIMIT, lat: float | None = None,
                lon: float | None = None, municipality: _Names = None, locality: _Names = None,
                province: _Names = None, postcode: _Names = None, bbox: _Box = None) -> list[Hit]:
        """Return the hits for `q`, best first, as typed `Hit` objects (`engine.hits`).

        The same addresses in the same order as `suggest_json`, whose bytes (the HTTP response
        body) stay the fast path; `Hit.to_json` gives one hit's object of that body. The area
        arguments keep the answers inside an area, inside the search (`Index.area`)."""
        area = self.area(municipality=municipality, locality=locality, province=province,
                         postcode=postcode, bbox=bbox)
        scored, found = _search_scored(self, q, limit, lat, lon, area)
        return make_hits(self, q, scored, found)

    def search_scored(self, q: str, *, limit: int = DEFAULT_LIMIT, lat: float | None = None,
                      lon: float | None = None) -> list[tuple[int, float]]:
        """Return (address id, score) of each hit for `q`, best first: `search_ids` with the
        ranking score of each (`Hit.score`)."""
        return _search_scored(self, q, limit, lat, lon)[0]

    def lookup(self, postcode: str, number: int, *, letter: str | None = None,
               addition: str | None = None) -> list[Hit]:
        """Return every address with this postcode and house number, in the register's order
        (no letter first, then the letters, each without an addition first, then its
        additions), narrowed by `letter` and `addition` when given (any case); [] when none.

        `postcode` as people type it (``"1012LG"``, ``"1012 lg"``); `number` an integer from 1
        to MAX_HOUSE_NUMBER. No fuzziness: a malformed postcode, number, letter or addition is a
        `QueryError` naming the parameter. Each hit has score 0 and found ``"lookup"``."""
        query = f"{postcode} {number}"
        return make_hits(self, query, [(a, 0.0) for a in self.lookup_ids(
            postcode, number, letter=letter, addition=addition)], "lookup")

    def reverse(self, lat: float, lon: float, *, limit: int = DEFAULT_LIMIT, radius: float | None = None,
                municipality: _Names = None, locality: _Names = None, province: _Names = None,
                postcode: _Names = None, bbox: _Box = None) -> list[Hit]:
        """Return the `limit` addresses nearest to the point (WGS84 degrees), nearest first
        (the addresses of one point in the register's order), within `radius` metres when
        given, inside the area the area arguments name (`Index.area`); each hit's `distance`
        is its distance in metres (to a tenth; on the flat earth of a small country).

        A point farther than about 5 km outside the box of the index's addresses has none.
        Searched in the compiled spatial index (a k-d tree, engine/_near.pxi), GIL released.
        Each hit has score 0 and found ``"reverse"``."""
        area = self.area(municipality=municipality, locality=locality, province=province,
                         postcode=postcode, bbox=bbox)
        found = self.reverse_ids(lat, lon, limit=limit, radius=radius, area=area)
        query = f"{lat},{lon}"
        return [h._with_distance(d) for h, (_, d) in zip(make_hits(self, query, [(a, 0.0) for a, _ in found],
                                                                    "reverse"), found, strict=True)]

    def hit(self, address_id: int, *, q: str = "", score: float = 0.0, found: str = "typed") -> Hit:
        """Return address row `address_id` of this index as a `Hit` (IndexError when out of
        range)."""
        return make_hits(self, q, [(address_id, score)], found)[0]

    def explain(self, hit: Hit) -> tuple[WordMatch, ...]:
        """Return how each typed word of `hit.query` matched `hit`:
        `engine.explain.explain(index, hit.query, hit)`."""
        return _explain(self, hit.query, hit)

    def match(self, texts: Iterable[object], *, threads: int | None = None,
              chunk_size: int = 1024) -> Iterator[Match]:
        """Yield the best match of each text, in order: a `Match` (`engine.match`).

        The searches run without the GIL on `threads` threads (default: one per core); the
        texts are read lazily, a few chunks ahead, so a generator of any length works."""
        return match_texts(self, texts, threads=threads, chunk_size=chunk_size)

    def warm(self) -> None:
        """Read the whole index into memory now, and map all of it into this process: no later
        query waits for the disk or takes a page fault.

        A process that serves should call it before it serves (the service does, in each
        worker, before it takes a request): on an index not in the page cache yet (just
        built, switched to, or after a reboot) the first queries read their pages from disk,
        tens of times slower, and a key is charged for that time. It reads what is not cached
        yet (the whole-country index: 433 MiB) and otherwise only maps; with MADV_POPULATE_READ
        (Linux 5.14+) in one call per array, else by reading one byte of every page."""
        if self.closed:
            raise IndexClosedError(f"this {type(self).__name__} is closed")
        for mm in getattr(self, "_maps", ()):
            if _POPULATE_READ is not None:
                try:
                    mm.madvise(_POPULATE_READ)
                    continue
                except OSError:  # an older kernel: page by page
                    pass
            view = np.frombuffer(mm, dtype=np.uint8)
            int(view[::mmap.PAGESIZE].sum())
            del view

    def _release(self) -> None:
        super()._release()
        maps, self._maps = self._maps, []
        _close_maps(maps)

    def __reduce__(self):
        # NOTE: pickling re-opens the same directory (an absolute path), so a forked or spawned
        # worker maps the same files (shared pages) instead of copying arrays through a pipe.
        if self.closed:
            raise IndexClosedError(f"this {type(self).__name__} is closed")
        return (type(self).open, (self.path,))

    def __repr__(self) -> str:
        if self.closed:
            return f"AddressIndex({self.path!r}, closed)"
        return f"AddressIndex({self.path!r}, {len(self):,} addresses)"
