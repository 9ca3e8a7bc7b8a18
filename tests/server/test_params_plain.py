"""The plain spelling's shortcut of ``server.params.parse_query`` (issue 15, item 6; read in C
by ``engine.read_plain_query``) answers every query string exactly as the general path does:
the same ``Query``, or the same 400 (code, parameter and detail), whether or not the string has
the plain shape. So do the shortcuts of the other questions (issue 39: ``parse_lookup`` and
``parse_reverse``, read in C by ``engine.read_plain_lookup`` and ``read_plain_reverse``)."""

from __future__ import annotations

import random
from urllib.parse import quote_plus

import pytest

import engine
from server import params
from server.errors import ApiError


def outcome(parse, raw: bytes) -> tuple:
    try:
        query = parse(raw)
    except ApiError as exc:
        return ("error", exc.code, exc.parameter, str(exc))
    return ("query", type(query), tuple(query))


def plain(q: str, limit: str | None = "5") -> bytes:
    raw = "country=NLD&q=" + quote_plus(q)
    return (raw if limit is None else f"{raw}&limit={limit}").encode("ascii")


TEXTS = [
    "kerkstraat 12 utrecht",
    "",
    "   ",
    "1012LG 1",
    "a=b",  # '=' inside the value is part of it
    "straße 1",
    "\u00a0damrak",  # not printable, not a control character: allowed
    "damrak\t1",  # a control character
    "damrak\x001",
    "damrak\x85",  # C1
    "\U0001f3e0" * 128,  # 128 code points: the limit
    "\U0001f3e0" * 129,
    "a" * 128,
    "a" * 129,
    "e\u0301" * 64,
]

RAW = [
    *(plain(text) for text in TEXTS),
    *(plain("damrak 1", limit)
      for limit in ("1", "9", "10", None, "0", "11", "05", "+5", "5.0", "", "%35", "010", "100")),
    b"country=NLD&q=%FF%FE&limit=5",  # not UTF-8
    b"country=NLD&q=abc%4&limit=5",  # truncated escape
    b"country=NLD&q=%G1",
    b"country=NLD&q=dam\xe9rak&limit=5",  # a raw byte (WSGI carries the query as latin-1)
    b"country=NLD&q=damrak+1&limit=5&limit=6",
    b"country=NLD&q=damrak+1&limit=5&q=x",
    b"country=NLD&q=damrak+1&limit=5&highlight=true",
    b"country=NLD&q=damrak+1&limit=5&lat=52&lon=5",
    b"country=NLD&q=damrak+1&limit=5&lat=52",
    b"country=NLD&q=damrak+1&limit=5&unknown=1",
    b"country=NLD&q=damrak+1&limit=5&",
    b"country=nld&q=damrak+1&limit=5",
    b"country=%4ELD&q=damrak+1&limit=5",
    b"country=NLD&%71=damrak+1&limit=5",
    b"q=damrak+1&country=NLD&limit=5",
    b"limit=5&country=NLD&q=damrak+1",
    b"country=NLD&limit=5",
    b"country=NLD",
    b"q=damrak",
    b"",
    b"country=NLD&q=damrak+1&limit=5\n",
    b"country=NLD&q=1%2B1%2C+a%20b&limit=5",  # escaped "+", "," and space
    b"country=NLD&q=%c3%a9%C3%A9",  # hex digits in either case
    b"country=NLD&q=%C2%A0damrak",  # escaped, not printable: the general path
    b"country=NLD&q=%7F",
    b"country=NLD&q=%00",
    b"country=NLD&q=damrak%",
    b"country=NLD&q=damrak%2",
    b"country=NLD&q=%E2%82",  # a cut UTF-8 sequence
    b"country=NLD&q=%ED%A0%80",  # a surrogate: not UTF-8
    b"country=NLD&q=" + b"%C3%A9" * 128,
    b"country=NLD&q=" + b"%C3%A9" * 129,
    b"country=NLD&q=" + b"%F0%9F%8F%A0" * 129,  # more bytes than 128 code points can take
    b"country=NLD&q=a&limit=1%30",
    b"country=NLD&q=a&limit=10&",
    b"country=NLD&q=a&limit=100",
    b"country=NLD&q=a&limitx=1",
]


@pytest.mark.parametrize("raw", RAW, ids=lambda raw: raw.decode("latin-1")[:60])
def test_the_shortcut_answers_as_the_general_path(raw):
    assert outcome(params.parse_query, raw) == outcome(params._parse_general, raw)


