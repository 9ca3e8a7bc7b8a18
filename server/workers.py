"""The default gunicorn worker: uvicorn's, with a short drain before a graceful stop.

On ``kill -HUP`` gunicorn starts new workers and sends the old ones SIGTERM. uvicorn then stops
listening and at once closes every connection that has no request in progress, including one
it accepted a moment ago whose request bytes it has not read yet: that client gets a reset
instead of an answer. Waiting briefly between "stop accepting" and "close idle connections"
lets such a request start (it is then answered, and its connection closed afterwards), so a
reload fails no request. Idle keep-alive connections are still closed, as HTTP/1.1 allows
(clients retry an idempotent request on a connection the server closed).
"""

from __future__ import annotations

import asyncio
import socket
import sys

import uvicorn
from gunicorn.arbiter import Arbiter
from uvicorn_worker import UvicornWorker as _UvicornWorker

#: Long enough for a request already sent on a just-accepted connection to be read.
DRAIN_SECONDS = 0.25


class _DrainingServer(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # stop accepting (new connections go to the new workers)
        await asyncio.sleep(DRAIN_SECONDS)
        await super().shutdown(sockets=sockets)


class UvicornWorker(_UvicornWorker):
    """``uvicorn_worker.UvicornWorker`` (uvloop, httptools) that drains before stopping."""

    async def _serve(self) -> None:
        # NOTE: the body of uvicorn_worker's own _serve, with the draining server.
        self.config.app = self.wsgi
        server = _DrainingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
