"""The HTTP/1.1 protocol of the default worker: uvicorn's httptools protocol with limits.

uvicorn's httptools protocol applies no limit to the head of a request, and httptools collects
a header (and the target) by concatenating what each read brings: a header of 200 MiB sent in
64 KiB writes takes time quadratic in its size, the worker misses its heartbeat and gunicorn
kills it. Nor does it close a connection whose head never ends, and it hands HTTP/2.0 and
HTTP/0.9 request lines to the app (a 500). This protocol enforces, before the app sees anything:

=============================  ================================  ===============================
what                           limit                             answer
=============================  ================================  ===============================
request line                   ``limit_request_line`` (8190 B)   414 ``uri_too_long``
one header line                ``limit_request_field_size``      431 ``headers_too_large``
number of headers              ``limit_request_fields`` (50)     431 ``headers_too_large``
the whole head                 :data:`MAX_HEAD_BYTES` (32 KiB)   431 ``headers_too_large``
time to send the whole head    ``ADDRESS_HEADER_TIMEOUT`` (10 s) 408 ``request_timeout``
HTTP version                   1.0 or 1.1                        400 ``bad_request``
``Host`` (HTTP/1.1)            exactly one (RFC 9112 3.2)        400 ``bad_request``
not HTTP at all                                                  400 ``bad_request``
=============================  ================================  ===============================

The three ``limit_request_*`` values are gunicorn's settings (``server/gunicorn.conf.py``), so
every worker applies the same ones. Each refusal is the contract's problem+json body, sent
with ``Connection: close``; the connection is closed after it. A connection that sends no byte
of a request within the header timeout is closed without an answer (it has asked nothing).
The head is fed to the parser in pieces no longer than what is left of its budget, so no
single read makes the parser hold more than :data:`MAX_HEAD_BYTES`.

What a connection may hold (issue 37), besides its head:

=============================  ================================  ===============================
what                           limit                             then
=============================  ================================  ===============================
requests read, not answered    :data:`MAX_PIPELINE` (8)          reading stops until one is
(pipelining)                                                     answered (backpressure)
time to send the whole         ``ADDRESS_HEADER_TIMEOUT``, the   408 ``request_timeout`` (or the
request, body included         same deadline as the head's       connection is closed, if the
                                                                 request was already answered)
a body that is not valid       the parser                        400 ``bad_request``
chunked encoding
open connections per worker    ``worker_connections`` (1000)     503 ``too_many_connections``
                                                                 at once, with ``Retry-After``
=============================  ================================  ===============================

Pipelining: httptools parses whatever it is given, and uvicorn queues every request it parses
behind the one being answered, resuming reading after each answer: a client that writes
requests back to back and never reads the answers made a worker queue a task per request
(issue 37: 2,390 MB per worker in 25 s). Here the parser is given at most one request head at
a time (a piece ends at the first empty line: strict HTTP/1.1, which httptools enforces, ends
every head and every chunked body with one), never while :data:`MAX_PIPELINE` requests wait for
their answers; what was read beyond that waits unparsed (at most one read, 256 KB) with reading
paused, and :class:`_HeldFlow` keeps uvicorn from resuming it meanwhile. The answers themselves
wait in the transport, which stops the app writing at its high-water mark (64 KiB), so a
connection whose answers are not read holds at most that, one read and eight requests; and
the kernel holds at most :data:`SEND_BUFFER_BYTES` of them (x 2), so the worker stops answering
such a client after a hundred answers or so rather than thousands.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from server.errors import ApiError, problem_body
from server.metrics import CONNECTIONS

#: The whole head of a request (request line and every header) may not be larger than this.
MAX_HEAD_BYTES = 32 * 1024
#: Requests of one connection read and not yet answered in full; with this many, the connection
#: reads no more until one is answered. A browser never pipelines; a client that does waits.
MAX_PIPELINE = 8
#: The kernel's send buffer of a connection (``SO_SNDBUF``; Linux doubles it for its own
#: bookkeeping). Left to itself, Linux grows it to 4 MiB (``tcp_wmem``): a client that
#: pipelines requests and never reads made the worker answer ~4 MiB of them per connection
#: before backpressure could stop it (16 connections: 12 s of CPU). The largest answer of the
#: service (``/metrics``, a page) fits; a longer one waits in the transport, as any does.
SEND_BUFFER_BYTES = 64 * 1024
#: Seconds a connection refused over ``worker_connections`` stays open after its 503 (unread):
#: closed at once with the request unread, the kernel would reset it, and the client could
#: lose the answer.
REFUSED_LINGER_SECONDS = 1.0
#: Where a request's head ends (and a chunked body): the parser requires CRLF line ends.
_EMPTY_LINE = b"\r\n\r\n"
#: gunicorn's ceilings, used when a ``limit_request_*`` setting is 0 ("unlimited").
#: How a request line ends (the parser itself checks the rest of it).
_VERSIONED = re.compile(rb" HTTP/[0-9]\.[0-9]\r?\n\Z")
_GUNICORN_MAX_LINE = 8190
_GUNICORN_MAX_FIELDS = 32768
_GUNICORN_MAX_FIELD_SIZE = 8190
_GUNICORN_WORKER_CONNECTIONS = 1000  # gunicorn's default of ``worker_connections``


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request's head may be."""

    request_line: int = _GUNICORN_MAX_LINE
    fields: int = 100
    field_size: int = _GUNICORN_MAX_FIELD_SIZE
    head: int = MAX_HEAD_BYTES
    header_timeout: float = 10.0
    connections: int = _GUNICORN_WORKER_CONNECTIONS  # open connections of one worker

    @classmethod
    def from_gunicorn(cls, cfg: object, environ: dict[str, str] | None = None) -> Limits:
        """The limits of gunicorn's settings ``cfg``; the timeout from ``ADDRESS_HEADER_TIMEOUT``."""
        env = os.environ if environ is None else environ
        timeout = float(env.get("ADDRESS_HEADER_TIMEOUT", "10"))
        if not timeout > 0:
            raise ValueError("ADDRESS_HEADER_TIMEOUT must be a positive number of seconds")
        return cls(
            request_line=getattr(cfg, "limit_request_line", 0) or _GUNICORN_MAX_LINE,
            fields=getattr(cfg, "limit_request_fields", 0) or _GUNICORN_MAX_FIELDS,
            field_size=getattr(cfg, "limit_request_field_size", 0) or _GUNICORN_MAX_FIELD_SIZE,
            header_timeout=timeout,
            connections=getattr(cfg, "worker_connections", 0) or _GUNICORN_WORKER_CONNECTIONS,
        )


