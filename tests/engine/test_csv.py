"""Tests for the streaming CSV parser (engine._csv) and its reader (engine.ingest.source).

All inputs except the last test are small synthetic files written into tmp_path.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest
import zstandard
from testdata import DATA_DIR

from engine import _csv
from engine.ingest.source import ParsedTable, SourceError, read_source

# The layout of the real file: the required columns plus five that are ignored.
COLUMNS = (
    "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;"
    "provincie;lat;lon;type;bron;peildatum;gemeente_bron;provincie_bron"
).split(";")
HEADER = ";".join(COLUMNS)

GOOD = {
    "straat": "Damrak",
    "huisnummer": "1",
    "huisletter": "",
    "huisnummertoevoeging": "",
    "postcode": "1012LG",
    "woonplaats": "Amsterdam",
    "gemeente": "Amsterdam",
    "provincie": "Noord-Holland",
    "lat": "52.37605300",
    "lon": "4.89406900",
    "type": "VBO",
    "bron": "X",
    "peildatum": "2018-11-12",
    "gemeente_bron": "Amsterdam",
    "provincie_bron": "Noord-Holland",
}

ARRAYS = ("street", "locality", "municipality", "province", "number", "letter",
          "addition", "postcode", "lat", "lon", "line")
LISTS = ("streets", "localities", "municipalities", "provinces", "additions")


def row(columns=COLUMNS, **values: str) -> str:
    """One CSV line (no line ending) of GOOD with some fields replaced."""
    fields = {**GOOD, **values}
    return ";".join(fields[c] for c in columns)


def write(tmp_path: Path, lines: list[str | bytes], *, name="a.csv", eol=b"\r\n",
          final_eol=True) -> Path:
    """Write lines (str is UTF-8 encoded) joined by `eol` to tmp_path/name."""
    data = eol.join(x.encode() if isinstance(x, str) else x for x in lines)
    if final_eol:
        data += eol
    path = tmp_path / name
    path.write_bytes(data)
    return path


def parse(tmp_path: Path, lines: list[str | bytes], **kw) -> ParsedTable:
    return read_source(write(tmp_path, lines), progress=False, max_bad_share=1.0, **kw)


def content(table: ParsedTable) -> dict:
    """Everything parsed from the content (not the file name/hash), comparable with ==."""
    out = {name: getattr(table, name).tolist() for name in ARRAYS}
    out.update({name: getattr(table, name) for name in LISTS})
    out.update(rows_in=table.rows_in, rejected=table.rejected, errors=table.errors)
    return out


def postcode(code: str) -> int:
    return int(code[:4]) * 676 + (ord(code[4]) - 65) * 26 + (ord(code[5]) - 65)


# --------------------------------------------------------------------------- good rows


def test_values_of_accepted_rows(tmp_path):
    path = write(tmp_path, [
        HEADER,
        row(),
        row(huisnummer="2", huisletter="a", huisnummertoevoeging="bis", postcode="1012lg"),
        row(straat="  Nieuwendijk ", huisnummer="99999", huisletter="B", lat="52.3760535",
            lon="4.8940694999"),
        row(straat="Damrak", woonplaats="'s-Gravenhage", gemeente="Súdwest-Fryslân",
            huisnummertoevoeging="2", lat="53.7", lon="3.2"),
        row(huisnummertoevoeging="bis", huisnummer="007", lat="50.70", lon="7.300000"),
    ])
    t = read_source(path, progress=False)
    assert (t.rows_in, t.rejected, t.errors, len(t)) == (5, 0, [], 5)
    assert t.streets == ["Damrak", "Nieuwendijk"]
    assert t.street.tolist() == [0, 0, 1, 0, 0]
    assert t.localities == ["Amsterdam", "'s-Gravenhage"]
    assert t.locality.tolist() == [0, 0, 0, 1, 0]
    assert t.municipalities == ["Amsterdam", "Súdwest-Fryslân"]
    assert t.municipality.tolist() == [0, 0, 0, 1, 0]
    assert t.provinces == ["Noord-Holland"]
    assert t.province.tolist() == [0] * 5
    assert t.number.tolist() == [1, 2, 99999, 1, 7]
    assert t.letter.tolist() == [0, ord("a"), ord("B"), 0, 0]  # case kept
    assert t.additions == ["", "bis", "2"]                      # case kept, first-seen order
    assert t.addition.tolist() == [0, 1, 0, 2, 1]
    assert t.postcode.tolist() == [postcode("1012LG")] * 5      # lower case upper-cased
    # micro-degrees, rounded half away from zero from the exact decimal
    assert t.lat.tolist() == [52376053, 52376053, 52376054, 53700000, 50700000]
    assert t.lon.tolist() == [4894069, 4894069, 4894069, 3200000, 7300000]
    assert t.line.tolist() == [2, 3, 4, 5, 6]
    data = path.read_bytes()
    assert t.source_name == "a.csv"
    assert t.source_sha256 == hashlib.sha256(data).hexdigest()
    assert t.bytes_read == len(data)


def test_dtypes(tmp_path):
    t = parse(tmp_path, [HEADER, row()])
    for name in ARRAYS:
        arr = getattr(t, name)
        assert arr.dtype == (np.uint8 if name == "letter" else np.int32), name
        assert arr.shape == (1,) and arr.flags.c_contiguous
    for name in LISTS:
        assert all(type(s) is str for s in getattr(t, name))


def test_header_only_and_empty_table(tmp_path):
    t = parse(tmp_path, [HEADER])
    assert (t.rows_in, t.rejected, len(t)) == (0, 0, 0)
    assert t.additions == [""] and t.streets == []
    assert all(getattr(t, name).shape == (0,) for name in ARRAYS)


def test_columns_found_by_name_in_any_order_extra_ignored(tmp_path):
    cols = ["extra", *reversed(COLUMNS[:10]), "Other"]
    header = ";".join(c.upper() if c == "lat" else c for c in cols)  # names case-insensitive
    values = {"extra": "x;y", "Other": ""}
    # the extra column holds a quoted `;`, which must not shift the fields
    line = ";".join('"x;y"' if c == "extra" else {**GOOD, **values}[c] for c in cols)
    t = parse(tmp_path, [header, line])
    assert (t.rows_in, t.rejected) == (1, 0)
    assert t.streets == ["Damrak"] and t.number.tolist() == [1]
    assert t.lat.tolist() == [52376053] and t.lon.tolist() == [4894069]


# --------------------------------------------------------------------------- rejections

LONG = "1234567890" * 3

REJECTIONS = [
    # (fields to replace, reason)
    ({"straat": ""}, "missing street"),
    ({"straat": "   "}, "missing street"),
    ({"woonplaats": ""}, "missing locality"),
    ({"gemeente": " "}, "missing municipality"),
    ({"provincie": ""}, "missing province"),
    ({"huisnummer": "0"}, "house number out of range 1..99999: '0'"),
    ({"huisnummer": "100000"}, "house number out of range 1..99999: '100000'"),
    ({"huisnummer": ""}, "house number out of range 1..99999: ''"),
    ({"huisnummer": "-1"}, "house number out of range 1..99999: '-1'"),
    ({"huisnummer": "+1"}, "house number out of range 1..99999: '+1'"),
    ({"huisnummer": " 1"}, "house number out of range 1..99999: ' 1'"),
    ({"huisnummer": "1.0"}, "house number out of range 1..99999: '1.0'"),
    ({"huisnummer": "12a"}, "house number out of range 1..99999: '12a'"),
    ({"huisnummer": LONG}, "house number out of range 1..99999: '12345678901234567890'..."),
    ({"huisletter": "AB"}, "malformed house letter: 'AB'"),
    ({"huisletter": "1"}, "malformed house letter: '1'"),
    ({"huisletter": "é"}, "malformed house letter: 'é'"),
    ({"huisnummertoevoeging": "ABCDE"}, "malformed addition: 'ABCDE'"),
    ({"huisnummertoevoeging": "A-1"}, "malformed addition: 'A-1'"),
    ({"huisnummertoevoeging": "ß"}, "malformed addition: 'ß'"),
    ({"postcode": "0123AB"}, "malformed postcode: '0123AB'"),
    ({"postcode": "1234 AB"}, "malformed postcode: '1234 AB'"),
    ({"postcode": "123AB"}, "malformed postcode: '123AB'"),
    ({"postcode": "1234A1"}, "malformed postcode: '1234A1'"),
    ({"postcode": "1234ABC"}, "malformed postcode: '1234ABC'"),
    ({"postcode": ""}, "malformed postcode: ''"),
    ({"lat": "48.1", "lon": "11.5"}, "coordinates outside the Netherlands: 48.1, 11.5"),
    ({"lat": "53.7000001"}, "coordinates outside the Netherlands: 53.7000001, 4.89406900"),
    ({"lat": "50.6999996"}, "coordinates outside the Netherlands: 50.6999996, 4.89406900"),
    ({"lon": "-4.9"}, "coordinates outside the Netherlands: 52.37605300, -4.9"),
    ({"lon": "7.30000001"}, "coordinates outside the Netherlands: 52.37605300, 7.30000001"),
    ({"lat": "abc"}, "malformed coordinates: 'abc', '4.89406900'"),
    ({"lat": "52,3"}, "malformed coordinates: '52,3', '4.89406900'"),
    ({"lon": "4.9e0"}, "malformed coordinates: '52.37605300', '4.9e0'"),
    ({"lon": ""}, "malformed coordinates: '52.37605300', ''"),
    ({"lat": "52."}, "malformed coordinates: '52.', '4.89406900'"),
    ({"lat": ".5"}, "malformed coordinates: '.5', '4.89406900'"),
    ({"lat": " 52.3"}, "malformed coordinates: ' 52.3', '4.89406900'"),
]


@pytest.mark.parametrize(("values", "reason"), REJECTIONS, ids=[r for _, r in REJECTIONS])
def test_field_rejections(tmp_path, values, reason):
    t = parse(tmp_path, [HEADER, row(), row(**values), row(huisnummer="3")])
    assert t.errors == [(3, reason)]
    assert (t.rows_in, t.rejected, len(t)) == (3, 1, 2)
    assert t.line.tolist() == [2, 4]
    assert t.number.tolist() == [1, 3]


RAW_REJECTIONS = [
    # (the bad line as bytes, reason)
    (row().rsplit(";", 1)[0].encode(), "wrong column count: 14 fields, expected 15"),
    (row().encode() + b";", "wrong column count: 16 fields, expected 15"),
    (b"Damrak", "wrong column count: 1 fields, expected 15"),
    (row(bron="\udcff").encode("utf-8", "surrogateescape"), "invalid UTF-8"),  # ignored column
    (row(straat="Caf\udce9").encode("utf-8", "surrogateescape"), "invalid UTF-8"),  # latin-1 é
    (row(straat="\udcc0\udcaf").encode("utf-8", "surrogateescape"), "invalid UTF-8"),  # overlong
    (row(straat="\udced\udca0\udc80").encode("utf-8", "surrogateescape"), "invalid UTF-8"),
    (row().encode() + b"\xc3", "invalid UTF-8"),                         # cut-off sequence
    (row(straat='"Damrak').encode(), "unterminated quote"),
    (row(provincie_bron='"Noord-Holland').encode(), "unterminated quote"),
    (row(straat='"Dam"rak').encode(), "malformed quoting: text after closing quote"),
]


@pytest.mark.parametrize(("line", "reason"), RAW_REJECTIONS,
                         ids=[f"{i}-{r}" for i, (_, r) in enumerate(RAW_REJECTIONS)])
def test_line_rejections(tmp_path, line, reason):
    t = parse(tmp_path, [HEADER, row(), row(), line, row()])
    assert t.errors == [(4, reason)]
    assert (t.rows_in, t.rejected) == (4, 1)
    assert t.line.tolist() == [2, 3, 5]


def test_first_failing_check_is_reported(tmp_path):
    # invalid UTF-8 beats everything; column count beats field checks;
    # field checks go in column order (street before house number before coordinates).
    t = parse(tmp_path, [
        HEADER,
        row(straat="", huisnummer="0").encode() + b"\xff",
        row(straat="").rsplit(";", 1)[0],
        row(straat="", huisnummer="0", lat="x"),
        row(huisnummer="0", lat="x"),
    ])
    assert [r for _, r in t.errors] == [
        "invalid UTF-8",
        "wrong column count: 14 fields, expected 15",
        "missing street",
        "house number out of range 1..99999: '0'",
    ]


def test_blank_lines(tmp_path):
    # Blank lines inside the data are bad rows; blank lines at the end are not rows.
    t = parse(tmp_path, [HEADER, row(), "", "", row(), "", ""])
    assert t.rows_in == 4 and t.rejected == 2
    assert t.errors == [(3, "wrong column count: empty line, expected 15"),
                        (4, "wrong column count: empty line, expected 15")]
    assert t.line.tolist() == [2, 5]


def test_errors_capped_but_all_counted(tmp_path):
    n_bad = _csv.MAX_ERRORS + 5
    t = parse(tmp_path, [HEADER, row()] + [row(postcode="x")] * n_bad + [row()])
    assert t.rejected == n_bad and t.rows_in == n_bad + 2
    assert len(t.errors) == _csv.MAX_ERRORS
    assert t.errors[0] == (3, "malformed postcode: 'x'")
    assert t.errors[-1][0] == 2 + _csv.MAX_ERRORS
    assert t.line.tolist() == [2, n_bad + 3]


# --------------------------------------------------------------------------- syntax


def test_quoting(tmp_path):
    t = parse(tmp_path, [
        HEADER,
        row(straat='"Hoogerwerfsweg ""De Tong"""'),
        row(straat='"Laan; 1e deel"', woonplaats='"Den Haag"  '),  # spaces after the quote
        row(straat='""""', huisletter='""', bron='"a;""b"";c"'),    # quoted empty field
        row(straat='Dam"rak'),                                      # a quote inside: literal
        row(straat='" Hoogerwerfsweg ""De Tong"" "'),               # stripped after unquoting
    ])
    assert t.errors == []
    assert t.streets == ['Hoogerwerfsweg "De Tong"', "Laan; 1e deel", '"', 'Dam"rak']
    assert t.street.tolist() == [0, 1, 2, 3, 0]
    assert t.localities == ["Amsterdam", "Den Haag"]
    assert t.letter.tolist() == [0] * 5


