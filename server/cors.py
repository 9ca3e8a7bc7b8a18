"""Web pages as clients: the origin rule of API keys and CORS (the Fetch standard) on ``/v1/address``
(and ``/v1/address/postcode`` and ``/v1/address/reverse``, :data:`PATHS`, alike).

Which page may use which key (checked after the key, before its rate limit):

- A request that carries ``Origin`` is served only if its key lists that origin, compared
  byte for byte with the serialised origin the browser sent (keys store origins normalised,
  ``server.keys.normalize_origin``). ``Origin: null`` (sandboxed frames, ``file:``) never
  matches: no key may list it.
- A *same-origin* request (a page served by this server: no ``Origin`` and
  ``Sec-Fetch-Site: same-origin``, or an ``Origin`` equal to this server's own) is a
  server-to-server request for a secret key; a publishable key serves it if it lists this
  server's origin, or is the demo key (``server.keys.SAME_ORIGIN``).
- A request without ``Origin`` that is not same-origin (curl, a back end) is refused for a
  publishable key: those belong in web pages.
- Every refusal is 403 ``origin_not_allowed``. SECURITY: the rule keeps *other web sites* from
  using a publishable key in their visitors' browsers, which cannot forge ``Origin``; a
  publishable key is public (it is in the page), so anything but a browser can still use it
  at its (low) rate, exactly as with the providers that have such keys.

CORS, per the Fetch standard (https://fetch.spec.whatwg.org/#http-cors-protocol):

- A CORS-preflight request is ``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``.
  It is answered before authentication (it carries no key): 204 with
  ``Access-Control-Allow-Origin`` echoing the origin, ``Access-Control-Allow-Methods: GET,
  HEAD``, ``Access-Control-Allow-Headers: authorization`` (``*`` would not cover
  ``Authorization``), ``Access-Control-Max-Age`` and ``Vary: Origin``, but only when some active
  key allows that origin; otherwise 403 ``origin_not_allowed``. A method other than GET or HEAD
  is 405 ``method_not_allowed``; a request header other than ``Authorization`` (the browser lists
  only the headers that are not CORS-safelisted) is 403 ``header_not_allowed``. A refused
  preflight carries no CORS header, so the browser fails the request as the standard says.
- ``OPTIONS`` without those two headers is not a preflight: 405, as the contract says.
- Every other response of ``/v1/address``, errors included, carries
  ``Access-Control-Allow-Origin`` when some active key allows the request's origin (so a page
  can read its 401, 403 or 429), with ``Access-Control-Expose-Headers: Retry-After,
  WWW-Authenticate`` (neither is CORS-safelisted), and always ``Vary: Origin`` (the headers
  depend on it). No credentials mode: keys travel in ``Authorization``, never in cookies, so
  ``Access-Control-Allow-Credentials`` is never sent.
"""

from __future__ import annotations

import falcon

from server.auth import Authenticator
from server.errors import ApiError, method_not_allowed
from server.keys import SAME_ORIGIN, SECRET, KeyRecord

#: The route CORS is served on, with the other questions of the address API (issue 39:
#: the same keys, origins and headers); the other routes are same-origin only.
PATH = "/v1/address"
PATHS = frozenset((PATH, f"{PATH}/postcode", f"{PATH}/reverse"))
ALLOW_METHODS = "GET, HEAD"
ALLOW_HEADERS = "authorization"
#: Seconds a browser may cache a preflight (Chromium caps it at 7200).
MAX_AGE = "7200"
EXPOSE_HEADERS = "Retry-After, WWW-Authenticate"
_METHODS = frozenset(("GET", "HEAD"))
_HEADERS = frozenset((ALLOW_HEADERS,))


def request_origin(req: falcon.Request) -> str | None:
    """The request's ``Origin`` header (None without one), read as ``server.app``'s request
    types make the request (PERF: see ``WsgiRequest``)."""
    return req.origin  # type: ignore[attr-defined, no-any-return]


def own_origin(req: falcon.Request) -> str:
    """This server's origin as the request reached it (scheme as a TLS proxy forwards it)."""
    return f"{req.forwarded_scheme}://{req.netloc}".lower()


def _same_origin(req: falcon.Request, origin: str | None) -> bool:
    if origin is None:
        return req.get_header("Sec-Fetch-Site") == "same-origin"
    return origin == own_origin(req)


def check_origin(record: KeyRecord, req: falcon.Request) -> None:
    """Raise 403 ``origin_not_allowed`` unless ``record`` may serve the page behind ``req``."""
    origin = request_origin(req)
    if origin is None and record.kind == SECRET:
        return  # PERF: a back end's request; same-origin or not, a secret key serves it
    if _same_origin(req, origin):
        if record.kind == SECRET or SAME_ORIGIN in record.origins or own_origin(req) in record.origins:
            return
        raise ApiError("origin_not_allowed", "this API key does not allow this server's own pages")
    if origin is None:
        if record.kind == SECRET:
            return
        raise ApiError(
            "origin_not_allowed",
            "a publishable key is served only to the web pages of its origins (no Origin header)",
        )
    if origin not in record.origins:
        raise ApiError("origin_not_allowed", "this API key does not allow the origin of the calling page")


def preflight(auth: Authenticator):
    """Return the ``OPTIONS`` responder of ``/v1/address`` (see the module docstring)."""

    def respond(req: falcon.Request, resp: falcon.Response) -> None:
        origin = req.get_header("Origin")
        method = req.get_header("Access-Control-Request-Method")
        if origin is None or method is None:
            raise method_not_allowed()  # a plain OPTIONS, not a preflight
        if not auth.origin_allowed(origin):
            raise ApiError("origin_not_allowed", "no API key allows this origin")
        if method not in _METHODS:
            raise method_not_allowed()
        requested = req.get_header("Access-Control-Request-Headers") or ""
        names = {name.strip().lower() for name in requested.split(",")} - {""}
        if not names <= _HEADERS:
            raise ApiError("header_not_allowed", "the only request header allowed is Authorization")
        resp.status = falcon.HTTP_204
        resp.set_headers(
            {
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Methods": ALLOW_METHODS,
                "Access-Control-Allow-Headers": ALLOW_HEADERS,
                "Access-Control-Max-Age": MAX_AGE,
            }
        )

    return respond


def response_headers(req: falcon.Request, resp: falcon.Response, auth: Authenticator) -> None:
    """Add ``Vary: Origin`` and, for an allowed origin, the CORS headers of a real response of
    :data:`PATH` (errors included; a preflight writes its own). Called once every response of
    that route is ready (``server.resources.Finish``)."""
    resp.append_header("Vary", "Origin")
    if req.method == "OPTIONS":
        return  # the preflight responder wrote its own; a refused one gets none
    origin = request_origin(req)
    if origin is not None and auth.origin_allowed(origin):
        resp.set_header("Access-Control-Allow-Origin", origin)
        resp.set_header("Access-Control-Expose-Headers", EXPOSE_HEADERS)
