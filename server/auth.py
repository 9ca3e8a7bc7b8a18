"""API keys: an SQLite key store, Bearer authentication and a per-key token bucket.

Key format: ``nlk_<key id: 16 hex>_<secret: 43 url-safe base64 chars>``.

- The secret is 256 random bits from :mod:`secrets`; the key id (64 random bits) is not secret:
  it finds the row, like a user name, so the secret itself is only ever *compared*, never used
  as a lookup key.
- SECURITY: the store holds ``sha256(key)`` only. A fast hash is enough (and right for a
  per-request check) because the key has 256 bits of entropy: there is nothing to brute-force,
  unlike a password. The digest is compared with :func:`hmac.compare_digest` (constant time).
- Every worker keeps a copy of the active keys, an immutable :class:`KeyTable`, and a thread
  of its own (:meth:`Authenticator.start`, called after ``fork``) reads the store again every
  ``Config.key_refresh_seconds`` (1 s) and swaps the new table in with one assignment, so
  ``keys revoke`` reaches every worker of every server sharing the file within about that
  time, without a restart. PERF: a request only reads the current table: a store that is slow
  or locked (another process holding ``BEGIN EXCLUSIVE``) never slows an answer. Without the
  thread (an app built in-process, e.g. by the tests) a request re-reads a stale table itself.
- If the store cannot be read for longer than ``MAX_KEY_REFRESH_SECONDS`` (5 s), the worker
  stops accepting keys (503 ``not_ready`` with ``Retry-After``) rather than honour keys that may
  have been revoked; whatever the store does (garbage, a directory, unreadable, locked), reading
  it never raises out of the reader, no worker fails to boot over it, and the worker recovers
  by itself once the store can be read again. A table is judged by whether reads fail, not by
  its age alone: after a pause of the whole process (a stalled machine, SIGSTOP) the reader
  has simply not run yet, and the requests that come first are answered from the table.
  A store that does not exist holds no key: every request is a 401 (and ``/readyz`` a 503).
- A key is *secret* (server to server; the default) or *publishable* (for web pages, served
  only to the origins it lists; see ``server.cors``). A secret key may list origins too, which
  allows those pages to use it. Files written before these columns existed are migrated by the
  next CLI write (``ALTER TABLE``); workers read old and new files alike.
- Rate limits are per key, shared by every worker of the machine (SQLite mode) or of the
  cluster (Redis): each worker spends tokens it leased in the background from a quota they all
  share, never calling it on a request's path (``server.limiter``, which states the bound).
- A key may also be limited per client address (``KeyRecord.client_rate``: the demo key, issue
  37), in each worker apart (``server.limiter.ClientBuckets``); who the client is behind a
  proxy is ``server.clients``'s rule.
- The limit counts cost, not only requests: a request takes one token before it is served,
  and after the engine has answered, one more per ``COST_UNIT_SECONDS`` (0.2 ms) of engine
  *CPU* time it took (:meth:`Authenticator.charge`; the holding may go into debt). A typical
  query (well under 0.2 ms) costs 1; a key sending the most expensive queries gets several
  times fewer of them, so it cannot take the machine from other keys. CPU time, not wall time:
  on a busy machine a worker waits for a core mid-query, and the key must not pay for that.
- With Redis (``server.redis_store``), new keys and revocations reach every worker by a change
  message within milliseconds (and by the 1-s poll of a change counter if a message is lost).
  While Redis cannot be reached, keys known before are served from memory with limits of each
  worker's own, unknown keys get 503 ``not_ready`` (``Retry-After: 5``: they may have been
  created meanwhile), and ``/readyz`` (still 200) and the metric ``address_shared_store_degraded``
  say so; it heals by itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import math
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import NamedTuple
from urllib.parse import urlsplit

from server.clients import TrustedProxies
from server.config import MAX_KEY_REFRESH_SECONDS
from server.errors import ApiError, unauthorized
from server.limiter import ClientBuckets, Limiter, MemoryQuota, rate_limited

log = logging.getLogger("server.auth")

KEY_PREFIX = "nlk_"
_KEY_ID_HEX = 16
#: A request costs one token more per this much engine time (issue 11).
COST_UNIT_SECONDS = 0.0002
_KEY_SHAPE = re.compile(r"nlk_([0-9a-f]{16})_[A-Za-z0-9_-]{43}\Z")
NAME_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
#: At most this many accepted Authorization headers are remembered per key table.
MAX_ACCEPTED_HEADERS = 10_000
#: Compared against when the key id is unknown, so that path costs the same as a wrong secret.
_DUMMY_DIGEST = hashlib.sha256(b"no such key").digest()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    name        TEXT PRIMARY KEY,
    key_id      TEXT NOT NULL UNIQUE,
    key_sha256  BLOB NOT NULL,
    rate        REAL NOT NULL CHECK (rate > 0),
    created_at  TEXT NOT NULL,
    revoked_at  TEXT,
    kind        TEXT NOT NULL DEFAULT 'secret' CHECK (kind IN ('secret', 'publishable')),
    origins     TEXT NOT NULL DEFAULT ''
)
"""
#: Columns added after the first release, with their definitions (``ALTER TABLE`` on old files).
_ADDED_COLUMNS = {
    "kind": "TEXT NOT NULL DEFAULT 'secret' CHECK (kind IN ('secret', 'publishable'))",
    "origins": "TEXT NOT NULL DEFAULT ''",
}

