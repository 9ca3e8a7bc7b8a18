"""Web pages as clients: publishable keys restricted to origins, and CORS by the Fetch standard.

Every case of ``server/cors.py``, through falcon.testing on the WSGI and the ASGI app.
falcon.testing serves ``http://falconframework.org``: that is the server's own origin here.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from authenticators import authenticator
from bursts import statuses_until_429

from server.__main__ import main as cli
from server.keys import PUBLISHABLE, KeyStore, KeyStoreError, normalize_origin

SHOP = "https://shop.example"
OTHER_SHOP = "http://localhost:8123"
EVIL = "https://evil.example"
OWN = "http://falconframework.org"
QUERY = "country=NLD&q=kerkstraat+1&limit=3"


class WebKeys:
    """Keys for web pages, added once to the session's key store."""

    def __init__(self, store: KeyStore) -> None:
        self.shop = store.create("shop-pub", 1e6, kind=PUBLISHABLE, origins=[SHOP])
        self.other = store.create("other-pub", 1e6, kind=PUBLISHABLE, origins=[OTHER_SHOP])
        self.own = store.create("own-pub", 1e6, kind=PUBLISHABLE, origins=[OWN])
        self.secret_for_shop = store.create("secret-shop", 1e6, origins=[SHOP])
        self.shop_slow = store.create("shop-slow", 1, kind=PUBLISHABLE, origins=[SHOP])


@pytest.fixture(scope="module")
def web(keys) -> WebKeys:
    return WebKeys(keys.store)


def bearer(key: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **headers}


def preflight(client, origin: str | None = SHOP, method: str | None = "GET", headers: str | None = "authorization"):
    sent = {}
    if origin is not None:
        sent["Origin"] = origin
    if method is not None:
        sent["Access-Control-Request-Method"] = method
    if headers is not None:
        sent["Access-Control-Request-Headers"] = headers
    return client.simulate_options("/v1/address", headers=sent)


def problem_code(resp) -> str:
    assert resp.headers["content-type"] == "application/problem+json"
    return json.loads(resp.content)["code"]


CORS_HEADERS = [
    "access-control-allow-origin",
    "access-control-allow-methods",
    "access-control-allow-headers",
    "access-control-max-age",
    "access-control-expose-headers",
    "access-control-allow-credentials",
]


def assert_no_cors(resp) -> None:
    present = [name for name in CORS_HEADERS if name in resp.headers]
    assert not present, present


# -- preflight ----------------------------------------------------------------------------------


@pytest.mark.parametrize("requested", ["authorization", "Authorization", " authorization ", None, ""])
def test_preflight_of_an_allowed_origin_is_204_with_the_cors_headers(client, web, requested):
    resp = preflight(client, headers=requested)
    assert resp.status_code == 204
    assert resp.content == b""
    assert resp.headers["access-control-allow-origin"] == SHOP
    assert resp.headers["access-control-allow-methods"] == "GET, HEAD"
    assert resp.headers["access-control-allow-headers"] == "authorization"
    assert resp.headers["access-control-max-age"] == "7200"
    assert resp.headers["vary"] == "Origin"
    assert "access-control-allow-credentials" not in resp.headers  # keys never travel in cookies


def test_preflight_for_head_is_allowed_too(client, web):
    assert preflight(client, method="HEAD").status_code == 204


def test_preflight_answers_every_origin_some_key_allows_before_any_key(client, web):
    """The preflight carries no key: any active key's origin passes it (the secret key's too)."""
    assert preflight(client, origin=OTHER_SHOP).headers["access-control-allow-origin"] == OTHER_SHOP


@pytest.mark.parametrize("origin", [EVIL, "null", "https://shop.example.evil", "https://SHOP.example", SHOP + "/"])
def test_preflight_of_a_refused_origin_is_403_without_cors_headers(client, web, origin):
    resp = preflight(client, origin=origin)
    assert resp.status_code == 403
    assert problem_code(resp) == "origin_not_allowed"
    assert_no_cors(resp)
    assert resp.headers["vary"] == "Origin"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "get", "PATCH"])
