"""The routes. Each endpoint's logic is written once and served by WSGI and ASGI alike.

An endpoint is a plain object with ``respond(req, resp, raw_query)``; :class:`WsgiRoute` and
:class:`AsgiRoute` are the two thin Falcon resources that call it (sync and ``async def``
responders: Falcon requires the latter on an ASGI app). The logic never awaits anything: the
engine answers in well under a millisecond and releases the GIL, so it runs on the event loop
directly (PERF: handing it to a thread pool costs more than the query).

Order of checks on ``/v1/address`` (the contract's "authentication before parameters"):
routing (404) and method (405) first, as Falcon routes (a CORS preflight is answered there,
before any key: ``server.cors``); then the key (401, or 503 if the key store is unreadable);
then whether the key serves the calling page's origin (403); then its rate limit (429); then
the parameters (400); then the engine. PERF: on the ASGI app, ``server._gate`` first tries
the usual request (a back end's secret key, the plain query string, a token in hand) in one
compiled call, and leaves every other one, untouched, to :class:`Address`.

The other questions of issue 39, ``/v1/address/postcode`` (:class:`Lookup`) and
``/v1/address/reverse`` (:class:`Reverse`), go through the same checks in the same order:
they call :meth:`Address.admit` (the key, its origin, its limits), then their own ``parse``
and :meth:`Address.answer` with their own ``ask`` (the index, the engine, the cost, the
engine's 400), and are finished like it (``Finish.answered``: metrics, CORS); on the ASGI
app ``server._gate.QuestionGate`` first tries the usual request, with the same ``parse`` and
``ask``.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from typing import Any, Protocol

import falcon
import orjson

import engine
from server._rules import costly
from server.auth import Authenticator, parse_bearer
from server.clients import client_address
from server.cors import PATHS as CORS_PATHS
from server.cors import check_origin
from server.cors import response_headers as cors_response_headers
from server.errors import ApiError, method_not_allowed, unauthorized
from server.keys import SECRET, KeyRecord, hash_key
from server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from server.metrics import Metrics, register_age_days
from server.params import Lookup as LookupQuery
from server.params import Query, parse_lookup, parse_query, parse_reverse
from server.params import Reverse as ReverseQuery


class Index(Protocol):
    """The part of ``engine.AddressIndex`` the service uses."""

    manifest: dict[str, Any]

    def suggest_json(self, q: str, *, limit: int = ..., lat: float | None = None, lon: float | None = None,
                     highlight: bool = False) -> bytes: ...

    def suggest(
        self, q: str, *, limit: int = ..., lat: float | None = None, lon: float | None = None
    ) -> dict[str, Any]: ...

    def lookup_json(self, postcode: str, number: int, *, letter: str | None = None,
                    addition: str | None = None) -> bytes: ...

    def reverse_json(self, lat: float, lon: float, *, limit: int = ..., radius: float | None = None,
                     **area: str) -> bytes: ...


class IndexSlot:
    """The index this process serves; swapped by the gunicorn hooks (see ``server.app``)."""

    __slots__ = ("index", "directory", "problem", "files")

    def __init__(self, index: Index | None, directory: str | None) -> None:
        self.index = index
        self.directory = directory
        self.problem: str | None = None  # why the worker serves the last good index (or none)
        self.files: dict[str, tuple[int, int, int, int]] = {}  # (device, inode, size, mtime) by name


class Endpoint(Protocol):
    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None: ...


#: the parameters whose 400 carries the engine's own sentence: it names the value (an unknown
#: municipality, a malformed postcode; issue 39), a place name or a postcode, cut to
#: ENGINE_DETAIL_MAX characters
_ENGINE_WORDED = frozenset(engine.AREA_PARAMETERS) | {"number", "letter", "addition", "radius"}
ENGINE_DETAIL_MAX = 200


def query_error(exc: engine.QueryError) -> ApiError:
    """Map an ``engine.QueryError`` (``.code``, ``.parameter``) to the contract's 400."""
    code = getattr(exc, "code", "invalid_parameter")
    parameter = getattr(exc, "parameter", None) or "q"
    if code not in ("invalid_parameter", "query_too_long"):
        code = "invalid_parameter"
    detail = f"{parameter} is not valid"
    if parameter in _ENGINE_WORDED and len(str(exc)) <= ENGINE_DETAIL_MAX:
        detail = str(exc)
    return ApiError(code, detail, parameter=parameter)


