"""Every error of the contract as ``application/problem+json`` (RFC 9457), from one handler.

The service raises :class:`ApiError`; Falcon raises its own ``HTTPError`` subclasses for
routing (404, 405). :func:`render_problem` turns either into the contract's body, and
:func:`error_handler` / :func:`error_handler_async` make the same handler for the WSGI and
the ASGI app. Nothing else writes an error response.

SECURITY: no error body or log line ever contains the ``Authorization`` header or the query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import falcon
import orjson

log = logging.getLogger("server.errors")

PROBLEM_JSON = "application/problem+json"

#: The methods every route of the service answers; ``Allow`` on a 405.
ALLOWED_METHODS = "GET, HEAD"

#: code -> (status, title); the contract's table, plus the two codes of the operations routes.
CODES: dict[str, tuple[int, str]] = {
    "missing_parameter": (400, "Missing parameter"),
    "unsupported_country": (400, "Unsupported country"),
    "query_too_long": (400, "Query too long"),
    "invalid_parameter": (400, "Invalid parameter"),
    "unauthorized": (401, "Unauthorized"),
    # Not in the contract's table: web pages as clients (server/cors.py).
    "origin_not_allowed": (403, "Origin not allowed"),
    "header_not_allowed": (403, "Request header not allowed"),
    "not_found": (404, "Not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "rate_limited": (429, "Too many requests"),
    # Not in the contract's table: a request the HTTP layer refuses before any route sees it
    # (server/protocol.py), /readyz when the worker cannot serve, and a bug.
    "bad_request": (400, "Bad request"),
    "request_timeout": (408, "Request timeout"),
    "uri_too_long": (414, "URI too long"),
    "headers_too_large": (431, "Request header fields too large"),
    "not_ready": (503, "Not ready"),
    "too_many_connections": (503, "Too many connections"),
    "internal_error": (500, "Internal server error"),
}


class ApiError(Exception):
    """An error response of the contract.

    Parameters
    ----------
    code
        One of :data:`CODES`; it fixes the status and the title.
    detail
        A sentence for a person. Never include the API key or echo raw input.
    parameter
        The query parameter at fault (400 only).
    headers
        Extra response headers (``WWW-Authenticate``, ``Retry-After``, ``Allow``).
    """

    __slots__ = ("code", "status", "title", "detail", "parameter", "headers")

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        parameter: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.status, self.title = CODES[code]
        self.detail = detail
        self.parameter = parameter
        self.headers = headers


def unauthorized(detail: str) -> ApiError:
    """Return the 401 of the contract, with its Bearer challenge."""
    return ApiError("unauthorized", detail, headers={"WWW-Authenticate": "Bearer"})


def problem_body(error: ApiError) -> bytes:
    """Serialise ``error`` as the RFC 9457 body of the contract."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": error.title,
        "status": error.status,
        "detail": error.detail,
        "code": error.code,
    }
    if error.parameter is not None:
        body["parameter"] = error.parameter
    return orjson.dumps(body)


def _from_falcon(req: falcon.Request, ex: falcon.HTTPError) -> ApiError:
    """Map an error that Falcon raised itself (routing, meta methods) onto the contract."""
    if isinstance(ex, falcon.HTTPNotFound):  # includes HTTPRouteNotFound
        return ApiError("not_found", "no such resource; the API lives at /v1/address")
    if isinstance(ex, falcon.HTTPMethodNotAllowed) or req.method not in ("GET", "HEAD"):
        # NOTE: Falcon answers the meta method WEBSOCKET with a 400; to a client it is just
        # another method that is not allowed.
        return method_not_allowed()
    if ex.status_code == 400:
        return ApiError("invalid_parameter", "the request could not be understood")
    log.error("unexpected Falcon error %s on %s", ex.status, req.path)
    return ApiError("internal_error", "unexpected error")


def method_not_allowed() -> ApiError:
    """Return the 405 of the contract; every route allows GET and HEAD only."""
    return ApiError(
        "method_not_allowed",
        "only GET and HEAD are allowed",
        headers={"Allow": ALLOWED_METHODS},
    )


def render_problem(req: falcon.Request, resp: falcon.Response, ex: BaseException) -> None:
    """Write ``ex`` to ``resp`` as a problem response (the one error handler)."""
    if isinstance(ex, ApiError):
        error = ex
    elif isinstance(ex, falcon.HTTPError):
        error = _from_falcon(req, ex)
    else:
        # A bug: log it with the route only (the query and headers may hold secrets).
        log.error("unhandled exception on %s %s", req.method, req.path, exc_info=ex)
        error = ApiError("internal_error", "unexpected error")
    resp.status = error.status
    resp.content_type = PROBLEM_JSON
    resp.data = problem_body(error)
    if error.headers:
        resp.set_headers(error.headers)


def error_handler(
    finish: Callable[[falcon.Request, falcon.Response], None],
) -> Callable[[falcon.Request, falcon.Response, BaseException, dict[str, Any]], None]:
    """The error handler of the WSGI app: render the problem, then ``finish`` the response
    (metrics and CORS headers, ``server.resources.Finish``) as the routes do for an answer."""

    def handle_error(req: falcon.Request, resp: falcon.Response, ex: BaseException, params: dict[str, Any]) -> None:
        render_problem(req, resp, ex)
        finish(req, resp)

    return handle_error


def error_handler_async(finish: Callable[[falcon.Request, falcon.Response], None]) -> Callable[..., Any]:
    """The error handler of the ASGI app: the same rendering (it never awaits anything)."""

    async def handle_error_async(
        req: falcon.Request,
        resp: falcon.Response,
        ex: BaseException,
        params: dict[str, Any],
        ws: Any = None,
    ) -> None:
        render_problem(req, resp, ex)
        finish(req, resp)

    return handle_error_async


#: Register the error handler for these; ``HTTPError`` has to be named because Falcon picks
#: the most specific handler and has a default one for it.
HANDLED = (Exception, falcon.HTTPError)
