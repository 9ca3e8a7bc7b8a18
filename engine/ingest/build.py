"""Build an index directory from a source file of the register.

    python -m engine build SOURCE OUT_DIR

The directory holds one `.npy` file per array (memory-mapped by `AddressIndex.open`) and a
`manifest.json` that names every array with its dtype and shape, the size and checksum of every
file (`engine.checksums`), the source and its sha256, and the row counts. The build writes into
a temporary sibling directory and renames it into place only when everything is written, so a
crash never leaves a half-written index where a good one was. It replaces only an index (a
directory whose manifest names every file in it) or an empty directory; anything else is refused
unless `force` (`--force`) is given.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

from .. import _core, release_page_cache
from .._core import BITS
from ..checksums import file_checksums
from ..params import FORMAT_VERSION, PREFIX_FRAC, PREFIX_PEN, PRIOR_MAX
from ..vocab import ALIAS, KIND, LOCALITY, MUNICIPALITY, STREET, Vocabulary, derive_abbreviations
from .keys import ID_LIMIT, lexorder, pack3, unpack3
from .source import ParsedTable, SourceError, read_source

SHORT_PREFIX = 12         # prefixes up to this long get a precomputed list of groups ...
SHORT_PREFIX_MIN = 2000   # ... when their postings exceed this (engine/_core.pxd SCAN_ALONE)
SHORT_PREFIX_TOP = 256    # ... of this many groups, highest prior first
ANSWER_MIN = 300          # a one-word query whose postings exceed this gets its answers stored


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _json_str(s: str) -> bytes:
    """JSON-escape `s` without the surrounding quotes."""
    return orjson.dumps(s)[1:-1]


def _blob(items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in items], out=offsets[1:])
    blob = np.frombuffer(b"".join(items), dtype=np.uint8) if items else np.zeros(0, np.uint8)
    return blob.copy(), offsets


def _natural_rank(values: list[str]) -> np.ndarray:
    """Rank additions the way a person counts them: '', 1, 2, 10, A, B, II."""
    def key(s: str):
        u = s.upper()
        return (0, int(u), "") if u.isdigit() else (1 if u else -1, 0, u)
    order = sorted(range(len(values)), key=lambda i: (key(values[i]), values[i]))
    rank = np.empty(len(values), dtype=np.int32)
    rank[order] = np.arange(len(values), dtype=np.int32)
    return rank


def _dedupe(t: ParsedTable) -> tuple[np.ndarray, int]:
    """Return the row indices to keep (first row of each address key) and how many merged."""
    add_upper = np.array([a.upper() for a in t.additions])
    _, add_key = np.unique(add_upper, return_inverse=True)
    letter_u = t.letter.copy()
    lower = (letter_u >= ord("a")) & (letter_u <= ord("z"))
    letter_u[lower] -= 32
    add_k = add_key.astype(np.int32)[t.addition]
    keys = (add_k, letter_u, t.number, t.postcode)
    # the rows are in the order of their lines (a stable sort keeps it) unless said otherwise
    in_line_order = len(t.line) < 2 or bool((t.line[1:] > t.line[:-1]).all())
    order = lexorder(keys if in_line_order else (t.line, *keys))
    pc, nu, le, ad = t.postcode[order], t.number[order], letter_u[order], add_k[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (pc[1:] != pc[:-1]) | (nu[1:] != nu[:-1]) | (le[1:] != le[:-1]) | (ad[1:] != ad[:-1])
    keep = np.sort(order[first])
    return keep, int(len(order) - len(keep))


class TargetError(Exception):
    """The build's output path holds something other than an index; it is left alone."""


def check_target(out_dir: str | os.PathLike) -> None:
    """Raise TargetError unless `out_dir` is missing, an empty directory, or an index.

    An index is a directory whose `manifest.json` names every file it holds; a build replaces
    only such a directory, so it never deletes a file the user put there."""
    out_dir = Path(out_dir)
    why = None
    if out_dir.is_symlink():
        why = "it is a symbolic link (build into a new directory and repoint the link: " \
              "python -m server switch-index)"
    elif not out_dir.exists():
        return
    elif not out_dir.is_dir():
        why = "it is a file, not a directory"
    elif held := {p.name for p in out_dir.iterdir()}:
        index_files = _index_files(out_dir)
        if others := sorted(held - (index_files or set())):
            listed = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            why = (f"it holds {listed} and no index (no readable manifest.json)" if index_files is None
                   else f"it holds files that are not part of its index: {listed}")
    if why:
        raise TargetError(f"refusing to replace {out_dir}: {why}; pick another directory, or give "
                          f"--force to replace it and delete what it holds")


def _index_files(path: Path) -> set[str] | None:
    """The names of the files of the index in `path` as its manifest lists them (any format
    version), or None if `path` holds no readable manifest."""
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or "format_version" not in manifest \
            or not isinstance(manifest.get("arrays"), dict):
        return None
    register = manifest.get("register")
    state = register.get("files", []) if isinstance(register, dict) else []
    return {"manifest.json"} | {f"{name}.npy" for name in manifest["arrays"]} | {str(f) for f in state}


class BuildError(Exception):
    """The index could not be written (the old one, if any, is left as it was)."""


