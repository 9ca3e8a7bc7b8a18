"""Batch matching: the best address for each of many free-text lines (data cleaning).

    >>> for m in index.match(["damrak 1 amsterdam", "", "herestr 12 groningen"]):
    ...     print(m.quality, m.reason, m.hit and m.hit.lines[0])
    exact  Damrak 1
     empty None
    partial  Herestraat 12

`AddressIndex.match(texts, *, threads=None)` reads the texts lazily, in chunks; each chunk is
checked and folded holding the GIL, then searched in the compiled core in one stretch without
it (`_core._match_chunk`), on a pool of threads, one per core by default, a few chunks ahead of
what it yields. Each answer is the one `index.suggest(text, limit=1)` gives, with its score.

`python -m engine match INPUT --column NAME --out OUTPUT` does the same for a CSV file
(`match_file`): streamed, one output row per input row, the input's columns first.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import msgspec
import numpy as np

from ._core import (
    FOUND_HOW,
    MATCH_EMPTY,
    MATCH_FOUND,
    MATCH_NONE,
    MATCH_NOT_TEXT,
    MATCH_TOO_LONG,
    _address_fields,
    _csv_fields,
    _match_chunk,
)
from .files import DECOMPRESS_ERRORS, SourceError, open_decompressed
from .hits import Hit

if TYPE_CHECKING:
    from . import AddressIndex

C = TypeVar("C")

__all__ = ["Match", "match_texts", "match_file", "quality", "REASONS", "QUALITIES", "OUTPUT_COLUMNS"]

# why a text has no match (Match.reason; "" when it has one)
REASONS = {MATCH_FOUND: "", MATCH_NONE: "no_match", MATCH_EMPTY: "empty",
           MATCH_TOO_LONG: "too_long", MATCH_NOT_TEXT: "not_text"}
MISSING = "missing"          # (match_file) the row has no such column
QUOTED_LINES_MAX = 1000      # (match_file) lines one quoted field may span
# how well the best hit matches, best first (Match.quality; "" when there is none)
QUALITIES = ("exact", "partial", "slip", "retry")


def quality(found: str, score: float) -> str:
    """How well a hit matches its text, from how it was found and its score.

    ``exact``: every typed word and number names the address, whole, as typed (found as typed,
    score >= 0: a word only started costs more than any prior, `engine/params.py`);
    ``partial``: found as typed, but some word only starts a name, a street word was not typed,
    or the address has a letter or addition the text did not give; ``slip``: only with a slip
    of a key in some word; ``retry``: only once the text was read otherwise (words respaced or
    left out, the nearest house number, a slip in the postcode): check these by eye."""
    if found == "typed":
        return "exact" if score >= 0 else "partial"
    return found


class Match(msgspec.Struct, frozen=True, gc=False):
    """The best match of one text of a batch.

    Attributes
    ----------
    text
        The text as given.
    hit
        The best hit (as ``suggest(text, limit=1)[0]``), or None.
    quality
        One of QUALITIES (see `quality`), or "" when there is no hit.
    reason
        Why there is no hit: ``no_match`` (nothing found), ``empty`` (no letter or digit),
        ``too_long`` (more than 128 characters), ``not_text`` (not a str, or holds a NUL or a
        byte that was not UTF-8); "" when there is a hit.
    """

    text: object
    hit: Hit | None
    quality: str
    reason: str


def _threads(threads: int | None) -> int:
    if threads is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer or None, not {threads!r}")
    return threads


Searched = tuple[list[int], list[float], list[int], list[int]]   # ids, scores, status, how


def _search_chunk(index: AddressIndex, texts: list[Any]) -> Searched:
    n = len(texts)
    ids, scores = np.empty(n, np.int32), np.empty(n, np.float32)
    status, how = np.empty(n, np.uint8), np.empty(n, np.uint8)
    _match_chunk(index, texts, ids, scores, status, how)
    return ids.tolist(), scores.tolist(), status.tolist(), how.tolist()


def _chunks_searched(index: AddressIndex, chunks: Iterator[C], texts_of: Callable[[C], list[Any]],
                     threads: int | None) -> Iterator[tuple[C, Searched]]:
    """(chunk, (ids, scores, status, how)) for each chunk, in order, searched ahead on a pool."""
    n = _threads(threads)
    with ThreadPoolExecutor(n, thread_name_prefix="engine-match") as pool:
        pending: deque[tuple[C, Future[Searched]]] = deque()
        for chunk in chunks:
            pending.append((chunk, pool.submit(_search_chunk, index, texts_of(chunk))))
            if len(pending) > 2 * n:
                done, fut = pending.popleft()
                yield done, fut.result()
        while pending:
            done, fut = pending.popleft()
            yield done, fut.result()


def _chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def match_texts(index: AddressIndex, texts: Iterable[object], *, threads: int | None = None,
                chunk_size: int = 1024) -> Iterator[Match]:
    """Yield a `Match` for each text, in order (`AddressIndex.match`)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of texts, not one text")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, not {chunk_size!r}")
    _threads(threads)                       # a bad argument fails at the call, not at next()
    return _matches(index, texts, threads, chunk_size)


