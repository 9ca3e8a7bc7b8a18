"""Read an address CSV (plain, .zst or .gz) into column arrays, validating every row.

The byte work is done by the Cython parser in `engine._csv`; this module opens
the file, streams it through the decompressor in chunks of a few MB, hashes the
stored bytes on the way (no second pass), shows progress and enforces the
limit on the share of bad rows.

    table = read_source("nl-addresses.csv.zst")
    table.streets[table.street[0]], table.number[0], table.lat[0] / 1e6
"""

from __future__ import annotations

import logging
import os
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .. import _csv
from ..files import CHUNK_SIZE, DECOMPRESS_ERRORS, CountingReader, SourceError, compression_of, decompressed, sha256_of
from .gpkg import GpkgError, read_gpkg
from .lvbag import LvbagError, is_lvbag, parse_result, read_lvbag
from .register import Register

__all__ = ["ParsedTable", "SourceError", "read_source", "REQUIRED_COLUMNS"]

log = logging.getLogger(__name__)

REQUIRED_COLUMNS: tuple[str, ...] = _csv.REQUIRED_COLUMNS

#: How many bad rows a SourceError message lists.
_SHOWN_ERRORS = 5

@dataclass(eq=False, repr=False)
class ParsedTable:
    """The accepted rows of a source file as columns, in file order.

    Text columns hold int32 ids into the string lists (position = id).
    `letter` is the ASCII byte of the house letter as registered (0 = none);
    `addition` is an id into `additions` (0 = none, `additions[0] == ""`);
    `postcode` is int(digits) * 676 + (L1 - 'A') * 26 + (L2 - 'A');
    `lat`/`lon` are micro-degrees; `line` is the 1-based line in the file.
    """

    rows_in: int                     # data rows seen (accepted + rejected)
    rejected: int
    errors: list[tuple[int, str]]    # (line, reason), at most _csv.MAX_ERRORS
    street: np.ndarray               # int32 -> streets
    locality: np.ndarray             # int32 -> localities
    municipality: np.ndarray         # int32 -> municipalities
    province: np.ndarray             # int32 -> provinces
    number: np.ndarray               # int32
    letter: np.ndarray               # uint8
    addition: np.ndarray             # int32 -> additions
    postcode: np.ndarray             # int32
    lat: np.ndarray                  # int32 micro-degrees
    lon: np.ndarray                  # int32 micro-degrees
    line: np.ndarray                 # int32
    former_municipality: np.ndarray  # int32 -> former_municipalities (0: none)
    streets: list[str]
    localities: list[str]
    municipalities: list[str]
    provinces: list[str]
    additions: list[str]
    former_municipalities: list[str]  # the municipality the source had, when it has one
                                      # (`gemeente_bron`; "" first): a former one after a merger
    source_name: str
    source_sha256: str
    bytes_read: int                  # bytes of the file as stored (compressed)
    source_format: str = "csv"       # csv, lvbag-xml, gpkg
    extract_date: str | None = None  # the register's date (LVBAG: its delivery document)
    left_out: dict[str, int] = field(default_factory=dict)   # records not addresses now, by reason
    left_out_detail: dict = field(default_factory=dict)      # the same by object type, examples
    skipped: list[str] = field(default_factory=list)         # entries of the source not read
    register_date: str | None = None  # the register's date, when mutations were applied since the extract
    register: Register | None = None  # an LVBAG source: its state, written beside the index

    def __len__(self) -> int:
        """Number of accepted rows."""
        return len(self.number)

    def __repr__(self) -> str:
        return (
            f"ParsedTable({self.source_name!r}: {len(self)} rows accepted of "
            f"{self.rows_in}, {self.rejected} rejected; {len(self.streets)} streets, "
            f"{len(self.localities)} localities, {len(self.municipalities)} municipalities)"
        )


def read_source(
    path: str | os.PathLike[str],
    *,
    progress: bool = True,
    max_bad_share: float = 0.001,
    chunk_size: int = CHUNK_SIZE,
    jobs: int | None = None,
    municipalities: str | os.PathLike[str] | None = None,
) -> ParsedTable:
    """Parse and validate an address CSV file (`.csv`, `.csv.zst` or `.csv.gz`), or read the
    official BAG: an LVBAG XML extract (zip or directory) or a PDOK GeoPackage, recognised by
    their content (`engine.ingest.lvbag`, `engine.ingest.gpkg`; `jobs` worker processes parse the XML).
    The official formats name no municipality: `municipalities` is the reference that does (an
    address CSV or CBS's list, `engine.ingest.municipalities`; None: `$ADDRESS_DATA_DIR/nl-addresses.csv.zst`).

    Every data row is checked; bad rows are rejected, counted and listed in
    `errors` (line number, reason).  Raises SourceError when the file does not
    exist or cannot be decompressed, the header lacks a required column, or
    more than `max_bad_share` of the data rows are bad.  `chunk_size` is the
    number of decompressed bytes fed to the parser at a time.
    """
    path = Path(path)
    if path.is_dir() or (path.is_file() and _official_format(path)):
        return _read_official(path, progress=progress, max_bad_share=max_bad_share, jobs=jobs,
                              municipalities=municipalities)
    if not path.is_file():
        raise SourceError(f"source file not found: {path}")
    if chunk_size < 1:
        raise ValueError("chunk_size must be positive")

    size = path.stat().st_size
    parser = _csv.Parser()
    # In a terminal redraw often; in CI logs (not a TTY) print a line every 30 s.
    interactive = sys.stderr.isatty()
    with (
        open(path, "rb") as raw,
        tqdm(
            total=size,
            desc=f"reading {path.name}",
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            disable=not progress,
            mininterval=0.5 if interactive else 30.0,
            dynamic_ncols=interactive,
        ) as bar,
    ):
        kind = compression_of(path, raw.read(4))
        raw.seek(0)
        reader = CountingReader(raw, bar)
        try:
            for chunk in decompressed(reader, kind, chunk_size):
                parser.feed(chunk)
            reader.drain()
            result = parser.finish()
        except _csv.HeaderError as e:
            raise SourceError(f"{path}: {e}") from None
        except DECOMPRESS_ERRORS as e:
            raise SourceError(f"{path}: cannot decompress ({kind}): {e}") from e

    table = ParsedTable(
        **result,
        source_name=path.name,
        source_sha256=reader.sha256.hexdigest(),
        bytes_read=reader.bytes_read,
    )
    _check_share(table, max_bad_share)
    if table.rejected:
        log.info(
            "%s: rejected %d of %d rows; first: line %d: %s",
            path.name, table.rejected, table.rows_in, *table.errors[0],
        )
    return table