def build(source: str | os.PathLike, out_dir: str | os.PathLike, *, progress: bool = True,
          max_bad_share: float = 0.001, force: bool = False, jobs: int | None = None,
          municipalities: str | os.PathLike | None = None) -> dict:
    """Build the index of `source` into `out_dir` (replaced atomically); return the manifest.

    `source` is an address CSV, an LVBAG XML extract (zip or directory) or a PDOK GeoPackage
    (`engine.ingest.source.read_source`); `jobs` processes parse an extract's XML files; `municipalities`
    is the reference that names an official format's municipalities (`engine.ingest.municipalities`;
    None: `$ADDRESS_DATA_DIR/nl-addresses.csv.zst`; a CSV source needs none). `out_dir` must
    be missing, an empty directory or an index (see :func:`check_target`), unless `force` is
    true; TargetError otherwise, raised before the source is read."""
    t0 = time.perf_counter()
    source, out_dir = Path(source), Path(out_dir)
    if not force:
        check_target(out_dir)
    table = read_source(source, progress=progress, max_bad_share=max_bad_share, jobs=jobs,
                        municipalities=municipalities)
    if table.source_format != "csv":
        _report_official(table)
    elif municipalities is not None:
        _log(f"{source.name} names its municipalities: --municipalities {municipalities} is not read")
    return write_index(table, out_dir, force=force, started=t0)


def write_index(table: ParsedTable, out_dir: str | os.PathLike, *, force: bool = False,
                started: float | None = None, manifest_extra=None) -> dict:
    """Write the index of the rows of `table` into `out_dir` (replaced atomically, as
    :func:`build` says); return the manifest. The one way an index is written: by a build,
    and by an update of the register (`engine.ingest.update`).

    With the table's `register` (an LVBAG source: `engine.ingest.register.Register`), the register's
    state is written into the index directory too, each of its files named in the manifest.
    `manifest_extra(arrays)`, when given, returns more entries of the manifest, made from the
    finished arrays before anything is written."""
    t0 = time.perf_counter() if started is None else started
    out_dir = Path(out_dir)
    source = Path(table.source_name)
    for line, reason in table.errors[:20]:
        _log(f"{source.name}:{line}: {reason}")
    if table.rejected:
        more = table.rejected - min(20, len(table.errors))
        _log(f"rejected {table.rejected} of {table.rows_in} rows" + (f" ({more} more not shown)" if more > 0 else ""))
    keep, merged = _dedupe(table)
    if len(keep) == 0:  # a header and no rows (or no good row): there is nothing to index
        raise SourceError(f"{source}: no address rows to index ({table.rows_in:,} read, {table.rejected:,} bad)")
    _log(f"read {table.rows_in:,} rows in {time.perf_counter() - t0:.1f} s; "
         f"{merged:,} duplicate address rows merged; {table.rejected:,} rejected")
    tmp = None
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
        with cf.ThreadPoolExecutor(max_workers=1) as pool:
            register = None
            if table.register is not None:
                # PERF: the register's state is written while the arrays are made (numpy and
                # zstd let go of the GIL: the whole country's, 10 CPU s, on the other core), and
                # let go once written: its records are not needed for the arrays (about 1.5 GB)
                register = pool.submit(table.register.save, tmp)
                table.register = None
            manifest = _write_arrays(table, keep, merged, tmp, register, t0, manifest_extra)
        if not force:
            check_target(out_dir)  # again: it may have changed while the build ran
        _swap_into_place(tmp, out_dir)
    except BaseException as exc:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):  # a full disk, a read-only or vanished directory
            raise BuildError(
                f"cannot write the index into {out_dir.parent}: {exc.strerror or exc}; "
                f"{out_dir} was left as it was") from exc
        raise
    _log(f"built {out_dir} in {manifest['build_seconds']} s: {manifest['rows_out']:,} addresses, "
         f"{manifest['groups']:,} streets, {manifest['tokens']:,} tokens")
    return manifest


def _write_arrays(table: ParsedTable, keep: np.ndarray, merged: int, tmp: Path, register: cf.Future | None,
                  t0: float, manifest_extra) -> dict:
    """Make the arrays of the rows `keep` of `table`, write them and the manifest into `tmp`
    (with the register's state, when `register` has written it: `Register.save`'s answer to
    come); return the manifest."""
    arrays, facts = _make_arrays(table, keep)
    manifest = _manifest(table, arrays, merged, facts)
    if manifest_extra is not None:
        manifest.update(manifest_extra(arrays))
    _write_files(tmp, arrays, manifest, register.result() if register is not None else None, t0)
    return manifest


