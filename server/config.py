"""Settings of the HTTP service, read once from the environment.

- ``ADDRESS_INDEX`` (``indexes/current``): index directory, or a symlink to one
  (see ``python -m server switch-index``).
- ``ADDRESS_KEYSTORE`` (``keys.sqlite3``): SQLite file holding the API keys, or a Redis URL
  (``redis://host:6379/0``, ``rediss://``, ``unix://``) shared by every replica of a cluster.
- ``ADDRESS_LIMIT_SYNC_SECONDS`` (``0.1``): how often a worker leases rate-limit tokens from the
  quota every worker shares (``server/limiter.py``).
- ``ADDRESS_LIMITS_FILE`` (one per key store in the temporary directory): the SQLite file of
  the machine's rate limits when the keys are in SQLite (Redis holds them otherwise).
- ``ADDRESS_KEY_REFRESH_SECONDS`` (``1.0``): how stale a worker's copy of the key table may get.
- ``ADDRESS_DEFAULT_RATE`` (``100``): requests per second per key, for new keys.
- ``ADDRESS_DEMO_RATE`` (``0``: none): serve the try-it page at ``/`` with a demo key of its
  own at this rate (requests per second), usable by this server's own pages only.
- ``ADDRESS_DEMO_CLIENT_RATE`` (``10``): the demo key's rate for each client address (one
  person typing fast, a request a keystroke), besides ``ADDRESS_DEMO_RATE`` for all of them;
  per worker process (``server.limiter.ClientBuckets``).
- ``FORWARDED_ALLOW_IPS`` (``127.0.0.1,::1``): the proxies whose ``X-Forwarded-For`` names the
  client (``server.clients``); gunicorn's ``forwarded_allow_ips``, which replaces this in every
  worker it starts (``server.app.worker_init``), reads the same variable.
- ``ADDRESS_ACCESS_LOG`` (``0``): ``1`` logs one line per request (key name, never the key).
- ``ADDRESS_METRICS_TOKEN`` (unset): when set, ``/metrics`` answers only requests with
  ``Authorization: Bearer <this token>`` (401 otherwise); unset, it is open to anyone who can
  reach the port (it names the keys, never a key): set it, or keep the port internal.
- ``ADDRESS_WORKER`` (``uvicorn``): the gunicorn worker, one of :data:`WORKER_CLASSES`
  (read by ``gunicorn.conf.py``).
- ``PROMETHEUS_MULTIPROC_DIR``: set by ``gunicorn.conf.py``; metrics shared by all workers.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass

from server.clients import DEFAULT_TRUSTED, TrustedProxies

#: ``ADDRESS_WORKER`` (``server/gunicorn.conf.py``): name -> (gunicorn worker class, the app is
#: ASGI). Each of them bounds what a client it does not trust can make a worker hold (issue 37:
#: the head, the whole request within ADDRESS_HEADER_TIMEOUT, pipelined requests, connections;
#: docs/operations.md). PERF: uvicorn is the fastest (benchmarks/http/RESULTS.md): the default.
WORKER_CLASSES = {
    # uvicorn_worker.UvicornWorker (uvloop + httptools) with server/protocol.py's limits and a
    # drain that fails no request on reload
    "uvicorn": ("server.workers.UvicornWorker", True),
    "gthread": ("gthread", False),  # WSGI, a thread pool per process
    "sync": ("sync", False),  # WSGI, one request at a time per process
}
DEFAULT_WORKER = "uvicorn"
#: Worker names refused, with the reason (gunicorn's own ``asgi`` worker, measured with
#: benchmarks/http/pipeline_flood.py on gunicorn 27.0.1: it reads on while pipelined answers
#: are not read, +460 MB a worker in 25 s with 16 connections; leaves a body that never comes
#: unanswered; applies no connection limit)
REFUSED_WORKERS = {
    "asgi": "gunicorn's asgi worker does not bound what a client makes it hold (requests pipelined "
            "and never read: +460 MB a worker in 25 s; bodies that never end; connections); "
            "use uvicorn, the default, which serves the same ASGI app",
}


def worker_class(name: str) -> tuple[str, bool]:
    """``ADDRESS_WORKER``'s (gunicorn worker class, the app is ASGI), or SystemExit saying why not."""
    if name in REFUSED_WORKERS:
        raise SystemExit(f"ADDRESS_WORKER={name} is refused: {REFUSED_WORKERS[name]}")
    if name not in WORKER_CLASSES:
        raise SystemExit(f"ADDRESS_WORKER must be one of {', '.join(WORKER_CLASSES)}, not {name!r}")
    return WORKER_CLASSES[name]


