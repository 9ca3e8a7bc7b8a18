"""/openapi.json is valid OpenAPI 3.1, and what the service answers matches it."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from openapi_spec_validator import validate

import engine
from server.keys import PUBLISHABLE
from server.openapi import POSTCODE_PATTERN, build_spec

SPEC = build_spec()


def test_is_valid_openapi_3_1():
    validate(SPEC)
    assert SPEC["openapi"] == "3.1.0"


def schema_of(path: str, status: str, media: str, method: str = "get") -> dict:
    """The response schema, with the document's components so that $refs resolve."""
    schema = SPEC["paths"][path][method]["responses"][status]["content"][media]["schema"]
    return {**schema, "components": SPEC["components"]}


def check(resp, path: str = "/v1/address", method: str = "get") -> None:
    status = str(resp.status_code)
    documented = SPEC["paths"][path][method]["responses"]
    assert status in documented, f"{status} is not documented for {method.upper()} {path}"
    if "content" in documented[status] or resp.content:
        media = resp.headers["content-type"]
        jsonschema.validate(json.loads(resp.content), schema_of(path, status, media, method))
    for name, header in documented[status].get("headers", {}).items():
        assert name.lower() in resp.headers, name
        jsonschema.validate(resp.headers[name.lower()], header["schema"])


@pytest.mark.parametrize(
    "query",
    [
        "country=NLD&q=kerkstraat+1&limit=10",
        "country=NLD&q=2514KP+1",
        "country=NLD&q=nothing+like+it",
        "country=NLD&q=kerkstraat&lat=52.08&lon=4.31",
        "country=NLD",
        "country=BEL&q=a",
        "country=NLD&q=" + "a" * 129,
        "country=NLD&q=a&limit=05",
        "country=NLD&q=kerkstr+1+gron&highlight=true",
        "country=NLD&q=a&highlight=yes",
    ],
)
def test_address_responses_match_the_document(get, query):
    check(get(query))


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/v1/address", "country=NLD&q=kerkstraat+1&limit=10&municipality=groningen"),
        ("/v1/address", "country=NLD&q=kerkstraat&postcode=9745,9746&bbox=6.4,53.1,6.7,53.3"),
        ("/v1/address", "country=NLD&q=kerkstraat&province=Vlaanderen"),
        ("/v1/address/postcode", "country=NLD&postcode=9746TN&number=3"),
        ("/v1/address/postcode", "country=NLD&postcode=9745+cc&number=1&letter=A"),
        ("/v1/address/postcode", "country=NLD&postcode=9745CC&number=99999"),
        ("/v1/address/postcode", "country=NLD&postcode=97&number=1"),
        ("/v1/address/postcode", "country=NLD&postcode=9745CC"),
        ("/v1/address/reverse", "country=NLD&lat=53.2207&lon=6.5607&limit=10"),
        ("/v1/address/reverse", "country=NLD&lat=53.2207&lon=6.5607&radius=12&locality=Groningen"),
        ("/v1/address/reverse", "country=NLD&lat=0&lon=0"),
        ("/v1/address/reverse", "country=NLD&lat=95&lon=0"),
        ("/v1/address/reverse", "country=NLD&lat=52"),
    ],
)
def test_the_other_questions_match_the_document(get, path, query):
    check(get(query, path=path), path)


def test_hits_of_every_shape_match(get):
    # letters, additions, big limits: many component lists at once
    for q in ["kerkstraat 1", "hoofdstraat", "1e", "2514 1a", "den haag 12-3"]:
        resp = get(f"country=NLD&q={q}&limit=10")
        check(resp)


def test_401_and_429_match_the_document(get, keys):
    check(get("country=NLD&q=a", headers={}))
    slow = {"Authorization": f"Bearer {keys.slow}"}
    for _ in range(3):
        resp = get("country=NLD&q=a", slow)
    assert resp.status_code == 429
    check(resp)


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/openapi.json"])
def test_operations_routes_match_the_document(client, path):
    check(client.simulate_get(path), path)


def test_every_error_code_of_the_contract_is_documented():
    address = SPEC["paths"]["/v1/address"]["get"]["responses"]
    documented = {
        code
        for response in address.values()
        for schema in [response["content"].get("application/problem+json", {}).get("schema")]
        if schema
        for code in schema["allOf"][1]["properties"]["code"]["enum"]
    }
    assert documented >= {
        "missing_parameter",
        "unsupported_country",
        "query_too_long",
        "invalid_parameter",
        "unauthorized",
        "rate_limited",
    }
    assert "404" in SPEC["info"]["description"] and "405" in SPEC["info"]["description"]


@pytest.fixture(scope="module")
def docs_origin(keys) -> str:
    keys.store.create("openapi-pub", 1e6, kind=PUBLISHABLE, origins=["https://docs.example"])
    return "https://docs.example"


def test_cors_responses_match_the_document(app_factory, keys, docs_origin):
    """The preflight's 204, 403 and 405, and the 403 of a key used from another origin."""
    app = app_factory()  # reads the store, with the key above
    base = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
    cases = [
        ({**base, "Origin": "https://docs.example"}, 204),
        ({**base, "Origin": "https://other.example"}, 403),
        ({**base, "Origin": "https://docs.example", "Access-Control-Request-Headers": "x-a"}, 403),
        ({**base, "Origin": "https://docs.example", "Access-Control-Request-Method": "PUT"}, 405),
        ({}, 405),
    ]
    for headers, status in cases:
        resp = app.simulate_options("/v1/address", headers=headers)
        assert resp.status_code == status
        check(resp, method="options")
    resp = app.simulate_get(
        "/v1/address",
        query_string="country=NLD&q=a",
        headers={"Authorization": f"Bearer {keys.alice}", "Origin": "https://docs.example"},
    )
    assert resp.status_code == 403
    check(resp)


def test_the_page_and_the_widget_are_documented_and_served(client):
    from server.openapi import PAGE_FILES

    for path, _summary, media in PAGE_FILES:
        resp = client.simulate_get(path)
        assert resp.status_code == 200, path
        assert resp.headers["content-type"].split(";")[0] == media
        assert "200" in SPEC["paths"][path]["get"]["responses"]
    check(client.simulate_get("/demo-key"), "/demo-key")  # no demo key configured: the 404


def test_the_widget_is_served_with_the_rules_of_the_postcode_question(client):
    """widget.js's postcode mode asks only for a whole postcode and number: the server fills in
    the document's postcode pattern and the engine's highest house number (server/pages.py)."""
    from server.pages import WIDGET_RULES_MARK

    body = client.simulate_get("/widget.js").content
    assert WIDGET_RULES_MARK not in body
    lookup = SPEC["paths"]["/v1/address/postcode"]["get"]["parameters"]
    schema = {p["name"]: p["schema"] for p in lookup}
    rules = json.dumps({"postcode": schema["postcode"]["pattern"], "numberMax": schema["number"]["maximum"]},
                       separators=(",", ":"))
    assert f"var RULES = {rules};".encode() in body


@pytest.mark.parametrize("text", ["1012LG", "1012 lg", " 1012  LG ", "9999zz", "1012 L G", "1000AA",
                                  "0123AB", "1012L", "1012LGX", "101LG", "1012 1G", "10 12LG", "1012-LG", "", "    "])
def test_the_postcode_pattern_is_what_the_engine_takes(index, text):
    """The document's postcode pattern (and so the widget's) and the engine's look-up agree."""
    try:
        index.lookup(text, 1)
        taken = True
    except engine.QueryError:
        taken = False
    assert taken == bool(re.fullmatch(POSTCODE_PATTERN, text)), text
