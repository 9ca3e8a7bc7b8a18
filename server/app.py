"""Build the Falcon app: ``create_app(index, config)``; ``get_app()`` for gunicorn.

Index life cycle under gunicorn (``preload_app = True``, see ``gunicorn.conf.py``):

- The master imports the app once (``get_app()``): it resolves ``ADDRESS_INDEX`` (usually a
  ``current`` symlink) to a real directory and opens it, so a bad path fails at start with the
  engine's message. The master keeps that index open as the *last good index*: mapped, never
  read by the master itself, it costs no memory, and every forked worker inherits it.
- Every worker opens the index directory itself right after ``fork`` (``post_fork``); the
  pages are shared through the page cache anyway. If it cannot (the directory was deleted or
  damaged), it resolves ``ADDRESS_INDEX`` again, and failing that serves the last good index
  it inherited, says so in the log and in ``/readyz`` (``"index_problem"``), and never fails to
  boot: a worker that cannot boot makes gunicorn's master shut the whole service down. With no
  good index at all the worker answers 503 ``not_ready`` until a HUP brings a good one.
- ``kill -HUP`` on the master: gunicorn re-reads its config but, with ``preload_app``, does NOT
  re-import the app. The ``on_reload`` hook resolves ``ADDRESS_INDEX`` again and opens it in
  the master; if it opens, it becomes the last good index and the new workers serve it, and
  gunicorn stops the old ones gracefully only after the new ones are up. If it cannot be
  opened, the error is logged and the new workers keep serving the old one.
- The build leaves the index files read-only, and ``switch-index`` opens (checks) an index
  before pointing the link at it: a file truncated under a running worker is a SIGBUS.
- Opening an index verifies every file against the checksum the build recorded
  (``engine.checksums``; issue 37): ``switch-index``, the master at start and on HUP refuse a
  damaged index naming the file, and the service keeps the one it serves. The master verifies
  (0.05-0.07 s for the whole country from the page cache); the workers forked from it open the
  same unchanged files without reading them again. A served index written into in place is
  not served by new workers (``_still_mapped_whole``): they answer 503 until a HUP brings a good
  one.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Sequence

import falcon
import falcon.asgi

import engine
from server import _gate, errors
from server.auth import Authenticator
from server.clients import TrustedProxies
from server.config import Config
from server.cors import preflight
from server.keys import SOCKET_TIMEOUT, RedisKeyStore, open_store
from server.limiter import ClientBuckets, FileQuota, Limiter, MemoryQuota, RedisQuota
from server.metrics import Metrics, multiprocess_dir
from server.openapi import spec_bytes
from server.pages import demo_key_route, page_routes
from server.resources import (
    Address,
    AsgiRoute,
    Endpoint,
    Finish,
    FinishHook,
    Health,
    Index,
    IndexSlot,
    Lookup,
    MetricsEndpoint,
    OptionsResponder,
    Ready,
    Reverse,
    Static,
    WsgiRoute,
    no_options,
    query_error,
)

log = logging.getLogger("server.app")

_NON_ASCII = re.compile(rb"[\x80-\xff]")


class WsgiRequest(falcon.Request):
    """Falcon's WSGI request, holding what the metrics need (``server.resources.Finish``).

    PERF: slots instead of ``req.context`` attributes: when the request object was made
    (the time a request takes is measured from here), the key name once it is known, and the
    ``Origin`` header (``server.cors``; None without one), read as the request is made: Falcon's
    ``get_header`` takes 0.3 us for a header the request lacks (the usual case: a back end
    sends none), this 0.05 us.
    """

    __slots__ = ("started", "key_name", "origin")

    def __init__(self, env, options=None):  # noqa: ANN001
        self.started = time.perf_counter()
        self.key_name: str | None = None
        self.origin: str | None = env.get("HTTP_ORIGIN")
        super().__init__(env, options=options)


_asgi_request_init = falcon.asgi.Request.__init__


class AsgiRequest(falcon.asgi.Request):
    """Falcon's ASGI request without Falcon's reading of the query string (and with the slots
    of :class:`WsgiRequest`, and ``raw_query``).

    NOTE: ``origin`` is read from the headers as Falcon 4 holds them (``_asgi_headers``: names
    in lower case, repeated headers joined by commas), exactly what its ``get_header`` returns
    (``tests/server/test_request_path.py`` checks that they agree).

    The routes read the raw query string (``raw_query``: ``server.params`` judges it), never
    ``req.params``; Falcon would parse it into ``req.params`` as the request is made, and decode
    it as UTF-8 first, so that a raw non-UTF-8 byte in the URL would be a 500. Falcon is given
    the request without it. PERF: that parse was about 1 µs of the ~8 µs our request path
    costs besides the engine and Falcon (benchmarks/http/inprocess.py). Raw bytes above 0x7F
    are percent-escaped, which means the same thing (RFC 3986), as before.
    """

    __slots__ = ("started", "key_name", "origin", "raw_query")

    def __init__(self, scope, receive, first_event=None, options=None):  # noqa: ANN001
        self.started = time.perf_counter()
        self.key_name: str | None = None
        query = scope["query_string"]
        # PERF: Falcon's ``__init__`` is called as a plain function: through ``super()`` with
        # keywords it cost 0.17 us more
        if not query:
            _asgi_request_init(self, scope, receive, first_event, options)
            self.raw_query: bytes = b""
        else:
            # PERF: the server's scope lends Falcon an empty query string while the request is
            # made, then has its own back (``req.scope`` is the server's, unchanged): a copy of
            # the scope cost 0.15 us
            scope["query_string"] = b""
            try:
                _asgi_request_init(self, scope, receive, first_event, options)
            finally:
                scope["query_string"] = query
            self.raw_query = query if query.isascii() else _NON_ASCII.sub(lambda m: b"%%%02X" % m[0][0], query)
        origin = self._asgi_headers.get(b"origin")
        self.origin: str | None = None if origin is None else origin.decode("latin-1")


class _Service:
    """What one app serves; kept so the gunicorn hooks can swap the index."""

    def __init__(
        self, slot: IndexSlot, auth: Authenticator, metrics: Metrics, config: Config, gauge: DegradedGauge
    ) -> None:
        self.gauge = gauge
        self.slot = slot
        self.auth = auth
        self.metrics = metrics
        self.config = config


#: Apps built by get_app() in this process (one, in practice).
_SERVICES: list[_Service] = []


def _build(
    index: Index | None, config: Config, *, asgi: bool, directory: str | None = None
) -> tuple[falcon.App, _Service]:
    slot = IndexSlot(index, directory)
    metrics = Metrics(
        lambda: slot.index.manifest if slot.index is not None else None,
        access_log=config.access_log,
    )
    auth, gauge = shared_state(config, metrics)
    # PERF: no Falcon middleware; every response is finished (metrics, CORS headers) by its
    # route or, for an error, by the error handler (server.resources.Finish)
    finish = Finish(metrics, auth)
    if asgi:
        app = falcon.asgi.App(request_type=AsgiRequest, cors_enable=False)
        handler = errors.error_handler_async(finish)

        def route(
            endpoint: Endpoint, options: OptionsResponder | None = None, finish_get: FinishHook | None = None
        ) -> AsgiRoute:
            return AsgiRoute(endpoint, options or no_options, finish, finish_get)
    else:
        app = falcon.App(request_type=WsgiRequest, cors_enable=False)
        handler = errors.error_handler(finish)

        def route(
            endpoint: Endpoint, options: OptionsResponder | None = None, finish_get: FinishHook | None = None
        ) -> WsgiRoute:
            return WsgiRoute(endpoint, options or no_options, finish, finish_get)

    # NOTE: "/v1/address/" must be a 404 like any other path, so no trailing-slash stripping.
    app.req_options.strip_url_path_trailing_slash = False
    app.add_error_handler(errors.HANDLED, handler)
    address_endpoint = Address(slot, auth)
    address = route(address_endpoint, preflight(auth), finish.answered)
    if asgi:  # PERF: the usual request in one compiled call (server/_gate.pyx: ASGI's headers)
        address.gate = _gate.Gate(auth, slot, finish.answered, query_error).answer
    app.add_route("/v1/address", address)
    # issue 39: the other questions, behind the same keys, limits, CORS and metrics
    for path, question in (("/v1/address/postcode", Lookup(address_endpoint)),
                           ("/v1/address/reverse", Reverse(address_endpoint))):
        questions = route(question, preflight(auth), finish.answered)
        if asgi:  # PERF: as /v1/address's gate, with the endpoint's own parse and ask
            questions.gate = _gate.QuestionGate(auth, slot, finish.answered, query_error,
                                                question.parse, question.ask).answer
        app.add_route(path, questions)
    app.add_route("/healthz", route(Health()))
    app.add_route("/readyz", route(Ready(slot, auth)))
    app.add_route("/metrics", route(MetricsEndpoint(metrics, config.metrics_token)))
    app.add_route("/openapi.json", route(Static(spec_bytes())))
    for path, endpoint in page_routes().items():
        app.add_route(path, route(endpoint))
    app.add_route("/demo-key", route(demo_key_route(auth, config.demo_rate, config.demo_client_rate)))
    return app, _Service(slot, auth, metrics, config, gauge)


class DegradedGauge:
    """``address_shared_store_degraded``: 1 while this worker cannot reach the shared key store
    or rate-limit quota (Redis) and serves known keys from memory with limits of its own.

    NOTE: made in the worker (``arm``, after fork): under gunicorn the master loads the app
    before the shared metrics directory exists, and a gauge writes its file when it is made.
    """

    def __init__(self, registry: object) -> None:
        self._registry = registry
        self._gauge = None
        self._parts = {"store": False, "limits": False}

    def arm(self) -> None:
        from prometheus_client import Gauge

        if self._gauge is None:
            self._gauge = Gauge(
                "address_shared_store_degraded",
                "1 while a worker cannot reach the shared key store or rate-limit quota (Redis) and "
                "serves known keys from memory with limits of its own.",
                registry=self._registry,
                multiprocess_mode="livemax",
            )
        self._gauge.set(1 if any(self._parts.values()) else 0)

    def setter(self, part: str) -> Callable[[bool], None]:
        def set_state(state: bool) -> None:
            self._parts[part] = state
            if self._gauge is not None:
                self._gauge.set(1 if any(self._parts.values()) else 0)

        return set_state


def shared_state(config: Config, metrics: Metrics) -> tuple[Authenticator, DegradedGauge]:
    """The key store and the rate limits' quota ``config`` names (issue 15), and their gauge."""
    store = open_store(config.keystore_path, timeout=SOCKET_TIMEOUT)
    if isinstance(store, RedisKeyStore):
        quota = RedisQuota(config.keystore_path)
    elif config.limits_file:
        quota = FileQuota(config.limits_file)
    else:
        quota = MemoryQuota()
    gauge = DegradedGauge(metrics.registry)
    limiter = Limiter(quota, sync_seconds=config.limit_sync_seconds, on_degraded=gauge.setter("limits"))
    auth = Authenticator(
        store,
        limiter=limiter,
        clients=ClientBuckets(),
        refresh_seconds=config.key_refresh_seconds,
        on_degraded=gauge.setter("store"),
        proxies=TrustedProxies(config.trusted_proxies),
    )
    if multiprocess_dir() is None:  # one process: no fork to wait for
        gauge.arm()
    return auth, gauge