def test_preflight_for_another_method_is_405(client, web, method):
    resp = preflight(client, method=method)
    assert resp.status_code == 405
    assert problem_code(resp) == "method_not_allowed"
    assert resp.headers["allow"] == "GET, HEAD"
    assert_no_cors(resp)


@pytest.mark.parametrize("requested", ["authorization, x-requested-with", "content-type", "authorization,cookie"])
def test_preflight_for_another_request_header_is_403(client, web, requested):
    resp = preflight(client, headers=requested)
    assert resp.status_code == 403
    assert problem_code(resp) == "header_not_allowed"
    assert_no_cors(resp)


@pytest.mark.parametrize(
    ("origin", "method"),
    [(None, None), (SHOP, None), (None, "GET")],
    ids=["plain", "origin-only", "method-only"],
)
def test_options_that_is_no_preflight_is_still_405(client, web, origin, method):
    resp = preflight(client, origin=origin, method=method, headers=None)
    assert resp.status_code == 405
    assert problem_code(resp) == "method_not_allowed"
    assert resp.headers["allow"] == "GET, HEAD"
    assert "access-control-allow-methods" not in resp.headers


@pytest.mark.parametrize("path", ["/healthz", "/openapi.json", "/v1/address/"])
def test_other_paths_answer_no_preflight(client, web, path):
    resp = client.simulate_options(path, headers={"Origin": SHOP, "Access-Control-Request-Method": "GET"})
    assert resp.status_code in (404, 405)
    assert_no_cors(resp)


# -- real requests ---------------------------------------------------------------------------------


def test_publishable_key_from_its_origin_gets_the_same_bytes_and_cors_headers(client, web, auth):
    plain = client.simulate_get("/v1/address", query_string=QUERY, headers=auth)
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop, Origin=SHOP))
    assert resp.status_code == 200
    assert resp.content == plain.content  # the body is the contract's, byte for byte
    assert resp.headers["access-control-allow-origin"] == SHOP
    assert resp.headers["access-control-expose-headers"] == "Retry-After, WWW-Authenticate"
    assert resp.headers["vary"] == "Origin"
    assert "access-control-allow-credentials" not in resp.headers


def test_head_from_an_allowed_origin_has_the_cors_headers(client, web):
    resp = client.simulate_head("/v1/address", query_string=QUERY, headers=bearer(web.shop, Origin=SHOP))
    assert resp.status_code == 200
    assert resp.headers["access-control-allow-origin"] == SHOP


def test_secret_key_without_origin_is_served_and_the_response_varies_on_origin(client, auth):
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=auth)
    assert resp.status_code == 200
    assert resp.headers["vary"] == "Origin"
    assert_no_cors(resp)


def test_key_of_another_origin_is_403_readable_by_the_page(client, web):
    """shop's key on the page of another customer: refused, and the page can read why."""
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop, Origin=OTHER_SHOP))
    assert resp.status_code == 403
    assert problem_code(resp) == "origin_not_allowed"
    assert resp.headers["access-control-allow-origin"] == OTHER_SHOP


@pytest.mark.parametrize("origin", [EVIL, "null"])
def test_key_on_an_origin_no_key_allows_is_403_unreadable(client, web, origin):
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop, Origin=origin))
    assert resp.status_code == 403
    assert problem_code(resp) == "origin_not_allowed"
    assert_no_cors(resp)


def test_publishable_key_without_origin_is_refused(client, web):
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop))
    assert resp.status_code == 403
    assert problem_code(resp) == "origin_not_allowed"
    assert "publishable" in json.loads(resp.content)["detail"]
    assert web.shop not in resp.text


def test_secret_key_from_a_page_is_served_only_to_the_origins_it_lists(client, web, auth):
    listed = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.secret_for_shop, Origin=SHOP))
    assert listed.status_code == 200
    assert listed.headers["access-control-allow-origin"] == SHOP
    # alice's key lists no origin: a page on shop.example cannot use it
    refused = client.simulate_get("/v1/address", query_string=QUERY, headers={**auth, "Origin": SHOP})
    assert refused.status_code == 403
    assert problem_code(refused) == "origin_not_allowed"
    assert refused.headers["access-control-allow-origin"] == SHOP


