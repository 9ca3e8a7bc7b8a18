"""The usual answer of ``GET /v1/address`` in one compiled call (issue 15, item 6).

A request of a back end with a secret key, a plain query string and a token in hand is nearly
every request the service gets. :meth:`Gate.answer` serves it in one call: the key, its rate
limit, the query string, the engine, the engine's CPU time, the ``Vary`` header and the metrics.
Anything else, it leaves alone, and ``server.resources.Address`` serves the request as it
serves every request: the same checks, in the contract's order, with the same answers.

Its rule: ``answer`` returns True when it has answered and finished the response (as
``Address.respond`` then ``Finish.answered`` would), and False *before it has changed
anything* (no token taken, no count, no header) when the request is not the usual one:

- no ``Authorization`` header, or one the current key table has not accepted before
  (``Authenticator.authenticate`` remembers those), or a table that is not known to be fresh
  without a look at the reader thread (``Authenticator._stale``), or a refresh is due on the
  request path (no reader thread);
- an ``Origin`` header, or a key that is not secret (``server.cors.check_origin``);
- a query string that is not the plain spelling (``engine.read_plain_query``), or no index;
- limits degraded, a key this worker has not limited yet or whose rate changed, its lock held
  by the sync thread, or no token held (``Limiter.throttle``);
- an authenticator with a clock of its own (tests) or an access log.

PERF: the same steps on the Python path cost 1.2 us more in-process, mostly in calls (9.8
against 8.6 us a request with the engine's answers looked up, ``benchmarks/http/breakdown.py``),
and under load the workers 3.5-4 us more CPU a request (benchmarks/http/RESULTS.md).

It reads Falcon 4's header dicts as they are (the request's ``_asgi_headers``, as
``server.app.AsgiRequest`` does, and the response's ``_headers``, which Falcon's header setters
write); ``tests/server/test_gate.py`` holds it to the Python path, headers included.
"""

import math
import time

import falcon

import engine
from server import keys as _keys
from server import config as _config
from server import cors as _cors
from server import metrics as _metrics


cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t

    cdef struct timespec:
        long tv_sec
        long tv_nsec

    int clock_gettime(clockid_t clock, timespec* now)
    clockid_t CLOCK_MONOTONIC
    clockid_t CLOCK_THREAD_CPUTIME_ID


cdef inline double _clock(clockid_t clock) noexcept nogil:
    """Seconds of ``clock``: CLOCK_MONOTONIC is ``time.perf_counter``'s and ``time.monotonic``'s
    clock on Linux, CLOCK_THREAD_CPUTIME_ID ``time.thread_time``'s."""
    cdef timespec now
    clock_gettime(clock, &now)
    return now.tv_sec + now.tv_nsec * 1e-9


cdef enum:
    MAX_BUCKETS = 64

cdef double _BOUNDS[MAX_BUCKETS]
cdef int _NBOUNDS = len(_metrics.LATENCY_BUCKETS)
if _NBOUNDS > MAX_BUCKETS:
    raise ImportError(f"server._gate holds {MAX_BUCKETS} latency buckets, not {_NBOUNDS}")
for _i, _bound in enumerate(_metrics.LATENCY_BUCKETS):
    _BOUNDS[_i] = _bound


cdef inline int _bucket(double seconds) noexcept nogil:
    """``bisect_left(LATENCY_BUCKETS, seconds)``, as ``Metrics.observe`` files it."""
    cdef int i = 0
    while i < _NBOUNDS and _BOUNDS[i] < seconds:
        i += 1
    return i


cdef object _MEDIA_JSON = falcon.MEDIA_JSON
cdef object _QueryError = engine.QueryError
cdef object _read_plain_query = engine.read_plain_query
cdef str _SECRET = _keys.SECRET
cdef str _PATH = _cors.PATH
cdef double _MAX_AGE = _config.MAX_KEY_REFRESH_SECONDS


cdef class Gate:
    """The usual answer of ``/v1/address`` for one app (see the module's docstring)."""

    cdef object _auth, _slot, _metrics, _query_error
    cdef double _cost_unit
    cdef Py_ssize_t _max_pending
    cdef readonly bint enabled

    def __init__(self, auth, slot, metrics, cost_unit, query_error):
        """``auth``: the app's ``Authenticator``; ``slot``: its ``IndexSlot``; ``metrics``: its
        ``Metrics``; ``cost_unit``: ``COST_UNIT_SECONDS``; ``query_error``: how an
        ``engine.QueryError`` becomes the contract's 400."""
        self._auth = auth
        self._slot = slot
        self._metrics = metrics
        self._cost_unit = cost_unit
        self._query_error = query_error
        self._max_pending = metrics.MAX_PENDING
        # the clocks are read here in C: only an authenticator on the clock they are
        self.enabled = auth._clock is time.monotonic and not metrics._access_log

    def answer(self, req, resp, raw_query):
        """Answer ``req`` and return True, or return False having changed nothing."""
        if not self.enabled:
            return False
        header = (<dict?>req._asgi_headers).get(b"authorization")
        if header is None or req.origin is not None:
            return False
        auth = self._auth
        cdef double now = _clock(CLOCK_MONOTONIC)
        if auth._reader is None and now >= auth._next_refresh:
            return False  # the request path refreshes the table (Authenticator._maybe_refresh)
        table = auth._table
        cdef tuple accepted = auth._accepted
        if accepted[0] is not table:
            return False
        cdef double read_at = table.read_at
        # fresh for sure (Authenticator._stale); anything else is for the Python path to judge
        if not (read_at > -math.inf if auth.shared else read_at + _MAX_AGE > now):
            return False
        record = (<dict?>accepted[1]).get(header.decode("latin-1"))
        if record is None or record.kind != _SECRET:
            return False
        plain = _read_plain_query(raw_query)
        if plain is None:
            return False
        index = self._slot.index
        if index is None:
            return False
        limiter = auth.limiter
        if limiter.degraded:
            return False
        state = (<dict?>limiter._states).get(record.key_id)
        if state is None or state.rate != record.rate:
            return False
        lock = state.lock
        if not lock.acquire(False):
            return False
        try:
            if not state.tokens >= 1.0:
                return False
            state.seen += 1
            state.tokens -= 1.0
        finally:
            lock.release()
        # answered from here on: what Address.respond and Finish.answered do
        req.key_name = record.name
        q, limit = plain
        cdef double wall = _clock(CLOCK_MONOTONIC)
        cdef double cpu = _clock(CLOCK_THREAD_CPUTIME_ID)
        try:
            body = index.suggest_json(q, limit=limit)
        except _QueryError as exc:
            raise self._query_error(exc) from None
        finally:
            if _clock(CLOCK_MONOTONIC) - wall >= self._cost_unit:
                auth.charge(record, _clock(CLOCK_THREAD_CPUTIME_ID) - cpu)
        # what ``resp.content_type = ...`` and ``resp.append_header("Vary", "Origin")`` do
        # (0.23 us less than the two calls)
        cdef dict out = <dict?>resp._headers
        out["content-type"] = _MEDIA_JSON
        vary = out.get("vary")
        out["vary"] = "Origin" if vary is None else vary + ", Origin"
        resp.data = body
        cdef double seconds = _clock(CLOCK_MONOTONIC) - <double>req.started
        pending = self._metrics._pending
        pending.append((_PATH, req.method, 200, record.name, _bucket(seconds), seconds))
        if len(pending) > self._max_pending:
            self._metrics.flush()
        return True