def create_app(index: Index, config: Config, *, asgi: bool = False) -> falcon.App:
    """Return the service as a WSGI app (``falcon.App``), or ASGI with ``asgi=True``.

    Parameters
    ----------
    index
        An open ``engine.AddressIndex`` (anything with ``suggest_json`` and ``manifest``).
    config
        Key store path, key refresh interval, access log switch.
    """
    return _build(index, config, asgi=asgi)[0]


def resolve_index(path: str) -> tuple[str, engine.AddressIndex]:
    """Resolve ``path`` (symlinks included) and open it; raise ``engine.IndexOpenError``."""
    directory = os.path.realpath(path)
    return directory, engine.AddressIndex.open(directory)


def _files_of(directory: str) -> dict[str, tuple[int, int, int, int]]:
    """``(device, inode, size, mtime_ns)`` of every file of an index just opened."""
    files = {}
    for entry in os.scandir(directory):
        st = entry.stat()
        files[entry.name] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    return files


def _still_mapped_whole(directory: str, files: dict[str, tuple[int, int, int, int]]) -> bool:
    """Whether an index opened earlier can still be read: a file deleted or replaced by a new
    one leaves the mapped one intact; a file truncated in place makes reading it a SIGBUS, and
    one written into in place (its size kept, its time changed) holds what its checksum
    no longer vouches for: the map reads the damage too (issue 37)."""
    for name, (dev, ino, size, mtime) in files.items():
        try:
            st = os.stat(os.path.join(directory, name))
        except OSError:
            continue  # gone: the mapping holds the old file
        if (st.st_dev, st.st_ino) == (dev, ino) and (st.st_size != size or st.st_mtime_ns != mtime):
            return False
    return True


