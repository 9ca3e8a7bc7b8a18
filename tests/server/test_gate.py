"""The compiled gate of ``/v1/address`` (``server/_gate.pyx``, issue 15 item 6) answers the usual
request exactly as the Python path does, and declines every other one having changed nothing;
so do the gates of the other questions (``/v1/address/postcode`` and ``/reverse``, issue 39)."""

from __future__ import annotations

import random
import time
import uuid
from bisect import bisect_left
from urllib.parse import quote, urlencode

import falcon.asgi
import falcon.testing
import pytest

import engine
from server.app import AsgiRequest, _build
from server.auth import Authenticator
from server.config import Config
from server.keys import PUBLISHABLE
from server.metrics import LATENCY_BUCKETS

QUERIES = ["kerkstraat 1", "amsterdam", "1012", "a", "stationsweg 12 b", "", "x" * 129]


def make(index, keys, path="/v1/address", **config):
    """An ASGI app, its service and its route of `path`."""
    app, service = _build(index, Config(keystore_path=keys.path, **config), asgi=True)
    route = app._router.find(path)[0]
    return app, service, route


def counted(route) -> list[int]:
    """Count the gate's answers [declined, answered, raised] of ``route``."""
    gate, seen = route.gate, [0, 0, 0]

    def answer(req, resp, raw):
        try:
            answered = gate(req, resp, raw)
        except Exception:
            seen[2] += 1
            raise
        seen[answered] += 1
        return answered

    route.gate = answer
    return seen


def requests(keys, shop_key):
    """(method, query string, headers): the usual request and the unusual ones around it."""
    alice = {"Authorization": f"Bearer {keys.alice}"}
    out = []
    for q in QUERIES:
        for limit in (1, 5, 10):
            out.append(("GET", urlencode({"country": "NLD", "q": q, "limit": limit}), alice))
        out.append(("GET", urlencode({"country": "NLD", "q": q}), alice))
    out += [
        ("HEAD", "country=NLD&q=kerkstraat+1", alice),
        ("GET", "q=kerkstraat+1&country=NLD", alice),  # not the plain spelling
        ("GET", "country=NLD&q=kerkstraat%201&limit=3", alice),
        ("GET", "country=NLD&q=kerkstraat&limit=11", alice),
        ("GET", "country=NLD&q=%FF", alice),
        ("GET", "country=NLD&q=a&highlight=true", alice),
        ("GET", "country=NLD&q=a", {}),
        ("GET", "country=NLD&q=a", {"Authorization": "Bearer nla_sk_unknown"}),
        ("GET", "country=NLD&q=a", {**alice, "Origin": "https://shop.example"}),
        ("GET", "country=NLD&q=a", {"Authorization": f"Bearer {shop_key}", "Origin": "https://shop.example"}),
        ("GET", "country=NLD&q=a", {"Authorization": f"Bearer {shop_key}"}),
        ("GET", "country=NLD&q=a", {"Authorization": f"Bearer {keys.slow}"}),
        ("GET", "country=NLD&q=b", {"Authorization": f"Bearer {keys.slow}"}),
        ("GET", "country=NLD&q=c", {"Authorization": f"Bearer {keys.slow}"}),  # 429
    ]
    return out


def twin_apps(index, keys, path="/v1/address"):
    """An app with the gate of `path` and one without (test clients), their services, and the
    gate's counts of its answers (`counted`)."""
    gated, gated_service, route = make(index, keys, path)
    plain, plain_service, plain_route = make(index, keys, path)
    plain_route.gate = None
    seen = counted(route)
    return falcon.testing.TestClient(gated), falcon.testing.TestClient(plain), gated_service, plain_service, seen


def same_answer(with_gate, without, method, query, headers, path="/v1/address") -> int:
    """Send one request to both apps; they must give the same status, body and headers. Its status."""
    a = with_gate.simulate_request(method, path, query_string=query, headers=headers)
    b = without.simulate_request(method, path, query_string=query, headers=headers)
    assert (a.status_code, a.content) == (b.status_code, b.content), (method, query, headers)
    assert sorted(a.headers.items()) == sorted(b.headers.items()), (method, query, headers)
    return a.status_code


