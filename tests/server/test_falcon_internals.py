"""The Falcon internals the server reads (house style: read another library's private attributes
only with its version pinned and a test that fails when they move).

``server._gate`` and ``server.app.AsgiRequest`` read the headers of an ASGI request from
``req._asgi_headers``: names in lower case, as bytes, to the bytes of the value, repeated
headers joined by commas, the same as ``get_header`` returns. ``server._gate`` and
``Finish.answered`` write response headers into ``resp._headers`` as Falcon's setters do: names
in lower case, an appended value after ", ". ``pyproject.toml`` pins Falcon to the major
version that holds them so (``falcon>=4,<5``)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import falcon
import falcon.asgi

from server.app import AsgiRequest

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


async def _receive():  # pragma: no cover - never awaited
    return {"type": "http.request"}


def request(cls, headers: list[tuple[bytes, bytes]]):
    scope = {"type": "http", "method": "GET", "path": "/v1/address", "query_string": b"q=a",
             "headers": [(b"host", b"localhost"), *headers], "http_version": "1.1",
             "asgi": {"version": "3.0"}, "scheme": "http", "server": ("localhost", 80)}
    return cls(scope, _receive)


def test_the_installed_falcon_is_the_pinned_major_version():
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["server"]
    pin = next(d for d in deps if re.match(r"falcon\b", d))
    low, high = (int(v) for v in re.fullmatch(r"falcon>=(\d+),<(\d+)", pin).groups())
    assert high == low + 1, pin
    assert int(falcon.__version__.split(".")[0]) == low, (falcon.__version__, pin)


def test_asgi_headers_are_lower_case_bytes_as_get_header_reads_them():
    headers = [(b"authorization", b"Bearer nla_sk_x.y"), (b"x-twice", b"1"), (b"x-twice", b"2"),
               (b"origin", b"https://a.example"), (b"x-latin", "caf\u00e9".encode("latin-1"))]
    for cls in (falcon.asgi.Request, AsgiRequest):
        req = request(cls, headers)
        held = req._asgi_headers
        assert type(held) is dict
        assert held[b"authorization"] == b"Bearer nla_sk_x.y"
        for name in ("Authorization", "X-Twice", "Origin", "X-Latin"):
            assert held[name.lower().encode()].decode("latin-1") == req.get_header(name), name
        assert b"x-absent" not in held and req.get_header("X-Absent") is None


def test_response_headers_are_a_dict_of_lower_case_names_as_the_setters_write_it():
    for resp in (falcon.Response(), falcon.asgi.Response()):
        assert type(resp._headers) is dict and resp._headers == {}
        resp.content_type = falcon.MEDIA_JSON
        resp.append_header("Vary", "Accept")
        resp.append_header("Vary", "Origin")
        assert resp._headers == {"content-type": falcon.MEDIA_JSON, "vary": "Accept, Origin"}
        assert resp.headers == {"content-type": falcon.MEDIA_JSON, "vary": "Accept, Origin"}
        by_hand = type(resp)()
        by_hand._headers["content-type"] = falcon.MEDIA_JSON
        by_hand._headers["vary"] = "Accept, Origin"
        assert by_hand.headers == resp.headers and by_hand.content_type == resp.content_type