def test_the_plain_spelling_takes_the_shortcut(monkeypatch):
    """The shortcut is taken (the general path is not called) for the widget's spelling, and
    not for a string that only looks like it."""
    calls = []
    general = params._parse_general
    monkeypatch.setattr(params, "_parse_general", lambda raw: calls.append(raw) or general(raw))
    assert params.parse_query(plain("kerkstraat 12 utrecht")) == ("kerkstraat 12 utrecht", 5, None, None, False, None)
    assert params.parse_query(plain("damrak", limit=None)).limit == 5
    assert params.parse_query(plain("stra\u00dfe 1", limit="10")) == ("stra\u00dfe 1", 10, None, None, False, None)
    assert calls == []
    params.parse_query(b"country=NLD&q=damrak&limit=5&highlight=false")
    params.parse_query(plain("\u00a0damrak"))
    assert len(calls) == 2


def test_read_plain_query_reads_the_plain_spelling_only():
    assert engine.read_plain_query(b"country=NLD&q=damrak+1") == ("damrak 1", 5)
    assert engine.read_plain_query(b"country=NLD&q=damrak%2C+1&limit=10") == ("damrak, 1", 10)
    assert engine.read_plain_query(b"country=NLD&q=1%2B1&limit=1") == ("1+1", 1)
    assert engine.read_plain_query(b"country=NLD&q=") == ("", 5)
    for raw in (b"q=damrak&country=NLD", b"country=NLD&q=damrak&limit=05", b"country=NLD&q=damrak&limit=",
                b"country=NLD&q=%zz", b"country=NLD&q=%C2%A0", b"country=NLD&q=\xc3\xa9", b"country=NL"):
        assert engine.read_plain_query(raw) is None, raw
    with pytest.raises(TypeError):
        engine.read_plain_query("country=NLD&q=damrak")  # type: ignore[arg-type]


def test_the_shortcut_answers_as_the_general_path_on_random_strings():
    """Strings of the plain head followed by what breaks a reading: escapes whole and cut,
    "+", "&", "=", bytes above 0x7F, control characters, limits near the canonical ones."""
    rng = random.Random(15)
    pieces = [b"a", b"Z", b"1", b" ", b"+", b"%", b"%2", b"%20", b"%2B", b"%2b", b"%C3", b"%A9", b"%C3%A9",
              b"%E2%82%AC", b"%FF", b"%00", b"%1F", b"%7F", b"%C2%85", b"%C2%A0", b"\xe9", b"\x7f", b"=",
              b"&", b"&limit=", b"&limit=5", b"&limit=10", b"&limit=0", b"&lat=1", b"&highlight=true"]
    for _ in range(3000):
        raw = b"country=NLD&q=" + b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))
        if rng.random() < 0.3:
            raw += rng.choice([b"&limit=1", b"&limit=10", b"&limit=11", b"&limit=5&", b""])
        if rng.random() < 0.05:
            raw += b"%C3%A9" * rng.randrange(120, 135)
        assert outcome(params.parse_query, raw) == outcome(params._parse_general, raw), raw


def same(kind: str, raw: bytes) -> None:
    """The shortcut of `kind` answers `raw` as its general path, and the same value (the floats
    too: their repr, -0.0 included)."""
    parse, general = {"lookup": (params.parse_lookup, params._lookup_general),
                      "reverse": (params.parse_reverse, params._reverse_general)}[kind]
    a, b = outcome(parse, raw), outcome(general, raw)
    assert a == b and repr(a) == repr(b), raw