class Address:
    """``GET /v1/address``: key, rate limit, parameters, then the engine's bytes unchanged."""

    def __init__(self, slot: IndexSlot, auth: Authenticator) -> None:
        self._slot = slot
        self._auth = auth

    def admit(self, req: falcon.Request) -> KeyRecord:
        """The key's checks of a request of the address routes, in the contract's order: the
        key (401), the calling page's origin (403), the key's rate limits (429); return its
        record."""
        auth = self._auth
        record = auth.authenticate(req.get_header("Authorization"))
        req.key_name = record.name  # for the metrics (server.app's request types hold it)
        # PERF: a back end's secret key (no Origin) is served without a call
        if req.origin is not None or record.kind != SECRET:
            check_origin(record, req)
        if record.client_rate:  # the demo key: a limit per client address too (issue 37)
            client = client_address(req.remote_addr, req.get_header("X-Forwarded-For"), auth.proxies)
            auth.throttle_client(record, client)
        auth.throttle(record)
        return record

    def index(self) -> Index:
        """The index served now, or the 503 ``not_ready``."""
        index = self._slot.index
        if index is None:
            raise ApiError("not_ready", "no index is open", headers={"Retry-After": "5"})
        return index

    def charge(self, record: KeyRecord, wall: float, cpu: float) -> None:
        """Charge the key for the work since `wall` (``perf_counter``) and `cpu`
        (``thread_time``) was taken: the limiter counts cost, the CPU time of all the work the
        request asked for (the engine runs in this thread, GIL released; a wait for a core is
        not the key's doing)."""
        if costly(time.perf_counter() - wall):  # PERF: see there
            self._auth.charge(record, time.thread_time() - cpu)

    def answer(self, resp: falcon.Response, record: KeyRecord, ask: Callable[[Index, Any], bytes],
               parsed: Any) -> None:
        """The engine's part of a request of the address routes, once its key is admitted and
        its parameters parsed: the index served now (503), ``ask(index, parsed)`` charged to
        the key (`charge`; highlights included, see :meth:`ask`), its ``QueryError`` the
        contract's 400 (the area's names, a postcode's letters: the engine's rules), its bytes
        the answer."""
        index = self.index()
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            body = ask(index, parsed)
        except engine.QueryError as exc:
            raise query_error(exc) from None
        finally:
            self.charge(record, wall, cpu)
        resp.content_type = falcon.MEDIA_JSON
        resp.data = body

    @staticmethod
    def ask(index: Index, query: Query) -> bytes:
        """The engine's answer to a parsed request (``server.params.Query``).

        highlight=true: the engine writes each hit's ``highlights`` (per line of ``lines``, the
        sorted, merged [start, end) code-point spans of the text the typed words matched:
        engine.explain) from the reading that found it. NOTE: charged like the search (issue 37:
        uncharged highlights of 90 ms a request took the others' p50 from 1.1 to 140 ms)."""
        q, limit, lat, lon, highlight, area = query
        if area is None:
            return index.suggest_json(q, limit=limit, lat=lat, lon=lon, highlight=highlight)
        # issue 39: the answers kept inside an area, inside the search
        return index.suggest_json(q, limit=limit, lat=lat, lon=lon, highlight=highlight, **area)

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        record = self.admit(req)
        self.answer(resp, record, self.ask, parse_query(raw_query))


class Lookup:
    """``GET /v1/address/postcode``: every address of a postcode and house number, in the
    register's order (``engine.AddressIndex.lookup``); the key's checks of :class:`Address`."""

    #: the parameters (``server.params``); ``server._gate.QuestionGate`` reads them with it too
    parse = staticmethod(parse_lookup)

    def __init__(self, address: Address) -> None:
        self._address = address

    @staticmethod
    def ask(index: Index, parsed: LookupQuery) -> bytes:
        """The engine's answer (``server._gate.QuestionGate`` asks it with this too)."""
        postcode, number, letter, addition = parsed
        return index.lookup_json(postcode, number, letter=letter, addition=addition)

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        address = self._address
        address.answer(resp, address.admit(req), self.ask, self.parse(raw_query))