#: Revocation must reach every worker within this many seconds (issue 3).
MAX_KEY_REFRESH_SECONDS = 5.0
DEFAULT_INDEX = "indexes/current"
DEFAULT_KEYSTORE = "keys.sqlite3"


@dataclass(frozen=True, slots=True)
class Config:
    """What ``create_app`` needs besides the index."""

    keystore_path: str = DEFAULT_KEYSTORE
    index_path: str = DEFAULT_INDEX
    key_refresh_seconds: float = 1.0
    default_rate: float = 100.0
    access_log: bool = False
    demo_rate: float = 0.0
    demo_client_rate: float = 10.0
    #: gunicorn's ``forwarded_allow_ips`` (comma-separated addresses or networks, or ``*``)
    trusted_proxies: str = ",".join(DEFAULT_TRUSTED)
    metrics_token: str | None = None
    limit_sync_seconds: float = 0.1
    #: SQLite file of the machine's shared limits ("": this process only, e.g. tests)
    limits_file: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.key_refresh_seconds < MAX_KEY_REFRESH_SECONDS:
            raise ValueError(
                f"key_refresh_seconds must be in [0, {MAX_KEY_REFRESH_SECONDS}): a revoked key "
                "has to stop working within 5 s"
            )
        if not 0.01 <= self.limit_sync_seconds <= 1.0:
            raise ValueError("limit_sync_seconds must be from 0.01 to 1 (seconds between two leases)")
        if not self.default_rate > 0:
            raise ValueError("default_rate must be > 0")
        if not 0 <= self.demo_rate < float("inf"):
            raise ValueError("demo_rate must be a number of requests per second >= 0 (0: no demo key)")
        if not 0 < self.demo_client_rate < float("inf"):
            raise ValueError("demo_client_rate must be a number of requests per second > 0")
        TrustedProxies(self.trusted_proxies)  # raises ValueError on a bad address or network

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Config:
        """Build a config from ``ADDRESS_*`` variables (``os.environ`` by default)."""
        env = os.environ if environ is None else environ
        keystore = env.get("ADDRESS_KEYSTORE", DEFAULT_KEYSTORE)
        return cls(
            keystore_path=keystore,
            limit_sync_seconds=float(env.get("ADDRESS_LIMIT_SYNC_SECONDS", "0.1")),
            limits_file=env.get("ADDRESS_LIMITS_FILE") or default_limits_file(keystore),
            index_path=env.get("ADDRESS_INDEX", DEFAULT_INDEX),
            key_refresh_seconds=float(env.get("ADDRESS_KEY_REFRESH_SECONDS", "1.0")),
            default_rate=float(env.get("ADDRESS_DEFAULT_RATE", "100")),
            access_log=env.get("ADDRESS_ACCESS_LOG", "0") == "1",
            demo_rate=float(env.get("ADDRESS_DEMO_RATE", "0")),
            demo_client_rate=float(env.get("ADDRESS_DEMO_CLIENT_RATE", "10")),
            trusted_proxies=env.get("FORWARDED_ALLOW_IPS", ",".join(DEFAULT_TRUSTED)),
            metrics_token=env.get("ADDRESS_METRICS_TOKEN") or None,
        )


def default_limits_file(keystore: str) -> str:
    """The machine's limits file for a key store (``ADDRESS_LIMITS_FILE`` unset): in the
    temporary directory, one per store."""
    digest = hashlib.sha256(os.path.realpath(keystore).encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"nl-address-limits-{digest}.sqlite3")
