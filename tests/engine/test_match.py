"""Batch matching (issue 12, part 6): `AddressIndex.match` and `python -m engine match`.

The answers are those of a one-at-a-time loop over `suggest(text, limit=1)`; the file command
writes one row per input row, in order, the input row as it was, and never replaces a file it
was not told to."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from testdata import REPO

import engine
from engine.match import OUTPUT_COLUMNS, MatchFileError, match_file
from engine.normalize import fold


def _messy_module():
    spec = importlib.util.spec_from_file_location("messy", REPO / "benchmarks" / "messy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def messy(sample_source):
    """3,000 messy lines made from the sample (benchmarks/messy.py), with odd values mixed in."""
    texts = [t for _, t in _messy_module().messy_rows(sample_source, 3000, seed=5, rows=643_071)]
    return texts + ["", "  ", "!!!", "x" * 129, "é" * 128, None, 12, b"damrak 1", "kerk\x00straat 1",
                    "herestraat 12 \udc80groningen"]


def loop(index, text):
    """What one suggest call says about a text: (hit, quality, reason)."""
    try:
        hits = index.suggest(text, limit=1)
    except engine.QueryError as e:
        return None, "", "too_long" if e.code == "query_too_long" else "not_text"
    if not hits:
        return None, "", "empty" if not fold(text).split() else "no_match"
    h = hits[0]
    return h, {"typed": "exact" if h.score >= 0 else "partial"}.get(h.found, h.found), ""


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_same_answers_as_a_loop(sample_index, messy, threads):
    matches = list(sample_index.match(messy, threads=threads, chunk_size=97))
    assert [m.text for m in matches] == messy
    for m, text in zip(matches, messy, strict=True):
        if not isinstance(text, str) or "\x00" in text or "\udc80" in text:
            assert (m.hit, m.quality, m.reason) == (None, "", "not_text"), text
            continue
        assert (m.hit, m.quality, m.reason) == loop(sample_index, text), text
    qualities = {m.quality for m in matches}
    assert {"exact", "partial", "slip", "retry"} <= qualities
    assert {m.reason for m in matches} == {"", "no_match", "empty", "too_long", "not_text"}


def test_reads_lazily(sample_index):
    """An endless generator works: texts are read a few chunks ahead of what is yielded."""
    endless = itertools.cycle(["herestraat 12 groningen", "vrijthof 1 maastricht"])
    first = list(itertools.islice(sample_index.match(endless, threads=2, chunk_size=10), 25))
    assert [m.hit.street for m in first[:2]] == ["Herestraat", "Vrijthof"]


def test_bad_arguments(sample_index):
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match="threads"):
            sample_index.match(["damrak 1"], threads=bad)
    with pytest.raises(ValueError, match="chunk_size"):
        sample_index.match(["damrak 1"], chunk_size=0)
    with pytest.raises(TypeError, match="one text"):
        sample_index.match("damrak 1")


# ---------------------------------------------------------------------------------------------
# the file command

def write(path: Path, text: str) -> Path:
    data = text.encode("utf-8", "surrogateescape")
    if path.suffix == ".zst":
        data = zstandard.ZstdCompressor().compress(data)
    elif path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def read(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".zst":
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    elif path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", "surrogateescape")


INPUT = ('id;adres;note\n'
         '1;herestraat 12 groningen;plain\n'
         '2;"vrijthof 1, maastricht";"a ""quoted"" note"\n'
         '3;"hooistraat 2a\nden haag";two lines\n'
         '4;;empty\n'
         '5\n'
         '6;qqqqxxzz 12;nothing\n'
         f'7;{"x" * 130};long\n'
         '8;herestraat 12 \udc80groningen;not utf-8\r\n'
         '9;HERESTRAT 12 GRONINGEN;slip')


@pytest.mark.parametrize(("src", "dst"), [("in.csv", "out.csv"), ("in.csv.zst", "out.csv.gz"),
                                          ("in.csv.gz", "out.csv.zst")])
def test_one_row_per_row_as_written(sample_index, tmp_path, src, dst):
    source = write(tmp_path / src, INPUT)
    counts = match_file(sample_index, source, "adres", tmp_path / dst, progress=False, threads=2,
                        chunk_size=3)
    text = read(tmp_path / dst)
    out = list(csv.reader(io.StringIO(text), delimiter=";"))
    inp = list(csv.reader(io.StringIO(INPUT), delimiter=";"))
    assert len(out) == len(inp) == 10
    assert out[0] == inp[0] + list(OUTPUT_COLUMNS)
    n = len(OUTPUT_COLUMNS)
    for a, b in zip(inp[1:], out[1:], strict=True):
        assert b[: len(a)] == a and len(b) == len(a) + n
    # each input record is repeated as it was written, then the match
    assert text.split("\n")[2].startswith('2;"vrijthof 1, maastricht";"a ""quoted"" note";Vrijthof;1;')
    got = {b[0]: dict(zip(OUTPUT_COLUMNS, b[-n:], strict=True)) for b in out[1:]}
    assert got["1"]["match_street"] == "Herestraat" and got["1"]["match_quality"] == "exact"
    assert got["1"]["match_postcode"] == "9711 LJ" and got["1"]["match_number"] == "12"
    assert got["2"]["match_street"] == "Vrijthof" and got["3"]["match_street"] == "Hooistraat"
    assert got["3"]["match_letter"] == "A"
    assert [got[k]["match_reason"] for k in "456789"] == ["empty", "missing", "no_match", "too_long",
                                                          "not_text", ""]
    assert got["9"]["match_quality"] == "slip" and got["9"]["match_street"] == "Herestraat"
    assert all(got[k]["match_street"] == "" for k in "45678")
    hit = sample_index.suggest("herestraat 12 groningen", limit=1)[0]
    assert float(got["1"]["match_latitude"]) == hit.latitude
    assert float(got["1"]["match_score"]) == pytest.approx(hit.score, abs=5e-4)
    assert counts == {"rows": 9, "exact": 3, "slip": 1, "empty": 1, "missing": 1, "no_match": 1,
                      "too_long": 1, "not_text": 1}


def test_never_replaces_a_file_unless_forced(sample_index, tmp_path):
    source = write(tmp_path / "in.csv", INPUT)
    out = write(tmp_path / "out.csv", "mine\n")
    with pytest.raises(MatchFileError, match="exists: give --force"):
        match_file(sample_index, source, "adres", out, progress=False)
    assert out.read_text() == "mine\n"
    with pytest.raises(MatchFileError, match="input file itself"):
        match_file(sample_index, source, "adres", source, progress=False, force=True)
    assert read(source) == INPUT
    match_file(sample_index, source, "adres", out, progress=False, force=True)
    assert read(out).startswith("id;adres;note;match_street")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


def test_clear_errors(sample_index, tmp_path):
    source = write(tmp_path / "in.csv", INPUT)
    with pytest.raises(MatchFileError, match="no column 'address'; its columns are 'id', 'adres', 'note'"):
        match_file(sample_index, source, "address", tmp_path / "o.csv", progress=False)
    with pytest.raises(MatchFileError, match="no input file"):
        match_file(sample_index, tmp_path / "nope.csv", "adres", tmp_path / "o.csv", progress=False)
    with pytest.raises(MatchFileError, match="empty: it needs a header"):
        match_file(sample_index, write(tmp_path / "e.csv", ""), "adres", tmp_path / "o.csv", progress=False)
    with pytest.raises(MatchFileError, match="not closed"):
        match_file(sample_index, write(tmp_path / "q.csv", 'adres\n"open\n' + "x\n" * 1001), "adres",
                   tmp_path / "o.csv", progress=False)
    assert not (tmp_path / "o.csv").exists()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_streams_chunk_by_chunk(sample_index, tmp_path):
    """The first chunk is searched before the rest of the file is read: a file that fails to
    read after its first lines fails only then, with the rows before it already matched."""
    from engine.match import _record_chunks, _Stop

    lines = iter(["a\n"] * 5 + ["b\n"] * 5)
    read_lines = []

    def f():
        for line in lines:
            read_lines.append(line)
            yield line

    chunks = _record_chunks(f(), ";", 0, 4, _Stop())
    assert next(chunks) == (["a"] * 4, ["a"] * 4)
    assert len(read_lines) == 4


@pytest.mark.slow
def test_command_line(sample_index_dir, tmp_path):
    source = write(tmp_path / "in.csv.zst", INPUT)
    out = tmp_path / "out.csv"
    cmd = [sys.executable, "-m", "engine", "match", str(source), "--column", "adres", "--out", str(out),
           "--index", str(sample_index_dir), "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "rows=9 exact=3" in r.stderr
    assert len(read(out).splitlines()) == len(INPUT.splitlines())
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "exists: give --force" in r.stderr
    r = subprocess.run(cmd + ["--force", "--column", "nope"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "no column 'nope'" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------------
# damaged input (issue 37, items 4 and 6)

@pytest.fixture(scope="module")
def address_lines(sample_source) -> list[str]:
    """A match input made from the sample at run time: a header and 40,000 rows `id;adres` (some
    blocks of zstd: one is decompressed only whole)."""
    with zstandard.ZstdDecompressor().stream_reader(open(sample_source, "rb"), closefd=True) as f:
        text = io.TextIOWrapper(f, encoding="utf-8")
        rows = list(csv.DictReader(itertools.islice(text, 40_001), delimiter=";"))
    return ["id;adres"] + [f"{i};{r['straat']} {r['huisnummer']}{r['huisletter']} {r['woonplaats']}"
                           for i, r in enumerate(rows, start=1)]


def run_match(source: Path, out: Path, index_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "engine", "match", str(source), "--column", "adres", "--out", str(out),
           "--index", str(index_dir), "--no-progress", "--threads", "2", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=source.parent)


@pytest.mark.slow
@pytest.mark.parametrize("packed", [".zst", ".gz"])
def test_a_truncated_compressed_input_is_an_error_and_says_where(sample_index_dir, tmp_path, address_lines,
                                                                 packed):
    """Regression (issue 37, item 4): a .zst input cut in half was matched up to the cut, with
    exit 0 and nothing said. Now: exit 1, the message names the line where the input breaks off,
    no OUTPUT, and the rows before the break are kept, matched, in OUTPUT's `.incomplete` twin."""
    whole = write(tmp_path / f"whole.csv{packed}", "\n".join(address_lines) + "\n").read_bytes()
    source = tmp_path / f"in.csv{packed}"
    source.write_bytes(whole[: len(whole) // 2])
    out = tmp_path / "out.csv"
    r = run_match(source, out, sample_index_dir)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    m = re.search(r"breaks off after line ([\d,]+) \(data row ([\d,]+)\)", r.stderr)
    assert m, r.stderr
    line, rows = (int(g.replace(",", "")) for g in m.groups())
    assert line == rows + 1 and 0 < rows < len(address_lines) - 1
    assert not out.exists()
    kept = tmp_path / "out.incomplete.csv"
    assert str(kept) in r.stderr
    got = read(kept).splitlines()
    assert len(got) == rows + 1
    # every row read whole before the break, in order, each with its match; no half row
    for typed, matched in zip(address_lines[: rows + 1], got, strict=True):
        assert matched.startswith(typed + ";")
    assert all(row.split(";")[-2] in ("exact", "partial") for row in got[1:])
    # a file of that name is never replaced without --force
    kept.write_text("mine\n")
    r = run_match(source, out, sample_index_dir)
    assert r.returncode == 1 and "exists (give --force" in r.stderr and kept.read_text() == "mine\n"
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_a_corrupt_zst_input_is_an_error(sample_index, tmp_path, address_lines):
    """Damage inside a .zst input (bytes changed, size kept) is an error, never a short output."""
    whole = bytearray(write(tmp_path / "w.csv.zst", "\n".join(address_lines) + "\n").read_bytes())
    whole[len(whole) // 2: len(whole) // 2 + 64] = bytes(range(64))
    source = tmp_path / "in.csv.zst"
    source.write_bytes(bytes(whole))
    with pytest.raises(MatchFileError, match="breaks off after line"):
        match_file(sample_index, source, "adres", tmp_path / "o.csv", progress=False)
    assert not (tmp_path / "o.csv").exists()


def test_a_compressed_name_on_plain_text_is_a_clear_error(sample_index_dir, tmp_path):
    """Regression (issue 37, item 6): a .zst-named file that is plain text was a ZstdError
    traceback; it is the build's message, with exit 1. A compressed file named as plain is
    refused too, rather than matched as garbage."""
    plain = tmp_path / "in.csv.zst"
    plain.write_text("id;adres\n1;herestraat 12 groningen\n")
    r = run_match(plain, tmp_path / "o.csv", sample_index_dir)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "named .zst but is not zstd-compressed" in r.stderr
    packed = write(tmp_path / "p.csv.gz", INPUT)
    hidden = tmp_path / "p.csv"
    packed.rename(hidden)
    r = run_match(hidden, tmp_path / "o.csv", sample_index_dir)
    assert r.returncode == 1 and "looks compressed" in r.stderr, r.stderr
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("name", ["in.csv", "in.csv.zst"])
def test_a_byte_order_mark_before_the_header(sample_index, tmp_path, name):
    """Regression (issue 37, item 6): a UTF-8 BOM before the header (a spreadsheet's "CSV UTF-8")
    made the first column's name "\\ufeffadres", so --column adres was "no column". It is read as
    the mark it is, and the output starts with one too."""
    source = write(tmp_path / name, "\ufeffadres;id\nherestraat 12 groningen;1\n")
    counts = match_file(sample_index, source, "adres", tmp_path / "o.csv", progress=False)
    assert counts == {"rows": 1, "exact": 1}
    text = (tmp_path / "o.csv").read_text(encoding="utf-8")
    assert text.startswith("\ufeffadres;id;match_street;")
    assert text.splitlines()[1].startswith("herestraat 12 groningen;1;Herestraat;12;")
