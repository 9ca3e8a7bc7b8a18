"""The OpenAPI 3.1 description served at ``/openapi.json`` (the contract of API.md, exactly)."""

from __future__ import annotations

from typing import Any

import orjson

from engine import COORDINATE_BOUNDS, MAX_ADDITION_LENGTH, MAX_HOUSE_NUMBER, MAX_LIMIT
from server.cors import ALLOW_HEADERS, ALLOW_METHODS, MAX_AGE
from server.errors import CODES
from server.params import AREA_PARAMETERS, DEFAULT_LIMIT, MAX_QUERY_CODE_POINTS

#: A whole postcode as `/v1/address/postcode` takes it (the engine's rule, `AddressIndex.lookup`:
#: four digits not starting with 0 and two letters, any case, spaces anywhere). The widget's
#: postcode mode reads it too (server/pages.py), to ask only for a whole postcode.
POSTCODE_PATTERN = "^ *" + " *".join(["[1-9]", "[0-9]", "[0-9]", "[0-9]", "[A-Za-z]", "[A-Za-z]"]) + " *$"

COMPONENT_TYPES = [
    "NLD_PUBLIC_SPACE",
    "NLD_HOUSE_NUMBER",
    "NLD_HOUSE_LETTER",
    "NLD_HOUSE_NUMBER_ADDITION",
    "NLD_POSTAL_CODE",
    "NLD_LOCALITY",
    "NLD_MUNICIPALITY",
    "NLD_PROVINCE",
    "NLD_COUNTRY",
]



def _point(lat: str, lon: str) -> dict:
    """A WGS84 point as an object of two numbers named `lat` and `lon`."""
    return {
        "type": "object",
        "required": [lat, lon],
        "properties": {
            lat: _coordinate("lat"),
            lon: _coordinate("lon"),
        },
    }


def _coordinate(name: str) -> dict[str, Any]:
    """A latitude or longitude within the engine's bounds."""
    return {"type": "number", "minimum": -COORDINATE_BOUNDS[name], "maximum": COORDINATE_BOUNDS[name]}


def _query(name: str, description: str, schema: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


_NAMES_RULE = ("as the register writes them, in any case and with or without diacritics "
               "(`sudwest-fryslan`, `'s-hertogenbosch`); several separated by commas (any one "
               "of them). A name the register does not hold is 400 `invalid_parameter` naming "
               "the parameter and the name.")

#: the area of issue 39 (server/params.py rule 8), on /v1/address and /v1/address/reverse
AREA_QUERY = [
    _query("municipality", "Only addresses of these municipalities (gemeenten), " + _NAMES_RULE,
           {"type": "string", "minLength": 1}),
    _query("locality", "Only addresses of these localities (woonplaatsen), " + _NAMES_RULE,
           {"type": "string", "minLength": 1}),
    _query("province", "Only addresses of these provinces, " + _NAMES_RULE, {"type": "string", "minLength": 1}),
    _query("postcode", "Only addresses in these postcode areas: 4 digits (`1012`), with one "
           "letter (`1012L`) or both (`1012 LG`), any case; several separated by commas. A "
           "malformed one, or one without addresses, is 400 `invalid_parameter`.",
           {"type": "string", "pattern": "^ *[1-9][0-9]{3} *([A-Za-z] *){0,2}(, *[1-9][0-9]{3} *([A-Za-z] *){0,2})*$"}),
    _query("bbox", "Only addresses inside this box, WGS84 degrees `minlon,minlat,maxlon,maxlat` "
           "(minimum before maximum; else 400 `invalid_parameter`).", {"type": "string"}),
]
AREA_DESCRIPTION = (" The area parameters (`municipality`, `locality`, `province`, `postcode`, "
                    "`bbox`) keep the answers inside an area, applied inside the search (up to "
                    "`limit` hits of the area when it has them), each given one required.")


def _problem(codes: list[str], description: str, headers: dict[str, Any] | None = None) -> dict:
    status = {CODES[code][0] for code in codes}
    schema = {
        "allOf": [
            {"$ref": "#/components/schemas/Problem"},
            {
                "type": "object",
                "properties": {
                    "code": {"enum": codes},
                    "status": {"enum": sorted(status)},
                },
            },
        ]
    }
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/problem+json": {"schema": schema}},
    }
    if headers:
        response["headers"] = headers
    return response