def test_the_gate_answers_as_the_python_path_does(index, keys, monkeypatch):
    """The same requests, in the same order, to an app with the gate and one without: the same
    status, headers and body each time, the same metrics and the same limits; and the gate
    answered the usual ones. The charge of engine time is off in both (whether a search costs
    more depends on the machine's load; ``test_the_gate_charges_the_engine_time...`` holds it)."""
    monkeypatch.setattr(Authenticator, "charge", lambda self, record, cpu_seconds: None)
    shop_key = keys.store.create(f"shop-{uuid.uuid4().hex[:8]}", 1e6, kind=PUBLISHABLE,
                                 origins=["https://shop.example"])
    with_gate, without, gated_service, plain_service, seen = twin_apps(index, keys)
    for method, query, headers in requests(keys, shop_key):
        same_answer(with_gate, without, method, query, headers)
    # alice's plain requests after her first (which makes her key's state), but the 4 too long
    assert seen[1] >= 4 * len(QUERIES) - 5 and seen[2] == 0, seen
    assert seen[0] >= 14, seen  # the unusual ones

    def observed(service):
        pending = list(service.metrics._pending)
        for observation in pending:
            assert observation[4] == bisect_left(LATENCY_BUCKETS, observation[5])
        return [(route_, method, status, key) for route_, method, status, key, _, _ in pending]

    assert observed(gated_service) == observed(plain_service)
    # the tokens too
    states = [{k: (s.seen, s.owed, s.rate, s.tokens)
               for k, s in service.auth.limiter.states.items()} for service in (gated_service, plain_service)]
    assert states[0] == states[1]


def scope_of(query: bytes, headers: list[tuple[bytes, bytes]]) -> dict:
    return {"type": "http", "method": "GET", "path": "/v1/address", "query_string": query,
            "headers": [(b"host", b"localhost"), *headers], "http_version": "1.1",
            "asgi": {"version": "3.0"}, "scheme": "http", "server": ("localhost", 80)}


async def _receive():  # pragma: no cover - never awaited
    return {"type": "http.request"}


def ask(gated, route, query: bytes = b"country=NLD&q=kerkstraat+1", headers=None):
    """Call the gate itself; return (answered, req, resp)."""
    req = AsgiRequest(scope_of(query, headers if headers is not None else []), _receive)
    resp = falcon.asgi.Response(gated.resp_options)
    return route.gate(req, resp, req.raw_query), req, resp


def usual(keys):
    return [(b"authorization", f"Bearer {keys.alice}".encode())]


def _publishable(keys, service):
    key = keys.store.create(f"pub-{uuid.uuid4().hex[:8]}", 1e6, kind=PUBLISHABLE, origins=["https://a.example"])
    service.auth.refresh()
    service.auth.authenticate(f"Bearer {key}")
    return {"headers": [(b"authorization", f"Bearer {key}".encode())]}


def _unknown_state(keys, service):
    key = keys.store.create(f"new-{uuid.uuid4().hex[:8]}", 1e6)
    service.auth.refresh()
    service.auth.authenticate(f"Bearer {key}")  # accepted, but never limited by this worker
    return {"headers": [(b"authorization", f"Bearer {key}".encode())]}


def _stale(keys, service):
    auth = service.auth
    old = auth._table._replace(read_at=time.monotonic() - 60)
    auth._table, auth._accepted = old, (old, auth._accepted[1])
    auth._next_refresh = time.monotonic() + 60
    return {}


def _state(service, keys):
    record = service.auth.authenticate(f"Bearer {keys.alice}")
    return service.auth.limiter.states[record.key_id]