def test_line_endings_bom_and_last_line(tmp_path):
    lines = [HEADER, row(), row(huisnummer="2", straat="Kalverstraat")]
    expected = content(parse(tmp_path, lines))
    assert expected["rows_in"] == 2 and expected["rejected"] == 0
    for eol in (b"\r\n", b"\n"):
        for final_eol in (True, False):
            path = write(tmp_path, lines, eol=eol, final_eol=final_eol, name="b.csv")
            assert content(read_source(path, progress=False)) == expected
            path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # UTF-8 byte order mark
            assert content(read_source(path, progress=False)) == expected


def test_compressed_inputs(tmp_path):
    lines = [HEADER] + [row(huisnummer=str(i), straat=f"Straat {i // 7}") for i in range(1, 3000)]
    lines.insert(1000, row(postcode="0000AA"))
    plain = write(tmp_path, lines, name="x.csv")
    data = plain.read_bytes()
    zst = tmp_path / "x.csv.zst"
    zst.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    # several zstd frames one after the other, as `cat a.zst b.zst` makes
    multi = tmp_path / "multi.csv.zst"
    cut = len(data) // 3
    multi.write_bytes(zstandard.ZstdCompressor().compress(data[:cut])
                      + zstandard.ZstdCompressor().compress(data[cut:]))
    gz = tmp_path / "x.csv.gz"
    gz.write_bytes(gzip.compress(data))

    expected = read_source(plain, progress=False, max_bad_share=0.01)
    assert expected.rows_in == 2999 + 1 and expected.errors == [
        (1001, "malformed postcode: '0000AA'")]
    for path in (zst, multi, gz):
        t = read_source(path, progress=False, max_bad_share=0.01, chunk_size=4096)
        assert content(t) == content(expected), path.name
        assert t.source_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
        assert t.bytes_read == path.stat().st_size
        assert t.source_name == path.name


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 7, 64, 1000])
def test_chunk_boundaries(tmp_path, chunk_size):
    lines = [
        HEADER,
        row(straat='"Hoogerwerfsweg ""De Tong"""', gemeente="Súdwest-Fryslân"),
        row(huisnummertoevoeging="bis", huisletter="a"),
        row(straat='"unterminated'),
        row(bron="\udcff").encode("utf-8", "surrogateescape"),
        "",
        row(huisnummer="0"),
        row(woonplaats="Leeuwarden", lat="53.2012345"),
        "",
    ]
    path = write(tmp_path, lines)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    expected = content(read_source(path, progress=False, max_bad_share=1.0))
    assert expected["rows_in"] == 7 and expected["rejected"] == 4
    got = read_source(path, progress=False, max_bad_share=1.0, chunk_size=chunk_size)
    assert content(got) == expected


