"""Prometheus metrics, correct across gunicorn workers.

With ``PROMETHEUS_MULTIPROC_DIR`` set (``gunicorn.conf.py`` sets it before anything imports
prometheus_client, and empties it when the master starts) every worker writes its counters to
memory-mapped files there and ``/metrics`` adds up all of them, whichever worker answers.
Without it (tests, a single process) the app's own registry is exposed.

Metrics:
- ``address_http_requests_total{route,method,status}``: every response.
- ``address_http_request_duration_seconds{route}``: latency histogram, from Falcon receiving the
  request to the response being ready (not including the network).
- ``address_api_key_requests_total{key,status}``: ``/v1/address`` responses by key *name*
  (SECURITY: never the key itself) once the key is known.
- ``address_index_age_seconds`` and ``address_index_built_timestamp_seconds``: of the index the
  answering worker serves (``built_at`` of its manifest).
- ``address_http_connections`` (one series per worker, label ``pid``),
  ``address_http_connections_max`` and ``address_http_connections_refused_total``: the open
  connections of each worker, the most it keeps (gunicorn's ``worker_connections``) and the
  connections refused over it (503 ``too_many_connections``). Only the default worker counts
  them (``server/protocol.py``, through :data:`CONNECTIONS`); gunicorn's own workers apply
  ``worker_connections`` themselves (gthread), or not at all (asgi, sync), and export none.
- ``address_index_register_timestamp_seconds`` and ``address_index_register_age_days``: the date
  of the register it holds (an LVBAG extract's, or the last mutation delivery's applied since:
  ``engine.register_date``) and how many whole days old that is today.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from bisect import bisect_left
from collections import Counter as Tally
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

import engine

log = logging.getLogger("server.access")

#: PERF: most answers take well under a millisecond; the buckets resolve that range.
LATENCY_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
CONTENT_TYPE = CONTENT_TYPE_LATEST
# what Metrics.observe queues: (route, method, status, key name, latency bucket, seconds)
_LABELS = itemgetter(0, 1, 2, 3, 4)
_ROUTE = itemgetter(0)
_SECONDS = itemgetter(5)

# NOTE: the `*_created` series double the output and mean nothing for a long-running service
# (and multiprocess mode does not export them at all).
disable_created_metrics()


class Connections:
    """The HTTP connections of this process, as the default worker's protocol counts them
    (``server.protocol.LimitedProtocol``): ``open`` now, ``refused`` so far, and ``limit``, the
    most it keeps (0: no protocol of ours counts them here, and no metric says anything)."""

    __slots__ = ("open", "refused", "limit")

    def __init__(self) -> None:
        self.open = self.refused = self.limit = 0


#: This process's connections (one event loop: counted without a lock).
CONNECTIONS = Connections()


def multiprocess_dir() -> str | None:
    """The shared metrics directory, if this process is one of several workers."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def built_timestamp(manifest: dict[str, Any]) -> float | None:
    """Seconds since the epoch of the manifest's ``built_at`` (ISO 8601 UTC), if readable."""
    try:
        return datetime.fromisoformat(str(manifest["built_at"])).timestamp()
    except (KeyError, ValueError):
        return None


def register_age_days(manifest: dict[str, Any], now: float | None = None) -> int | None:
    """Whole days from the register's date the index holds (``engine.register_date``) to today
    (UTC): 0 for an index current to the day; None when the index names no date (a CSV)."""
    date = engine.register_date(manifest)
    if date is None:
        return None
    today = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC).date()
    return (today - date).days


def extract_timestamp(manifest: dict[str, Any]) -> float | None:
    """Seconds since the epoch of the manifest's ``extract_date`` (YYYY-MM-DD, UTC), if any."""
    try:
        return datetime.fromisoformat(f"{manifest['extract_date']}T00:00:00+00:00").timestamp()
    except (KeyError, TypeError, ValueError):
        return None


