"""The plain spelling's shortcut of ``server.params.parse_query`` (issue 15, item 6; read in C
by ``engine.read_plain_query``) answers every query string exactly as the general path does:
the same ``Query``, or the same 400 (code, parameter and detail), whether or not the string has
the plain shape."""

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