DECLINED = {
    "no key": lambda keys, service: {"headers": []},
    "a key never accepted": lambda keys, service: {"headers": [(b"authorization", b"Bearer nla_sk_nope")]},
    "an Origin": lambda keys, service: {"headers": [*usual(keys), (b"origin", b"https://a.example")]},
    "a publishable key": _publishable,
    "not the plain spelling": lambda keys, service: {"query": b"q=kerkstraat&country=NLD"},
    "a bad parameter": lambda keys, service: {"query": b"country=NLD&q=a&limit=0"},
    "no index": lambda keys, service: setattr(service.slot, "index", None),
    "degraded limits": lambda keys, service: setattr(service.auth.limiter, "degraded", True),
    "a key new to this worker": _unknown_state,
    "a changed rate": lambda keys, service: setattr(_state(service, keys), "rate", 5.0),
    "the key's lock held": lambda keys, service: _state(service, keys).lock.acquire() and None,
    "no token": lambda keys, service: setattr(_state(service, keys), "tokens", 0.5),
    "a table not known fresh": _stale,
    "a refresh due on the request path": lambda keys, service: setattr(service.auth, "_next_refresh", -1e9),
    "another table's headers": lambda keys, service: setattr(
        service.auth, "_accepted", (service.auth._table._replace(missing=False), service.auth._accepted[1])),
}


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_the_gate_declines_having_changed_nothing(index, keys, case):
    gated, service, route = make(index, keys)
    client = falcon.testing.TestClient(gated)
    hello = {"Authorization": f"Bearer {keys.alice}"}
    assert client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=hello).status_code == 200
    answered, _, _ = ask(gated, route, headers=usual(keys))
    assert answered  # the usual request, before the case is made
    how = DECLINED[case](keys, service) or {}
    states = {k: (s.tokens, s.seen, s.owed) for k, s in service.auth.limiter.states.items()}
    pending = len(service.metrics._pending)
    answered, req, resp = ask(gated, route, how.get("query", b"country=NLD&q=kerkstraat+1"),
                              how.get("headers", usual(keys)))
    assert answered is False
    assert {k: (s.tokens, s.seen, s.owed) for k, s in service.auth.limiter.states.items()} == states
    assert len(service.metrics._pending) == pending
    assert resp.data is None and resp.headers == {} and req.key_name is None


def test_the_gate_answers_with_an_access_log_as_the_python_path_does(index, keys, caplog):
    """The gate records its answers through ``Finish.answered`` and ``Metrics.observe``, so an
    app with an access log is served by it too, and logs the same lines as without it."""
    gated, _, route = make(index, keys, access_log=True)
    plain, _, plain_route = make(index, keys, access_log=True)
    plain_route.gate = None
    seen = counted(route)
    hello = {"Authorization": f"Bearer {keys.alice}"}
    lines = []
    for app in (gated, plain):
        client = falcon.testing.TestClient(app)
        caplog.clear()
        with caplog.at_level("INFO", logger="server.access"):
            for q in ("a", "kerkstraat 1", "amsterdam"):
                client.simulate_get("/v1/address", query_string=urlencode({"country": "NLD", "q": q}), headers=hello)
        lines.append([r.getMessage().rsplit(" ", 2)[0] + " " + r.getMessage().rsplit(" ", 1)[1]
                      for r in caplog.records if r.name == "server.access"])
    assert seen[1] == 2, seen  # the first request makes the key's state
    assert lines[0] == lines[1] and len(lines[0]) == 3, lines


class SlowIndex:
    """Answers after ``seconds`` of CPU (a busy loop), or refuses as the engine would."""

    manifest = {"built_at": "2026-01-01T00:00:00+00:00"}

    def __init__(self, seconds: float = 0.0, refuse: bool = False) -> None:
        self.seconds, self.refuse = seconds, refuse

    def suggest_json(self, q, *, limit=5, lat=None, lon=None, highlight=False):
        if self.refuse:
            raise engine.QueryError("refused", code="query_too_long", parameter="q")
        start = time.thread_time()
        while time.thread_time() - start < self.seconds:
            pass
        return b'{"hits":[]}'