SECRET = "secret"
PUBLISHABLE = "publishable"
#: A key's origin list holds this (never a real origin) to be served to same-origin pages.
SAME_ORIGIN = "self"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_origin(text: str) -> str:
    """Return ``text`` as the serialised origin a browser sends (``https://shop.example``).

    Scheme and host are lower-cased, an IDN host is written in punycode, the default port is
    dropped and a trailing ``/`` is allowed; anything else (a path, a query, user info, a
    wildcard, ``null``) is a :class:`KeyStoreError`. SECURITY: ``null`` is the origin of every
    sandboxed frame and ``file:`` page anywhere, so no key may allow it.
    """
    raw = text.strip()
    if raw.lower() == "null":
        raise KeyStoreError("the origin 'null' (sandboxed frames, file: pages) cannot be allowed")
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise KeyStoreError(f"{text!r} is not an origin: {exc}") from None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in _DEFAULT_PORTS or not host or "*" in host:
        raise KeyStoreError(f"{text!r} is not an origin: write it as https://host[:port]")
    if parts.username is not None or parts.path not in ("", "/") or parts.query or "?" in raw or "#" in raw:
        raise KeyStoreError(f"{text!r} is not an origin: only scheme, host and port, no path")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise KeyStoreError(f"{text!r} is not an origin: bad host name") from None
    if ":" in host:
        host = f"[{host}]"
    port_part = "" if port is None or port == _DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{host}{port_part}"


def check_new_key(name: str, rate: float, kind: str, origins: Iterable[str]) -> list[str]:
    """Check what ``keys create`` is given (any store); return the normalised origins, sorted."""
    if not NAME_SHAPE.match(name):
        raise KeyStoreError("a key name is 1-64 of A-Z a-z 0-9 . _ - and starts with a letter or digit")
    if not (rate > 0 and math.isfinite(rate)):
        raise KeyStoreError("rate must be a positive number of requests per second")
    if kind not in (SECRET, PUBLISHABLE):
        raise KeyStoreError(f"a key is {SECRET!r} or {PUBLISHABLE!r}, not {kind!r}")
    allowed = sorted({normalize_origin(origin) for origin in origins})
    if kind == PUBLISHABLE and not allowed:
        raise KeyStoreError("a publishable key needs at least one --origin (the pages that may use it)")
    return allowed