def test_same_origin_page_uses_a_publishable_key_that_lists_this_server(client, web):
    same = {"Sec-Fetch-Site": "same-origin"}
    assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.own, **same)).status_code == 200
    # the browser may send Origin on a same-origin request too
    assert (
        client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.own, Origin=OWN)).status_code == 200
    )
    refused = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop, **same))
    assert refused.status_code == 403
    # a cross-site page that claims nothing is no same-origin page
    cross = {"Sec-Fetch-Site": "cross-site"}
    assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.own, **cross)).status_code == 403


def test_secret_key_on_this_servers_own_page_is_served(client, auth):
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers={**auth, "Sec-Fetch-Site": "same-origin"})
    assert resp.status_code == 200


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"Origin": SHOP}, 401, "unauthorized"),
        ({"Origin": SHOP, "Authorization": "Bearer nlk_nope"}, 401, "unauthorized"),
    ],
)
def test_401_to_an_allowed_origin_is_readable_with_its_challenge(client, web, headers, status, code):
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=headers)
    assert (resp.status_code, problem_code(resp)) == (status, code)
    assert resp.headers["access-control-allow-origin"] == SHOP
    assert "WWW-Authenticate" in resp.headers["access-control-expose-headers"]
    assert resp.headers["www-authenticate"] == "Bearer"


def test_401_to_an_unknown_origin_has_no_cors_headers(client, web):
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers={"Origin": EVIL})
    assert resp.status_code == 401
    assert_no_cors(resp)


def test_400_and_429_to_an_allowed_origin_are_readable(client, web):
    bad = client.simulate_get(
        "/v1/address", query_string="country=NLD&q=a&limit=0", headers=bearer(web.shop, Origin=SHOP)
    )
    assert (bad.status_code, problem_code(bad)) == (400, "invalid_parameter")
    assert bad.headers["access-control-allow-origin"] == SHOP
    statuses = []
    for _ in range(3):
        resp = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop_slow, Origin=SHOP))
        statuses.append(resp.status_code)
    assert statuses[-1] == 429
    assert resp.headers["access-control-allow-origin"] == SHOP
    assert "Retry-After" in resp.headers["access-control-expose-headers"]
    assert int(resp.headers["retry-after"]) >= 1


def test_origin_check_comes_before_the_rate_limit(client, web):
    """A page that may not use the key does not spend its budget."""
    for _ in range(5):
        resp = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(web.shop_slow, Origin=OTHER_SHOP))
        assert resp.status_code == 403


def test_other_routes_carry_no_cors_headers(client, web):
    resp = client.simulate_get("/healthz", headers={"Origin": SHOP})
    assert resp.status_code == 200
    assert_no_cors(resp)


