"""The default gunicorn worker: uvicorn's, with a drain that fails no request on reload.

On ``kill -HUP`` gunicorn starts new workers and sends the old ones SIGTERM. Plain uvicorn then
stops listening and at once closes every connection that has no request in progress: a client
that sends its next request on a kept-alive connection at that moment gets a reset instead of
an answer (wrk saw 32 in 127,197 requests across reloads). Here a draining worker instead
answers the next request on every open connection with ``Connection: close`` and closes the
connection after that answer; a connection that stays idle for IDLE_GRACE seconds is closed
then, as any keep-alive timeout would. New connections go to the new workers.
"""

from __future__ import annotations

import asyncio
import socket
import sys

import uvicorn
from gunicorn.arbiter import Arbiter
from uvicorn_worker import UvicornWorker as _UvicornWorker

from server.metrics import CONNECTIONS
from server.protocol import LimitedProtocol, Limits

#: Long enough for a request already sent on a just-accepted connection to be read.
DRAIN_SECONDS = 0.25
#: An open connection with no request for this long while draining is closed.
IDLE_GRACE = 1.0


class _OneWrite:
    """A transport that sends what one step of the event loop wrote in one ``write``.

    uvicorn writes an answer's head and its body separately: a worker killed between the two
    (SIGKILL, a crash) leaves the balancer half an answer, which it cannot retry, and the
    client an incomplete read (issue 15: 1 in 17,785 requests through HAProxy with a replica
    SIGKILLed). Written at once, the answer reaches the balancer whole or not at all, and
    "not at all" is retried on another replica. Everything but ``write`` is the transport's.
    """

    __slots__ = ("_transport", "_loop", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] | None = None

    def write(self, data: bytes) -> None:
        if self._pending is None:
            self._pending = [data]
            self._loop.call_soon(self.flush)
        else:
            self._pending.append(data)

    def flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def __getattr__(self, name: str) -> object:
        return getattr(self._transport, name)


class _DrainingProtocol(LimitedProtocol):
    """The limited httptools protocol that, once its worker drains, ends each connection after
    one answer; each answer leaves in one write (:class:`_OneWrite`)."""

    draining = False  # set for the whole process when the worker starts to stop

    def connection_made(self, transport) -> None:  # noqa: ANN001
        super().connection_made(_OneWrite(transport, self.loop))

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if _DrainingProtocol.draining and self.cycle is not None:
            self.cycle.keep_alive = False  # the answer says "Connection: close", then closes

    def shutdown(self) -> None:
        if self.cycle is None or self.cycle.response_complete:
            # idle: a request may be on its way; answer it (and close), or close when idle
            self.loop.call_later(IDLE_GRACE, self._close_if_idle)
        else:
            self.cycle.keep_alive = False

    def _close_if_idle(self) -> None:
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()


class _DrainingServer(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        _DrainingProtocol.draining = True
        for server in self.servers:
            server.close()  # stop accepting (new connections go to the new workers)
        await asyncio.sleep(DRAIN_SECONDS)
        await super().shutdown(sockets=sockets)


class UvicornWorker(_UvicornWorker):
    """``uvicorn_worker.UvicornWorker`` (uvloop, httptools) with gunicorn's request limits
    (server/protocol.py), that drains before stopping."""

    # NOTE: no WebSocket: an Upgrade request is answered as a plain HTTP request.
    CONFIG_KWARGS = {**_UvicornWorker.CONFIG_KWARGS, "http": _DrainingProtocol, "ws": "none"}

    def init_process(self) -> None:
        _DrainingProtocol.limits = limits = Limits.from_gunicorn(self.cfg)
        CONNECTIONS.limit = limits.connections  # the metrics show the connections from now on
        super().init_process()

    async def _serve(self) -> None:
        # NOTE: the body of uvicorn_worker's own _serve, with the draining server.
        self.config.app = self.wsgi
        server = _DrainingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