def _from_env(*, asgi: bool) -> falcon.App:
    config = Config.from_env()
    directory, index = resolve_index(config.index_path)
    log.info("serving index %s", directory)
    app, service = _build(index, config, asgi=asgi, directory=directory)
    service.slot.files = _files_of(directory)
    _SERVICES.append(service)
    return app


def get_app() -> falcon.App:
    """The WSGI app configured by the environment (``ADDRESS_INDEX``, ``ADDRESS_KEYSTORE``)."""
    return _from_env(asgi=False)


def get_asgi_app() -> falcon.asgi.App:
    """The same service as an ASGI app, for an ASGI worker (``uvicorn_worker.UvicornWorker``)."""
    return _from_env(asgi=True)


# -- gunicorn hooks (called from gunicorn.conf.py) ------------------------------------------


def master_ready() -> None:
    """In the master, once the app is loaded: the index it opened stays as the last good one
    (see the module's docstring)."""


def master_reload() -> None:
    """In the master, on HUP: open the index ``ADDRESS_INDEX`` now points at; adopt it if good."""
    for service in _SERVICES:
        try:
            directory, index = resolve_index(service.config.index_path)
        except Exception as exc:  # engine.IndexOpenError, or anything else: keep the good one
            log.error(
                "HUP: cannot open the index %s (%s); new workers keep serving %s",
                service.config.index_path,
                exc,
                service.slot.directory,
            )
            continue
        if directory != service.slot.directory:
            log.info("HUP: switching from index %s to %s", service.slot.directory, directory)
        service.slot.directory, service.slot.index = directory, index
        service.slot.files = _files_of(directory)
        service.slot.problem = None