def _migrate(conn: sqlite3.Connection) -> None:
    """Create the table, or add the columns an older file lacks."""
    conn.execute(_SCHEMA)
    have = {row[1] for row in conn.execute("PRAGMA table_info(api_keys)")}
    for column, definition in _ADDED_COLUMNS.items():
        if column not in have:
            conn.execute(f"ALTER TABLE api_keys ADD COLUMN {column} {definition}")


def _kind_and_origins(row: sqlite3.Row) -> tuple[str, frozenset[str]]:
    """A row's kind and origins; a file older than these columns holds secret keys only."""
    names = row.keys()
    kind = row["kind"] if "kind" in names else SECRET
    origins = frozenset(row["origins"].split()) if "origins" in names else frozenset()
    return kind, origins


def hash_key(key: str) -> bytes:
    """Return the digest stored for ``key``."""
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()


def new_key() -> tuple[str, str]:
    """Return a fresh ``(key, key_id)``."""
    key_id = secrets.token_hex(_KEY_ID_HEX // 2)
    return f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}", key_id


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """One active key as a worker sees it (no secret, only its digest)."""

    name: str
    key_id: str
    digest: bytes
    rate: float
    kind: str = SECRET
    origins: frozenset[str] = frozenset()
    #: requests per second per client address, besides ``rate`` for all (0: none; the demo key)
    client_rate: float = 0.0


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """One row of ``keys list``."""

    name: str
    created_at: str
    rate: float
    revoked_at: str | None
    kind: str = SECRET
    origins: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StoredKey:
    """One key as a store holds it, revoked or not (what ``keys migrate`` copies)."""

    name: str
    key_id: str
    digest: bytes
    rate: float
    created_at: str
    revoked_at: str | None
    kind: str = SECRET
    origins: tuple[str, ...] = ()

    def record(self) -> KeyRecord:
        return KeyRecord(self.name, self.key_id, self.digest, self.rate, self.kind, frozenset(self.origins))

    def info(self) -> KeyInfo:
        return KeyInfo(self.name, self.created_at, self.rate, self.revoked_at, self.kind, self.origins)


class KeyTable(NamedTuple):
    """What a worker knows of the store, replaced whole by each read (never changed in place)."""

    keys: MappingProxyType[str, KeyRecord]  # active keys by key id
    read_at: float  # clock time of the last successful read (-inf: never)
    missing: bool  # the store does not exist (no key was ever created)


_NEVER_READ = KeyTable(MappingProxyType({}), -math.inf, False)
#: A shared store's whole table is read at least this often, whatever its change counter says.
FULL_READ_SECONDS = 30.0


class KeyStoreError(Exception):
    """The key store cannot be read, or a CLI action on it is impossible."""