_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    }
}
_ALLOW = {
    "Allow": {
        "description": "Always `GET, HEAD`.",
        "required": True,
        "schema": {"type": "string", "const": "GET, HEAD"},
    }
}


def _header(description: str, const: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"} if const is None else {"type": "string", "const": const}
    return {"description": description, "required": True, "schema": schema}


_AUTHENTICATE = {
    "WWW-Authenticate": {
        "description": "Always `Bearer`.",
        "required": True,
        "schema": {"type": "string", "const": "Bearer"},
    }
}


def _ops(summary: str, description: str, responses: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "description": description,
            "security": [],
            "responses": responses,
            "tags": ["operations"],
        }
    }


#: The try-it page and the embeddable widget (server/pages.py): path, summary, media type.
PAGE_FILES = [
    ("/", "The try-it page", "text/html"),
    ("/try.js", "The try-it page's script", "text/javascript"),
    ("/try.css", "The try-it page's style sheet", "text/css"),
    ("/widget.js", "The embeddable autocomplete (any site's `<script src>`)", "text/javascript"),
    ("/widget.css", "The embeddable autocomplete's style sheet", "text/css"),
]


def _text(media: str) -> dict[str, Any]:
    return {"description": "The file.", "content": {media: {"schema": {"type": "string"}}}}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _limited(hit: str) -> dict[str, Any]:
    """An answer of at most ``limit`` hits of the schema `hit`, and the limit it was asked with
    (``/v1/address`` and ``/v1/address/reverse``)."""
    return {
        "type": "object",
        "required": ["hits", "limit"],
        "properties": {
            "hits": {"type": "array", "maxItems": MAX_LIMIT, "items": {"$ref": f"#/components/schemas/{hit}"}},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
    }


def build_spec() -> dict[str, Any]:
    """Return the OpenAPI document as Python objects."""
    component = {
        "oneOf": [
            {
                "type": "object",
                "required": ["type", "value"],
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "NLD_HOUSE_NUMBER"},
                    "value": {"type": "integer", "minimum": 1, "maximum": MAX_HOUSE_NUMBER},
                },
            },
            {
                "type": "object",
                "required": ["type", "value"],
                "additionalProperties": False,
                "properties": {
                    "type": {"enum": [t for t in COMPONENT_TYPES if t != "NLD_HOUSE_NUMBER"]},
                    "value": {"type": "string"},
                },
            },
        ]
    }
    hit = {
        "type": "object",
        "required": ["components", "country", "lines", "location"],
        "properties": {
            "components": {
                "type": "array",
                "description": "In the order of the enum of `type`; letter and addition are "
                "left out of addresses that have none.",
                "minItems": 7,
                "maxItems": 9,
                "items": {"$ref": "#/components/schemas/Component"},
            },
            "country": {"const": "NLD"},
            "lines": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 3,
                "maxItems": 3,
                "description": "`{street} {number}{letter}[-{addition}]`, `{postal code} {locality}`, `Nederland`.",
            },
            "location": _point("latitude", "longitude"),
            "highlights": {
                "type": "array",
                "description": "Only with `highlight=true`: per line of `lines`, the sorted, "
                "merged `[start, end)` spans (Unicode code points) of the text the typed words "
                "matched: whole words, the typed start of a word, abbreviations and slips marked "
                "on the registered spelling.",
                "minItems": 3,
                "maxItems": 3,
                "items": {
                    "type": "array",
                    "items": {
                        "type": "array",
                        "prefixItems": [{"type": "integer", "minimum": 0}, {"type": "integer", "minimum": 1}],
                        "minItems": 2,
                        "maxItems": 2,
                    },
                },
            },
        },
    }
    problem = {
        "type": "object",
        "description": "RFC 9457 problem details.",
        "required": ["type", "title", "status", "detail", "code"],
        "properties": {
            "type": {"const": "about:blank"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string"},
            "code": {"enum": list(CODES)},
            "parameter": {"enum": ["country", "q", "limit", "lat", "lon", "highlight", *AREA_PARAMETERS,
                                   "number", "letter", "addition", "radius"]},
        },
    }
    parameters = [
        {
            "name": "country",
            "in": "query",
            "required": True,
            "description": "ISO 3166-1 alpha-3, upper case; only `NLD` is served (else 400 `unsupported_country`).",
            "schema": {"type": "string", "enum": ["NLD"]},
        },
        {
            "name": "q",
            "in": "query",
            "required": True,
            "description": f"The partial address as typed: at most {MAX_QUERY_CODE_POINTS} "
            "Unicode code points after URL decoding (else 400 `query_too_long`), no control "
            "characters U+0000-U+001F or U+007F-U+009F (else 400 `invalid_parameter`). "
            "Empty or blank: 200 with no hits.",
            "schema": {
                "type": "string",
                "maxLength": MAX_QUERY_CODE_POINTS,
                "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$",
            },
        },
        {
            "name": "limit",
            "in": "query",
            "required": False,
            "description": f"How many addresses at most, written as a plain decimal `1`..`{MAX_LIMIT}` "
            "(`05`, `5.0`, `1e1`, ` 5` are 400 `invalid_parameter`).",
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        },
        {
            "name": "highlight",
            "in": "query",
            "required": False,
            "description": "`true` adds `highlights` to each hit: the spans of its lines that "
            "the typed text matched. Exactly `true` or `false` (else 400 `invalid_parameter`); "
            "without it the body is the contract's.",
            "schema": {"type": "string", "enum": ["true", "false"], "default": "false"},
        },
        {
            # NOTE: one form-exploded object, so the schema can say "both or neither"; on the
            # wire it is still the two parameters `lat=..&lon=..` (OpenAPI 3.1, style form).
            "name": "focus",
            "in": "query",
            "required": False,
            "style": "form",
            "explode": True,
            "description": "Optional focus point, WGS84 degrees, sent as the two parameters "
            "`lat` and `lon`: both or neither (else 400 `invalid_parameter` naming the absent "
            "one); addresses near it rank higher.",
            "schema": _point("lat", "lon"),
        },
        *AREA_QUERY,
    ]
    address_responses = {
        "200": _json(
            "Ranked addresses, best first (no match is not an error: `hits` is empty).",
            {"$ref": "#/components/schemas/Suggestions"},
        ),
        "400": _problem(
            ["missing_parameter", "unsupported_country", "query_too_long", "invalid_parameter"],
            "A parameter is missing, repeated, undecodable or out of range.",
        ),
        "401": _problem(
            ["unauthorized"],
            "No `Authorization` header, not `Bearer`, or an unknown or revoked key.",
            _AUTHENTICATE,
        ),
        "403": _problem(
            ["origin_not_allowed"],
            "The key does not serve this page's origin: a request with `Origin` needs a key that "
            "lists it, and a publishable key is served only to the pages of its origins.",
        ),
        "429": _problem(["rate_limited"], "The key is over its rate limit.", _RETRY_AFTER),
        "503": _problem(
            ["not_ready", "too_many_connections"],
            "This server cannot check keys (key store unreadable; with a shared Redis store that "
            "cannot be reached, keys known before still work and only others get this) or has no "
            "index open (`not_ready`); or the server process has as many connections open as it "
            "keeps (`too_many_connections`, answered as the connection opens, before any request).",
            _RETRY_AFTER,
        ),
    }
    preflight = {
        "operationId": "corsPreflight",
        "summary": "CORS preflight of a web page (Fetch standard)",
        "description": "Sent by browsers, never with a key. Answered for an origin that some "
        "active key allows, for GET or HEAD, with no request header but `Authorization`. "
        "An `OPTIONS` without `Origin` and `Access-Control-Request-Method` is no preflight: "
        "405 `method_not_allowed`, as for any other method.",
        "security": [],
        "tags": ["cors"],
        "parameters": [
            {
                "name": "Origin",
                "in": "header",
                "required": True,
                "description": "The page's serialised origin, compared byte for byte with the "
                "origins of the keys (`null` never matches).",
                "schema": {"type": "string"},
            },
            {
                "name": "Access-Control-Request-Method",
                "in": "header",
                "required": True,
                "schema": {"type": "string", "enum": list(ALLOW_METHODS.split(", "))},
            },
            {
                "name": "Access-Control-Request-Headers",
                "in": "header",
                "required": False,
                "description": "Only `authorization` is allowed (else 403 `header_not_allowed`).",
                "schema": {"type": "string", "enum": [ALLOW_HEADERS]},
            },
        ],
        "responses": {
            "204": {
                "description": "The origin may call `GET /v1/address` with an `Authorization` header.",
                "headers": {
                    "Access-Control-Allow-Origin": _header("The request's `Origin`, echoed."),
                    "Access-Control-Allow-Methods": _header("`GET, HEAD`.", ALLOW_METHODS),
                    "Access-Control-Allow-Headers": _header("`authorization`.", ALLOW_HEADERS),
                    "Access-Control-Max-Age": _header("Seconds the answer may be cached.", MAX_AGE),
                    "Vary": _header("`Origin`.", "Origin"),
                },
            },
            "403": _problem(
                ["origin_not_allowed", "header_not_allowed"],
                "No active key allows this origin, or a request header other than "
                "`Authorization` was asked for. No CORS header: the browser fails the request.",
            ),
            "405": _problem(
                ["method_not_allowed"],
                "Not a preflight (no `Origin` or no `Access-Control-Request-Method`), or a "
                "method other than GET or HEAD was asked for.",
                _ALLOW,
            ),
        },
    }
    status_schema = {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"type": "string"}},
    }
    spec: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Dutch address autocomplete",
            "version": "1",
            "description": "Ranked, real Dutch addresses (BAG) for a partial address being "
            "typed. Every error is `application/problem+json` (RFC 9457) with a `code`. "
            "Any path not listed here answers 404 `not_found`; any method but GET and HEAD "
            "answers 405 `method_not_allowed` with `Allow: GET, HEAD`, except the CORS "
            "preflight (`OPTIONS` of `/v1/address`, `/v1/address/postcode` or `/v1/address/reverse` "
            "with `Origin` and `Access-Control-Request-Method`).",
        },
        "paths": {
            "/v1/address": {
                "get": {
                    "operationId": "suggestAddresses",
                    "summary": "Suggest addresses for a partial address",
                    "description": "HEAD is answered too, with the same status and headers. "
                    "Unknown query parameters are ignored; a known one given twice is 400 "
                    "`invalid_parameter`. The key is checked before the parameters. Rate "
                    "limits apply per key and per server worker process. Web pages: a request "
                    "with `Origin` is served only when its key lists that origin (a publishable "
                    "key must have one); every response then carries "
                    "`Access-Control-Allow-Origin` if some key allows the origin, errors too, "
                    "with `Access-Control-Expose-Headers: Retry-After, WWW-Authenticate`, and "
                    "always `Vary: Origin`." + AREA_DESCRIPTION + " Without them the answer "
                    "is the same as before they existed, byte for byte.",
                    "security": [{"bearerAuth": []}],
                    "parameters": parameters,
                    "responses": address_responses,
                },
                "options": preflight,
            },
            "/v1/address/postcode": {
                "get": {
                    "operationId": "lookupPostcode",
                    "summary": "Every address of a postcode and house number",
                    "description": "The Dutch checkout question: the addresses with this postcode "
                    "and house number, in the register's order (without a letter first, then "
                    "each letter; each without an addition first, then its additions), for a "
                    "form to fill in the street and place and offer the letters and additions. "
                    "No fuzziness: a malformed value is 400 `invalid_parameter` naming it; none "
                    "there is 200 with no hits. The same keys, origins, rate limits, CORS and "
                    "errors as `/v1/address`.",
                    "security": [{"bearerAuth": []}],
                    "parameters": [
                        parameters[0],
                        _query("postcode", "The postcode as people type it: 4 digits (not starting "
                               "with 0) and 2 letters, any case, spaces anywhere (`1012LG`, "
                               "`1012 lg`).",
                               {"type": "string", "pattern": POSTCODE_PATTERN},
                               required=True),
                        _query("number", f"The house number, a plain decimal `1`..`{MAX_HOUSE_NUMBER}` (no "
                               "sign, no leading zero).",
                               {"type": "integer", "minimum": 1, "maximum": MAX_HOUSE_NUMBER},
                               required=True),
                        _query("letter", "Only this house letter (one letter A-Z, any case).",
                               {"type": "string", "pattern": "^[A-Za-z]$"}),
                        _query("addition", f"Only this addition (1 to {MAX_ADDITION_LENGTH} letters and digits, "
                               "any case).",
                               {"type": "string", "pattern": f"^[A-Za-z0-9]{{1,{MAX_ADDITION_LENGTH}}}$"}),
                    ],
                    "responses": {
                        **address_responses,
                        "200": _json("Every address there, in the register's order (a block of "
                                     "flats can have hundreds; `hits` is empty when there is none).",
                                     {"$ref": "#/components/schemas/Addresses"}),
                    },
                },
                "options": preflight | {"operationId": "corsPreflightPostcode"},
            },
            "/v1/address/reverse": {
                "get": {
                    "operationId": "reverseGeocode",
                    "summary": "The addresses nearest to a location",
                    "description": "Nearest first, each with its `distance` in metres (to a "
                    "tenth; the addresses of one point in the register's order). A point "
                    "outside the Netherlands (farther than about 5 km from the box of its "
                    "addresses) is 200 with no hits. The same keys, origins, rate limits, CORS "
                    "and errors as `/v1/address`." + AREA_DESCRIPTION,
                    "security": [{"bearerAuth": []}],
                    "parameters": [
                        parameters[0],
                        _query("lat", "Latitude, WGS84 degrees, a decimal number.",
                               _coordinate("lat"), required=True),
                        _query("lon", "Longitude, WGS84 degrees, a decimal number.",
                               _coordinate("lon"), required=True),
                        parameters[2],
                        _query("radius", "Only addresses within this many metres (a decimal number "
                               "above 0).", {"type": "number", "exclusiveMinimum": 0}),
                        *AREA_QUERY,
                    ],
                    "responses": {
                        **address_responses,
                        "200": _json("The nearest addresses, nearest first.",
                                     {"$ref": "#/components/schemas/Nearest"}),
                    },
                },
                "options": preflight | {"operationId": "corsPreflightReverse"},
            },
            "/healthz": _ops("Liveness", "The process answers.", {"200": _json("Alive.", status_schema)}),
            "/readyz": _ops(
                "Readiness",
                "An index is open and the key store is readable. The body's `keystore` says "
                "`\"state\": \"degraded\"` while a shared Redis store cannot be reached (known "
                "keys are served from memory; still 200, so a balancer keeps the replica).",
                {
                    "200": _json("Ready to serve.", status_schema),
                    "503": _problem(["not_ready"], "Not ready.", _RETRY_AFTER),
                },
            ),
            "/metrics": _ops(
                "Prometheus metrics",
                "Text exposition of all workers, at most 2 s old. When the operator sets "
                "ADDRESS_METRICS_TOKEN, only with `Authorization: Bearer <that token>`.",
                {
                    "200": {
                        "description": "Prometheus text format 0.0.4.",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    "401": _problem(["unauthorized"], "A metrics token is set and was not sent.", _AUTHENTICATE),
                },
            ),
            "/openapi.json": _ops("This document", "OpenAPI 3.1.", {"200": _json("OpenAPI 3.1.", {"type": "object"})}),
            **{path: _ops(summary, summary + ".", {"200": _text(media)}) for path, summary, media in PAGE_FILES},
            "/demo-key": _ops(
                "The try-it page's demo key",
                "Only when the server was started with `ADDRESS_DEMO_RATE`: a publishable key "
                "served to this server's own pages only, at that rate for all and at "
                "`client_rate` (`ADDRESS_DEMO_CLIENT_RATE`) for each client address.",
                {
                    "200": _json(
                        "The demo key.",
                        {
                            "type": "object",
                            "required": ["key", "rate", "client_rate", "kind"],
                            "properties": {
                                "key": {"type": "string"},
                                "rate": {"type": "number"},
                                "client_rate": {"type": "number"},
                                "kind": {"const": "publishable"},
                            },
                        },
                    ),
                    "404": _problem(["not_found"], "This server has no demo key."),
                },
            ),
        },
        "components": {
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "`Authorization: Bearer <API key>`; create a key with "
                    "`python -m server keys create --name NAME`.",
                }
            },
            "schemas": {
                "Suggestions": _limited("Hit"),
                "Hit": hit,
                "Addresses": {
                    "type": "object",
                    "required": ["hits"],
                    "additionalProperties": False,
                    "properties": {"hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}}},
                },
                "Nearest": _limited("NearestHit"),
                "NearestHit": {
                    "allOf": [
                        {"$ref": "#/components/schemas/Hit"},
                        {
                            "type": "object",
                            "required": ["distance"],
                            "properties": {
                                "distance": {
                                    "type": "number",
                                    "minimum": 0,
                                    "description": "Metres from the point, to a tenth (on the "
                                    "flat earth of a small country: a degree of latitude 111.2 km).",
                                }
                            },
                        },
                    ]
                },
                "Component": component,
                "Problem": problem,
            },
        },
    }
    return spec


def spec_bytes() -> bytes:
    """The document as served."""
    return orjson.dumps(build_spec())