def test_parser_fed_byte_by_byte(tmp_path):
    data = ("\ufeff" + HEADER + "\r\n" + row(gemeente="Súdwest-Fryslân") + "\r\n"
            + row(straat='"a;""b"""') + "\r\n" + row(huisletter="ab") + "\r\n").encode()
    whole = _csv.Parser()
    whole.feed(data)
    expected = whole.finish()
    parser = _csv.Parser()
    for i in range(len(data)):
        parser.feed(data[i:i + 1])
    parser.feed(b"")
    got = parser.finish()
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(got[key], value), key
        else:
            assert got[key] == value, key
    assert got["errors"] == [(4, "malformed house letter: 'ab'")]
    assert got["streets"] == ["Damrak", 'a;"b"']
    assert got["municipalities"] == ["Súdwest-Fryslân", "Amsterdam"]


def test_parser_misuse():
    p = _csv.Parser()
    p.feed((HEADER + "\n").encode())
    assert p.columns == COLUMNS and p.lines == 1
    p.finish()
    with pytest.raises(RuntimeError):
        p.feed(b"x")
    with pytest.raises(RuntimeError):
        p.finish()


# --------------------------------------------------------------------------- errors


def test_missing_file(tmp_path):
    with pytest.raises(SourceError, match="not found"):
        read_source(tmp_path / "nope.csv.zst", progress=False)