def _make_arrays(table: ParsedTable, keep: np.ndarray) -> tuple[dict, dict]:
    """The arrays of the rows `keep` of `table` (exactly `_core.ARRAYS`), and what the manifest
    says of them: the counts of groups, tokens and postcodes, the derived abbreviations and the
    former municipalities."""
    names, gkeys, g_of_row, g_prov = _groups(table, keep)
    n_groups = len(gkeys)
    a_group, a_number, a_letter, a_addition, a_postcode, a_lat, a_lon, g_start = _order_addresses(
        table, keep, g_of_row, n_groups)
    g_lat, g_lon = _group_centres(a_lat, a_lon, g_start)
    g_prior = _group_priors(gkeys, g_start, len(names))
    # ---- former municipalities (the source's `gemeente_bron`, when it names another one than
    # `gemeente`): each group's, an alias of its municipality
    formers = _former_names(table, keep, g_of_row, gkeys[:, 2], names)
    derived, words, g_tok_start, g_tok, g_tok_kind, g_tok_cover = _group_tokens(table, gkeys, names, formers)
    v_blob, v_off, g_tokrec = _token_records(words, g_tok, g_tok_kind, g_tok_cover)
    v_post, v_post_start, v_post_meta = _postings(g_tok, g_tok_start, g_tok_kind, g_tok_cover, g_prior,
                                                  len(words))
    # short prefixes ("s", "ke"): their best groups, precomputed, so that the first keystrokes
    # cost no more than a long word
    prefixes = _prefix_postings(words, v_post_start)   # PERF: once, for both (2 s on the whole country)
    sp_blob, sp_off, sp_start, sp_group, sp_toklen, sp_meta = _short_prefix_lists(
        words, v_post_start, v_post, g_prior, v_post_meta, prefixes)
    # what the scan reads of a group beside every posting and list entry, so that it skips a
    # group without touching it: its whole-token signature, first letters, house numbers,
    # suffixes, postcodes, a 64-bit signature (bit (first two letters of each token) % 64) and
    # its prior (the per-group arrays themselves are not written: no query reads them)
    g_xsig = _whole_token_signatures(words, g_tok, g_tok_start)
    g_first = _first_letters(words, g_tok, g_tok_start)
    g_num = _number_ranges(a_number, g_start)
    g_sfx = _suffix_starts(a_letter, a_addition, table.additions, g_start)
    g_pcr = _postcode_ranges(a_postcode, g_start)
    g_sig = _signatures(words, g_tok, g_tok_start)
    # typo table: hashes of each token with up to 1 (2 for long tokens) letters deleted, with
    # the token, in one open-addressing table (a probe reads one run of slots)
    del_slot = _core.deletion_table(*_core.deletion_index(words))
    # every token's sound key (words.SOUND_RULES), sorted: the tokens a typed word sounds like
    # are one range, and those of a word still being typed one more
    snd_blob, snd_off, snd_tok = _sound_keys(words)
    pc_code, pc_start, pc_order = _postcode_index(a_postcode, a_number)
    # ---- the spatial index: a k-d tree over the address points (_near.pxi)
    rv_addr, rv_lat, rv_lon, rv_box = _core.near_tree(a_lat, a_lon)
    # ---- additions (as registered; matched case-insensitively), and the table of names
    add_blob, add_off = _blob([a.encode() for a in table.additions])
    addl_blob, addl_off = _blob(sorted({a.lower().encode() for a in table.additions if a}))
    s_blob, s_off = _blob([_json_str(s) for s in names])

    arrays = {
        "a_group": a_group, "a_number": a_number, "a_letter": a_letter, "a_addition": a_addition,
        "a_postcode": a_postcode, "a_lat": a_lat, "a_lon": a_lon,
        "g_street": gkeys[:, 0].astype(np.int32), "g_locality": gkeys[:, 1].astype(np.int32),
        "g_municipality": gkeys[:, 2].astype(np.int32), "g_province": g_prov,
        "g_start": g_start, "g_prior": g_prior, "g_lat": g_lat, "g_lon": g_lon,
        "g_tok_start": g_tok_start, "g_tokrec": g_tokrec,
        "v_blob": v_blob, "v_off": v_off, "v_post_start": v_post_start, "v_post": v_post,
        "del_slot": del_slot, "snd_blob": snd_blob, "snd_off": snd_off, "snd_tok": snd_tok,
        "v_post_sig": g_sig[v_post], "v_post_prior": g_prior[v_post],
        "sp_sig": g_sig[sp_group], "sp_prior": g_prior[sp_group], "sp_toklen": sp_toklen,
        "v_post_meta": v_post_meta, "v_post_xsig": g_xsig[v_post], "sp_meta": sp_meta, "sp_xsig": g_xsig[sp_group],
        "v_post_first": g_first[v_post], "sp_first": g_first[sp_group],
        "v_post_num": g_num[v_post], "sp_num": g_num[sp_group],
        "v_post_sfx": g_sfx[v_post], "sp_sfx": g_sfx[sp_group], "v_post_pcr": g_pcr[v_post], "sp_pcr": g_pcr[sp_group],
        "sp_blob": sp_blob, "sp_off": sp_off, "sp_start": sp_start, "sp_group": sp_group,
        "pc_code": pc_code.astype(np.int32), "pc_start": pc_start, "pc_addr": pc_order,
        "add_blob": add_blob, "add_off": add_off, "addl_blob": addl_blob, "addl_off": addl_off,
        "s_blob": s_blob, "s_off": s_off, "ar_group": _area_groups(gkeys, g_prior),
        "rv_addr": rv_addr, "rv_lat": rv_lat, "rv_lon": rv_lon, "rv_box": rv_box,
    }
    arrays.update(_stored_slips(arrays, len(words)))
    arrays.update(_stored_answers(arrays, words, prefixes))
    # exactly the arrays the core maps (_core.ARRAYS, the one list of them): no more, no fewer
    if set(arrays) != set(_core.ARRAYS):
        raise AssertionError(f"build.py and _core.ARRAYS disagree on {sorted(set(arrays) ^ set(_core.ARRAYS))}")
    facts = {
        "groups": int(n_groups),
        "tokens": len(words),
        "postcodes": int(len(pc_code)),
        "derived_abbreviations": {k: sorted(v) for k, v in sorted(derived.items())},
        # the former names of each municipality (engine.explain reads them as aliases)
        "former_municipalities": _formers_of(formers, gkeys[:, 2], names),
    }
    return arrays, facts