def test_the_gate_charges_the_engine_time_and_maps_its_refusal(keys):
    """A search of 2 ms of CPU costs the key its token and 10 more (COST_UNIT_SECONDS 0.2 ms),
    as on the Python path; an engine's QueryError is the contract's 400."""
    gated, service, route = make(SlowIndex(0.002), keys)
    client = falcon.testing.TestClient(gated)
    hello = {"Authorization": f"Bearer {keys.alice}"}
    assert client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=hello).status_code == 200
    state = _state(service, keys)
    before = state.tokens
    answered, _, resp = ask(gated, route, headers=usual(keys))
    assert answered and resp.data == b'{"hits":[]}'
    assert before - state.tokens >= 11

    gated, service, route = make(SlowIndex(refuse=True), keys)
    client = falcon.testing.TestClient(gated)
    seen = counted(route)
    client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=hello)  # makes the key's state
    resp = client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=hello)
    assert resp.status_code == 400 and resp.json["code"] == "query_too_long", resp.text
    assert seen == [1, 0, 1]  # the first makes the key's state; the gate raised the second's 400
    assert resp.headers.get("vary") == "Origin"


PIECES = ["kerkstraat", "kerkstr", "1", "12a", "12 a", "12-3", "amsterdam", "den haag", "1012", "1012lg",
          "'s-gravenhage", "curaçao", "ĳssel", "st.", "burg", "1e", "#", "&", "=", "+", "%", "ä", "\u00a0",
          "\t", "x" * 60]
SPELLINGS = ["urlencode", "quote", "reordered", "extra", "doubled", "bad escape", "escaped letters", "nld"]
LIMITS = [None, "1", "5", "10", "3", "0", "11", "abc", "5.0", " 5", "05", ""]


def random_request(rng, keys, shop_key):
    """One request as a client might send it: the usual one most often, around it every way of
    spelling the query string, the key and the origin that the gate must leave to the Python path."""
    q = rng.choice([" ", "", "  "]).join(rng.choice(PIECES) for _ in range(rng.randrange(0, 6)))
    limit = rng.choice(LIMITS) if rng.random() < 0.5 else rng.choice(["1", "5", "10", None])
    params = [("country", "NLD"), ("q", q)] + ([("limit", limit)] if limit is not None else [])
    spelling = rng.choice(SPELLINGS) if rng.random() < 0.4 else "urlencode"
    if spelling == "quote":
        query = urlencode(params, quote_via=quote)
    elif spelling == "reordered":
        query = urlencode(rng.sample(params, len(params)))
    elif spelling == "extra":
        query = urlencode(params + [rng.choice([("lat", "52.1"), ("highlight", "true"), ("x", "")])])
    elif spelling == "doubled":
        query = urlencode(params + [rng.choice(params)])
    elif spelling == "bad escape":
        query = urlencode(params) + rng.choice(["%", "%G1", "%e2%82", "&", "&&", "=%ff"])
    elif spelling == "escaped letters":
        query = urlencode(params).replace("N", "%4E").replace("k", "%6b")
    elif spelling == "nld":
        query = urlencode(params).replace("NLD", rng.choice(["nld", "NL", "BEL"]))
    else:
        query = urlencode(params)
    alice = f"Bearer {keys.alice}"
    authorization = alice if rng.random() < 0.6 else rng.choice([
        None, f"bearer {keys.alice}", f"Bearer  {keys.alice}", f"{alice} ", "Bearer nla_sk_unknown",
        f"Basic {keys.alice}", "Bearer", f"Bearer {shop_key}"])
    headers = {} if authorization is None else {"Authorization": authorization}
    if rng.random() < 0.15:
        headers["Origin"] = rng.choice(["https://shop.example", "https://other.example", "null"])
    return ("HEAD" if rng.random() < 0.1 else "GET"), query, headers


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_requests_get_the_python_paths_answers(index, keys, seed):
    """300 requests drawn at random, each to an app with the gate and to one without: the same
    status, headers and body each time, then the same metrics and limits; the gate answered
    the usual ones and declined the rest without raising."""
    rng = random.Random(seed)
    shop_key = keys.store.create(f"shop-{uuid.uuid4().hex[:8]}", 1e6, kind=PUBLISHABLE,
                                 origins=["https://shop.example"])
    with_gate, without, gated_service, plain_service, seen = twin_apps(index, keys)
    statuses = {same_answer(with_gate, without, *random_request(rng, keys, shop_key)) for _ in range(300)}
    assert seen[2] == 0 and seen[1] >= 60 and seen[0] >= 60, seen
    assert {200, 400, 401, 403} <= statuses, statuses
    assert [o[:4] for o in gated_service.metrics._pending] == [o[:4] for o in plain_service.metrics._pending]
    states = [{k: (s.seen, s.owed, s.rate) for k, s in service.auth.limiter.states.items()}
              for service in (gated_service, plain_service)]
    assert states[0] == states[1]