class _IndexCollector(Collector):
    """Age of the index that this worker serves, computed at scrape time."""

    def __init__(self, manifest: Callable[[], dict[str, Any] | None]) -> None:
        self._manifest = manifest

    def collect(self) -> Iterator[GaugeMetricFamily]:
        manifest = self._manifest()
        built = built_timestamp(manifest) if manifest is not None else None
        if built is None:
            return
        yield GaugeMetricFamily(
            "address_index_built_timestamp_seconds",
            "When the served index was built (manifest built_at), seconds since the epoch.",
            value=built,
        )
        yield GaugeMetricFamily(
            "address_index_age_seconds",
            "Seconds since the served index was built.",
            value=time.time() - built,
        )
        # freshness of the register itself: the extract's date (LVBAG delivery document)
        info = GaugeMetricFamily(
            "address_index_source_info",
            "The served index's source format and the register's date it holds (extract_date).",
            labels=["format", "extract_date"],
        )
        info.add_metric([str(manifest.get("source_format", "csv")), str(manifest.get("extract_date") or "")], 1)
        yield info
        extract = extract_timestamp(manifest)
        if extract is not None:
            yield GaugeMetricFamily(
                "address_index_extract_timestamp_seconds",
                "The date of the extract the served index was built from (extract_date), seconds since the epoch.",
                value=extract,
            )
        date = engine.register_date(manifest)
        if date is not None:   # the register's date: the extract's, or the last delivery's applied since
            yield GaugeMetricFamily(
                "address_index_register_timestamp_seconds",
                "The date of the register the served index holds (register_date), seconds since the epoch.",
                value=datetime(date.year, date.month, date.day, tzinfo=UTC).timestamp(),
            )
            yield GaugeMetricFamily(
                "address_index_register_age_days",
                "Whole days from the register's date the served index holds to today (UTC).",
                value=register_age_days(manifest),
            )


