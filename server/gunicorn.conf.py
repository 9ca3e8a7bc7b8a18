"""gunicorn settings of the address service:  gunicorn -c server/gunicorn.conf.py -b HOST:PORT

Environment: ADDRESS_INDEX (index dir or `current` symlink), ADDRESS_KEYSTORE (key store),
ADDRESS_WORKER (uvicorn | gthread | sync: server/config.py's WORKER_CLASSES; pick it here, not
with -k, so the app flavour matches), ADDRESS_WORKERS (process count). Reload the index: repoint the symlink
(`python -m server switch-index DIR`), then `kill -HUP <master pid>`.
"""

import glob
import logging
import os
import socket
import struct
import tempfile

from server.config import DEFAULT_WORKER
from server.config import worker_class as config_worker_class

# -- which worker ------------------------------------------------------------------------------
# server/config.py's WORKER_CLASSES: the choices, why uvicorn is the default, and the one refused
_worker = os.environ.get("ADDRESS_WORKER", DEFAULT_WORKER)
worker_class, _asgi = config_worker_class(_worker)  # the worker class gunicorn runs
# The app gunicorn loads when none is given on the command line: same service, both flavours.
wsgi_app = "server.app:get_asgi_app()" if _asgi else "server.app:get_app()"

# -- processes ---------------------------------------------------------------------------------
workers = int(os.environ.get("ADDRESS_WORKERS", os.cpu_count() or 1))  # one per core: CPU-bound
# gthread only: threads per process (the engine releases the GIL while it searches)
threads = 4 if _worker == "gthread" else 1
preload_app = True  # import once in the master; workers fork from it and share its code pages
bind = [os.environ.get("ADDRESS_BIND", "127.0.0.1:8000")]  # overridden by -b HOST:PORT
backlog = 2048  # pending connections the kernel queues before refusing
# open connections per worker: uvicorn answers more with 503 too_many_connections at once
# (server/protocol.py); gthread leaves more in the backlog; sync serves one at a time
worker_connections = 1000
keepalive = 5  # seconds an idle keep-alive connection stays open (clients reuse connections)
timeout = 30  # a worker silent this long is killed and replaced
graceful_timeout = 30  # on HUP/TERM, old workers get this long to finish their requests
max_requests = 0  # never recycle workers on a count (no leak to contain; recycling costs p99)

# -- HTTP limits -------------------------------------------------------------------------------
# Applied by every worker: gunicorn's own parser (sync, gthread) and the default uvicorn worker's
# protocol (server/protocol.py), which also caps the whole head at 32 KiB and closes a request
# whose headers take longer than ADDRESS_HEADER_TIMEOUT (10 s) to arrive. Refusals are
# problem+json: 414 uri_too_long, 431 headers_too_large, 408 request_timeout, 400 bad_request.
# A `q` at the contract's limit (128 code points, each up to 12 bytes percent-encoded) fits.
limit_request_line = 8190  # bytes of the request line (gunicorn's ceiling)
limit_request_fields = 50  # headers per request (default 100; the API needs a handful)
limit_request_field_size = 8190  # bytes per header line (gunicorn's default)

# -- logging -----------------------------------------------------------------------------------
accesslog = None  # PERF: no per-request access log; ADDRESS_ACCESS_LOG=1 logs key names instead
errorlog = "-"  # errors and lifecycle to stderr
loglevel = os.environ.get("ADDRESS_LOG_LEVEL", "info")  # gunicorn's and the app's log level
proc_name = "nl-address"  # process title in ps/top
control_socket_disable = True  # no gunicornc socket: signals (HUP, TERM) are the interface


class _GunicornErrorLog(logging.Handler):
    """Hands the app's records to gunicorn's error log, as ``name: message``.

    The app's loggers (``server.*``: index and key-store problems) then write wherever gunicorn
    writes its errors (stderr, ``--error-logfile``, syslog), follow it when USR1 reopens the file
    and HUP sets the log up again, and keep writing under ``--daemon``, which sends stderr to
    /dev/null. Before (issue 37), a handler of their own wrote to stderr: with ``--daemon
    --error-logfile FILE`` none of these lines reached FILE.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            named = logging.makeLogRecord(record.__dict__)
            named.msg, named.args = f"{record.name}: {record.getMessage()}", None
            logging.getLogger("gunicorn.error").handle(named)  # its handlers, whatever they are now
        except Exception:
            self.handleError(record)


# The app's own loggers (server.*) go to gunicorn's error log; once, as HUP re-reads this file.
_app_log = logging.getLogger("server")
if not any(type(h).__name__ == _GunicornErrorLog.__name__ for h in _app_log.handlers):
    _app_log.addHandler(_GunicornErrorLog())
    _app_log.propagate = False
_app_log.setLevel(loglevel.upper())

# -- metrics across workers --------------------------------------------------------------------
# prometheus_client picks multiprocess mode when it is imported, so the directory is set here,
# before gunicorn imports the app; this file is read again on HUP, when it is already set.
os.environ.setdefault(
    "PROMETHEUS_MULTIPROC_DIR",
    os.path.join(tempfile.gettempdir(), f"nl-address-metrics-{os.getpid()}"),
)


def on_starting(server):
    """Master, before anything: start the metrics with an empty directory."""
    path = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(path, exist_ok=True)
    for stale in glob.glob(os.path.join(path, "*.db")):  # counters of a previous run
        os.remove(stale)


def when_ready(server):
    """Master, app loaded (preload) and sockets bound: check the flavour, drop its index."""
    import falcon.asgi

    worker = server.cfg.worker_class_str
    worker_is_asgi = worker == "asgi" or "uvicorn" in worker.lower() or "asgi" in worker.lower()
    app = server.app.callable
    if app is not None and isinstance(app, falcon.asgi.App) != worker_is_asgi:
        server.log.error(
            "worker %s needs %s app: choose the worker with ADDRESS_WORKER, not -k",
            worker,
            "an ASGI" if worker_is_asgi else "a WSGI",
        )
        raise SystemExit(1)
    from server import app as service

    service.master_ready()


def on_reload(server):
    """Master, on HUP, before the new workers start: adopt the index ADDRESS_INDEX names now."""
    from server import app as service

    service.master_reload()


def post_fork(server, worker):
    """Each new worker: open the memory-mapped index and read the key store; the proxies
    trusted to name the client (forwarded_allow_ips) also say who a demo key's client is."""
    from server import app as service

    if _worker in ("gthread", "sync"):
        _limit_blocking_sends(server, worker)
    service.worker_init(server.cfg.forwarded_allow_ips)


def _limit_blocking_sends(server, worker):
    """SECURITY (issue 37): a thread of gthread (or a sync worker) sends an answer with a blocking
    send that waits as long as the client does not read: 16 connections pipelining requests and
    never reading took every thread of gthread for good. A send that makes no progress for
    ADDRESS_HEADER_TIMEOUT now fails, and the worker closes that connection. Set on the
    listening sockets, which the connections accepted from them inherit (Linux); the default
    worker's sockets do not block, so it is not set there."""
    from server.protocol import Limits

    seconds = Limits.from_gunicorn(server.cfg).header_timeout
    timeval = struct.pack("ll", int(seconds), int(seconds % 1 * 1_000_000))
    for listener in worker.sockets:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)


def worker_exit(server, worker):
    """Each worker, as it stops: flush the metrics it has not written yet."""
    from server import app as service

    service.worker_exit()


def child_exit(server, worker):
    """Master, a worker exited: drop its live gauges from the shared metrics."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