def _groups(table: ParsedTable, keep: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(names, gkeys, g_of_row, g_prov): every name sorted, the (street, locality, municipality)
    name ids of each group, the group of each kept row, and the province of each group."""
    # ---- strings: one table of every name, JSON-escaped, referenced by id
    names = sorted(set(table.streets) | set(table.localities) | set(table.municipalities)
                   | set(table.provinces))
    name_id = {s: i for i, s in enumerate(names)}
    street_sid = np.array([name_id[s] for s in table.streets], dtype=np.int32)
    loc_sid = np.array([name_id[s] for s in table.localities], dtype=np.int32)
    mun_sid = np.array([name_id[s] for s in table.municipalities], dtype=np.int32)
    prov_sid = np.array([name_id[s] for s in table.provinces], dtype=np.int32)

    # ---- groups: one per (street, locality, municipality), ordered by name for determinism
    # PERF: the three name ids packed into one integer, whose order is theirs (.keys)
    if len(names) >= ID_LIMIT:
        raise SourceError(f"{table.source_name}: {len(names):,} distinct names, more than an index holds")
    key = pack3(street_sid[table.street[keep]], loc_sid[table.locality[keep]], mun_sid[table.municipality[keep]])
    packed, g_of_row = np.unique(key, return_inverse=True)
    gkeys = np.stack(unpack3(packed), axis=1).astype(np.int32)
    g_of_row = g_of_row.ravel().astype(np.int32)
    # province of a group: the one of its first row (a municipality lies in one province)
    g_prov = np.zeros(len(gkeys), dtype=np.int32)
    g_prov[g_of_row[::-1]] = prov_sid[table.province[keep][::-1]]
    return names, gkeys, g_of_row, g_prov


def _order_addresses(table: ParsedTable, keep: np.ndarray, g_of_row: np.ndarray, n_groups: int) -> tuple:
    """(a_group, a_number, a_letter, a_addition, a_postcode, a_lat, a_lon, g_start): the kept rows
    ordered by group, number, letter, addition (natural order), and where each group starts."""
    number, letter, addition = table.number[keep], table.letter[keep], table.addition[keep]
    add_rank = _natural_rank(table.additions)
    order = lexorder((add_rank[addition], _LETTER_RANK[letter], number, g_of_row))
    a_group = g_of_row[order]
    g_start = np.searchsorted(a_group, np.arange(n_groups + 1)).astype(np.int32)
    return (a_group, number[order].astype(np.int32), letter[order].astype(np.uint8),
            addition[order].astype(np.int32), table.postcode[keep][order].astype(np.int32),
            table.lat[keep][order].astype(np.int32), table.lon[keep][order].astype(np.int32), g_start)


def _letter_rank() -> np.ndarray:
    """The rank of each letter byte in the order of (its upper case, itself): `A`, `a`, `B`."""
    order = sorted(range(256), key=lambda b: (b - 32 if 97 <= b <= 122 else b, b))
    rank = np.empty(256, dtype=np.int64)
    rank[order] = np.arange(256)
    return rank


_LETTER_RANK = _letter_rank()


def _group_centres(a_lat: np.ndarray, a_lon: np.ndarray, g_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(g_lat, g_lon): each group's centre (mean point), for the focus-point ranking."""
    g_size = np.diff(g_start)
    g_lat = (np.add.reduceat(a_lat.astype(np.int64), g_start[:-1]) // g_size).astype(np.int32)
    g_lon = (np.add.reduceat(a_lon.astype(np.int64), g_start[:-1]) // g_size).astype(np.int32)
    return g_lat, g_lon


def _group_priors(gkeys: np.ndarray, g_start: np.ndarray, n_names: int) -> np.ndarray:
    """The prior of each group: bigger streets and bigger places are more often meant."""
    g_size = np.diff(g_start)
    loc_size = np.bincount(gkeys[:, 1], weights=g_size, minlength=n_names)
    l_size = loc_size[gkeys[:, 1]]
    g_prior = (0.5 * np.log1p(g_size) / np.log1p(g_size.max())
               + 0.5 * np.log1p(l_size) / np.log1p(l_size.max())) * PRIOR_MAX
    return g_prior.astype(np.float32)


def _group_tokens(table: ParsedTable, gkeys: np.ndarray, names: list[str], formers: dict[int, list[str]]):
    """(derived, words, g_tok_start, g_tok, g_tok_kind, g_tok_cover): the derived abbreviations,
    the vocabulary in byte order, and the tokens of every group with their kind and cover."""
    derived = derive_abbreviations(table.streets)
    vocab = Vocabulary(derived)
    texts: dict[str, int] = {}
    tok_text: list[int] = []
    tok_kind: list[int] = []
    tok_cover: list[int] = []
    g_tok_start = np.zeros(len(gkeys) + 1, dtype=np.int32)
    for g in range(len(gkeys)):
        sid, lid, mid = (int(x) for x in gkeys[g])
        ents = list(vocab.entries(names[sid], STREET)) + list(vocab.entries(names[lid], LOCALITY))
        if mid != lid:
            ents += vocab.entries(names[mid], MUNICIPALITY)
        for former in formers.get(g, ()):
            ents += vocab.former_entries(former)
        for e in ents:
            tid = texts.get(e.text)
            if tid is None:
                tid = texts[e.text] = len(texts)
            tok_text.append(tid)
            tok_kind.append(e.kind)
            tok_cover.append(e.cover)
        g_tok_start[g + 1] = len(tok_text)
    # vocabulary in byte order, so that a typed prefix is one contiguous range of token ids
    words = sorted(texts)
    rank_of = np.empty(len(texts), dtype=np.int32)
    for i, w in enumerate(words):
        rank_of[texts[w]] = i
    g_tok = rank_of[np.array(tok_text, dtype=np.int32)]
    return (derived, words, g_tok_start, g_tok, np.array(tok_kind, dtype=np.uint8),
            np.array(tok_cover, dtype=np.uint64))


def _token_records(words, g_tok, g_tok_kind, g_tok_cover) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(v_blob, v_off, g_tokrec): the vocabulary, and every group's token records.

    PERF: the token, its kind, its length and its cover interleaved (TokRec in _core.pxd):
    scoring a group reads one run of memory instead of three, and a word typed as the start
    of a token is scored by the token's length (`_match_word`) without reading the
    vocabulary's offsets. Only this is written (the twin and the tests read the token, kind
    and cover back from it: engine/_reference.py `group_token_arrays`)"""
    v_blob, v_off = _blob([w.encode() for w in words])
    g_tok_len = np.minimum(np.diff(v_off)[g_tok], BITS["TLEN_LONG"]).astype(np.uint64)
    g_tokrec = np.empty(2 * len(g_tok), dtype=np.uint64)
    g_tokrec[0::2] = (g_tok.astype(np.uint64) | (g_tok_kind.astype(np.uint64) << np.uint64(32))
                      | (g_tok_len << np.uint64(40)))
    g_tokrec[1::2] = g_tok_cover
    return v_blob, v_off, g_tokrec


def _postings(g_tok, g_tok_start, g_tok_kind, g_tok_cover, g_prior, n_words) -> tuple:
    """(v_post, v_post_start, v_post_meta): for each token the groups that hold it, best prior
    first, and beside every posting what the group costs at least when the word matches through
    this token."""
    n_groups = len(g_tok_start) - 1
    tok_group = np.repeat(np.arange(n_groups, dtype=np.int32), np.diff(g_tok_start))
    porder = np.lexsort((tok_group, -g_prior[tok_group], g_tok))
    v_post = tok_group[porder]
    v_post_start = np.searchsorted(g_tok[porder], np.arange(n_words + 1)).astype(np.int32)
    v_post_meta = _posting_meta(g_tok_start, g_tok_kind, g_tok_cover)[porder]
    return v_post, v_post_start, v_post_meta


def _postcode_index(a_postcode: np.ndarray, a_number: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pc_code, pc_start, pc_order): the postcode index, addresses by postcode, then house
    number order."""
    n = len(a_postcode)
    pc_order = lexorder((a_number, a_postcode)).astype(np.int32)   # ties in address order
    pcs = a_postcode[pc_order]
    pc_code, pc_first = np.unique(pcs, return_index=True)
    pc_start = np.append(pc_first, n).astype(np.int32)
    return pc_code, pc_start, pc_order


def _area_groups(gkeys: np.ndarray, g_prior: np.ndarray) -> np.ndarray:
    """ar_group: the groups of each municipality, then of each locality, best prior first: what a
    search restricted to an area walks when a short word's scan is cut (_scan.pxi `_walk_area`)."""
    groups = np.arange(len(gkeys), dtype=np.int32)
    return np.concatenate([np.lexsort((groups, -g_prior, gkeys[:, 2])),
                           np.lexsort((groups, -g_prior, gkeys[:, 1]))]).astype(np.int32)


def _manifest(table: ParsedTable, arrays: dict, merged: int, facts: dict) -> dict:
    """The manifest of an index of `arrays` made from `table` (`facts`: from `_make_arrays`),
    without the files, the register and the build time (`_write_files` adds them)."""
    return {
        "format_version": FORMAT_VERSION,
        "source_name": Path(table.source_name).name,
        "source_sha256": table.source_sha256,
        "source_format": table.source_format,
        "extract_date": table.extract_date,
        # the date of the register the index holds: an extract's, or the last mutation
        # delivery applied to it (engine.ingest.update); None for a CSV
        "register_date": table.register_date or table.extract_date,
        "left_out": table.left_out,
        "left_out_detail": table.left_out_detail,
        "skipped": table.skipped,
        "built_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "rows_in": table.rows_in,
        "rows_out": len(arrays["a_group"]),
        "merged": merged,
        "rejected": table.rejected,
        **facts,
        "arrays": {k: {"dtype": str(v.dtype), "shape": list(v.shape)} for k, v in arrays.items()},
    }


def _write_files(tmp: Path, arrays: dict, manifest: dict, register: dict | None, t0: float) -> None:
    """Write `arrays` and `manifest` (completed with the files, their checksums and the build
    time) into `tmp`, on disk, out of the page cache and read-only."""
    written = []
    for name, arr in arrays.items():
        np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
        written.append(f"{name}.npy")
    if register is not None:   # the register's state, written beside the arrays first
        manifest["register"] = register
        written += register["files"]
    # what AddressIndex.open checks the files against (engine/checksums.py)
    manifest["files"] = file_checksums(tmp, written)
    manifest["build_seconds"] = round(time.perf_counter() - t0, 1)
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    # on disk before it is renamed into place, and out of the page cache, which holds what
    # was just written in small pages: the first map of it reads it in 2 MiB ones
    release_page_cache(tmp)
    for file in tmp.iterdir():  # served memory-mapped: a write or truncation is a SIGBUS
        file.chmod(0o444)


def _report_official(table: ParsedTable) -> None:
    """Say what an official source held that is no address now, by reason, and what was skipped."""
    _log(f"{table.source_name}: {table.source_format} of {table.extract_date}")
    for entry in table.skipped:
        _log(f"skipped {entry}")
    detail = table.left_out_detail.get("by_type", {})
    for reason, n in table.left_out.items():
        per = ", ".join(f"{k} {v[reason]:,}" for k, v in detail.items() if v.get(reason))
        _log(f"left out, {reason.replace('_', ' ')}: {n:,}" + (f" ({per})" if per else ""))
        for example in table.left_out_detail.get("examples", {}).get(reason, [])[:3]:
            _log(f"  e.g. {example}")
    if table.left_out_detail.get("note"):
        _log(table.left_out_detail["note"])


def _group_bits(words, g_tok, g_tok_start, bit_of, dtype=np.uint64):
    """Per group, the OR of `1 << bit_of(token)` over its tokens."""
    bits = np.array([bit_of(w) for w in words], dtype=dtype)
    per_token = np.left_shift(dtype(1), bits)
    g_of_tok = np.repeat(np.arange(len(g_tok_start) - 1), np.diff(g_tok_start))
    out = np.zeros(len(g_tok_start) - 1, dtype=dtype)
    np.bitwise_or.at(out, g_of_tok, per_token[g_tok])
    return out


def _signatures(words, g_tok, g_tok_start):
    """Per group, bit (first two letters of each token) % 64 (_core `sig_bit`)."""
    return _group_bits(words, g_tok, g_tok_start, _core.sig_bit)


def _posting_meta(g_tok_start, g_tok_kind, g_tok_cover):
    """One byte per group token, for the scan's bound (_core `_out_of_reach`): bits 0-3 the
    registered street words this token leaves uncovered; bit 4 one of the group's tokens covers
    two or more of those at once (a glued form: `hc`, `thofje`, `vd`), which lets one other word
    cover two; bit 5 the token is a locality, bit 6 an alias, bit 7 a municipality. The scan
    takes k other words to cover at most k of them, k + 1 with bit 4. Where tokens cover more
    (`J.D. v.d. Waalsweg`: `jd` and `vd` two each), or more than 15 remain, the count stored is
    lowered until that holds for every k (a lower bound)."""
    n_groups = len(g_tok_start) - 1
    n = len(g_tok_kind)
    g_of = np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(g_tok_start))
    kind = g_tok_kind.astype(np.int64)
    cover = g_tok_cover.astype(np.uint64)
    all_street = np.zeros(n_groups, dtype=np.uint64)
    real = kind == STREET
    np.bitwise_or.at(all_street, g_of[real], cover[real])
    left = all_street[g_of] & ~cover
    unc = np.bitwise_count(left).astype(np.int64)
    unc = np.minimum(unc, BITS["META_UNCOVERED"])
    glued = np.zeros(n, dtype=bool)
    # tokens covering 2+ street words are rare: per token of their group, in Python, the most
    # that k other words cover (the k tokens that cover most of what it leaves) against what
    # the scan takes them to cover (k, one more with the glued bit)
    many = np.nonzero(np.bitwise_count(cover) >= 2)[0]
    for g in np.unique(g_of[many]).tolist():
        a, b = int(g_tok_start[g]), int(g_tok_start[g + 1])
        covers = [int(c) for c in cover[a:b]]
        for e in range(a, b):
            lft = int(left[e])
            bits = sorted(((c & lft).bit_count() for c in covers), reverse=True)
            glued[e] = bits[0] >= 2
            least = most = int(unc[e])
            for k, x in enumerate(bits, start=1):
                most -= x
                least = min(least, most + k + (1 if glued[e] else 0))
            unc[e] = max(least, 0)
    meta = unc | np.where(glued, BITS["META_GLUED"], 0)
    meta |= np.where((kind & KIND) == LOCALITY, BITS["META_LOCALITY"], 0)
    meta |= np.where((kind & ALIAS) != 0, BITS["META_ALIAS"], 0)
    meta |= np.where((kind & KIND) == MUNICIPALITY, BITS["META_MUNICIPALITY"], 0)
    return meta.astype(np.uint8)


def _former_names(table: ParsedTable, keep: np.ndarray, g_of_row: np.ndarray, g_mun: np.ndarray,
                  names: list[str]) -> dict[int, list[str]]:
    """group -> the former municipalities its addresses had in the source (`gemeente_bron`),
    where they name another municipality than the group's; sorted."""
    former = table.former_municipality[keep]
    had = former > 0
    pairs = np.unique(np.stack([g_of_row[had], former[had]], axis=1), axis=0) if had.any() else []
    out: dict[int, list[str]] = {}
    for g, f in (tuple(int(x) for x in p) for p in pairs):
        name = table.former_municipalities[f]
        if name != names[g_mun[g]]:
            out.setdefault(g, []).append(name)
    return {g: sorted(v) for g, v in out.items()}


def _formers_of(formers: dict[int, list[str]], g_mun: np.ndarray, names: list[str]) -> dict[str, list[str]]:
    """municipality -> the former municipalities of its groups, sorted."""
    out: dict[str, set[str]] = {}
    for g, fs in formers.items():
        out.setdefault(names[g_mun[g]], set()).update(fs)
    return {m: sorted(v) for m, v in sorted(out.items())}


def _sound_keys(words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(snd_blob, snd_off, snd_tok): the sound key of every token (`_core.sound_key`), sorted
    bytewise (ties by token id), and the token of each."""
    keys = [_core.sound_key(w).encode() for w in words]
    order = sorted(range(len(words)), key=lambda t: (keys[t], t))
    blob, off = _blob([keys[t] for t in order])
    return blob, off, np.array(order, dtype=np.int32)


def _whole_token_signatures(words, g_tok, g_tok_start):
    """Per group, one bit (of 64) per whole token it holds: a typed word that is a whole token
    somewhere but whose bit is missing here can match this group only as a prefix or a slip."""
    return _group_bits(words, g_tok, g_tok_start, _core.xsig_bit)


def _stored_slips(arrays: dict, n_tok: int) -> dict:
    """What the search looks up for each token typed whole, within one slip and within two
    (`_core.slip_lists`): looked up here, by the search itself, on the finished typo table."""
    none = {"slip_start": np.zeros(2 * n_tok + 1, np.int32), "slip_tok": np.zeros(0, np.int32),
            "slip_dist": np.zeros(0, np.uint8), "slip_work": np.full(2 * n_tok, -1, np.int32)}
    empty = {"sa_blob": np.zeros(0, np.uint8), "sa_off": np.zeros(1, np.int64),
             "sa_start": np.zeros(1, np.int32), "sa_addr": np.zeros(0, np.int32)}
    start, tok, dist, work = _core.slip_lists(_core.Index({**arrays, **none, **empty}))
    return {"slip_start": start, "slip_tok": tok, "slip_dist": dist, "slip_work": work}


def _stored_answers(arrays: dict, words: list[str], prefixes: tuple) -> dict:
    """The answers, at every limit, of the one-word queries that scan the most: every prefix
    (up to SHORT_PREFIX letters) of the vocabulary whose postings exceed ANSWER_MIN (`s`, `ke`,
    `delft`). They are what the search itself answers, computed here by the search on the
    finished arrays; a query that is exactly one such word (and no focus point) is then a copy.

    Also the four digits of every postcode area (`9781`), the first half of a postcode being
    typed: it reads as every postcode of the area (a few hundred), the first address of each
    and its group's prior a cache miss or two apiece (40 us at the median, 85 at the p99)."""
    keys, _, total = prefixes      # _prefix_postings
    areas = {str(area) for area in np.unique(arrays["pc_code"] // 676).tolist()}
    texts = sorted({w for w, k in keys.items() if total[k] > ANSWER_MIN} | areas, key=str.encode)
    empty = {"sa_blob": np.zeros(0, np.uint8), "sa_off": np.zeros(1, np.int64),
             "sa_start": np.zeros(1, np.int32), "sa_addr": np.zeros(0, np.int32)}
    index = _core.Index({**arrays, **empty})      # no stored answers: the search proper
    start = [0]
    addr: list[int] = []
    for w in texts:
        for limit in range(1, _core.SIZES["MAXLIMIT"] + 1):
            addr += index.search_ids(w, limit=limit)
            start.append(len(addr))
    sa_blob, sa_off = _blob([w.encode() for w in texts])
    return {"sa_blob": sa_blob, "sa_off": sa_off, "sa_start": np.array(start, dtype=np.int32),
            "sa_addr": np.array(addr, dtype=np.int32)}


def _number_ranges(a_number: np.ndarray, g_start: np.ndarray) -> np.ndarray:
    """Per group, its highest house number (capped at NUM_HIGH_MAX) above NUM_LOW_BITS bits of
    its lowest (capped at what they hold): the scan tells from these, beside each posting,
    whether a group can hold the typed number without touching it (_score.pxi `_may_hold`).
    A group's addresses are sorted by number; a cap only ever makes the range wider."""
    low_bits, high_max = BITS["NUM_LOW_BITS"], BITS["NUM_HIGH_MAX"]
    top = np.minimum(a_number[g_start[1:] - 1], high_max).astype(np.uint32)
    bottom = np.minimum(a_number[g_start[:-1]], (1 << low_bits) - 1).astype(np.uint32)
    return (top << np.uint32(low_bits)) | bottom


def _suffix_starts(a_letter, a_addition, additions, g_start) -> np.ndarray:
    """Per group, bit i set when one of its addresses has the letter i (a = 0) or an addition
    starting with it (case-insensitive), bit 26 when one has an addition starting with a digit
    (the bits of `_core.first_bit`): a typed part that is neither a word of the group nor the
    start of one of these cannot fit any of its addresses (_scan.pxi `_may_fit`)."""
    first = np.array([_core.first_bit(a[:1].lower()) if a[:1].isascii() and a[:1].isalnum() else 32
                      for a in additions], dtype=np.uint32)
    letter = np.array([_core.first_bit(chr(c).lower()) if 65 <= c <= 90 or 97 <= c <= 122 else 32
                       for c in range(256)], dtype=np.uint32)
    bits = np.zeros(len(a_letter), dtype=np.uint32)
    for b in (letter[a_letter], first[a_addition]):
        bits |= np.where(b < 32, np.left_shift(np.uint32(1), np.minimum(b, 31)), 0).astype(np.uint32)
    return np.bitwise_or.reduceat(bits, g_start[:-1]).astype(np.uint32)


def _postcode_ranges(a_postcode, g_start) -> np.ndarray:
    """Per group, the lowest four digits of its addresses' postcodes above PC_DIGIT_BITS bits of
    the highest: a query with a postcode being typed after the number ("kerkstraat 12 2011")
    leaves a group none of whose postcodes can be it without touching it (_scan.pxi
    `_may_fit`)."""
    digits = (a_postcode // 676).astype(np.uint32)
    low = np.minimum.reduceat(digits, g_start[:-1])
    high = np.maximum.reduceat(digits, g_start[:-1])
    return ((low << np.uint32(BITS["PC_DIGIT_BITS"])) | high).astype(np.uint32)


def _first_letters(words, g_tok, g_tok_start):
    """Per group, bit i set when one of its tokens starts with letter i (a = 0), bit 26 with a
    digit: a one-letter word (`van der k`) has no two-letter signature bit, but this filters."""
    return _group_bits(words, g_tok, g_tok_start, _core.first_bit, np.uint32)


def _prefix_postings(words, v_post_start):
    """Every prefix of up to SHORT_PREFIX letters of the vocabulary: its id (`keys`), the
    (prefix id, token id) pairs, and the postings under each prefix (`total`, by id)."""
    counts = np.diff(v_post_start).astype(np.int64)
    keys: dict[str, int] = {}
    tok_keys = []  # (prefix id, token id)
    for t, w in enumerate(words):
        for n in range(1, min(SHORT_PREFIX, len(w)) + 1):
            k = keys.setdefault(w[:n], len(keys))
            tok_keys.append((k, t))
    kt = np.array(tok_keys, dtype=np.int64).reshape(-1, 2)
    total = np.bincount(kt[:, 0], weights=counts[kt[:, 1]], minlength=len(keys))
    return keys, kt, total


def _short_prefix_lists(words, v_post_start, v_post, g_prior, v_post_meta, prefixes):
    """For every prefix of up to SHORT_PREFIX letters whose postings exceed SHORT_PREFIX_MIN,
    the SHORT_PREFIX_TOP groups that hold a token with that prefix and could score best for it
    (prior minus the prefix penalty of their shortest such token), with that token's length."""
    counts = np.diff(v_post_start).astype(np.int64)
    keys, kt, total = prefixes     # _prefix_postings
    big = total > SHORT_PREFIX_MIN
    kt = kt[big[kt[:, 0]]]
    if len(kt) == 0:  # a small index: every prefix is scanned in full
        sp_blob, sp_off = _blob([])
        return (sp_blob, sp_off, np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0, np.uint8),
                np.zeros(0, np.uint8))
    # expand to (prefix, token, group) triples through the postings of each token
    reps = counts[kt[:, 1]]
    pk = np.repeat(kt[:, 0], reps)
    pt = np.repeat(kt[:, 1], reps)
    starts = np.repeat(v_post_start[kt[:, 1]].astype(np.int64) - np.cumsum(reps) + reps, reps)
    pidx = np.arange(len(pk), dtype=np.int64) + starts
    pg = v_post[pidx]
    pm = v_post_meta[pidx].astype(np.int64)
    texts = {v: k for k, v in keys.items()}
    prefix_len = np.zeros(len(keys), dtype=np.float64)
    for k, text in texts.items():
        prefix_len[k] = len(text)
    word_len = np.array([len(w) for w in words], dtype=np.float64)
    toklen = word_len[pt]
    wlen = prefix_len[pk]
    pen = np.where(toklen == wlen, 0.0, PREFIX_PEN + PREFIX_FRAC * (1.0 - wlen / toklen))
    bound = g_prior[pg] - pen
    order = np.lexsort((toklen, pg, -bound, pk))
    pk, pg, toklen, pm = pk[order], pg[order], toklen[order], pm[order]
    # one entry per (prefix, group): its first, best-bound one; then the first
    # SHORT_PREFIX_TOP of each prefix
    _, first_of_pair, pair = np.unique(pk * (int(pg.max()) + 1) + pg, return_index=True,
                                       return_inverse=True)
    # the group's bound byte over all its tokens with the prefix: the least uncovered, the
    # most double covers, a kind flag only when every such token has it
    unc_bits, glued_bit = BITS["META_UNCOVERED"], BITS["META_GLUED"]
    kind_bits = BITS["META_LOCALITY"] | BITS["META_ALIAS"] | BITS["META_MUNICIPALITY"]
    unc = np.full(len(first_of_pair), unc_bits, dtype=np.int64)
    np.minimum.at(unc, pair, pm & unc_bits)
    glued = np.zeros(len(first_of_pair), dtype=np.int64)
    np.maximum.at(glued, pair, pm & glued_bit)
    flags = np.full(len(first_of_pair), kind_bits, dtype=np.int64)
    np.bitwise_and.at(flags, pair, pm & kind_bits)
    pair_meta = unc | glued | flags
    keep = np.sort(first_of_pair)
    pk, pg, toklen, pm = pk[keep], pg[keep], toklen[keep], pair_meta[pair[keep]]
    first = np.searchsorted(pk, pk, side="left")
    keep = (np.arange(len(pk)) - first) < SHORT_PREFIX_TOP
    pk, pg, toklen, pm = pk[keep], pg[keep], toklen[keep], pm[keep]
    ids = sorted(np.unique(pk).tolist(), key=lambda k: texts[k].encode())
    rank = np.zeros(len(keys), dtype=np.int64)
    rank[ids] = np.arange(len(ids))
    new_pk = rank[pk]
    order = np.argsort(new_pk, kind="stable")
    sp_group = pg[order].astype(np.int32)
    sp_toklen = np.minimum(toklen[order], 255).astype(np.uint8)
    sp_meta = pm[order].astype(np.uint8)
    sp_start = np.searchsorted(new_pk[order], np.arange(len(ids) + 1)).astype(np.int32)
    sp_blob, sp_off = _blob([texts[k].encode() for k in ids])
    return sp_blob, sp_off, sp_start, sp_group, sp_toklen, sp_meta


def _swap_into_place(tmp: Path, out_dir: Path) -> None:
    """Replace `out_dir` by `tmp` so that readers see the old or the new index, never half."""
    os.chmod(tmp, 0o755)
    if out_dir.exists() or out_dir.is_symlink():
        old = out_dir.with_name(f".{out_dir.name}.old.{os.getpid()}")
        os.rename(out_dir, old)
        os.rename(tmp, out_dir)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:  # a file or a link (only with --force): the link goes, never what it points to
            old.unlink()
    else:
        os.rename(tmp, out_dir)