QUESTIONS_RAW = {
    "lookup": [
        b"country=NLD&postcode=1012LG&number=1", b"country=NLD&postcode=1012+lg&number=99999",
        b"country=NLD&postcode=1012LG&number=100000", b"country=NLD&postcode=1012LG&number=01",
        b"country=NLD&postcode=1012LG&number=0", b"country=NLD&postcode=1012LG&number=",
        b"country=NLD&postcode=1012LG&number=1a", b"country=NLD&postcode=1012LG&number=+1",
        b"country=NLD&postcode=1012%20LG&number=1", b"country=NLD&postcode=&number=1",
        b"country=NLD&postcode=1012LG&number=1&letter=a", b"country=NLD&postcode=1012LG",
        b"country=NLD&number=1&postcode=1012LG", b"country=nld&postcode=1012LG&number=1",
        b"country=NLD&postcode=1012LG&number=1&", b"country=NLD&postcode=" + b"1" * 17 + b"&number=1",
        b"country=NLD&postcode=" + b"1" * 16 + b"&number=1", b"country=NLD&postcode=1012\xe9&number=1",
        b"country=NLD&postcode=1012LG&number=1\n", b"country=NLD&postcode=1012LG&number=%31",
    ],
    "reverse": [
        b"country=NLD&lat=52.37&lon=4.89", b"country=NLD&lat=52.37&lon=4.89&limit=10",
        b"country=NLD&lat=-0&lon=0", b"country=NLD&lat=90&lon=-180", b"country=NLD&lat=90.0000001&lon=5",
        b"country=NLD&lat=52.&lon=5", b"country=NLD&lat=.5&lon=5", b"country=NLD&lat=5e1&lon=5",
        b"country=NLD&lat=052.10&lon=005", b"country=NLD&lat=52&lon=5&limit=0", b"country=NLD&lat=52&lon=5&limit=",
        b"country=NLD&lat=52&lon=5&radius=10", b"country=NLD&lat=52&lon=5&postcode=1012",
        b"country=NLD&lon=5&lat=52", b"country=NLD&lat=52", b"country=NLD&lat=&lon=5",
        b"country=NLD&lat=--1&lon=5", b"country=NLD&lat=1-&lon=5", b"country=NLD&lat=0." + b"1" * 30 + b"&lon=5",
        b"country=NLD&lat=52.123456789012345678&lon=5", b"country=NLD&lat=52&lon=5&",
        b"country=NLD&lat=52&lon=5&limit=5&limit=6",
    ],
}


@pytest.mark.parametrize(("kind", "raw"), [(k, r) for k, rs in QUESTIONS_RAW.items() for r in rs],
                         ids=lambda x: x.decode("latin-1")[:60] if isinstance(x, bytes) else x)
def test_the_questions_shortcuts_answer_as_the_general_paths(kind, raw):
    same(kind, raw)


def test_the_questions_plain_spellings_take_the_shortcut():
    assert engine.read_plain_lookup(b"country=NLD&postcode=1012+LG&number=1") == ("1012 LG", 1)
    assert engine.read_plain_lookup(b"country=NLD&postcode=9746TN&number=3") == ("9746TN", 3)
    assert engine.read_plain_reverse(b"country=NLD&lat=52.37&lon=4.89&limit=3") == (52.37, 4.89, 3)
    assert engine.read_plain_reverse(b"country=NLD&lat=53.2207&lon=6.5607") == (53.2207, 6.5607, 5)
    for raw in (b"country=NLD&postcode=1012LG&number=01", b"country=NLD&number=1&postcode=1012LG",
                b"country=NLD&postcode=1012%20LG&number=1", b"country=NLD&postcode=1012LG&number=1&letter=a"):
        assert engine.read_plain_lookup(raw) is None, raw
    for raw in (b"country=NLD&lat=5e1&lon=5", b"country=NLD&lat=91&lon=5", b"country=NLD&lat=52&lon=5&radius=1",
                b"country=NLD&lat=52.&lon=5", b"country=NLD&lon=5&lat=52"):
        assert engine.read_plain_reverse(raw) is None, raw
    assert engine.read_house_number(b"99999") == 99999
    assert [engine.read_house_number(raw) for raw in (b"100000", b"0", b"01", b"", b"1a", b"+1")] == [0] * 6


def test_the_questions_shortcuts_answer_as_the_general_paths_on_random_strings():
    rng = random.Random(39)
    numbers = [b"1", b"12", b"99999", b"100000", b"0", b"01", b"1.5", b"-3", b"", b"+", b"%31", b"12a"]
    postcodes = [b"1012LG", b"1012+lg", b"1012", b"LG", b"", b"1012%20LG", b"1012-LG", b"9" * 16, b"9" * 17]
    coordinates = [b"52", b"52.1", b"-0", b"0", b"90", b"-90", b"180", b"-180.0", b"90.5", b"180.01", b"52.",
                   b".5", b"-.5", b"5e1", b"1e-1", b"--1", b"", b"-", b"0" * 30, b"1." + b"9" * 25, b"nan", b"inf"]
    tails = [b"", b"", b"&limit=1", b"&limit=10", b"&limit=11", b"&limit=05", b"&", b"&radius=5", b"&x=1"]
    for _ in range(3000):
        raw = (b"country=NLD&postcode=" + rng.choice(postcodes) + b"&number=" + rng.choice(numbers)
               + rng.choice(tails[:2] + [b"&letter=a", b"&"]))
        same("lookup", raw)
        raw = (b"country=NLD&lat=" + rng.choice(coordinates) + b"&lon=" + rng.choice(coordinates)
               + rng.choice(tails))
        same("reverse", raw)