# -- the key store ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "origin"),
    [
        ("https://shop.example", "https://shop.example"),
        ("HTTPS://Shop.Example/", "https://shop.example"),
        ("https://shop.example:443", "https://shop.example"),
        ("http://shop.example:80", "http://shop.example"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123"),
        ("https://shop.example:8443", "https://shop.example:8443"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("https://bücher.example", "https://xn--bcher-kva.example"),
    ],
)
def test_origins_are_stored_as_browsers_send_them(spec, origin):
    assert normalize_origin(spec) == origin


@pytest.mark.parametrize(
    "spec",
    [
        "null",
        "shop.example",
        "ftp://shop.example",
        "https://shop.example/checkout",
        "https://shop.example?x=1",
        "https://shop.example?",
        "https://shop.example#top",
        "https://user@shop.example",
        "https://*.shop.example",
        "https://shop.example:99999",
        "https://",
        "*",
    ],
)
def test_what_is_no_origin_is_refused(spec):
    with pytest.raises(KeyStoreError):
        normalize_origin(spec)


def test_cli_creates_and_lists_publishable_keys(tmp_path, capsys):
    store = str(tmp_path / "keys.sqlite3")
    args = ["--keystore", store, "keys", "create", "--name", "shop", "--publishable"]
    assert cli([*args, "--origin", "https://Shop.example", "--origin", "http://127.0.0.1:8123"]) == 0
    key = capsys.readouterr().out.splitlines()[-1]
    record = KeyStore(store).active()[key[4:20]]
    assert record.kind == "publishable"
    assert record.origins == {"https://shop.example", "http://127.0.0.1:8123"}
    assert record.rate == 20.0  # a publishable key defaults to a lower rate than a secret one (100)
    assert cli(["--keystore", store, "keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert "publishable" in listing and "http://127.0.0.1:8123 https://shop.example" in listing
    assert key not in listing and "nlk_" not in listing


@pytest.mark.parametrize(
    "extra",
    [[], ["--origin", "null"], ["--origin", "https://shop.example/path"], ["--origin", "https://*.example"]],
)
def test_cli_refuses_a_publishable_key_without_a_real_origin(tmp_path, capsys, extra):
    store = tmp_path / "keys.sqlite3"
    assert cli(["--keystore", str(store), "keys", "create", "--name", "shop", "--publishable", *extra]) == 2
    assert "error" in capsys.readouterr().err
    assert not KeyStore(str(store)).list()


OLD_SCHEMA = """
CREATE TABLE api_keys (
    name TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, key_sha256 BLOB NOT NULL,
    rate REAL NOT NULL CHECK (rate > 0), created_at TEXT NOT NULL, revoked_at TEXT
)
"""


def test_a_key_file_from_before_kinds_is_read_and_migrated(tmp_path):
    """Workers read a file without the new columns; the next CLI write adds them."""
    path = tmp_path / "keys.sqlite3"
    store = KeyStore(str(path))
    key = store.create("old", 5)
    # turn it into a file as the previous release wrote it
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT name, key_id, key_sha256, rate, created_at, revoked_at FROM api_keys").fetchall()
    conn.execute("DROP TABLE api_keys")
    conn.execute(OLD_SCHEMA)
    conn.executemany("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()

    auth = authenticator(store, refresh_seconds=1.0)
    record = auth.authenticate(f"Bearer {key}")
    assert (record.name, record.kind, record.origins) == ("old", "secret", frozenset())
    assert [(info.name, info.kind) for info in store.list()] == [("old", "secret")]

    store.create("shop", 5, kind=PUBLISHABLE, origins=[SHOP])
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(api_keys)")}
    assert {"kind", "origins"} <= columns
    assert {r.name: (r.kind, r.origins) for r in store.active().values()} == {
        "old": ("secret", frozenset()),
        "shop": ("publishable", frozenset({SHOP})),
    }
    assert store.revoke("old")


# -- the try-it page and its demo key --------------------------------------------------------------


def test_demo_key_serves_this_servers_own_pages_only_at_its_rate(app_factory):
    client = app_factory(demo_rate=3)
    resp = client.simulate_get("/demo-key")
    assert resp.status_code == 200 and resp.headers["cache-control"] == "no-store"
    demo = json.loads(resp.content)
    assert demo["rate"] == 3 and demo["kind"] == "publishable"
    same = bearer(demo["key"], **{"Sec-Fetch-Site": "same-origin"})
    refused = [bearer(demo["key"]), bearer(demo["key"], Origin=SHOP), bearer(demo["key"], Origin="null")]
    for headers in refused:
        resp = client.simulate_get("/v1/address", query_string=QUERY, headers=headers)
        assert (resp.status_code, problem_code(resp)) == (403, "origin_not_allowed")
    statuses = statuses_until_429(
        lambda: client.simulate_get("/v1/address", query_string=QUERY, headers=same).status_code, 4)
    assert statuses[-1] == 429 and set(statuses[:-1]) == {200}  # within the burst of 3


def test_no_demo_key_unless_configured(client):
    resp = client.simulate_get("/demo-key")
    assert (resp.status_code, problem_code(resp)) == (404, "not_found")


def test_page_and_widget_headers(client):
    page = client.simulate_get("/")
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    widget = client.simulate_get("/widget.js")
    assert widget.headers["content-type"] == "text/javascript; charset=utf-8"
    assert widget.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "content-security-policy" not in widget.headers
    assert client.simulate_head("/").status_code == 200
    assert client.simulate_post("/").status_code == 405
