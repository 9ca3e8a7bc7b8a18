"""The usual answer of the address routes in one compiled call (issue 15, item 6; issue 39).

A request of a back end with a secret key, a plain query string and a token in hand is nearly
every request the service gets. :meth:`Gate.answer` serves it in one call: the key, its rate
limit, the query string, the engine, the engine's CPU time, then what every answer gets
(``Finish.answered``: the ``Vary`` header and the metrics). Anything else, it leaves alone, and
the route's endpoint in ``server.resources`` serves the request as it serves every request:
the same checks, in the contract's order, with the same answers. :class:`Gate` serves
``/v1/address`` (``Address``); :class:`QuestionGate` the other questions of issue 39,
``/v1/address/postcode`` (``Lookup``) and ``/v1/address/reverse`` (``Reverse``), with their
endpoints' own ``parse`` and ``ask``.

Its rule: ``answer`` returns True when it has answered and finished the response (as the
endpoint's ``respond`` then ``Finish.answered`` would), and False *before it has changed
anything* (no token taken, no count, no header) when the request is not the usual one:

- no ``Authorization`` header, or one that ``Authenticator.remembered`` does not know (not
  accepted before by the current key table, a table that may be stale, a refresh due on the
  request path);
- an ``Origin`` header, or a key that is not secret (``server.cors.check_origin``);
- on ``/v1/address``, a query string that is not the plain spelling
  (``engine.read_plain_query``); no index;
- no token this worker can take at once (``KeyState.take``, as ``Limiter.take_held``).

Once the token is taken, the other questions' parameters are read by their endpoint's
``parse`` (``server.params``), whose 400 is the answer, as on the Python path, where the
parameters come after the limit too; the engine is asked by the endpoint's ``ask``.

NOTE: each rule is its owner's, called here, never copied (issue 38): whether the key table is
fresh and a refresh is due (``Authenticator.remembered``), taking a token (``KeyState.take``)
and whether the engine's work costs more (``costly``), both in ``server/_rules.pxd`` and
called in C, the charge (``Authenticator.charge``), the other questions' parameters and
engine call (their endpoint's ``parse`` and ``ask``), the ``Vary`` header and the metrics
(``Finish.answered``). What the gate saves is Falcon's and the Python path's calls around
them.

It reads the request's headers and writes the response's as Falcon 4 holds them (the request's
``_asgi_headers``, as ``server.app.AsgiRequest`` does, and the response's ``_headers``, as
``Finish.answered`` does); ``pyproject.toml`` pins Falcon 4, and
``tests/server/test_falcon_internals.py`` fails if they move. ``tests/server/test_gate.py``
holds the gates to the Python path, headers included.
"""

import falcon

import engine
from server import keys as _keys

from server._rules cimport KeyState, costly


cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t

    cdef struct timespec:
        long tv_sec
        long tv_nsec

    int clock_gettime(clockid_t clock, timespec* now)
    clockid_t CLOCK_MONOTONIC
    clockid_t CLOCK_THREAD_CPUTIME_ID


cdef inline double _clock(clockid_t clock) noexcept nogil:
    """Seconds of ``clock``: CLOCK_MONOTONIC is ``time.perf_counter``'s clock on Linux,
    CLOCK_THREAD_CPUTIME_ID ``time.thread_time``'s."""
    cdef timespec now
    clock_gettime(clock, &now)
    return now.tv_sec + now.tv_nsec * 1e-9


cdef object _MEDIA_JSON = falcon.MEDIA_JSON
cdef object _QueryError = engine.QueryError
cdef object _read_plain_query = engine.read_plain_query
cdef str _SECRET = _keys.SECRET


cdef class Gate:
    """The usual answer of ``/v1/address`` for one app (see the module's docstring); the key's
    checks and the engine's part of the other routes' gates too."""

    cdef object _remembered, _limiter, _charge, _slot, _finish, _query_error

    def __init__(self, auth, slot, finish, query_error):
        """``auth``: the app's ``Authenticator``; ``slot``: its ``IndexSlot``; ``finish``: what
        an answer of the route gets (``Finish.answered``); ``query_error``: how an
        ``engine.QueryError`` becomes the contract's 400."""
        self._remembered = auth.remembered
        self._limiter = auth.limiter
        self._charge = auth.charge
        self._slot = slot
        self._finish = finish
        self._query_error = query_error

    cdef object _admit(self, req):
        """The key's record of the usual request, its token taken; or None, nothing changed."""
        header = (<dict?>req._asgi_headers).get(b"authorization")
        if header is None or req.origin is not None:
            return None
        record = self._remembered(header.decode("latin-1"))
        if record is None or record.kind != _SECRET:
            return None
        if self._slot.index is None:
            return None
        limiter = self._limiter
        state = (<dict?>limiter.states).get(record.key_id)
        if state is None or not (<KeyState?>state).take(record.rate, limiter.degraded):
            return None
        # answered from here on: what the endpoint's respond and Finish.answered do
        req.key_name = record.name
        return record

    cdef object _ask(self, index, parsed):
        """The engine's answer to the parsed request (``/v1/address``: ``read_plain_query``'s)."""
        q, limit = parsed
        return index.suggest_json(q, limit=limit)

    cdef bint _serve(self, req, resp, record, parsed) except -1:
        """Ask the engine, charge its work, write the answer and finish it."""
        index = self._slot.index
        cdef double wall = _clock(CLOCK_MONOTONIC)
        cdef double cpu = _clock(CLOCK_THREAD_CPUTIME_ID)
        try:
            body = self._ask(index, parsed)
        except _QueryError as exc:
            raise self._query_error(exc) from None
        finally:
            if costly(_clock(CLOCK_MONOTONIC) - wall):
                self._charge(record, _clock(CLOCK_THREAD_CPUTIME_ID) - cpu)
        (<dict?>resp._headers)["content-type"] = _MEDIA_JSON  # what resp.content_type = ... does
        resp.data = body
        self._finish(req, resp)
        return True

    def answer(self, req, resp, raw_query):
        """Answer ``req`` and return True, or return False having changed nothing."""
        plain = _read_plain_query(raw_query)
        if plain is None:
            return False
        record = self._admit(req)
        if record is None:
            return False
        return self._serve(req, resp, record, plain)


cdef class QuestionGate(Gate):
    """The usual answer of another question of issue 39 (``server.resources.Lookup``,
    ``Reverse``): its endpoint's ``parse`` reads the parameters once the token is taken (its
    400 is the answer), its ``ask`` asks the engine."""

    cdef object _parse, _question

    def __init__(self, auth, slot, finish, query_error, parse, ask):
        """As :class:`Gate`; ``parse(raw_query)`` and ``ask(index, parsed)``: the endpoint's."""
        Gate.__init__(self, auth, slot, finish, query_error)
        self._parse = parse
        self._question = ask

    cdef object _ask(self, index, parsed):
        return self._question(index, parsed)

    def answer(self, req, resp, raw_query):
        """Answer ``req`` and return True, or return False having changed nothing."""
        record = self._admit(req)
        if record is None:
            return False
        return self._serve(req, resp, record, self._parse(raw_query))