class KeyStore:
    """The SQLite file that holds the API keys.

    The CLI writes it; workers only read it (opened read-only, so a worker never creates an
    empty store by accident). A new connection per operation keeps it safe across ``fork`` and
    threads; a worker reads it about once a second.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    @contextlib.contextmanager
    def _connect(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        if not write and not os.path.exists(self.path):
            raise KeyStoreError(f"key store {self.path!r} does not exist")
        conn = None
        try:
            # NOTE: connect() itself fails on a directory or a file this user cannot read
            if write:
                conn = sqlite3.connect(self.path, timeout=5.0)
            else:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=0.5)
            with conn:  # one transaction
                yield conn
        except (sqlite3.Error, OSError) as exc:
            raise KeyStoreError(f"key store {self.path!r}: {exc}") from exc
        finally:
            if conn is not None:
                conn.close()

    kind_name = "sqlite"

    def __str__(self) -> str:
        return self.path

    def exists(self) -> bool:
        """Whether the store holds any key (a file that does not exist holds none)."""
        return os.path.exists(self.path)

    def create(self, name: str, rate: float, *, kind: str = SECRET, origins: Iterable[str] = ()) -> str:
        """Add a key named ``name`` and return it (the only time it is ever shown).

        ``kind`` is ``"secret"`` or ``"publishable"``; a publishable key needs at least one of
        ``origins`` (each normalised by :func:`normalize_origin`).
        """
        allowed = check_new_key(name, rate, kind, origins)
        key, key_id = new_key()
        created = not os.path.exists(self.path)
        with self._connect(write=True) as conn:
            _migrate(conn)
            if conn.execute("SELECT 1 FROM api_keys WHERE name = ?", (name,)).fetchone():
                raise KeyStoreError(f"a key named {name!r} exists (revoked keys keep their name); pick another")
            conn.execute(
                "INSERT INTO api_keys (name, key_id, key_sha256, rate, created_at, kind, origins)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, key_id, hash_key(key), float(rate), _now(), kind, " ".join(allowed)),
            )
        if created:
            os.chmod(self.path, 0o600)  # SECURITY: digests only, but nobody else's business
        return key

    def revoke(self, name: str) -> bool:
        """Revoke the active key ``name``; return False if there is none."""
        with self._connect(write=True) as conn:
            _migrate(conn)
            cur = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                (_now(), name),
            )
            return cur.rowcount == 1

    def list(self) -> list[KeyInfo]:
        """Every key ever created, oldest first (never the key itself)."""
        return [k.info() for k in self.rows()]

    def rows(self) -> list[StoredKey]:
        """Every key with its digest, oldest first (``keys migrate``); [] without a file."""
        if not os.path.exists(self.path):
            return []
        with self._connect(write=False) as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM api_keys ORDER BY created_at, name").fetchall()
        stored = []
        for row in rows:
            kind, origins = _kind_and_origins(row)
            stored.append(
                StoredKey(
                    row["name"],
                    row["key_id"],
                    bytes(row["key_sha256"]),
                    float(row["rate"]),
                    row["created_at"],
                    row["revoked_at"],
                    kind,
                    tuple(sorted(origins)),
                )
            )
        return stored

    def active(self) -> dict[str, KeyRecord]:
        """The active keys by key id; raises :class:`KeyStoreError` if unreadable."""
        with self._connect(write=False) as conn:
            conn.row_factory = sqlite3.Row  # SELECT *: files from before `kind` read as well
            rows = conn.execute("SELECT * FROM api_keys WHERE revoked_at IS NULL").fetchall()
        return {
            row["key_id"]: KeyRecord(
                row["name"], row["key_id"], bytes(row["key_sha256"]), float(row["rate"]), *_kind_and_origins(row)
            )
            for row in rows
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_bearer(header: str | None) -> str:
    """Return the credentials of an ``Authorization: Bearer`` header, or raise the 401.

    The rule (RFC 9110 section 11): the scheme is case-insensitive (``bearer`` works), one or
    more spaces separate it from the key, and whitespace around the whole value is not part of
    it (``Bearer  KEY `` works). Anything else is a 401.
    """
    if header is None:
        raise unauthorized("missing Authorization header; send 'Authorization: Bearer <API key>'")
    scheme, _, credentials = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise unauthorized("the Authorization header must use the Bearer scheme")
    credentials = credentials.lstrip(" ")
    if not credentials:
        raise unauthorized("the Authorization header has no API key")
    return credentials


class Authenticator:
    """A worker's view of the key store: authenticates a header and applies the rate limit."""

    def __init__(
        self,
        store: KeyStore,
        *,
        refresh_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        limiter: Limiter | None = None,
        on_degraded: Callable[[bool], None] | None = None,
        proxies: TrustedProxies | None = None,
    ) -> None:
        self.store = store
        #: A shared store (Redis): known keys are served from the table while it is unreachable.
        self.shared = getattr(store, "kind_name", "sqlite") == "redis"
        self.refresh_seconds = refresh_seconds
        self._clock = clock
        self._on_degraded = on_degraded
        self.limiter = limiter if limiter is not None else Limiter(MemoryQuota(clock), clock=clock)
        #: the limits per client address of a key with ``client_rate`` (server.clients says who)
        self.clients = ClientBuckets(clock=clock)
        self.proxies = proxies if proxies is not None else TrustedProxies()
        self._table = _NEVER_READ
        self._version: int | None = None  # of the shared store, as last read
        self._full_read_at = -math.inf
        self.store_degraded = ""  # why the shared store cannot be read now ("": it can)
        #: The headers ``authenticate`` accepted against the table named first (see there).
        self._accepted: tuple[KeyTable, dict[str, KeyRecord]] = (_NEVER_READ, {})
        #: Keys that live in this process only (the demo key), by key id; never refreshed away.
        self.own_keys: dict[str, KeyRecord] = {}
        self._origins: tuple[object, frozenset[str]] = (None, frozenset())
        self._lock = threading.Lock()
        self._next_refresh = -math.inf
        self._state = ""
        self._reader: threading.Thread | None = None
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()
        #: clock time of the last read that failed (-inf: none since the last good one) and of
        #: the start of the read under way (None: none), for :meth:`_stale`
        self._failed_at = -math.inf
        self._reading_since: float | None = None
        self.refresh()

    def after_fork(self) -> None:
        """Start a forked worker: fresh limits and lock, a fresh read, its own threads."""
        self._lock = threading.Lock()
        self._state = ""  # each worker logs what it sees once
        self._reader = self._watcher = None  # threads do not survive fork
        if hasattr(self.store, "after_fork"):
            self.store.after_fork()
        self._version = None
        self.refresh()
        self.start()
        self.limiter.after_fork()
        self.clients.after_fork()

    def start(self) -> None:
        """Read the store every ``refresh_seconds`` from a daemon thread of this process,
        instead of on the request path; with a shared store, also follow its change messages."""
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read_forever, name="key-store", daemon=True)
        self._reader.start()
        watch = getattr(self.store, "watch", None)
        if watch is not None:
            self._watcher = threading.Thread(
                target=watch, args=(self._changed, self._stop), name="key-changes", daemon=True
            )
            self._watcher.start()

    def _changed(self) -> None:
        self._version = None  # read the whole table, whatever the counter says
        self.refresh()

    def stop(self) -> None:
        """Stop the reader threads (tests)."""
        self._stop.set()
        for thread in (self._reader, self._watcher):
            if thread is not None:
                thread.join()
        self._reader = self._watcher = None
        self.limiter.stop()
        close = getattr(self.store, "close", None)
        if close is not None:
            close()

    def _read_forever(self) -> None:
        while not self._stop.wait(max(self.refresh_seconds, 0.05)):
            self.refresh()

    @property
    def missing(self) -> bool:
        """The store does not exist (as of the last read)."""
        return self._table.missing

    def refresh(self) -> bool:
        """Re-read the active keys now; return whether the store could be read. Never raises.

        A store that does not exist (no key was ever created, or it was deleted) is a valid,
        empty table: every key is refused with 401, and the worker is not ready.
        """
        now = self._clock()
        self._next_refresh = now + self.refresh_seconds
        if self.shared:
            return self._refresh_shared(now)
        self._reading_since = now
        try:
            missing = not self.store.exists()
            keys = {} if missing else self.store.active()
        except Exception as exc:  # KeyStoreError, or anything else: the worker must go on
            self._failed_at = self._clock()
            state = "stale" if self._table.read_at + MAX_KEY_REFRESH_SECONDS <= now else "failing"
            self._log_state(state, logging.ERROR, "cannot read the key store: %s", exc)
            return False
        finally:
            self._reading_since = None
        self._failed_at = -math.inf
        # NOTE: one reference swap: a request sees the old table or the new one, whole
        self._table = KeyTable(MappingProxyType(keys), now, missing)
        if missing:
            self._log_state(
                "missing",
                logging.WARNING,
                "no key store at %s: every key is refused until `python -m server keys create`",
                self.store.path,
            )
        else:
            self._log_state("ok", logging.INFO, "key store %s: active keys: %d", self.store.path, len(keys))
        return True

    def _refresh_shared(self, now: float) -> bool:
        """Redis: read the change counter; read the whole table when it moved (or every
        ``FULL_READ_SECONDS``). Unreachable, the table is kept: known keys go on working."""
        store = self.store
        try:
            if self._version is not None and now - self._full_read_at < FULL_READ_SECONDS:
                if store.version() == self._version:
                    # NOTE: the same table object: what is derived from it (the origins, the
                    # accepted headers) stays valid; a shared table has no age (see _stale)
                    self._set_store_degraded("")
                    return True
            version, keys, missing = store.snapshot()
        except Exception as exc:  # KeyStoreError, or anything else: the worker must go on
            self._set_store_degraded(f"{type(exc).__name__}: {exc}")
            return False
        self._version, self._full_read_at = version, now
        self._table = KeyTable(MappingProxyType(keys), now, missing)
        self._set_store_degraded("")
        if missing:
            self._log_state("missing", logging.WARNING, "no key in %s: every key is refused", store.path)
        else:
            self._log_state("ok", logging.INFO, "key store %s: active keys: %d", store.path, len(keys))
        return True

    def _set_store_degraded(self, reason: str) -> None:
        was = self.store_degraded
        self.store_degraded = reason
        if bool(was) == bool(reason):
            return
        if reason:
            self._state = "degraded"
            log.error(
                "the shared key store %s is unreachable (%s): serving the %d known keys from memory, "
                "refusing unknown ones (503)",
                self.store.path,
                reason,
                len(self._table.keys),
            )
        else:
            log.warning("the shared key store %s answers again", self.store.path)
        if self._on_degraded is not None:
            self._on_degraded(bool(reason))

    def status(self) -> dict[str, object]:
        """The key store and the rate limits as ``/readyz`` shows them."""
        limiter = self.limiter.degraded_reason if self.limiter.degraded else ""
        problems = [p for p in (self.store_degraded, limiter) if p]
        body: dict[str, object] = {
            "backend": getattr(self.store, "kind_name", "sqlite"),
            "state": "degraded" if problems else "ok",
        }
        if problems:
            body["problem"] = "; ".join(problems)
            body["detail"] = "known keys are served from memory with limits per worker; unknown keys get 503"
        return body

    @property
    def degraded(self) -> bool:
        return bool(self.store_degraded) or self.limiter.degraded

    def _log_state(self, state: str, level: int, msg: str, *args: object) -> None:
        # Log changes of state only: the store is read every second.
        if state != self._state:
            self._state = state
            log.log(level, msg, *args)

    def _stale(self, table: KeyTable, now: float) -> bool:
        """Whether ``table`` is too old to be trusted: the store could not be read for
        ``MAX_KEY_REFRESH_SECONDS``.

        A table that old is not stale by its age alone when the worker has a reader thread
        that is alive, has failed no read since, and is not stuck in one: then the process
        itself was paused (a machine that stalls, a VM descheduled, SIGSTOP) and the reader,
        which sleeps as the requests do, simply has not run yet; it reads the store within
        moments of the pause. Before this, a pause of 7 s under load gave 21 answers 503
        ``not_ready`` from a store that was fine (the 30-minute soak on a loaded machine:
        1,057 of 10.3 million).

        A shared store (Redis) has no such age: a table read once is kept while Redis cannot be
        reached (known keys go on working; unknown ones get 503 in :meth:`authenticate`).
        """
        if self.shared:
            return table.read_at == -math.inf
        if table.read_at + MAX_KEY_REFRESH_SECONDS > now:
            return False
        reader = self._reader
        if reader is None or not reader.is_alive() or self._failed_at > table.read_at:
            return True
        since = self._reading_since
        return since is not None and since + MAX_KEY_REFRESH_SECONDS <= now

    @property
    def ready(self) -> bool:
        """Whether the key table exists and is fresh enough to be trusted."""
        now = self._clock()
        self._maybe_refresh(now)
        table = self._table
        return not table.missing and not self._stale(table, now)

    def _maybe_refresh(self, now: float) -> None:
        # Without a reader thread only: one thread of a gthread worker re-reads; the others go
        # on with the current table.
        if self._reader is None and now >= self._next_refresh and self._lock.acquire(blocking=False):
            try:
                if now >= self._next_refresh:
                    self.refresh()
            finally:
                self._lock.release()

    def authenticate(self, header: str | None) -> KeyRecord:
        """Return the key record for ``header``; raise the 401 (or 503) of the contract.

        PERF: a header the current key table has already accepted is answered from a dict kept
        with that table (one lookup instead of parsing, a regex, SHA-256 and a comparison: 2.6
        of the ~11 us our code spends on a request). A refresh replaces the table and drops
        the dict with it, so revocation and staleness work exactly as without it. SECURITY:
        only accepted headers are remembered, for as long as their table is current (about
        ``refresh_seconds``); they hold the key itself, which every request brings into the
        worker's memory anyway; an unknown header always takes the constant-time path.
        """
        now = self._clock()
        if self._reader is None and now >= self._next_refresh:  # PERF: the test of _maybe_refresh
            self._maybe_refresh(now)
        table = self._table
        accepted = self._accepted
        # PERF: a table read in the last MAX_KEY_REFRESH_SECONDS is not stale (see _stale): no call
        if accepted[0] is table and (table.read_at + MAX_KEY_REFRESH_SECONDS > now or not self._stale(table, now)):
            record = accepted[1].get(header)  # type: ignore[arg-type]
            if record is not None:
                return record
        credentials = parse_bearer(header)
        if self._stale(table, now):
            raise ApiError("not_ready", "the API key store is unavailable", headers={"Retry-After": "5"})
        match = _KEY_SHAPE.match(credentials)
        record = (table.keys.get(match.group(1)) or self.own_keys.get(match.group(1))) if match else None
        expected = record.digest if record is not None else _DUMMY_DIGEST
        # SECURITY: constant-time comparison of digests; never log or echo `credentials`.
        if not hmac.compare_digest(hash_key(credentials), expected) or record is None:
            if self.store_degraded:  # it may be a key created since: cannot tell now
                raise ApiError(
                    "not_ready",
                    "the shared API key store is unreachable: only keys known before can be checked",
                    headers={"Retry-After": "5"},
                )
            raise unauthorized("unknown or revoked API key")
        if accepted[0] is not table:
            self._accepted = accepted = (table, {})
        if len(accepted[1]) < MAX_ACCEPTED_HEADERS:
            accepted[1][header] = record  # type: ignore[index]
        return record

    def origin_allowed(self, origin: str) -> bool:
        """Whether some active key allows ``origin`` (the test a CORS preflight gets)."""
        now = self._clock()
        self._maybe_refresh(now)
        table = self._table
        if self._stale(table, now):
            return False  # fail closed, as authenticate() does
        if self._origins[0] is not table:  # recomputed once per new table, not per request
            self._origins = (table, frozenset(o for record in table.keys.values() for o in record.origins))
        return origin in self._origins[1]

    def charge(self, record: KeyRecord, engine_seconds: float) -> None:
        """Charge the key's limit for the engine time a request took (see the module doc)."""
        extra = int(engine_seconds / COST_UNIT_SECONDS)
        if extra > 0:
            self.limiter.charge(record.key_id, extra)

    def throttle(self, record: KeyRecord) -> None:
        """Take one request from the key's limit or raise the 429 with ``Retry-After``."""
        self.limiter.throttle(record.key_id, record.rate)

    def throttle_client(self, record: KeyRecord, client: str) -> None:
        """Take one request from the key's limit per client address (``record.client_rate``,
        ``client`` from ``server.clients.client_address``) or raise the 429; before
        :meth:`throttle`, so that a client over its own limit spends nothing of the key's."""
        if not self.clients.take(f"{record.key_id} {client}", record.client_rate):
            raise rate_limited(record.client_rate, " per client address")
