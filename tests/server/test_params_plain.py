"""The plain spelling's shortcut of ``server.params.parse_query`` (issue 15, item 6) answers
every query string exactly as the general path does: the same ``Query``, or the same 400
(code, parameter and detail), whether or not the string has the plain shape."""

from __future__ import annotations

from urllib.parse import quote_plus

import pytest

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
    *(plain("damrak 1", limit) for limit in ("1", "9", "10", None, "0", "11", "05", "+5", "5.0", "", "%35")),
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
    assert params.parse_query(plain("kerkstraat 12 utrecht")) == ("kerkstraat 12 utrecht", 5, None, None, False)
    assert params.parse_query(plain("damrak", limit=None)).limit == 5
    assert params.parse_query(plain("stra\u00dfe 1", limit="10")) == ("stra\u00dfe 1", 10, None, None, False)
    assert calls == []
    params.parse_query(b"country=NLD&q=damrak&limit=5&highlight=false")
    params.parse_query(plain("\u00a0damrak"))
    assert len(calls) == 2
