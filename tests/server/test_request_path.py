"""The request path without Falcon middleware (issue 15, item 6): every response, whatever its
route or status, is counted once in the metrics, gets the CORS headers of its route and, for an
error, the contract's problem+json; and the metrics add up exactly what was observed."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter

import falcon.testing
import pytest
from prometheus_client.parser import text_string_to_metric_families

from server.app import create_app
from server.config import Config
from server.keys import PUBLISHABLE
from server.metrics import LATENCY_BUCKETS, Metrics

SHOP = "https://shop.example"
QUERY = "country=NLD&q=kerkstraat+1&limit=3"


class BrokenIndex:
    manifest = {"built_at": "2026-01-01T00:00:00+00:00"}

    def suggest_json(self, q, *, limit=5, lat=None, lon=None):
        raise RuntimeError("engine bug")


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The samples called ``name`` of a text exposition, by their sorted labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


@pytest.fixture
def web_keys(keys):
    """A publishable key for SHOP and a secret key of rate 1, new for each test."""
    tag = uuid.uuid4().hex[:8]
    return {
        "shop": keys.store.create(f"pub-{tag}", 1e6, kind=PUBLISHABLE, origins=[SHOP]),
        "slow": keys.store.create(f"slow-{tag}", 1),
        "slow_name": f"slow-{tag}",
    }


def test_every_response_is_counted_once_by_route_method_and_status(index, keys, web_keys, flavour):
    client = falcon.testing.TestClient(create_app(index, Config(keystore_path=keys.path), asgi=flavour == "asgi"))
    alice = {"Authorization": f"Bearer {keys.alice}"}
    sent: Counter[tuple[str, str, str]] = Counter()

    def ask(method: str, path: str, route: str, query: str = "", headers: dict[str, str] | None = None):
        resp = client.simulate_request(method, path, query_string=query, headers=headers or {})
        sent[(route, method, str(resp.status_code))] += 1
        return resp

    assert ask("GET", "/v1/address", "/v1/address", QUERY, alice).status_code == 200
    assert ask("HEAD", "/v1/address", "/v1/address", QUERY, alice).status_code == 200
    assert ask("GET", "/v1/address", "/v1/address", "country=NLD", alice).status_code == 400
    assert ask("GET", "/v1/address", "/v1/address", QUERY).status_code == 401
    shop = {"Authorization": f"Bearer {web_keys['shop']}"}  # publishable, no Origin: refused
    assert ask("GET", "/v1/address", "/v1/address", QUERY, shop).status_code == 403
    assert ask("POST", "/v1/address", "/v1/address", QUERY, alice).status_code == 405
    preflight = {"Origin": SHOP, "Access-Control-Request-Method": "GET"}
    assert ask("OPTIONS", "/v1/address", "/v1/address", "", preflight).status_code == 204
    assert ask("OPTIONS", "/v1/address", "/v1/address").status_code == 405
    assert ask("GET", "/nowhere", "unmatched").status_code == 404
    assert ask("GET", "/v1/address/", "unmatched", QUERY, alice).status_code == 404
    assert ask("GET", "/healthz", "/healthz").status_code == 200
    slow = {"Authorization": f"Bearer {web_keys['slow']}"}
    statuses = [ask("GET", "/v1/address", "/v1/address", QUERY, slow).status_code for _ in range(30)]
    assert 429 in statuses and 200 in statuses
    text = client.simulate_get("/metrics").text  # itself counted after it is rendered

    got = samples(text, "address_http_requests_total")
    want = {(("method", m), ("route", r), ("status", s)): float(n) for (r, m, s), n in sent.items()}
    assert got == want
    by_key = samples(text, "address_api_key_requests_total")
    slow_name = web_keys["slow_name"]
    assert by_key[(("key", slow_name), ("status", "200"))] == statuses.count(200)
    assert by_key[(("key", slow_name), ("status", "429"))] == statuses.count(429)
    assert by_key[(("key", "alice"), ("status", "200"))] == 2
    assert by_key[(("key", "alice"), ("status", "400"))] == 1
    # the latency histogram saw each response once, in its route
    counts = samples(text, "address_http_request_duration_seconds_count")
    for route in ("/v1/address", "unmatched", "/healthz"):
        assert counts[(("route", route),)] == sum(n for (r, _, _), n in sent.items() if r == route)


def test_a_bug_is_still_a_counted_problem_500(keys, flavour):
    client = falcon.testing.TestClient(
        create_app(BrokenIndex(), Config(keystore_path=keys.path), asgi=flavour == "asgi")
    )
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers={"Authorization": f"Bearer {keys.alice}"})
    assert resp.status_code == 500
    assert resp.headers["content-type"] == "application/problem+json"
    assert resp.headers["vary"] == "Origin"
    assert json.loads(resp.content)["code"] == "internal_error"
    got = samples(client.simulate_get("/metrics").text, "address_http_requests_total")
    assert got[(("method", "GET"), ("route", "/v1/address"), ("status", "500"))] == 1


@pytest.mark.parametrize(
    ("method", "path", "query", "status"),
    [
        ("GET", "/v1/address", QUERY, 200),
        ("GET", "/v1/address", "country=NLD&limit=0", 400),
        ("GET", "/v1/address", "", 401),
        ("DELETE", "/v1/address", QUERY, 405),
        ("GET", "/nowhere", QUERY, 404),
        ("GET", "/healthz", "", 200),
    ],
)
def test_cors_and_problem_headers_by_route(app_factory, web_keys, method, path, query, status):
    client = app_factory()  # after the keys: it reads them once made
    headers = {"Origin": SHOP}  # a page of SHOP, which its publishable key allows
    if query:
        headers["Authorization"] = f"Bearer {web_keys['shop']}"
    resp = client.simulate_request(method, path, query_string=query, headers=headers)
    assert resp.status_code == status
    if path == "/v1/address":
        assert resp.headers["vary"] == "Origin"  # once, never repeated
        assert resp.headers["access-control-allow-origin"] == SHOP  # errors too: the page reads them
        assert resp.headers["access-control-expose-headers"] == "Retry-After, WWW-Authenticate"
    else:
        assert "vary" not in resp.headers
        assert "access-control-allow-origin" not in resp.headers
    if status >= 400:
        assert resp.headers["content-type"] == "application/problem+json"
        body = json.loads(resp.content)
        assert body["status"] == status and body["type"] == "about:blank"
    else:
        assert resp.headers["content-type"] == "application/json"


def test_flush_adds_up_buckets_sums_and_labels_exactly():
    metrics = Metrics(lambda: None)
    latencies = [0.0001, 0.0002, 0.00021, 0.0009, 0.003, 0.2, 0.9, 5.0, 0.0001]
    for i, seconds in enumerate(latencies):
        metrics.observe("/v1/address", "GET" if i % 3 else "BREW", 200 if i % 2 else 429, seconds, "k" if i else None)
    metrics.observe("/healthz", "GET", 200, 0.004, None)
    metrics.flush()
    metrics.flush()  # nothing left: adds nothing
    text = metrics.render().decode()
    requests = samples(text, "address_http_requests_total")
    assert requests == {
        (("method", "other"), ("route", "/v1/address"), ("status", "429")): 2.0,  # 0, 6
        (("method", "other"), ("route", "/v1/address"), ("status", "200")): 1.0,  # 3
        (("method", "GET"), ("route", "/v1/address"), ("status", "200")): 3.0,  # 1, 5, 7
        (("method", "GET"), ("route", "/v1/address"), ("status", "429")): 3.0,  # 2, 4, 8
        (("method", "GET"), ("route", "/healthz"), ("status", "200")): 1.0,
    }
    assert samples(text, "address_api_key_requests_total") == {
        (("key", "k"), ("status", "200")): 4.0,
        (("key", "k"), ("status", "429")): 4.0,
    }
    buckets = samples(text, "address_http_request_duration_seconds_bucket")
    for bound in [*LATENCY_BUCKETS, float("inf")]:
        le = "+Inf" if bound == float("inf") else re.sub(r"\.0$", ".0", repr(float(bound)))
        want = sum(1 for s in latencies if s <= bound)  # Prometheus buckets: le, cumulative
        assert buckets[(("le", le), ("route", "/v1/address"))] == want, bound
    total = samples(text, "address_http_request_duration_seconds_sum")[(("route", "/v1/address"),)]
    assert total == pytest.approx(sum(latencies))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_remembered_headers_never_outlive_their_key_table(tmp_path, monkeypatch):
    from authenticators import authenticator

    from server import auth as auth_module
    from server.errors import ApiError
    from server.keys import KeyStore

    store = KeyStore(str(tmp_path / "k.sqlite3"))
    key = store.create("a", 100)
    other = store.create("b", 100)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=1.0, clock=clock)
    header = f"Bearer {key}"
    first = auth.authenticate(header)
    assert auth.authenticate(header) is first  # remembered: the same record
    # the same key id with another secret, or the key in another spelling, is checked in full
    forged = header[:-1] + ("A" if header[-1] != "A" else "B")
    with pytest.raises(ApiError) as info:
        auth.authenticate(forged)
    assert info.value.code == "unauthorized"
    assert auth.authenticate(f"bearer  {key} ").name == "a"
    # revoked: refused as soon as the next table is read
    store.revoke("a")
    clock.now += 1.1
    with pytest.raises(ApiError) as info:
        auth.authenticate(header)
    assert info.value.code == "unauthorized"
    # a table that has gone stale (store unreadable for 5 s) refuses a remembered header too
    assert auth.authenticate(f"Bearer {other}").name == "b"
    (tmp_path / "k.sqlite3").write_bytes(b"not a database")
    clock.now += 2
    assert auth.authenticate(f"Bearer {other}").name == "b"
    clock.now += 3.5
    with pytest.raises(ApiError) as info:
        auth.authenticate(f"Bearer {other}")
    assert (info.value.status, info.value.code) == (503, "not_ready")
    # bounded: past the limit, headers are checked in full every time (and still accepted)
    monkeypatch.setattr(auth_module, "MAX_ACCEPTED_HEADERS", 1)
    store2 = KeyStore(str(tmp_path / "k2.sqlite3"))
    keys = [store2.create(f"k{i}", 100) for i in range(3)]
    auth2 = authenticator(store2, refresh_seconds=1.0, clock=Clock())
    for k in keys * 2:
        assert auth2.authenticate(f"Bearer {k}").name.startswith("k")
    assert len(auth2._accepted[1]) == 1


def test_falcon_does_not_read_the_query_string_the_route_reads_raw():
    """The ASGI request hands Falcon the request without its query string (Falcon would parse
    it into req.params, which nothing reads; PERF, issue 15 item 6) and keeps the raw bytes for
    the routes, raw bytes above 0x7F percent-escaped as before; the scope the server gave stays
    as it was."""
    from server.app import AsgiRequest

    async def receive():  # pragma: no cover - never awaited here
        return {"type": "http.request"}

    for raw, want in ((b"country=NLD&q=kerkstraat+1", b"country=NLD&q=kerkstraat+1"),
                      (b"q=caf\xc3\xa9&x=\xff", b"q=caf%C3%A9&x=%FF"), (b"", b"")):
        scope = {"type": "http", "method": "GET", "path": "/v1/address", "query_string": raw,
                 "headers": [], "http_version": "1.1", "asgi": {"version": "3.0"}}
        req = AsgiRequest(scope, receive)
        assert req.raw_query == want
        assert req.params == {} and req.query_string == ""
        assert scope["query_string"] == raw
        assert req.scope is scope  # lent to Falcon without its query string, not copied

    # the server's scope has its query string back when Falcon fails to make the request too
    scope = {"type": "http", "method": "GET", "path": "/v1/address", "query_string": b"q=1",
             "headers": None, "http_version": "1.1", "asgi": {"version": "3.0"}}
    with pytest.raises(TypeError):
        AsgiRequest(scope, receive)
    assert scope["query_string"] == b"q=1"


@pytest.mark.parametrize(("query", "status"), [
    (QUERY, 200),
    ("country=NLD&q=%FF", 400),              # not UTF-8: the contract's 400, never a 500
    ("country=NLD&limit=3", 400),            # q missing
])
def test_the_address_route_judges_the_raw_query(index, keys, flavour, query, status):
    client = falcon.testing.TestClient(create_app(index, Config(keystore_path=keys.path), asgi=flavour == "asgi"))
    resp = client.simulate_get("/v1/address", query_string=query, headers={"Authorization": f"Bearer {keys.alice}"})
    assert resp.status_code == status, resp.text


@pytest.mark.parametrize("headers", [
    [],
    [(b"origin", b"https://shop.example")],
    [(b"origin", b"null")],
    [(b"origin", b"https://a.example"), (b"origin", b"https://b.example")],  # joined, as Falcon does
    [(b"origin", b"https://caf\xc3\xa9.example")],                            # raw bytes: latin-1
    [(b"origin", b"")],
])
def test_the_request_types_read_origin_as_falcon_does(headers):
    """``req.origin`` is read as the request is made (PERF: Falcon's ``get_header`` takes 0.3 us
    for a header a request lacks); it must be what ``get_header("Origin")`` says, for both
    request types, repeated headers included."""
    from server.app import AsgiRequest, WsgiRequest

    async def receive():  # pragma: no cover - never awaited here
        return {"type": "http.request"}

    scope = {"type": "http", "method": "GET", "path": "/v1/address", "query_string": b"q=1",
             "headers": [(b"host", b"x.example"), *headers], "http_version": "1.1", "asgi": {"version": "3.0"}}
    req = AsgiRequest(scope, receive)
    assert req.origin == req.get_header("Origin")
    values = [value.decode("latin-1") for name, value in headers]
    env = falcon.testing.create_environ("/v1/address", headers={"Origin": ",".join(values)} if values else None)
    wreq = WsgiRequest(env)
    assert wreq.origin == wreq.get_header("Origin")
    assert (req.origin, wreq.origin) == ((",".join(values), ",".join(values)) if values else (None, None))