def _open_in_worker(service: _Service) -> None:
    """Open the worker's own copy of the index; never raise (see the module's docstring)."""
    inherited, directory = service.slot.index, service.slot.directory
    errors = []
    for path in (directory, service.config.index_path):
        if path is None:
            continue
        try:
            service.slot.directory, service.slot.index = resolve_index(path)
            service.slot.problem = None
            return
        except Exception as exc:
            errors.append(str(exc))
    problem = "; ".join(errors) or "no index was ever opened"
    service.slot.problem = f"cannot open the index: {problem}"
    if inherited is not None and not _still_mapped_whole(directory, service.slot.files):
        service.slot.index = inherited = None  # truncated in place: reading it would crash
    if inherited is not None:
        log.error("%s; serving the last good index %s", service.slot.problem, directory)
    else:
        log.error("%s; answering 503 until a HUP brings a good one", service.slot.problem)


def _warm(service: _Service) -> None:
    """Read the worker's index into memory before it serves (``AddressIndex.warm``): on a cold
    page cache (a new index, a reboot) the first queries would read it from disk, tens of
    times slower, and charge their keys for it. Never raises: a worker that cannot warm serves
    cold."""
    warm = getattr(service.slot.index, "warm", None)
    if warm is None:
        return
    started = time.perf_counter()
    try:
        warm()
    except Exception as exc:
        log.warning("could not read the index %s into memory (%s); serving it from disk", service.slot.directory, exc)
        return
    log.info("index %s in memory in %.2f s", service.slot.directory, time.perf_counter() - started)


def worker_init(trusted_proxies: str | Sequence[str] | None = None) -> None:
    """In a worker, right after fork: open the index and read it into memory, read the key
    table, start metrics; ``trusted_proxies``: gunicorn's ``forwarded_allow_ips``, which then
    says whose ``X-Forwarded-For`` names the client (``server.clients``)."""
    for service in _SERVICES:
        if trusted_proxies is not None:
            service.auth.proxies = TrustedProxies(trusted_proxies)
        _open_in_worker(service)
        _warm(service)
        service.auth.after_fork()
        service.gauge.arm()
        service.metrics.start_flusher()


def worker_exit() -> None:
    """In a worker that is stopping: hand its last second of metrics to the shared files."""
    for service in _SERVICES:
        service.metrics.flush()
