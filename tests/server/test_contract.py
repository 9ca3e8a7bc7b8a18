"""Every case of the contract (shared/docs/API.md) through falcon.testing, WSGI and ASGI."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import falcon.testing
import pytest
from bursts import statuses_until_429

from server.keys import KeyStore

PROBLEM = "application/problem+json"


def assert_problem(resp, status: int, code: str, parameter: str | None = None) -> dict:
    """Check an RFC 9457 body of the contract and return it."""
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"] == PROBLEM
    body = json.loads(resp.content)
    assert body["type"] == "about:blank"
    assert body["status"] == status
    assert body["code"] == code
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    assert body.get("parameter") == parameter
    return body


# -- 200 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", ["kerkstraat 1", "2514KP 1", "s gravenhage", "nothing like it xyz"])
@pytest.mark.parametrize("limit", [1, 5, 10])
def test_body_is_the_engines_bytes_unchanged(get, index, q, limit):
    resp = get(urlencode({"country": "NLD", "q": q, "limit": limit}))
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.content == index.suggest_json(q, limit=limit)


def test_limit_defaults_to_5(get, index):
    resp = get("country=NLD&q=kerkstraat")
    assert resp.content == index.suggest_json("kerkstraat", limit=5)
    body = resp.json
    assert body["limit"] == 5
    assert 1 <= len(body["hits"]) <= 5


def test_hit_shape(get):
    hit = get("country=NLD&q=kerkstraat+1&limit=1").json["hits"][0]
    assert hit["country"] == "NLD"
    assert [c["type"] for c in hit["components"]][0] == "NLD_PUBLIC_SPACE"
    assert len(hit["lines"]) == 3 and hit["lines"][2] == "Nederland"
    assert set(hit["location"]) == {"latitude", "longitude"}


@pytest.mark.parametrize("q", ["", "+", "%20%20%20"])
def test_blank_q_is_200_with_no_hits(get, q):
    resp = get(f"country=NLD&q={q}")
    assert resp.status_code == 200
    assert resp.json == {"hits": [], "limit": 5}


def test_unknown_parameters_are_ignored(get, index):
    resp = get("country=NLD&q=kerkstraat&foo=1&foo=2&bar=%FF&baz")
    assert resp.content == index.suggest_json("kerkstraat", limit=5)


def test_focus_point_is_passed_to_the_engine(get, index):
    resp = get("country=NLD&q=kerkstraat+1&lat=53.2&lon=6.56")
    assert resp.status_code == 200
    assert resp.content == index.suggest_json("kerkstraat 1", limit=5, lat=53.2, lon=6.56)


def test_head_has_the_headers_of_get_and_no_body(client, auth):
    qs = "country=NLD&q=kerkstraat"
    got = client.simulate_get("/v1/address", query_string=qs, headers=auth)
    head = client.simulate_head("/v1/address", query_string=qs, headers=auth)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == "application/json"
    assert head.headers["content-length"] == got.headers["content-length"]


# -- 400 ------------------------------------------------------------------------------------------

BAD_REQUESTS = [
    # query string, code, parameter
    ("q=damrak", "missing_parameter", "country"),
    ("country=NLD", "missing_parameter", "q"),
    ("", "missing_parameter", "country"),
    ("country=BEL&q=damrak", "unsupported_country", "country"),
    ("country=nld&q=damrak", "unsupported_country", "country"),
    ("country=&q=damrak", "unsupported_country", "country"),
    ("country=NLD&q=" + "a" * 129, "query_too_long", "q"),
    ("country=NLD&q=damrak&limit=0", "invalid_parameter", "limit"),
    ("country=NLD&q=damrak&limit=11", "invalid_parameter", "limit"),
    ("country=NLD&q=damrak&limit=abc", "invalid_parameter", "limit"),
    ("country=NLD&q=damrak&limit=", "invalid_parameter", "limit"),
    ("country=NLD&q=damrak&limit=-1", "invalid_parameter", "limit"),
    ("country=NLD&q=damrak&country=NLD", "invalid_parameter", "country"),
    ("country=NLD&q=damrak&q=damrak", "invalid_parameter", "q"),
    ("country=NLD&q=damrak&limit=5&limit=5", "invalid_parameter", "limit"),
    ("country=NLD&q=%FF", "invalid_parameter", "q"),
    ("country=NLD&q=%C3", "invalid_parameter", "q"),
    ("country=NLD&q=%", "invalid_parameter", "q"),
    ("country=NLD&q=%zz", "invalid_parameter", "q"),
    ("country=NL%FF&q=damrak", "invalid_parameter", "country"),
    ("country=NLD&q=damrak&lat=52", "invalid_parameter", "lon"),
    ("country=NLD&q=damrak&lon=4", "invalid_parameter", "lat"),
    ("country=NLD&q=damrak&lat=91&lon=4", "invalid_parameter", "lat"),
    ("country=NLD&q=damrak&lat=52&lon=-180.5", "invalid_parameter", "lon"),
    ("country=NLD&q=damrak&lat=nan&lon=4", "invalid_parameter", "lat"),
    ("country=NLD&q=damrak&lat=52&lon=inf", "invalid_parameter", "lon"),
    ("country=NLD&q=damrak&lat=&lon=4", "invalid_parameter", "lat"),
]


@pytest.mark.parametrize(("query", "code", "parameter"), BAD_REQUESTS)
def test_bad_request(get, query, code, parameter):
    assert_problem(get(query), 400, code, parameter)


@pytest.mark.parametrize("lat,lon", [("90", "180"), ("-90", "-180"), ("52.1", "4.3"), ("5e1", "0")])
def test_focus_point_bounds_are_inclusive(get, lat, lon):
    assert get(f"country=NLD&q=damrak&lat={lat}&lon={lon}").status_code == 200


@pytest.mark.parametrize("limit", range(1, 11))
def test_every_limit_from_1_to_10(get, limit):
    resp = get(f"country=NLD&q=kerkstraat&limit={limit}")
    assert resp.status_code == 200
    assert resp.json["limit"] == limit
    assert len(resp.json["hits"]) <= limit


def test_percent_encoded_names_count_as_those_names(get):
    """Regression: `%71` is `q`, so giving it next to `q` is a repeated parameter."""
    assert_problem(get("country=NLD&q=a&%71=b"), 400, "invalid_parameter", "q")
    assert get("country=NLD&%71=kerkstraat").status_code == 200


# -- 401 ------------------------------------------------------------------------------------------


def test_missing_header_is_401_with_bearer_challenge(get):
    resp = get("country=NLD&q=damrak", headers={})
    assert_problem(resp, 401, "unauthorized")
    assert resp.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "value",
    [
        "Bearer",
        "Bearer ",
        "Basic YWxpY2U6c2VjcmV0",
        "Token {key}",
        "Bearer nlk_0000000000000000_" + "A" * 43,
        "Bearer {key}x",
        "Bearer {key},Bearer {key}",
        "Bearer{key}",
        "Bearer not-a-key",
        "Bearer " + "x" * 5000,
    ],
)
def test_bad_credentials_are_401(get, keys, value):
    resp = get("country=NLD&q=damrak", headers={"Authorization": value.format(key=keys.alice)})
    body = assert_problem(resp, 401, "unauthorized")
    assert resp.headers["www-authenticate"] == "Bearer"
    assert keys.alice not in json.dumps(body)


def test_wrong_secret_with_a_known_key_id_is_401(get, keys):
    forged = keys.alice[:-4] + ("AAAA" if not keys.alice.endswith("AAAA") else "BBBB")
    assert_problem(get("country=NLD&q=damrak", {"Authorization": f"Bearer {forged}"}), 401, "unauthorized")


def test_authentication_comes_before_parameters(get):
    resp = get("q=" + "a" * 500 + "&limit=99", headers={})
    assert_problem(resp, 401, "unauthorized")


@pytest.mark.parametrize("value", ["bearer {key}", "BEARER {key}", "Bearer   {key}", "  Bearer {key}  "])
def test_scheme_is_case_insensitive_and_spaces_around_the_key_are_ignored(get, keys, value):
    resp = get("country=NLD&q=damrak", headers={"Authorization": value.format(key=keys.alice)})
    assert resp.status_code == 200


def test_revoked_key_is_401(app_factory, keys, flavour):
    name = f"revoked-{flavour}"
    key = keys.store.create(name, 100)
    client = app_factory(key_refresh_seconds=0)
    headers = {"Authorization": f"Bearer {key}"}
    assert client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=headers).status_code == 200
    assert keys.store.revoke(name)
    resp = client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=headers)
    assert_problem(resp, 401, "unauthorized")


# -- 404, 405 -------------------------------------------------------------------------------------


# "/" is the try-it page (server/pages.py)
@pytest.mark.parametrize(
    "path", ["/index.html", "/v1", "/v1/address/", "/v2/address", "/V1/address", "/v1/addresses", "/x%00"]
)
def test_other_paths_are_404(get, path):
    assert_problem(get("country=NLD&q=damrak", path=path), 404, "not_found")


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
@pytest.mark.parametrize("path", ["/v1/address", "/healthz", "/metrics", "/openapi.json"])
def test_other_methods_are_405_with_allow(client, auth, method, path):
    resp = client.simulate_request(method, path, query_string="country=NLD&q=a", headers=auth)
    assert_problem(resp, 405, "method_not_allowed")
    assert resp.headers["allow"] == "GET, HEAD"


def test_405_comes_before_401(client):
    resp = client.simulate_post("/v1/address")
    assert_problem(resp, 405, "method_not_allowed")


# -- 429 ------------------------------------------------------------------------------------------


def test_over_the_rate_is_429_with_retry_after(get, keys):
    headers = {"Authorization": f"Bearer {keys.slow}"}  # 2 per second, burst 2
    statuses = statuses_until_429(lambda: get("country=NLD&q=damrak", headers).status_code, 3)
    assert statuses in ([200, 429], [200, 200, 429])
    resp = get("country=NLD&q=damrak", headers)
    assert_problem(resp, 429, "rate_limited")
    assert int(resp.headers["retry-after"]) >= 1
    # other keys are not affected
    assert get("country=NLD&q=damrak").status_code == 200


def test_rate_limit_comes_before_parameters(get, keys):
    headers = {"Authorization": f"Bearer {keys.slow}"}
    for _ in range(2):
        get("country=NLD&q=damrak", headers)
    assert_problem(get("limit=99", headers), 429, "rate_limited")


# -- operations routes ----------------------------------------------------------------------------


def test_healthz(client):
    resp = client.simulate_get("/healthz")
    assert resp.status_code == 200
    assert resp.json == {"status": "ok"}


def test_readyz_names_the_index(client, index):
    resp = client.simulate_get("/readyz")
    assert resp.status_code == 200
    assert resp.json["status"] == "ready"
    assert resp.json["index"]["built_at"] == index.manifest["built_at"]
    # the sample index is built from the CSV, which names no extract date
    assert resp.json["index"]["source_format"] == "csv"
    assert resp.json["index"]["extract_date"] is None


def test_without_a_key_store_every_key_is_401_and_readyz_is_503(index, tmp_path, flavour):
    from server.app import create_app
    from server.config import Config

    app = create_app(index, Config(keystore_path=str(tmp_path / "missing.sqlite3")), asgi=flavour == "asgi")
    client = falcon.testing.TestClient(app)
    assert_problem(client.simulate_get("/readyz"), 503, "not_ready")
    resp = client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers={"Authorization": "Bearer nlk_x"})
    assert_problem(resp, 401, "unauthorized")
    assert client.simulate_get("/healthz").status_code == 200
    # the first key created works without a restart
    key = KeyStore(str(tmp_path / "missing.sqlite3")).create("first", 10)
    time.sleep(1.1)
    resp = client.simulate_get(
        "/v1/address", query_string="country=NLD&q=a", headers={"Authorization": f"Bearer {key}"}
    )
    assert resp.status_code == 200
    assert client.simulate_get("/readyz").status_code == 200


def test_openapi_json(client):
    resp = client.simulate_get("/openapi.json")
    assert resp.status_code == 200
    spec = resp.json
    assert spec["openapi"].startswith("3.1")
    assert "/v1/address" in spec["paths"]


def test_metrics_count_requests_by_status_and_key(client, auth):
    client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=auth)
    client.simulate_get("/v1/address", query_string="country=NLD")
    client.simulate_get("/nowhere")
    resp = client.simulate_get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    text = resp.text
    assert 'address_http_requests_total{method="GET",route="/v1/address",status="200"} 1.0' in text
    assert 'address_http_requests_total{method="GET",route="/v1/address",status="401"} 1.0' in text
    assert 'address_http_requests_total{method="GET",route="unmatched",status="404"} 1.0' in text
    assert 'address_api_key_requests_total{key="alice",status="200"} 1.0' in text
    assert "address_http_request_duration_seconds_bucket" in text
    assert "address_index_age_seconds" in text
    assert 'address_index_source_info{extract_date="",format="csv"} 1.0' in text
    assert "nlk_" not in text


class BrokenIndex:
    manifest = {"built_at": "2026-01-01T00:00:00+00:00"}

    def suggest_json(self, q, *, limit=5, lat=None, lon=None, highlight=False):
        raise RuntimeError("engine bug")


def test_an_engine_bug_is_a_problem_500_that_names_no_secret(keys, flavour, caplog):
    """Regression guard: even a bug answers problem+json, and the log has no key or query."""
    from server.app import create_app
    from server.config import Config

    app = create_app(BrokenIndex(), Config(keystore_path=keys.path), asgi=flavour == "asgi")
    client = falcon.testing.TestClient(app)
    resp = client.simulate_get(
        "/v1/address",
        query_string="country=NLD&q=secretstreet",
        headers={"Authorization": f"Bearer {keys.alice}"},
    )
    assert_problem(resp, 500, "internal_error")
    assert "engine bug" not in resp.text
    logged = caplog.text
    assert "RuntimeError" in logged
    assert keys.alice not in logged and "secretstreet" not in logged


class RefusingIndex(BrokenIndex):
    def __init__(self, code: str, parameter: str) -> None:
        self.code, self.parameter = code, parameter

    def suggest_json(self, q, *, limit=5, lat=None, lon=None, highlight=False):
        import engine

        raise engine.QueryError("refused", code=self.code, parameter=self.parameter)


@pytest.mark.parametrize(
    ("code", "parameter"),
    [("query_too_long", "q"), ("invalid_parameter", "limit"), ("something_new", "lat")],
)
def test_an_engine_query_error_is_the_contracts_400(keys, flavour, code, parameter):
    """Regression guard: an engine stricter than the server still gives a 400, never a 500."""
    from server.app import create_app
    from server.config import Config

    app = create_app(RefusingIndex(code, parameter), Config(keystore_path=keys.path), asgi=flavour == "asgi")
    resp = falcon.testing.TestClient(app).simulate_get(
        "/v1/address",
        query_string="country=NLD&q=a",
        headers={"Authorization": f"Bearer {keys.alice}"},
    )
    expected = code if code != "something_new" else "invalid_parameter"
    assert_problem(resp, 400, expected, parameter)
