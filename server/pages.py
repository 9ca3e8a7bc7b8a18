"""The try-it page at ``GET /`` and the embeddable widget, served by the app itself.

Plain files in ``server/static`` (no build step, nothing fetched from elsewhere), read once
when the app is built. ``/widget.js`` and ``/widget.css`` are meant for other sites' pages
(``Cross-Origin-Resource-Policy: cross-origin``); the page itself may only talk to this server
(``Content-Security-Policy``).

The demo key (``ADDRESS_DEMO_RATE`` > 0): a publishable key made at start, held in memory only
(with gunicorn's ``preload_app`` the master makes it, so every worker knows the same one), served
only to this server's own pages (``server.keys.SAME_ORIGIN``) at that low rate, and handed to the
page by ``GET /demo-key`` so that the HTML never holds a key. SECURITY: like any publishable key
it is public; anything but a browser can use it, at its rate. So it is also limited per client
address (``ADDRESS_DEMO_CLIENT_RATE``, ``server.clients``): a script that spends it from one
address no longer takes the whole rate from the page's visitors (issue 37).
"""

from __future__ import annotations

from importlib.resources import files

import orjson

import engine
from server.auth import Authenticator
from server.keys import PUBLISHABLE, SAME_ORIGIN, KeyRecord, hash_key, new_key
from server.openapi import POSTCODE_PATTERN
from server.resources import Missing, Static

#: path -> (file in server/static, content type)
FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/try.js": ("try.js", "text/javascript; charset=utf-8"),
    "/try.css": ("try.css", "text/css; charset=utf-8"),
    "/widget.js": ("widget.js", "text/javascript; charset=utf-8"),
    "/widget.css": ("widget.css", "text/css; charset=utf-8"),
}
#: The page talks to this server only; widget files may be loaded by any site.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
WIDGET_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "cross-origin",
    "Cache-Control": "public, max-age=300",
}
DEMO_KEY_NAME = "demo"
#: What the widget's postcode mode asks only once the form holds it, filled into widget.js in
#: place of WIDGET_RULES_MARK when it is served: the rules are the service's, not restated there.
WIDGET_RULES = {"postcode": POSTCODE_PATTERN, "numberMax": engine.MAX_HOUSE_NUMBER}
WIDGET_RULES_MARK = b"/* WIDGET_RULES */ null"


def page_routes() -> dict[str, Static]:
    """The endpoints of the page and the widget, by path."""
    static = files("server") / "static"
    routes = {}
    for path, (name, content_type) in FILES.items():
        headers = WIDGET_HEADERS if name.startswith("widget.") else PAGE_HEADERS
        body = static.joinpath(name).read_bytes()
        if name == "widget.js":
            body = with_rules(body)
        routes[path] = Static(body, content_type, headers)
    return routes


def with_rules(script: bytes) -> bytes:
    """widget.js with WIDGET_RULES in place of its one WIDGET_RULES_MARK."""
    if script.count(WIDGET_RULES_MARK) != 1:
        raise RuntimeError(f"server/static/widget.js must hold {WIDGET_RULES_MARK.decode()} once")
    return script.replace(WIDGET_RULES_MARK, orjson.dumps(WIDGET_RULES))


def demo_key_route(auth: Authenticator, rate: float, client_rate: float) -> Static | Missing:
    """Make the demo key (``rate`` > 0 for all, ``client_rate`` for each client address) known
    to ``auth`` and return ``GET /demo-key``."""
    if rate <= 0:
        return Missing("this server has no demo key (start it with ADDRESS_DEMO_RATE)")
    key, key_id = new_key()
    auth.own_keys[key_id] = KeyRecord(
        DEMO_KEY_NAME,
        key_id,
        hash_key(key),
        rate,
        kind=PUBLISHABLE,
        origins=frozenset({SAME_ORIGIN}),
        client_rate=client_rate,
    )
    body = orjson.dumps({"key": key, "rate": rate, "client_rate": client_rate, "kind": PUBLISHABLE})
    return Static(body, headers={"Cache-Control": "no-store"})