def _matches(index: AddressIndex, texts: Iterable[object], threads: int | None,
             chunk_size: int) -> Iterator[Match]:
    for chunk, (ids, scores, status, how) in _chunks_searched(
            index, _chunked(texts, chunk_size), list, threads):
        for text, a, score, st, h in zip(chunk, ids, scores, status, how, strict=True):
            if st == MATCH_FOUND:
                found = FOUND_HOW[h]
                hit = Hit(*_address_fields(index, a), score, found, text, a)
                yield Match(text, hit, quality(found, score), "")
            else:
                yield Match(text, None, "", REASONS[st])


# ---------------------------------------------------------------------------------------------
# files

OUTPUT_COLUMNS = ("match_street", "match_number", "match_letter", "match_addition", "match_postcode",
                  "match_locality", "match_municipality", "match_province", "match_latitude",
                  "match_longitude", "match_score", "match_quality", "match_reason")


class MatchFileError(Exception):
    """The input cannot be read as asked, or the output may not be written."""


def _open_read(path: Path) -> IO[str]:
    """Open `path` (plain, .gz or .zst) for text, streamed, with the build's checks of a
    compressed file (`engine.files.open_decompressed`): its name must say what it holds, and
    a truncated or corrupt one raises one of DECOMPRESS_ERRORS where it stops.

    NOTE: bytes that are not UTF-8 pass through unchanged (surrogateescape); such a text is
    answered `not_text`."""
    try:
        stream = open_decompressed(path)
    except SourceError as e:
        raise MatchFileError(str(e)) from None
    except OSError as e:
        raise MatchFileError(f"cannot read {path}: {e.strerror or e}") from None
    return io.TextIOWrapper(stream, encoding="utf-8", errors="surrogateescape", newline="")


def _incomplete_name(out: Path) -> Path:
    """Where the rows matched before the input broke off go: ``matches.csv.zst`` ->
    ``matches.incomplete.csv.zst`` (the same format, a name that says it is not all)."""
    packed = out.suffix if out.suffix in (".gz", ".zst") else ""
    rest = Path(out.name[: len(out.name) - len(packed)])
    return out.with_name(f"{rest.stem}.incomplete{rest.suffix}{packed}")


# what reading the input may raise: a file that cannot be read, or a compressed one broken off
_READ_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, *DECOMPRESS_ERRORS)


class _Stop:
    """Where the input broke off (`_record_chunks`): the error, and the input lines read whole
    before it (the header included)."""

    __slots__ = ("error", "lines")

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.lines = 1


def _open_write(path: Path, suffix: str) -> IO[str]:
    """Create `path` for text, compressed as a file ending in `suffix` (.gz, .zst) is."""
    stream: IO[bytes]
    if suffix == ".gz":
        stream = cast(IO[bytes], gzip.open(path, "xb", compresslevel=5))
    elif suffix == ".zst":
        import zstandard

        stream = zstandard.ZstdCompressor(level=3).stream_writer(open(path, "xb"), closefd=True)
    else:
        stream = open(path, "xb")
    return io.TextIOWrapper(stream, encoding="utf-8", errors="surrogateescape", newline="")


