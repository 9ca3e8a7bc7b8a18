"""No input gives a 500: the nasty inputs of issue 3, each with its documented answer.

The rules are in ``server/params.py`` (parameters) and ``server.auth.parse_bearer`` (header).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

EMOJI = "\U0001f3e0"  # one code point, four UTF-8 bytes
COMBINING = "e\u0301"  # two code points: e + combining acute


def q(text: str) -> str:
    return "country=NLD&q=" + quote(text, safe="")


# (id, query string, expected status, expected code or None, expected parameter)
NASTY = [
    ("undecodable %FF", "country=NLD&q=%FF%FE", 400, "invalid_parameter", "q"),
    ("overlong UTF-8", "country=NLD&q=%C0%AF", 400, "invalid_parameter", "q"),
    ("encoded surrogate", "country=NLD&q=%ED%A0%80", 400, "invalid_parameter", "q"),
    ("truncated escape", "country=NLD&q=abc%4", 400, "invalid_parameter", "q"),
    ("bad hex escape", "country=NLD&q=%G1", 400, "invalid_parameter", "q"),
    ("NUL", "country=NLD&q=damrak%001", 400, "invalid_parameter", "q"),
    ("tab", "country=NLD&q=damrak%091", 400, "invalid_parameter", "q"),
    ("newline", "country=NLD&q=damrak%0D%0A1", 400, "invalid_parameter", "q"),
    ("DEL", "country=NLD&q=damrak%7F", 400, "invalid_parameter", "q"),
    ("C1 control", "country=NLD&q=damrak%C2%85", 400, "invalid_parameter", "q"),
    ("10 kB q", "country=NLD&q=" + "a" * 10_000, 400, "query_too_long", "q"),
    ("10 kB of escapes", "country=NLD&q=" + "%C3%A9" * 5_000, 400, "query_too_long", "q"),
    ("128 emoji", q(EMOJI * 128), 200, None, None),
    ("129 emoji", q(EMOJI * 129), 400, "query_too_long", "q"),
    ("128 code points of combining marks", q(COMBINING * 64), 200, None, None),
    (
        "129 code points of combining marks",
        q(COMBINING * 64 + "\u0301"),
        400,
        "query_too_long",
        "q",
    ),
    ("only combining marks", q("\u0301" * 128), 200, None, None),
    ("limit 1e1", "country=NLD&q=a&limit=1e1", 400, "invalid_parameter", "limit"),
    ("limit -0", "country=NLD&q=a&limit=-0", 400, "invalid_parameter", "limit"),
    ("limit ' 5'", "country=NLD&q=a&limit=%205", 400, "invalid_parameter", "limit"),
    ("limit '+5' (a space)", "country=NLD&q=a&limit=+5", 400, "invalid_parameter", "limit"),
    ("limit '%2B5'", "country=NLD&q=a&limit=%2B5", 400, "invalid_parameter", "limit"),
    ("limit 05", "country=NLD&q=a&limit=05", 400, "invalid_parameter", "limit"),
    ("limit 5.0", "country=NLD&q=a&limit=5.0", 400, "invalid_parameter", "limit"),
    ("limit 0x5", "country=NLD&q=a&limit=0x5", 400, "invalid_parameter", "limit"),
    ("limit fullwidth 5", "country=NLD&q=a&limit=%EF%BC%95", 400, "invalid_parameter", "limit"),
    ("limit huge", "country=NLD&q=a&limit=" + "9" * 5000, 400, "invalid_parameter", "limit"),
    ("limit %35 (an encoded 5)", "country=NLD&q=a&limit=%35", 200, None, None),
    ("repeated q", "country=NLD&q=a&q=a", 400, "invalid_parameter", "q"),
    ("repeated country", "country=NLD&country=BEL&q=a", 400, "invalid_parameter", "country"),
    ("repeated empty limit", "country=NLD&q=a&limit&limit", 400, "invalid_parameter", "limit"),
    ("q without =", "country=NLD&q", 200, None, None),
    ("only separators", "&&&=&", 400, "missing_parameter", "country"),
    ("lat 1e999", "country=NLD&q=a&lat=1e999&lon=4", 400, "invalid_parameter", "lat"),
    ("lat with spaces", "country=NLD&q=a&lat=%2052&lon=4", 400, "invalid_parameter", "lat"),
    ("unicode digits in lat", "country=NLD&q=a&lat=%D9%A5&lon=4", 400, "invalid_parameter", "lat"),
    ("noncharacter in q", q("damrak \uffff"), 200, None, None),
    ("private use in q", q("\ue000 kerkstraat"), 200, None, None),
    ("RTL override in q", q("\u202ekerkstraat 1"), 200, None, None),
    ("BOM in q", q("\ufeffkerkstraat 1"), 200, None, None),
]


@pytest.mark.parametrize(
    ("query", "status", "code", "parameter"),
    [pytest.param(*case[1:], id=case[0]) for case in NASTY],
)
def test_nasty_query(get, query, status, code, parameter):
    resp = get(query)
    assert resp.status_code == status, resp.text
    if code is None:
        body = resp.json
        assert set(body) == {"hits", "limit"}
    else:
        body = json.loads(resp.content)
        assert resp.headers["content-type"] == "application/problem+json"
        assert (body["code"], body.get("parameter")) == (code, parameter)


# (id, Authorization header or None, expected status)
NASTY_HEADERS = [
    ("no header", None, 401),
    ("Bearer with no key", "Bearer", 401),
    ("Bearer and spaces", "Bearer    ", 401),
    ("lower-case bearer", "bearer {key}", 200),
    ("key with surrounding spaces", "Bearer   {key}   ", 200),
    ("key with a tab before it", "Bearer\t{key}", 401),
    ("key in quotes", 'Bearer "{key}"', 401),
    ("key twice", "Bearer {key} {key}", 401),
    ("empty header", "", 401),
    ("NUL in key", "Bearer {key}\x00", 401),
    ("latin-1 garbage", "Bearer \xff\xfe", 401),
    ("only the secret half", "Bearer {secret}", 401),
]


@pytest.mark.parametrize(("header", "status"), [pytest.param(*case[1:], id=case[0]) for case in NASTY_HEADERS])
def test_nasty_authorization(get, keys, header, status):
    headers = (
        {} if header is None else {"Authorization": header.format(key=keys.alice, secret=keys.alice.rsplit("_", 1)[1])}
    )
    resp = get("country=NLD&q=damrak", headers)
    assert resp.status_code == status, resp.text
    if status == 401:
        assert resp.headers["www-authenticate"] == "Bearer"
        assert keys.alice not in resp.text


def test_raw_non_ascii_bytes_in_the_query_are_judged_like_their_escapes(index, keys):
    """Regression: falcon.asgi decodes the raw query string as UTF-8 before any handler runs."""
    import asyncio

    from server.app import create_app
    from server.config import Config

    app = create_app(index, Config(keystore_path=keys.path), asgi=True)

    async def call(query: bytes) -> tuple[int, bytes]:
        sent: list[dict] = []
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/v1/address",
            "raw_path": b"/v1/address",
            "query_string": query,
            "root_path": "",
            "headers": [(b"host", b"x"), (b"authorization", f"Bearer {keys.alice}".encode())],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80),
        }

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        await app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])

    status, body = asyncio.run(call(b"country=NLD&q=\xff\xfe"))
    assert (status, json.loads(body)["code"]) == (400, "invalid_parameter")
    status, body = asyncio.run(call("country=NLD&q=kérkstraat".encode()))
    assert status == 200
    assert body == index.suggest_json("kérkstraat", limit=5)