@pytest.mark.parametrize("drop", ["postcode", "lat", "straat"])
def test_header_lacks_required_column(tmp_path, drop):
    cols = [c for c in COLUMNS if c != drop]
    path = write(tmp_path, [";".join(cols), row(cols)])
    with pytest.raises(SourceError, match=f"lacks required column.*{drop}"):
        read_source(path, progress=False)


def test_header_problems(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(SourceError, match="no header"):
        read_source(empty, progress=False)
    twice = write(tmp_path, [HEADER + ";postcode", row() + ";1012LG"], name="twice.csv")
    with pytest.raises(SourceError, match="twice"):
        read_source(twice, progress=False)
    assert issubclass(SourceError, ValueError)


def test_corrupt_compressed_file(tmp_path):
    data = write(tmp_path, [HEADER] + [row()] * 200).read_bytes()
    gz = tmp_path / "bad.csv.gz"
    gz.write_bytes(gzip.compress(data)[:-30])       # truncated
    with pytest.raises(SourceError, match="decompress"):
        read_source(gz, progress=False)
    zst = zstandard.ZstdCompressor().compress(data)
    cut = tmp_path / "cut.csv.zst"
    for blob in (zst[: len(zst) // 2], zst[:-3]):      # truncated frames
        cut.write_bytes(blob)
        with pytest.raises(SourceError, match="decompress"):
            read_source(cut, progress=False, max_bad_share=1.0)
    cut.write_bytes(zst + b"garbage!")                  # trailing junk
    with pytest.raises(SourceError, match="decompress"):
        read_source(cut, progress=False, max_bad_share=1.0)
    fake = tmp_path / "fake.csv.zst"
    fake.write_bytes(data)
    with pytest.raises(SourceError, match="not zstd"):
        read_source(fake, progress=False)


def test_bad_share_limit(tmp_path):
    good, bad = row(), row(huisnummer="0")
    # 1 bad row in 1000 is exactly the default limit of 0.1 %: accepted
    lines = [HEADER] + [good] * 999 + [bad]
    t = read_source(write(tmp_path, lines), progress=False)
    assert (t.rows_in, t.rejected, len(t)) == (1000, 1, 999)
    # 2 in 1000 is over it
    lines = [HEADER, bad] + [good] * 997 + [bad, bad]
    path = write(tmp_path, lines)
    with pytest.raises(SourceError) as info:
        read_source(path, progress=False)
    message = str(info.value)
    assert "3 of 1000 rows rejected" in message
    assert "0.3000%" in message and "0.1000%" in message
    assert "line 2: house number out of range 1..99999: '0'" in message
    assert "line 1000: house number" in message and "line 1001: house number" in message
    # a looser limit accepts the same file; a zero limit accepts no bad row
    assert read_source(path, progress=False, max_bad_share=0.01).rejected == 3
    with pytest.raises(SourceError, match="1 of 1000"):
        read_source(write(tmp_path, [HEADER] + [good] * 999 + [bad]), progress=False,
                    max_bad_share=0.0)


def test_share_message_lists_only_the_first_rows(tmp_path):
    path = write(tmp_path, [HEADER] + [row(postcode="?")] * 50)
    with pytest.raises(SourceError) as info:
        read_source(path, progress=False)
    message = str(info.value)
    assert "line 2:" in message and "line 6:" in message and "line 7:" not in message
    assert "45 more" in message


def test_progress_bar(tmp_path, capsys):
    t = read_source(write(tmp_path, [HEADER, row()]), progress=True)
    assert t.rows_in == 1
    assert "a.csv" in capsys.readouterr().err


# --------------------------------------------------------------------------- real data


def test_real_sample_file():
    path = DATA_DIR / "nl-addresses-sample.csv.zst"
    if not path.exists():
        pytest.fail(f"sample data not found at {path} (set ADDRESS_DATA_DIR)")
    t = read_source(path, progress=False, max_bad_share=0.0)
    assert t.rows_in == 643071
    assert t.rejected == 0 and t.errors == []
    assert len(t) == 643071
    assert set(t.municipalities) == {
        "'s-Gravenhage", "'s-Hertogenbosch", "Groningen", "Maastricht", "Súdwest-Fryslân"}
    assert np.all(np.diff(t.line) == 1) and t.line[0] == 2
    assert t.lat.min() >= 50_700_000 and t.lat.max() <= 53_700_000
    assert t.number.min() >= 1 and t.additions[0] == ""