def _official_format(path: Path) -> str | None:
    """'lvbag' or 'gpkg' when the file is one of the official formats, else None."""
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"SQLite format 3\0"):
        return "gpkg"
    if head.startswith(b"PK\x03\x04"):
        if is_lvbag(path):
            return "lvbag"
        raise SourceError(f"{path}: a zip that holds no LVBAG extract (no NUM, VBO, ... files)")
    return None


def _read_official(path: Path, *, progress: bool, max_bad_share: float, jobs: int | None,
                   municipalities: str | os.PathLike[str] | None) -> ParsedTable:
    """An LVBAG extract or a PDOK GeoPackage, through the CSV parser's checks."""
    if path.is_dir() or _official_format(path) == "lvbag":
        try:
            res = read_lvbag(path, progress=progress, jobs=jobs, municipalities=municipalities)
        except (LvbagError, zipfile.BadZipFile, OSError) as e:
            raise SourceError(f"{path}: {e}") from e
        except Exception as e:   # lxml's XMLSyntaxError and friends: a broken file
            if type(e).__module__.startswith("lxml"):
                raise SourceError(f"{path}: broken XML: {e}") from e
            raise
        fmt = "lvbag-xml"
    else:
        try:
            res = read_gpkg(path, municipalities)
        except GpkgError as e:
            raise SourceError(f"{path}: {e}") from e
        fmt = "gpkg"
    sha, size = sha256_of(path)
    table = table_of(res, name=path.name, sha256=sha, size=size, source_format=fmt)
    if res.tables is not None:
        table.register = Register.from_result(res, name=path.name, sha256=sha)
    check_bad_share(table, res, max_bad_share, path.name)
    return table


def table_of(res, *, name: str, sha256: str, size: int, source_format: str) -> ParsedTable:
    """The rows of the addresses an official source was joined into (an `engine.ingest.lvbag.LvbagResult`),
    through the CSV parser's checks."""
    return ParsedTable(
        **parse_result(res), source_name=name, source_sha256=sha256, bytes_read=size,
        source_format=source_format, extract_date=res.extract_date, left_out=res.left_out,
        left_out_detail={"by_type": res.left_out_by_type, "examples": res.examples, "note": res.note},
        skipped=res.skipped)


def check_bad_share(table: ParsedTable, res, max_bad_share: float, name: str) -> None:
    """Raise SourceError when the dangling references and the rejected values of an official
    source are more than `max_bad_share` of its addresses."""
    # what the register holds but is no address now is counted, not bad; a reference to
    # nothing (dangling) and a value the checks reject are bad, and share the CSV's limit
    dangling = res.left_out.get("dangling_reference", 0)
    bad = dangling + table.rejected
    total = table.rows_in + dangling
    if total and bad / total > max_bad_share:
        shown = [f"  {e}" for e in res.examples.get("dangling_reference", [])]
        shown += [f"  {reason}" for _, reason in table.errors[:_SHOWN_ERRORS]]
        raise SourceError(
            f"{name}: {bad} of {total} addresses bad ({bad / total:.4%}: {dangling} dangling "
            f"references, {table.rejected} rejected values), more than the limit of "
            f"{max_bad_share:.4%}; first:\n" + "\n".join(shown[:2 * _SHOWN_ERRORS]))


def _check_share(table: ParsedTable, max_bad_share: float) -> None:
    """Raise SourceError when the share of rejected rows exceeds the limit."""
    if table.rows_in == 0 or table.rejected / table.rows_in <= max_bad_share:
        return
    share = table.rejected / table.rows_in
    shown = "\n".join(f"  line {line}: {reason}" for line, reason in table.errors[:_SHOWN_ERRORS])
    more = table.rejected - min(len(table.errors), _SHOWN_ERRORS)
    raise SourceError(
        f"{table.source_name}: {table.rejected} of {table.rows_in} rows rejected "
        f"({share:.4%}), more than the limit of {max_bad_share:.4%}; first bad rows:\n"
        + shown
        + (f"\n  ... and {more} more" if more > 0 else "")
    )