class Reverse:
    """``GET /v1/address/reverse``: the addresses nearest to a point, each with its distance
    (``engine.AddressIndex.reverse``); the key's checks of :class:`Address`."""

    #: the parameters (``server.params``); ``server._gate.QuestionGate`` reads them with it too
    parse = staticmethod(parse_reverse)

    def __init__(self, address: Address) -> None:
        self._address = address

    @staticmethod
    def ask(index: Index, parsed: ReverseQuery) -> bytes:
        """The engine's answer (``server._gate.QuestionGate`` asks it with this too)."""
        lat, lon, limit, radius, area = parsed
        if area is None:
            return index.reverse_json(lat, lon, limit=limit, radius=radius)
        return index.reverse_json(lat, lon, limit=limit, radius=radius, **area)

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        address = self._address
        address.answer(resp, address.admit(req), self.ask, self.parse(raw_query))


class Health:
    """``GET /healthz``: the process answers."""

    BODY = b'{"status":"ok"}'

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        resp.content_type = falcon.MEDIA_JSON
        resp.data = self.BODY


def _iso(date: Any) -> str | None:
    return None if date is None else date.isoformat()


class Ready:
    """``GET /readyz``: an index is open and the key store was read in the last 5 s."""

    def __init__(self, slot: IndexSlot, auth: Authenticator) -> None:
        self._slot = slot
        self._auth = auth

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        index = self._slot.index
        if index is None:
            detail = self._slot.problem or "no index is open"
            raise ApiError("not_ready", detail, headers={"Retry-After": "5"})
        if not self._auth.ready:
            raise ApiError("not_ready", "the API key store is unreadable", headers={"Retry-After": "5"})
        manifest = index.manifest
        body = {
            "status": "ready",
            "index": {
                "built_at": manifest.get("built_at"),
                "source_name": manifest.get("source_name"),
                "rows_out": manifest.get("rows_out"),
                "format_version": manifest.get("format_version"),
                # freshness: csv, lvbag-xml or gpkg, and the register's date it holds
                "source_format": manifest.get("source_format", "csv"),
                "extract_date": manifest.get("extract_date"),
                # the register's date (the extract's, or the last mutation delivery's) and its age
                "register_date": _iso(engine.register_date(manifest)),
                "register_age_days": register_age_days(manifest),
            },
        }
        if self._slot.problem is not None:  # serving the last good index
            body["index_problem"] = self._slot.problem
        body["keystore"] = self._auth.status()  # "degraded" while Redis is unreachable (issue 15)
        resp.content_type = falcon.MEDIA_JSON
        resp.data = orjson.dumps(body)


class MetricsEndpoint:
    """``GET /metrics``: Prometheus text exposition of every worker; behind ``token`` if given."""

    def __init__(self, metrics: Metrics, token: str | None = None) -> None:
        self._metrics = metrics
        self._token = None if token is None else hash_key(token)

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        if self._token is not None:
            # SECURITY: compared as digests, in constant time, like the API keys
            if not hmac.compare_digest(hash_key(parse_bearer(req.auth)), self._token):
                raise unauthorized("wrong metrics token")
        resp.content_type = METRICS_CONTENT_TYPE
        resp.data = self._metrics.render()


class Static:
    """A fixed document: ``/openapi.json``, the try-it page and its files, the demo key."""

    def __init__(
        self, body: bytes, content_type: str = falcon.MEDIA_JSON, headers: dict[str, str] | None = None
    ) -> None:
        self._body = body
        self._content_type = content_type
        self._headers = headers or {}

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        resp.content_type = self._content_type
        resp.data = self._body
        if self._headers:
            resp.set_headers(self._headers)


class Missing:
    """A route that exists only with a setting (``/demo-key``): 404 without it."""

    def __init__(self, detail: str) -> None:
        self._detail = detail

    def respond(self, req: falcon.Request, resp: falcon.Response, raw_query: bytes) -> None:
        raise ApiError("not_found", self._detail)


def wsgi_raw_query(req: falcon.Request) -> bytes:
    """The query string as the bytes the client sent (PEP 3333 carries them as latin-1)."""
    qs: str = req.env.get("QUERY_STRING", "")
    try:
        return qs.encode("latin-1")
    except UnicodeEncodeError:  # not PEP 3333 (some test clients): take it as text
        return qs.encode("utf-8", "surrogateescape")


