"""Bearer authentication against a worker's copy of the API keys, and their rate limits.

The keys themselves, their format and the stores that hold them are ``server.keys``'s.

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
- SECURITY: a key is checked by comparing ``sha256(key)`` with the stored digest in constant
  time (:func:`hmac.compare_digest`), and an unknown key id costs the same as a wrong secret.
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
- With Redis (``server.keys.RedisKeyStore``), new keys and revocations reach every worker by a change
  message within milliseconds (and by the 1-s poll of a change counter if a message is lost).
  While Redis cannot be reached, keys known before are served from memory with limits of each
  worker's own, unknown keys get 503 ``not_ready`` (``Retry-After: 5``: they may have been
  created meanwhile), and ``/readyz`` (still 200) and the metric ``address_shared_store_degraded``
  say so; it heals by itself.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import threading
import time
from collections.abc import Callable
from types import MappingProxyType
from typing import NamedTuple

from server._rules import COST_UNIT_SECONDS, young
from server.clients import TrustedProxies
from server.config import MAX_KEY_REFRESH_SECONDS
from server.errors import ApiError, unauthorized
from server.keys import KEY_SHAPE, KeyRecord, KeyStore, RedisKeyStore, hash_key
from server.limiter import ClientBuckets, Limiter, rate_limited

log = logging.getLogger("server.auth")

#: At most this many accepted Authorization headers are remembered per key table.
MAX_ACCEPTED_HEADERS = 10_000
#: Compared against when the key id is unknown, so that path costs the same as a wrong secret.
_DUMMY_DIGEST = hashlib.sha256(b"no such key").digest()


class KeyTable(NamedTuple):
    """What a worker knows of the store, replaced whole by each read (never changed in place)."""

    keys: MappingProxyType[str, KeyRecord]  # active keys by key id
    read_at: float  # clock time of the last successful read (-inf: never)
    missing: bool  # the store does not exist (no key was ever created)


_NEVER_READ = KeyTable(MappingProxyType({}), -math.inf, False)
#: A shared store's whole table is read at least this often, whatever its change counter says.
FULL_READ_SECONDS = 30.0



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
    """A worker's view of the key store: authenticates a header and applies the rate limits.

    ``limiter``: the keys' limits (``server.app`` makes it from the ``Config``: a quota shared
    by the machine's or the cluster's workers); ``clients``: the limits per client address of
    a key with ``client_rate`` (``server.clients`` says who the client is).
    """

    def __init__(
        self,
        store: KeyStore | RedisKeyStore,
        *,
        limiter: Limiter,
        clients: ClientBuckets,
        refresh_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        on_degraded: Callable[[bool], None] | None = None,
        proxies: TrustedProxies | None = None,
    ) -> None:
        self.store = store
        #: A shared store (Redis): known keys are served from the table while it is unreachable.
        self.shared = getattr(store, "kind_name", "sqlite") == "redis"
        self.refresh_seconds = refresh_seconds
        self._clock = clock
        self._on_degraded = on_degraded
        self.limiter = limiter
        self.clients = clients
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
            state = "failing" if young(self._table.read_at, now) else "stale"
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
        if young(table.read_at, now):
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

    def _refresh_due(self, now: float) -> bool:
        """Whether a request must re-read the store: no reader thread does, and it is time."""
        return self._reader is None and now >= self._next_refresh

    def _maybe_refresh(self, now: float) -> None:
        # Without a reader thread only: one thread of a gthread worker re-reads; the others go
        # on with the current table.
        if self._refresh_due(now) and self._lock.acquire(blocking=False):
            try:
                if self._refresh_due(now):  # not done by another thread meanwhile
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
        record = self.remembered(header)  # type: ignore[arg-type]
        if record is not None:
            return record
        now = self._clock()
        self._maybe_refresh(now)
        table = self._table
        accepted = self._accepted
        credentials = parse_bearer(header)
        if self._stale(table, now):
            raise ApiError("not_ready", "the API key store is unavailable", headers={"Retry-After": "5"})
        match = KEY_SHAPE.match(credentials)
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

    def remembered(self, header: str) -> KeyRecord | None:
        """What :meth:`authenticate` answers for ``header`` if it can tell without any work: a
        header the current key table accepted before, a table that is not stale and no refresh
        due on the request path; None otherwise (``authenticate`` then does the work, and
        ``server._gate`` leaves the request to the Python path)."""
        now = self._clock()
        table, accepted = self._table, self._accepted
        if accepted[0] is not table or self._refresh_due(now):
            return None
        # PERF: a table read in the last MAX_KEY_REFRESH_SECONDS is not stale: no call
        if young(table.read_at, now) or not self._stale(table, now):
            return accepted[1].get(header)
        return None

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