QUESTIONS = {
    "/v1/address/postcode": [
        "country=NLD&postcode=9745CC&number=1", "country=NLD&postcode=9745+cc&number=1",
        "country=NLD&postcode=9746TN&number=3", "country=NLD&postcode=9746TN&number=3&addition=10",
        "country=NLD&postcode=9745CC&number=1&letter=a", "country=NLD&postcode=9745CC&number=99999",
        "number=1&postcode=9745CC&country=NLD", "country=NLD&postcode=9745C&number=1",
        "country=NLD&postcode=9745CC&number=01", "country=NLD&postcode=9745CC",
        "country=BEL&postcode=9745CC&number=1", "country=NLD&postcode=%ff&number=1",
        "country=NLD&postcode=9745CC&number=1&letter=ab",
    ],
    "/v1/address/reverse": [
        "country=NLD&lat=53.2207&lon=6.5607", "country=NLD&lat=53.2207&lon=6.5607&limit=10",
        "country=NLD&lat=53.2207&lon=6.5607&limit=10&radius=20",
        "country=NLD&lat=53.2207&lon=6.5607&limit=10&postcode=9711",
        "country=NLD&lat=48.8566&lon=2.3522", "country=NLD&lat=91&lon=5",
        "country=NLD&lat=52&lon=5&radius=0", "country=NLD&lat=52&lon=5&municipality=Atlantis",
        "country=NLD&lon=5", "lat=52&lon=5",
    ],
}


@pytest.mark.parametrize("path", sorted(QUESTIONS))
def test_the_questions_gate_answers_as_the_python_path_does(index, keys, path):
    """The postcode and reverse routes: every request of the list with alice's secret key (the
    gate answers them, 400s included: the parameters come after the limit), then with no key, a
    publishable key from its page, a secret key from a page, a HEAD (the gate declines the
    first three), to an app with the gate and one without: the same status, headers and body,
    then the same metrics and limits."""
    shop_key = keys.store.create(f"shop-{uuid.uuid4().hex[:8]}", 1e6, kind=PUBLISHABLE,
                                 origins=["https://shop.example"])
    with_gate, without, gated_service, plain_service, seen = twin_apps(index, keys, path)
    alice = {"Authorization": f"Bearer {keys.alice}"}
    others = [{}, {"Authorization": f"Bearer {shop_key}", "Origin": "https://shop.example"},
              {**alice, "Origin": "https://shop.example"}]
    statuses = []
    for query in QUESTIONS[path]:
        statuses.append(same_answer(with_gate, without, "GET", query, alice, path))
        for headers in others:
            same_answer(with_gate, without, "GET", query, headers, path)
        same_answer(with_gate, without, "HEAD", query, alice, path)
    assert {200, 400} <= set(statuses), statuses
    # alice's requests, GET and HEAD, after her first (which makes her key's state); each 400
    # twice (GET and HEAD), raised by the gate
    assert seen[1] + seen[2] == 2 * len(QUESTIONS[path]) - 1, seen
    assert seen[2] == 2 * statuses.count(400) and seen[0] == 3 * len(QUESTIONS[path]) + 1, seen
    assert [o[:4] for o in gated_service.metrics._pending] == [o[:4] for o in plain_service.metrics._pending]
    states = [{k: (s.seen, s.owed, s.rate) for k, s in service.auth.limiter.states.items()}
              for service in (gated_service, plain_service)]
    assert states[0] == states[1]
