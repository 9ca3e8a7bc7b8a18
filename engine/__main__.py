"""Command line: ``python -m engine build SOURCE OUT_DIR``, ``python -m engine update INDEX_DIR
DELIVERY...``, ``python -m engine query DIR Q`` and ``python -m engine match INPUT --column NAME
--out OUTPUT``."""

from __future__ import annotations

import argparse
import ctypes
import os
import sys

DEFAULT_SOURCE = "../shared/data/nl-addresses.csv.zst"

# glibc's mallopt(3) parameters
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4


def _keep_freed_memory() -> bool:
    """Have the C library's malloc keep what this process frees for its next allocations:
    no block of its own mapping (`M_MMAP_MAX` 0), no heap top given back (`M_TRIM_THRESHOLD`).
    Return whether it could (glibc; elsewhere nothing changes).

    PERF: an update makes and drops hundreds of arrays of the whole country's 9 million
    addresses; glibc maps each one above 32 MB afresh and unmaps it when freed, and
    every page of a fresh mapping is a page fault (3 us per 4 KiB on this machine's VM). Kept
    in the heap, a freed array's pages serve the next one: the update's front half (state
    read, delivery applied, join, CSV parsed, state written) took 22.5 system CPU s, 9.4 so;
    its peak grew 3.29 -> 3.56 GB (a heap holds its highest point). NOTE: only `update` for
    now: a whole-country build's peak (5.4 GB from the extract) is not measured with it."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build an index directory from a CSV (.csv, .csv.zst, .csv.gz), "
                       "an LVBAG XML extract (zip or directory) or a PDOK GeoPackage")
    b.add_argument("source", help=f"the address CSV (e.g. {DEFAULT_SOURCE}), lvbag-extract-nl.zip, "
                   "an unpacked extract's directory, or bag-light.gpkg")
    b.add_argument("out_dir", help="the index directory to write: missing, empty or an index "
                   "(replaced atomically)")
    b.add_argument("--force", action="store_true",
                   help="replace OUT_DIR even if it is not an index, deleting what it holds")
    b.add_argument("--max-bad-share", type=float, default=0.001,
                   help="fail when more than this share of rows is bad (default 0.001)")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.add_argument("--jobs", type=int, default=None,
                   help="processes that parse an LVBAG extract's XML (default: one per core)")
    b.add_argument("--municipalities", metavar="FILE", default=None,
                   help="LVBAG extract and GeoPackage only (they name no municipality): the reference that "
                   "names each address's municipality and province: an address CSV of our layout (by "
                   "woonplaats and postcode) or CBS's list 'Gemeenten alfabetisch' as CSV (by code); "
                   "default $ADDRESS_DATA_DIR/nl-addresses.csv.zst, ADDRESS_DATA_DIR defaulting to "
                   "../shared/data")
    u = sub.add_parser("update", help="apply the Kadaster's mutation deliveries (daily or monthly) to an index "
                       "built from an LVBAG extract, in date order; write the new index atomically")
    u.add_argument("index_dir", help="the index to update (built from an LVBAG extract, or updated before)")
    u.add_argument("deliveries", nargs="+", metavar="DELIVERY",
                   help="BAGNLDM-DDMMYYYY-DDMMYYYY.zip or its unpacked directory; several are applied in date order, "
                   "those applied already skipped")
    u.add_argument("--out", metavar="DIR", default=None,
                   help="write the new index here (missing, empty or an index) and leave INDEX_DIR as it is; "
                   "default: replace INDEX_DIR atomically")
    u.add_argument("--out-of-order", action="store_true",
                   help="apply a delivery that does not follow the register's date (a gap, an overlap, an older one)")
    u.add_argument("--force", action="store_true",
                   help="replace the output directory even if it is not an index, deleting what it holds")
    u.add_argument("--municipalities", metavar="FILE", default=None,
                   help="another municipality reference (as for build); default: the one the build read, kept "
                   "with the register's state")
    u.add_argument("--max-bad-share", type=float, default=0.001,
                   help="fail when more than this share of the addresses is bad (default 0.001)")
    q = sub.add_parser("query", help="ask an index, print the JSON response")
    q.add_argument("index")
    q.add_argument("q")
    q.add_argument("--limit", type=int, default=5)
    _match_parser(sub)
    args = ap.parse_args(argv)
    if args.cmd == "update":
        _keep_freed_memory()
    if args.cmd == "match":
        return _match(args)
    if args.cmd == "build":
        from .ingest.build import BuildError, TargetError, build
        from .ingest.source import SourceError
        try:
            build(args.source, args.out_dir, progress=not args.no_progress,
                  max_bad_share=args.max_bad_share, force=args.force, jobs=args.jobs,
                  municipalities=args.municipalities)
        except (SourceError, TargetError, BuildError) as e:
            print(f"build failed: {e}", file=sys.stderr)
            return 1
        return 0
    if args.cmd == "update":
        return _update(args)
    from . import AddressIndex, IndexOpenError, QueryError
    try:
        index = AddressIndex.open(args.index)
        sys.stdout.buffer.write(index.suggest_json(args.q, limit=args.limit) + b"\n")
    except (IndexOpenError, QueryError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _update(args) -> int:
    from .ingest.build import BuildError, TargetError
    from .ingest.mutations import DeliveryError
    from .ingest.register import RegisterError
    from .ingest.source import SourceError
    from .ingest.update import UpdateError, update

    try:
        update(args.index_dir, args.deliveries, out_dir=args.out, out_of_order=args.out_of_order, force=args.force,
               municipalities=args.municipalities, max_bad_share=args.max_bad_share)
    except (UpdateError, DeliveryError, RegisterError, SourceError, TargetError, BuildError) as e:
        print(f"update failed: {e}", file=sys.stderr)
        return 1
    return 0


def _match_parser(sub) -> None:
    m = sub.add_parser(
        "match", help="match a column of free-text addresses in a CSV (.csv, .csv.gz, .csv.zst)",
        description="Write OUTPUT: the rows of INPUT, each with the best address for its column NAME "
                    "(match_street ... match_longitude, match_score, match_quality) or, when it has "
                    "none, the reason (match_reason: no_match, empty, too_long, not_text, missing).")
    m.add_argument("input", help="the CSV to read (streamed; it needs a header line)")
    m.add_argument("--column", required=True, help="the header name of the address column")
    m.add_argument("--out", required=True, help="the CSV to write (.gz / .zst compress it)")
    m.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/nl"),
                   help="the index directory (default $ADDRESS_INDEX, else indexes/nl)")
    m.add_argument("--force", action="store_true", help="replace OUTPUT if it exists")
    m.add_argument("--threads", type=int, default=None, help="search threads (default: one per core)")
    m.add_argument("--delimiter", default=None, help="the field separator (default: read from the header)")
    m.add_argument("--no-progress", action="store_true", help="no progress bar")


def _match(args) -> int:
    from . import AddressIndex, IndexOpenError
    from .match import MatchFileError, match_file

    try:
        index = AddressIndex.open(args.index)
        counts = match_file(index, args.input, args.column, args.out, force=args.force,
                            threads=args.threads, delimiter=args.delimiter,
                            progress=not args.no_progress)
    except (IndexOpenError, MatchFileError, ValueError) as e:
        print(f"match failed: {e}", file=sys.stderr)
        return 1
    print(" ".join(f"{k}={v}" for k, v in counts.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
