"""/openapi.json is valid OpenAPI 3.1, and what the service answers matches it."""

from __future__ import annotations

import json

import jsonschema
import pytest
from openapi_spec_validator import validate

from server.openapi import build_spec

SPEC = build_spec()


def test_is_valid_openapi_3_1():
    validate(SPEC)
    assert SPEC["openapi"] == "3.1.0"


def schema_of(path: str, status: str, media: str) -> dict:
    """The response schema, with the document's components so that $refs resolve."""
    schema = SPEC["paths"][path]["get"]["responses"][status]["content"][media]["schema"]
    return {**schema, "components": SPEC["components"]}


def check(resp, path: str = "/v1/address") -> None:
    status = str(resp.status_code)
    media = resp.headers["content-type"]
    documented = SPEC["paths"][path]["get"]["responses"]
    assert status in documented, f"{status} is not documented for {path}"
    jsonschema.validate(json.loads(resp.content), schema_of(path, status, media))
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
    ],
)
def test_address_responses_match_the_document(get, query):
    check(get(query))


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