def _sniff(first_line: str) -> str:
    counts = {d: first_line.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def match_file(index: AddressIndex, source: str | os.PathLike[str], column: str, out: str | os.PathLike[str],
               *, force: bool = False, threads: int | None = None, delimiter: str | None = None,
               progress: bool = True, chunk_size: int = 2048) -> dict[str, int]:
    """Match column `column` of the CSV `source` (.csv, .csv.gz, .csv.zst) and write `out`.

    `out` gets the columns of `source`, then OUTPUT_COLUMNS, one row for each input row in the
    same order (a row without a match has empty match columns and its reason). The input is
    streamed, chunk by chunk; `out` is written beside itself and renamed into place when
    complete, and an existing `out` is replaced only with `force`. Returns counts per quality
    and reason, and ``rows``."""
    source, out = Path(source), Path(out)
    if not source.is_file():
        raise MatchFileError(f"no input file {source}")
    if out.exists() or out.is_symlink():
        if not force:
            raise MatchFileError(f"{out} exists: give --force to replace it")
        if out.is_dir():
            raise MatchFileError(f"{out} is a directory")
        if out.exists() and os.path.samefile(source, out):
            raise MatchFileError(f"{out} is the input file itself: write the matches elsewhere")
    if not out.parent.is_dir():
        raise MatchFileError(f"no directory {out.parent} for the output")
    if delimiter is not None and (len(delimiter) != 1 or not delimiter.isascii()
                                  or delimiter in '"\r\n' or delimiter.isalnum()):
        raise MatchFileError(f"the delimiter must be one ASCII punctuation or space character, "
                             f"not {delimiter!r}")
    counts: dict[str, int] = {"rows": 0}
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    stop = _Stop()
    try:
        with _open_read(source) as f:
            try:
                first = f.readline()
            except _READ_ERRORS as e:
                raise MatchFileError(f"cannot read {source}: {e}") from None
            if not first:
                raise MatchFileError(f"{source} is empty: it needs a header line")
            # a byte order mark (a spreadsheet's "CSV UTF-8") is no part of the first column's
            # name; the output starts with one too, so that the same programs read it as UTF-8
            bom = "\ufeff" if first.startswith("\ufeff") else ""
            first = first[len(bom):]
            sep = delimiter or _sniff(first)
            header = next(csv.reader([first], delimiter=sep))
            if column not in header:
                raise MatchFileError(f"{source} has no column {column!r}; its columns are "
                                     f"{', '.join(map(repr, header))}")
            col = header.index(column)
            bar = None
            if progress:
                from tqdm import tqdm  # type: ignore[import-untyped]

                bar = tqdm(unit=" rows", unit_scale=True, desc="match", file=sys.stderr, smoothing=0.1)
            with _open_write(partial, out.suffix) as g:
                g.write(bom + first.rstrip("\r\n") + sep + sep.join(OUTPUT_COLUMNS) + "\n")
                try:
                    _write_matches(index, _record_chunks(f, sep, col, chunk_size, stop), sep, g, counts,
                                   threads, bar)
                except csv.Error as e:
                    raise MatchFileError(f"{source}: {e}") from None
                except OSError as e:
                    raise MatchFileError(f"cannot read {source}: {e}") from None
                finally:
                    if bar is not None:
                        bar.close()
        if stop.error is not None:
            raise MatchFileError(_stopped(source, out, partial, stop, counts["rows"], force))
        os.replace(partial, out)
    finally:
        if partial.exists():
            partial.unlink()
    return counts


def _stopped(source: Path, out: Path, partial: Path, stop: _Stop, rows: int, force: bool) -> str:
    """Keep the rows matched before the input broke off (`partial`, complete as a file) under
    `_incomplete_name(out)`, unless a file of that name is there and not `force`; say where the
    input broke off and where those rows are."""
    where = (f"{source} breaks off after line {stop.lines:,} (data row {rows:,}): "
             f"the compressed data is cut short or damaged ({stop.error})")
    if rows == 0:
        return f"{where}; no row was matched, {out} was not written"
    kept = _incomplete_name(out)
    if kept.exists() or kept.is_symlink():
        if not force or kept.is_dir():
            return (f"{where}; the {rows:,} rows before it were matched but not kept: {kept} exists "
                    f"(give --force to replace it); {out} was not written")
    os.replace(partial, kept)
    return (f"{where}; the {rows:,} rows before it are matched in {kept} (input lines 2 to "
            f"{stop.lines:,}); {out} was not written")


def _record_chunks(f: IO[str], sep: str, col: int, size: int, stop: _Stop
                   ) -> Iterator[tuple[list[str], list[Any]]]:
    """(raw, texts) for each `size` CSV records of f: each record's text as it was written
    (without its line break, so that an output row repeats its input row exactly) and its field
    `col` (None when it has none).

    When the (compressed) input breaks off, the records read whole before the break are given,
    and then the error is left in `stop` (with the lines read whole) instead of raised, so that
    every row before it is matched and written; a line cut by the break is not a record.

    PERF: a line without a quote is split on the separator, which is what the csv module
    makes of it; only a line with a quote goes through `csv.reader`, with the lines after it
    that a quoted line break pulls in."""
    raws: list[str] = []
    texts: list[Any] = []
    lines: list[str] = []

    def pull(line: str) -> Iterator[str]:
        yield line
        for more in f:
            lines.append(more)
            if len(lines) > QUOTED_LINES_MAX:
                raise MatchFileError(f"a quoted field opened {QUOTED_LINES_MAX} lines before "
                                     f"this one is not closed: {line[:80]!r}")
            yield more

    try:
        for line in f:
            if '"' in line:
                lines[:] = [line]
                row = next(csv.reader(pull(line), delimiter=sep))
                stop.lines += len(lines)
                raw = "".join(lines).rstrip("\r\n")
            else:
                stop.lines += 1
                raw = line.rstrip("\r\n")
                row = raw.split(sep)
            raws.append(raw)
            texts.append(row[col] if len(row) > col else None)
            if len(raws) == size:
                yield raws, texts
                raws, texts = [], []
    except DECOMPRESS_ERRORS as e:
        stop.error = e
    if raws:
        yield raws, texts


def _write_matches(index: AddressIndex, chunks: Iterator[tuple[list[str], list[Any]]], sep: str,
                   g: IO[str], counts: dict[str, int], threads: int | None, bar: Any) -> None:
    none = sep * (len(OUTPUT_COLUMNS) - 1)
    reasons = {k: f"{sep}{none}{v}\n" for k, v in REASONS.items()}
    missing = f"{sep}{none}{MISSING}\n"
    tally = dict.fromkeys([*QUALITIES, *REASONS.values(), MISSING], 0)

    def texts_of(chunk: tuple[list[str], list[Any]]) -> list[Any]:
        return chunk[1]

    for (raws, texts), (ids, scores, status, how) in _chunks_searched(index, chunks, texts_of, threads):
        out = []
        for raw, text, a, fields, score, st, h in zip(raws, texts, ids, _csv_fields(index, ids, sep),
                                                      scores, status, how, strict=True):
            if st == MATCH_FOUND:
                q = quality(FOUND_HOW[h], score)
                tally[q] += 1
                if fields is None:
                    fields = _csv_line(_address_fields(index, a), sep)
                out.append(f"{raw}{sep}{fields}{sep}{score:.3f}{sep}{q}{sep}\n")
            elif text is None:
                tally[MISSING] += 1
                out.append(raw + missing)
            else:
                tally[REASONS[st]] += 1
                out.append(raw + reasons[st])
        g.write("".join(out))
        counts["rows"] += len(raws)
        if bar is not None:
            bar.update(len(raws))
    counts.update({k: v for k, v in tally.items() if k and v})


def _csv_line(fields: tuple[Any, ...], sep: str) -> str:
    """The fields as one CSV text (no line break), latitude and longitude to 6 decimals."""
    buf = io.StringIO()
    *names, lat, lon = fields
    csv.writer(buf, delimiter=sep, lineterminator="").writerow([*names, f"{lat:.6f}", f"{lon:.6f}"])
    return buf.getvalue()