def no_options(req: falcon.Request, resp: falcon.Response) -> None:
    # NOTE: Falcon answers OPTIONS with 200 by default; the contract allows GET/HEAD only.
    raise method_not_allowed()


OptionsResponder = Callable[[falcon.Request, falcon.Response], None]
FinishHook = Callable[[falcon.Request, falcon.Response], None]
#: ``server._gate.Gate.answer``: True if it answered the request whole (see there)
Gate = Callable[[falcon.Request, falcon.Response, bytes], bool]


class Finish:
    """What every response gets once it is ready, answer or error: the CORS headers of
    ``/v1/address`` (``server.cors.response_headers``) and one metrics observation (route,
    method, status, time since the request object was made, key name).

    Called by the routes after their endpoint answers and by the error handler after it has
    written the problem (``server.app``), so every response, 404 and 405 included, goes
    through it exactly once. PERF: Falcon middleware did the same with an ``await`` per hook
    and ``req.context`` reads; with the cheaper metrics queue this saves about 1.5 µs of the
    ~11 µs our code spent on a request (benchmarks/http/RESULTS.md).
    """

    __slots__ = ("_observe", "_auth")

    def __init__(self, metrics: Metrics, auth: Authenticator) -> None:
        self._observe = metrics.observe
        self._auth = auth

    def __call__(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.path in CORS_PATHS:
            cors_response_headers(req, resp, self._auth)
        self._observe(
            req.uri_template or "unmatched",
            req.method,
            resp.status_code,
            time.perf_counter() - req.started,
            req.key_name,
        )

    def answered(self, req: falcon.Request, resp: falcon.Response) -> None:
        """``__call__`` for an answer (200) of the address routes (:data:`CORS_PATHS`:
        :class:`Address`, :class:`Lookup`, :class:`Reverse`).

        PERF: the route is one of CORS's and the status is known, so neither is looked up again; with
        no ``Origin`` (a back end), ``Vary`` is the only CORS header (``cors.response_headers``),
        added as ``resp.append_header("Vary", "Origin")`` does, to Falcon 4's dict of headers
        (0.2 us less; Falcon is pinned, and ``tests/server/test_falcon_internals.py`` fails if
        that dict moves). ``server._gate`` finishes its answers here too.
        """
        if req.origin is None:
            headers = resp._headers
            vary = headers.get("vary")
            headers["vary"] = "Origin" if vary is None else vary + ", Origin"
        else:
            cors_response_headers(req, resp, self._auth)
        self._observe(req.uri_template, req.method, 200, time.perf_counter() - req.started, req.key_name)


def _no_finish(req: falcon.Request, resp: falcon.Response) -> None:
    """For a route used outside ``server.app`` (no metrics, no CORS)."""


class _Route:
    """What both apps' Falcon resources hold: the endpoint's ``respond``, the ``options``
    responder (the CORS preflight), the finish of every response and of an answer to GET or
    HEAD (``Finish.answered``), and on the ASGI app the ``gate``."""

    __slots__ = ("_respond", "_options", "_finish", "_finish_get", "gate")

    def __init__(
        self,
        endpoint: Endpoint,
        options: OptionsResponder = no_options,
        finish: FinishHook = _no_finish,
        finish_get: FinishHook | None = None,
    ) -> None:
        self._respond = endpoint.respond
        self._options = options
        self._finish = finish
        self._finish_get = finish_get or finish
        #: answers the usual request whole, or declines having done nothing (server._gate;
        #: ASGI only: it reads ASGI's headers)
        self.gate: Gate | None = None


class WsgiRoute(_Route):
    """Falcon resource of the WSGI app for one endpoint."""

    __slots__ = ()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._respond(req, resp, wsgi_raw_query(req))
        self._finish_get(req, resp)  # an exception goes to the error handler, which finishes

    on_head = on_get

    def on_options(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._options(req, resp)
        self._finish(req, resp)


class AsgiRoute(_Route):
    """Falcon resource of the ASGI app for one endpoint (same logic, ``async`` responders)."""

    __slots__ = ()

    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        gate = self.gate
        if gate is not None and gate(req, resp, req.raw_query):
            return
        self._respond(req, resp, req.raw_query)
        self._finish_get(req, resp)

    on_head = on_get

    async def on_options(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        self._options(req, resp)
        self._finish(req, resp)