class _Refused(Exception):
    """Raised from a parser callback to stop the parser; the refusal is in ``_refusal``."""


class _HeldFlow(FlowControl):
    """uvicorn's flow control of a connection, that does not resume reading while its protocol
    holds requests back (uvicorn resumes it after every answer and whenever the app waits for a
    body: each resume would read up to 256 KB more)."""

    def __init__(self, transport, protocol: LimitedProtocol) -> None:  # noqa: ANN001
        super().__init__(transport)
        self._protocol = protocol

    def resume_reading(self) -> None:
        # PERF: FlowControl's own test first: nearly always, reading is not paused
        if self.read_paused and not self._protocol._holding():
            self.read_paused = False
            self._transport.resume_reading()


class LimitedProtocol(HttpToolsProtocol):
    """httptools protocol that refuses oversized, endless or malformed requests, reads no more
    requests while :data:`MAX_PIPELINE` wait for their answers, and keeps at most
    ``limits.connections`` connections open."""

    limits = Limits()  # the worker sets the limits of its gunicorn settings

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self._in_head = True  # reading a request's line and headers (or waiting for one)
        self._head_bytes = 0  # bytes of the current head fed to the parser so far
        self._fields = 0
        self._line_open = False  # a request has begun and its headers are not all read
        self._line_read = False  # its request line was read (and looked at)
        self._line_tail = b""  # the last bytes of the request line read so far
        self._refusal: ApiError | None = None
        self._head_timer = None
        self._in_flight = 0  # requests parsed whose answers are not complete
        self._backlog = b""  # bytes read and not given to the parser (backpressure)
        self._counted = False  # in CONNECTIONS.open

    # -- the connection -------------------------------------------------------------------------

    def connection_made(self, transport) -> None:  # noqa: ANN001
        super().connection_made(transport)
        self.flow = _HeldFlow(self.transport, self)
        sock = transport.get_extra_info("socket")
        if sock is not None:  # PERF: once a connection (a system call)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        self._counted = True
        CONNECTIONS.open += 1
        if CONNECTIONS.open > self.limits.connections:
            self._refuse_connection()
        else:
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted:
            self._counted = False
            CONNECTIONS.open -= 1
        self._disarm_head_timer()
        self._backlog = b""
        super().connection_lost(exc)

    def _refuse_connection(self) -> None:
        """Answer a connection over ``limits.connections`` with a 503 before it asks anything;
        its request is never read (the connection is closed REFUSED_LINGER_SECONDS later)."""
        CONNECTIONS.refused += 1
        self._refusal = ApiError(
            "too_many_connections",
            f"this server process has {self.limits.connections} connections open; try again",
            headers={"Retry-After": "1"},
        )
        self.flow.pause_reading()
        self.transport.write(self._problem_bytes(self._refusal))
        self.transport.write_eof()
        self.loop.call_later(REFUSED_LINGER_SECONDS, self.transport.close)

    # -- the deadline of a request --------------------------------------------------------------

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.limits.header_timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if not self._in_head:  # its head was read; its body has not all arrived
            self._abandon(ApiError("request_timeout", "the request's body did not arrive in time"))
            return
        if self._busy():
            self._arm_head_timer()  # an answer is on its way; the next head starts after it
            return
        if self._head_bytes == 0 and not self._line_open:
            self.transport.close()  # nothing asked: close as an idle keep-alive connection
            return
        self._send_problem(ApiError("request_timeout", "the request's headers did not arrive in time"))

    # -- reading: the head's size, and backpressure ---------------------------------------------

    def _holding(self) -> bool:
        """Whether requests are held back: read and unparsed, or as many waiting as allowed."""
        return bool(self._backlog) or self._in_flight >= MAX_PIPELINE

    def data_received(self, data: bytes) -> None:
        """Give ``data`` to the parser piece by piece (see the module's docstring)."""
        if self._backlog:  # NOTE: reading is paused meanwhile; kept in order all the same
            data, self._backlog = self._backlog + data, b""
        while data and self._refusal is None and not self.transport.is_closing():
            if self._in_flight >= MAX_PIPELINE:
                # SECURITY: backpressure: the rest waits until an answer has been written
                self._backlog = data
                self.flow.pause_reading()
                return
            if self._in_head:
                room = self.limits.head - self._head_bytes
                if room < 0:
                    self._send_problem(
                        ApiError("headers_too_large", f"the request's head is over {self.limits.head} bytes")
                    )
                    return
                # one byte more than the budget, so that going over it is seen
                end = room + 1
                newline = data.find(b"\n", 0, end) if not self._line_read else -1
                if newline >= 0:  # up to the end of the request line, to look at it
                    end = newline + 1  # NOTE: one line holds no empty line
                else:  # at most one head per piece
                    blank = data.find(_EMPTY_LINE, 0, end)
                    end = end if blank < 0 else blank + len(_EMPTY_LINE)
            else:  # the end of one body and one head at most
                blank = data.find(_EMPTY_LINE)
                end = len(data) if blank < 0 else blank + len(_EMPTY_LINE)
            piece, data = data[:end], data[end:]
            if self._in_head:
                self._head_bytes += len(piece)
            line_mode = self._in_head and not self._line_read
            super().data_received(piece)
            if self._line_open and not self._line_read and not line_mode:
                self._line_read = True  # began inside a longer piece (after a body): not looked at
            elif self._line_open and not self._line_read:
                self._line_tail = (self._line_tail + piece)[-12:]
                if piece.endswith(b"\n"):
                    self._line_read = True
                    if not _VERSIONED.search(self._line_tail) and self._refusal is None:
                        # httptools would wait for headers (HTTP/0.9's `GET /path`)
                        self._send_problem(ApiError("bad_request", "the request line has no HTTP version"))

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = self._line_open = True
        self._line_read = False
        self._line_tail = b""
        self._fields = 0

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > self.limits.request_line:
            self._refuse(ApiError("uri_too_long", f"the request target is over {self.limits.request_line} bytes"))

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields += 1
        if self._fields > self.limits.fields:
            self._refuse(ApiError("headers_too_large", f"the request has over {self.limits.fields} headers"))
        if len(name) + len(value) + 2 > self.limits.field_size:
            self._refuse(ApiError("headers_too_large", f"a header line is over {self.limits.field_size} bytes"))
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        version = self.parser.get_http_version()
        if version not in ("1.1", "1.0"):
            self._refuse(ApiError("bad_request", f"HTTP/{version} is not spoken here; send HTTP/1.1"))
        if version == "1.1" and sum(name == b"host" for name, _ in self.headers) != 1:
            self._refuse(ApiError("bad_request", "an HTTP/1.1 request needs exactly one Host header"))
        self._in_head = self._line_open = False
        self._head_bytes = 0
        cycle = self.cycle
        super().on_headers_complete()
        if self.cycle is not cycle:
            self._in_flight += 1

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True
        self._line_read = False
        self._disarm_head_timer()  # the request is whole; the next one's deadline starts after its answer

    def on_response_complete(self) -> None:
        self._in_flight -= 1
        super().on_response_complete()  # starts the next request read, if any
        if self.transport.is_closing():
            return
        if self._refusal is not None and not self._busy():
            self._write_problem(self._refusal)  # after the answers to the requests before it
            return
        if self._in_head:  # NOTE: a body still arriving keeps the deadline it has
            self._arm_head_timer()
        if self._backlog:
            backlog, self._backlog = self._backlog, b""
            self.data_received(backlog)
            if not self._holding() and not self.pipeline:
                self.flow.resume_reading()

    def _busy(self) -> bool:
        """Whether an answer is being written or requests wait for theirs (pipelining)."""
        return self._in_flight > 0

    # -- refusals -------------------------------------------------------------------------------

    def _refuse(self, error: ApiError) -> None:
        """From a parser callback: stop parsing and answer ``error`` (see send_400_response)."""
        self._refusal = error
        raise _Refused

    def send_400_response(self, msg: str) -> None:
        """uvicorn calls this when the parser fails: our refusal, or the contract's 400."""
        if self._refusal is None and not self._in_head:  # in a body: only chunked can be wrong
            self._abandon(ApiError("bad_request", "the request's body is not valid chunked encoding"))
            return
        error = self._refusal or ApiError("bad_request", "the request is not valid HTTP/1.1")
        self._send_problem(error)

    def _abandon(self, error: ApiError) -> None:
        """The request being read cannot be read whole (its body is late or malformed): answer
        ``error`` in its place, after the answers before it, and close; or just close if the app
        has begun its answer (an answer cannot be followed by another to the same request)."""
        cycle = self.cycle
        self._disarm_head_timer()
        if cycle is None or cycle.response_started:
            self.transport.close()
            return
        for waiting in self.pipeline:
            if waiting[0] is cycle:  # not started: it never will be
                self.pipeline.remove(waiting)
                break
        else:  # started: the app waits for the body; it gets a disconnect and answers nothing
            cycle.disconnected = True
            cycle.message_event.set()
        self._in_flight -= 1
        self._send_problem(error)

    def _send_problem(self, error: ApiError) -> None:
        """Answer ``error`` and close, once the requests before it are answered."""
        self._refusal = error
        self._disarm_head_timer()
        if self._busy():
            self.flow.pause_reading()  # on_response_complete writes it
        else:
            self._write_problem(error)

    def _problem_bytes(self, error: ApiError) -> bytes:
        body = problem_body(error)
        head = [STATUS_LINE[error.status]]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        for name, value in (error.headers or {}).items():
            head += [name.encode("latin-1"), b": ", value.encode("latin-1"), b"\r\n"]
        head += [
            b"content-type: application/problem+json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
            body,
        ]
        return b"".join(head)

    def _write_problem(self, error: ApiError) -> None:
        self.transport.write(self._problem_bytes(error))
        self.transport.close()