class Metrics:
    """The service's metrics; one instance per app.

    PERF: in multiprocess mode every ``inc`` of prometheus_client takes a lock and writes a
    memory-mapped file, about 20 us for the four values one request touches: a tenth of the
    request's budget. So a request only appends one tuple to a queue (thread-safe, ~0.2 us,
    its latency bucket found by ``bisect``), and :meth:`flush` adds the queue up (~0.3 us a
    request) into the prometheus_client values: once a second from a
    thread that ``start_flusher`` starts in each worker, on every scrape, and whenever the queue
    holds more than ``MAX_PENDING`` entries. ``/metrics`` is therefore at most one second behind.
    """

    MAX_PENDING = 10_000
    FLUSH_SECONDS = 1.0
    #: PERF: adding up every worker's files takes ~6 ms; a worker does it at most this often
    #: and answers scrapes in between with the same text (so a client scraping in a loop
    #: costs next to nothing). /metrics is then at most 2 s behind.
    RENDER_SECONDS = 1.0

    def __init__(
        self,
        manifest: Callable[[], dict[str, Any] | None],
        *,
        access_log: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._rendered: tuple[float, bytes] = (-float("inf"), b"")
        self._render_lock = threading.Lock()
        self.registry = CollectorRegistry(auto_describe=True)
        self._index = _IndexCollector(manifest)
        self._access_log = access_log
        self._requests = Counter(
            "address_http_requests_total",
            "HTTP responses by route, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self._latency = Histogram(
            "address_http_request_duration_seconds",
            "Time to answer a request, by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._key_requests = Counter(
            "address_api_key_requests_total",
            "/v1/address responses by API key name and status.",
            ["key", "status"],
            registry=self.registry,
        )
        self.registry.register(self._index)
        self._pending: deque[tuple[str, str, int, str | None, int, float]] = deque()
        self._flush_lock = threading.Lock()
        self._flusher: threading.Thread | None = None
        # made at the first flush that has connections to show (after fork: a metric of
        # multiprocess mode writes its file when it is made)
        self._connections: tuple[Gauge, Gauge, Counter] | None = None
        self._refused_shown = 0

    def observe(self, route: str, method: str, status: int, seconds: float, key_name: str | None) -> None:
        """Record one response.

        PERF: one ``deque.append`` of a tuple that already holds the latency bucket (atomic,
        no lock, no label lookup); :meth:`flush` adds them up.
        """
        pending = self._pending
        pending.append((route, method, status, key_name, bisect_left(LATENCY_BUCKETS, seconds), seconds))
        if len(pending) > self.MAX_PENDING:
            self.flush()
        if self._access_log:
            log.info("%s %s %d %.2fms key=%s", method, route, status, seconds * 1e3, key_name or "-")

    def flush(self) -> None:
        """Add the queued observations to the (shared) prometheus_client values."""
        with self._flush_lock:
            pending = self._pending
            popleft = pending.popleft
            # NOTE: only a holder of the lock pops, so these many are there; requests may
            # append more meanwhile (the next flush takes them)
            batch = [popleft() for _ in range(len(pending))]
            if CONNECTIONS.limit:
                self._flush_connections()
            if not batch:
                return
            # PERF: counted in C (Counter of label tuples), a Python step per distinct label set
            tally = Tally(map(_LABELS, batch))
            totals: dict[str, float] = {}
            for route, seconds in zip(map(_ROUTE, batch), map(_SECONDS, batch), strict=True):
                totals[route] = totals.get(route, 0.0) + seconds
            requests: dict[tuple[str, str, str], int] = {}
            keys: dict[tuple[str, str], int] = {}
            latency: dict[str, list[int]] = {}
            for (route, method, status, key_name, bucket), n in tally.items():
                code = str(status)
                label = (route, method if method in _METHODS else "other", code)
                requests[label] = requests.get(label, 0) + n
                if key_name is not None:
                    keys[(key_name, code)] = keys.get((key_name, code), 0) + n
                counts = latency.get(route)
                if counts is None:
                    counts = latency[route] = [0] * (len(LATENCY_BUCKETS) + 1)
                counts[bucket] += n
            for labels, n in requests.items():
                self._requests.labels(*labels).inc(n)
            for labels, n in keys.items():
                self._key_requests.labels(*labels).inc(n)
            for route, counts in latency.items():
                _add_to_histogram(self._latency.labels(route), counts, totals[route])

    def _flush_connections(self) -> None:
        """Show :data:`CONNECTIONS` (under the flush lock)."""
        if self._connections is None:
            self._connections = (
                Gauge(
                    "address_http_connections",
                    "Open HTTP connections of each worker.",
                    registry=self.registry,
                    multiprocess_mode="liveall",
                ),
                Gauge(
                    "address_http_connections_max",
                    "The most HTTP connections a worker keeps open (worker_connections); more are "
                    "refused with 503 too_many_connections.",
                    registry=self.registry,
                    multiprocess_mode="livemax",
                ),
                Counter(
                    "address_http_connections_refused",
                    "HTTP connections refused because their worker had worker_connections open.",
                    registry=self.registry,
                ),
            )
        opened, limit, refused = self._connections
        opened.set(CONNECTIONS.open)
        limit.set(CONNECTIONS.limit)
        count = CONNECTIONS.refused
        if count > self._refused_shown:
            refused.inc(count - self._refused_shown)
            self._refused_shown = count

    def start_flusher(self) -> None:
        """Flush once a second from a daemon thread of this process (call after fork)."""
        self._flush_lock = threading.Lock()
        self._render_lock = threading.Lock()
        self._flusher = threading.Thread(target=self._flush_forever, name="metrics", daemon=True)
        self._flusher.start()

    def _flush_forever(self) -> None:
        while True:
            time.sleep(self.FLUSH_SECONDS)
            try:
                self.flush()
            except Exception:  # never let metrics kill the thread
                log.exception("flushing metrics failed")

    def render(self) -> bytes:
        """The text exposition of all workers, at most ``RENDER_SECONDS`` old."""
        stamp, text = self._rendered
        now = self._clock()
        if now - stamp < self.RENDER_SECONDS:
            return text
        with self._render_lock:  # one thread renders; the others wait for its text
            stamp, text = self._rendered
            if now - stamp < self.RENDER_SECONDS:
                return text
            text = self._render_now()
            self._rendered = (self._clock(), text)
            return text

    def _render_now(self) -> bytes:
        self.flush()
        path = multiprocess_dir()
        if path is None:
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=path)
        registry.register(self._index)
        return generate_latest(registry)


def _add_to_histogram(child: Any, counts: list[int], total: float) -> None:
    """Add ``counts[i]`` observations to bucket ``i`` and ``total`` to the sum, at once.

    NOTE: prometheus_client's public API only observes one value at a time; its Histogram
    keeps one (non-cumulative) value per bucket in ``_buckets`` and the sum in ``_sum``, which
    is what ``observe`` increments. If those ever move, fall back to ``observe``.
    """
    buckets = getattr(child, "_buckets", None)
    value_sum = getattr(child, "_sum", None)
    if buckets is None or value_sum is None or len(buckets) != len(counts):
        mids = [*LATENCY_BUCKETS, LATENCY_BUCKETS[-1] * 2]
        for bound, n in zip(mids, counts, strict=True):
            for _ in range(n):
                child.observe(bound)
        return
    for bucket, n in zip(buckets, counts, strict=True):
        if n:
            bucket.inc(n)
    value_sum.inc(total)
