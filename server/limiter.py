"""The rate limit of a key, shared by every worker of a machine or of a cluster, with no shared
store on a request's path.

How it works (the idea of Kong's ``sync_rate`` and Tyk's distributed limiter, made strict):
a shared *quota* per key (rate ``R`` requests per second) lives in one place for everyone who
shares the limit; each worker takes **leases** of tokens from it in the background and spends
them locally. A request only looks at its worker's own holding (a dict look-up and a lock).

- Every ``sync_seconds`` (``ADDRESS_LIMIT_SYNC_SECONDS``, 0.1 s) a worker's sync thread asks the
  quota, for each key it holds too few tokens of, for about twice what the key asked of it in
  the last interval (refused requests count: they are demand), and for a key used in that
  interval at least one interval at its full rate (``C`` below), so that a client speeding up
  within its rate is not refused before the next sync, and at least its *reserve*
  ``B = ceil(max(1, R) / N)``: its share of the burst the key's bucket allows (one second of
  the rate), ``N`` the live workers sharing the quota; holding at most
  ``H = max(ceil(2 x R x sync_seconds) + 1, B)``. Keys with enough tokens cost no call at all.
- Why the reserve (issue 37): a worker serves no more than it holds until its next sync. It
  held at most 0.2 s of the rate, while the bucket promises a burst of a whole second: a key
  of rate 100 used at half its rate by wrk's paced connections (32 of them, which fall into
  step and send together) got 14 and 1,571 refusals in two runs of ~6,000 requests, with the
  quota full. Degraded (below), a worker's own bucket holds ``R / N`` too.
- A worker new to a key serves it on credit (``max(C, B)`` tokens, ``C = min(max(1, floor(R)),
  ceil(R x sync_seconds) + 1)``: one interval's worth, never more than a second's, or its reserve
  if more), paid back to the quota at the next sync, so neither a fresh key nor a fresh worker
  makes a client wait for a sync. (A worker that has not yet counted the workers through a
  heartbeat, just after it starts, has no reserve: ``B = 0``.)
- What a request costs beyond one token (``Authenticator.charge``: engine time) is taken from
  the holding, which may go below zero; the next lease pays it back first.

The quotas: :class:`RedisQuota` (``ADDRESS_KEYSTORE=redis://``: a token bucket per key in a
Lua script, atomic, all the keys of a sync in one round trip), :class:`FileQuota`
(one machine: a token bucket per key in an SQLite file every worker of the machine opens,
written by the sync threads only, without fsync) and :class:`MemoryQuota` (one process).

Bound (docs/guide/cluster.md): the quota, a token bucket of rate ``R`` holding at most ``R``
(a burst of one second, as before), hands out at most ``R x (T + 1)`` tokens in any ``T``
seconds, and a worker can be at most ``H + max(C, B)`` tokens ahead of what it was granted in
that time (its holding when the ``T`` seconds start, and its credit: ``Limiter.ahead_max``). So
with ``N`` workers in all (replicas x workers each), a key gets at most
``R x (T + 1) + N x (H + max(C, B))`` requests in ``T`` seconds, whatever the balancer does: for
``R = 50``, ``T = 30``, ``N = 4``, ``sync_seconds = 0.1``: ``H = max(11, 13)``, ``max(6, 13)``,
1550 + 4 x (13 + 13) = 1654 = R x T x 1.103 (before the reserve: 1618 = R x T x 1.079). The
reserves of all workers add up to one burst, ``R``, so they move the bound by at most ``2 R``.

When the quota cannot be reached (Redis stopped or slow), every worker goes on alone: a local
token bucket per key at ``R / N`` (``N``: the live workers the quota last counted, from their
heartbeats), plus what it still holds; the state is *degraded* (``/readyz``, a metric) and clears
at the first sync that works.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from server._rules import KeyState
from server.errors import ApiError
from server.keys import client_for

log = logging.getLogger("server.limiter")

#: A worker forgets a key idle this long that it owes nothing (memory stays bounded).
IDLE_SECONDS = 60.0
#: A process keeps the buckets of at most this many clients (``ClientBuckets``).
MAX_CLIENTS = 10_000
#: A worker is counted (for the degraded split) while its heartbeat is this recent.
HEARTBEAT_SECONDS = 1.0
WORKER_TTL_SECONDS = 5.0


class Lease(NamedTuple):
    """What a worker asks the quota for one key: pay ``owed``, then grant up to ``want``."""

    key_id: str
    rate: float
    owed: int
    want: int


class Quota(Protocol):
    def lease(self, leases: Sequence[Lease]) -> list[tuple[int, int]]:
        """``(paid, granted)`` per lease; raises if the quota cannot be reached."""
        ...

    def heartbeat(self, worker: str) -> int:
        """Record ``worker`` as live; return how many workers are."""
        ...

    def after_fork(self) -> None: ...


def rate_limited(rate: float, per: str = "") -> ApiError:
    """The 429 of a limit of ``rate`` requests per second (``per``: what it counts them for)."""
    return ApiError(
        "rate_limited",
        f"rate limit of {rate:g} requests per second{per} exceeded",
        headers={"Retry-After": str(max(1, math.ceil(1 / rate)))},
    )


def bucket_take(tokens: float, stamp: float, now: float, lease: Lease) -> tuple[float, int, int]:
    """One token bucket (``R`` per second, ``max(1, R)`` at most): pay ``owed`` (down to minus
    the capacity), grant what is there up to ``want``; return ``(tokens, paid, granted)``."""
    capacity = max(1.0, lease.rate)
    tokens = min(capacity, tokens + max(0.0, now - stamp) * lease.rate)
    tokens = max(-capacity, tokens - lease.owed)
    granted = max(0, min(lease.want, math.floor(tokens)))
    return tokens - granted, lease.owed, granted


class MemoryQuota:
    """The quota of one process (an app built in-process, e.g. by the tests)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def lease(self, leases: Sequence[Lease]) -> list[tuple[int, int]]:
        now = self._clock()
        out = []
        with self._lock:
            for lease in leases:
                tokens, stamp = self._buckets.get(lease.key_id, (max(1.0, lease.rate), now))
                tokens, paid, granted = bucket_take(tokens, stamp, now, lease)
                self._buckets[lease.key_id] = (tokens, now)
                out.append((paid, granted))
        return out

    def heartbeat(self, worker: str) -> int:
        return 1

    def after_fork(self) -> None:
        self._lock = threading.Lock()


class FileQuota:
    """The quota of one machine: every worker opens the same SQLite file (``ADDRESS_LIMITS_FILE``,
    by default one per key store in the temporary directory). Only sync threads write it, about
    ``1 / sync_seconds`` times a second per worker, without fsync (``synchronous = OFF``: the
    file is a cache of limits; a crash loses at most a second of it)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=1.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS buckets"
                " (key_id TEXT PRIMARY KEY, tokens REAL NOT NULL, stamp REAL NOT NULL)"
            )
            conn.execute("CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, seen REAL NOT NULL)")
            self._conn = conn
        return self._conn

    def _run(self, body: Callable[[sqlite3.Connection, float], object]) -> object:
        try:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(conn, time.time())
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result
        except sqlite3.Error:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            raise

    def lease(self, leases: Sequence[Lease]) -> list[tuple[int, int]]:
        def body(conn: sqlite3.Connection, now: float) -> list[tuple[int, int]]:
            out = []
            for lease in leases:
                row = conn.execute("SELECT tokens, stamp FROM buckets WHERE key_id = ?", (lease.key_id,)).fetchone()
                tokens, stamp = row if row else (max(1.0, lease.rate), now)
                tokens, paid, granted = bucket_take(tokens, stamp, now, lease)
                conn.execute(
                    "INSERT OR REPLACE INTO buckets (key_id, tokens, stamp) VALUES (?, ?, ?)",
                    (lease.key_id, tokens, now),
                )
                out.append((paid, granted))
            return out

        return self._run(body)  # type: ignore[return-value]

    def heartbeat(self, worker: str) -> int:
        def body(conn: sqlite3.Connection, now: float) -> int:
            conn.execute("INSERT OR REPLACE INTO workers (id, seen) VALUES (?, ?)", (worker, now))
            conn.execute("DELETE FROM workers WHERE seen < ?", (now - WORKER_TTL_SECONDS,))
            conn.execute("DELETE FROM buckets WHERE stamp < ?", (now - 3600,))
            return int(conn.execute("SELECT count(*) FROM workers").fetchone()[0])

        return self._run(body)  # type: ignore[return-value]

    def after_fork(self) -> None:
        self._conn = None  # SQLite connections must not cross fork

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


#: The quota's token bucket in Redis, the same arithmetic as :func:`bucket_take` (Redis's clock).
_LEASE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, owed, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local capacity = math.max(1, rate)
local held = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(held[1]) or capacity
local stamp = tonumber(held[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - stamp) * rate)
tokens = math.max(-capacity, tokens - owed)
local granted = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'stamp', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], 3600000)
return granted
"""


class RedisQuota:
    """The quota of a cluster: a token bucket per key in Redis (a Lua script, atomic; all the
    keys of one sync in one pipelined round trip) and a heartbeat set of the live workers.

    NOTE: not the ``limits`` library's Redis strategies, studied and measured: a lease has to
    take *up to* n tokens, and its ``hit(cost=n)`` takes all n or none. One client asking its
    sliding window counter (Redis, R = 50, 5 s) for 11 every 2 ms got 0.70 of the rate (1 at a
    time: 0.94, but that is a round trip per request, which this module exists to avoid). Its
    moving window stores one entry per token. The same bucket as the other quotas, in Lua, got
    a hammered key 1.03 x R x T through the cluster (docs/guide/cluster.md).
    """

    WORKERS = "nl-address:workers"
    BUCKET = "nl-address:quota:"

    def __init__(self, url: str) -> None:
        self.url = url
        self._connect()

    def _connect(self) -> None:
        self._client = client_for(self.url)
        self._script = self._client.register_script(_LEASE_SCRIPT)

    def lease(self, leases: Sequence[Lease]) -> list[tuple[int, int]]:
        pipe = self._client.pipeline(transaction=False)
        for lease in leases:
            self._script(keys=[self.BUCKET + lease.key_id], args=[lease.rate, lease.owed, lease.want], client=pipe)
        granted = pipe.execute()
        return [(lease.owed, int(n)) for lease, n in zip(leases, granted, strict=True)]

    def heartbeat(self, worker: str) -> int:
        now = time.time()
        pipe = self._client.pipeline(transaction=True)
        pipe.zadd(self.WORKERS, {worker: now})
        pipe.zremrangebyscore(self.WORKERS, "-inf", now - WORKER_TTL_SECONDS)
        pipe.zcard(self.WORKERS)
        return int(pipe.execute()[-1])

    def after_fork(self) -> None:
        self._connect()

    def close(self) -> None:
        self._client.close()


class ClientBuckets:
    """A token bucket per client of a key (``KeyRecord.client_rate``; the demo key, issue 37), in
    this process only: ``r`` a second, a burst of one second, the arithmetic of :func:`bucket_take`.

    NOTE: not leased from the shared quota like a key's own limit: every client would be a key
    of the quota, and a client that changes its address at will would make every sync of every
    worker heavier, for every key. So a client whose requests reach several workers of a
    machine gets up to that many times ``r``; the key's own limit (the shared quota) bounds
    them all. At most :data:`MAX_CLIENTS` clients are kept, the least recent dropped first (a
    client dropped comes back with a full bucket).
    """

    def __init__(self, *, max_clients: int = MAX_CLIENTS, clock: Callable[[], float] = time.monotonic) -> None:
        self._max = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str, rate: float) -> bool:
        """Take one request of ``client`` at ``rate``; False if its bucket is empty."""
        now = self._clock()
        with self._lock:
            tokens, stamp = self._buckets.pop(client, (max(1.0, rate), now))
            tokens, _, granted = bucket_take(tokens, stamp, now, Lease(client, rate, 0, 1))
            self._buckets[client] = (tokens, now)
            if len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
        return granted == 1

    def after_fork(self) -> None:
        self._buckets = OrderedDict()
        self._lock = threading.Lock()


class Limiter:
    """A worker's side of the shared rate limit (see the module's docstring).

    Without a sync thread (an app built in-process) a request that finds no token syncs its
    key itself; under gunicorn, ``start`` (after fork) runs the thread and no request ever does.
    """

    def __init__(
        self,
        quota: Quota,
        *,
        sync_seconds: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        on_degraded: Callable[[bool], None] | None = None,
    ) -> None:
        self.quota = quota
        self.sync_seconds = sync_seconds
        self._clock = clock
        self._on_degraded = on_degraded
        #: the key states by key id (``server._gate`` takes tokens from them too)
        self.states: dict[str, KeyState] = {}
        self._sync_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.degraded = False
        self.degraded_reason = ""
        self.workers = 1  # sharing the quota, as last counted
        self._counted = False  # a heartbeat has counted them (until then, no reserve)
        self.worker_id = uuid.uuid4().hex
        self._next_heartbeat = -math.inf

    def hold_max(self, rate: float) -> int:
        """``H``: the most tokens of a key a worker holds."""
        return max(math.ceil(2 * rate * self.sync_seconds) + 1, self.reserve(rate))

    def reserve(self, rate: float) -> int:
        """``B``: what a worker holds at least of a key in use, its share of the key's burst (0
        until a heartbeat has counted the workers: one that does not know them takes none)."""
        return math.ceil(max(1.0, rate) / max(1, self.workers)) if self._counted else 0

    def credit(self, rate: float) -> int:
        """``C``: one interval at the key's full rate, never more than a second's."""
        return min(max(1, math.floor(rate)), math.ceil(rate * self.sync_seconds) + 1)

    def first_credit(self, rate: float) -> int:
        """What a worker new to a key serves before its first lease: ``max(C, B)``."""
        return max(self.credit(rate), self.reserve(rate))

    def ahead_max(self, rate: float) -> int:
        """The most a worker can serve of a key beyond what the quota granted it in a window:
        what it holds when the window starts and a credit, ``H + max(C, B)`` (module docstring)."""
        return self.hold_max(rate) + self.first_credit(rate)

    # -- the request path ---------------------------------------------------------------------

    def take_held(self, key_id: str, rate: float) -> bool:
        """Take one token of ``key_id`` this worker holds, if it is not degraded, holds one and
        has made the key's state for ``rate`` and no thread holds its lock (the sync's);
        otherwise return False having changed nothing. :meth:`throttle`'s common case, and
        ``server._gate``'s: a request that finds no token is left to ``throttle``."""
        state = self.states.get(key_id)
        return state is not None and state.take(rate, self.degraded)

    def throttle(self, key_id: str, rate: float) -> None:
        """Take one token of ``key_id`` or raise the 429 (never calls the quota under gunicorn)."""
        if self.take_held(key_id, rate):
            return
        state = self.states.get(key_id)
        if state is None or state.rate != rate:
            state = self.states[key_id] = KeyState(rate, self._clock(), self.first_credit(rate))
        if self._take(state):
            return
        if self._thread is None:  # in-process: sync this key now, then look again
            self.sync([key_id])
            if self._take(state):
                return
        raise rate_limited(rate)

    def _take(self, state: KeyState) -> bool:
        # PERF: no clock read unless degraded: a sync tells when a key was last used by its
        # ``seen`` (see there)
        with state.lock:
            state.seen += 1
            if self.degraded:  # alone: R / N of the rate, locally
                now = self._clock()
                share = state.rate / max(1, self.workers)
                cap = max(1.0, share)
                if state.tokens < cap:
                    state.tokens = min(cap, state.tokens + max(0.0, now - state.stamp) * share)
                state.stamp = now
            return state.spend()

    def charge(self, key_id: str, tokens: int) -> None:
        """Take ``tokens`` more of ``key_id`` after the fact (down to minus one second's worth)."""
        state = self.states.get(key_id)
        if state is not None and tokens > 0:
            with state.lock:
                state.tokens = max(-max(1.0, state.rate), state.tokens - tokens)

    # -- the background -----------------------------------------------------------------------

    def sync(self, only: Sequence[str] | None = None) -> bool:
        """Lease tokens for the keys that need some; return whether the quota answered."""
        with self._sync_lock:
            now = self._clock()
            asked: list[tuple[KeyState, Lease]] = []
            for key_id in list(self.states) if only is None else only:
                state = self.states.get(key_id)
                if state is None:
                    continue
                with state.lock:
                    if state.seen:  # used since the last sync (requests do not read the clock)
                        state.last = now
                    elif now - state.last > IDLE_SECONDS and state.owed == 0 and state.tokens >= 0:
                        del self.states[key_id]
                        continue
                    hold = self.hold_max(state.rate)
                    # twice the demand, and at least C: a key of rate 100,000 asked for 5,000
                    # requests a second, after a slower start, was refused some before; and at
                    # least the reserve B: a burst the bucket allows is served (module docstring)
                    least = self.first_credit(state.rate)
                    target = min(hold, max(2 * state.seen + 1, least)) if state.seen else 0
                    want = max(0, math.ceil(target - state.tokens))
                    state.seen = 0
                    if want or state.owed:
                        asked.append((state, Lease(key_id, state.rate, state.owed, want)))
            try:
                if now >= self._next_heartbeat:
                    self.workers = max(1, self.quota.heartbeat(self.worker_id))
                    self._counted = True
                    self._next_heartbeat = now + HEARTBEAT_SECONDS
                answers = self.quota.lease([lease for _, lease in asked]) if asked else []
            except Exception as exc:  # Redis down or slow, a broken file: go on alone
                self._set_degraded(True, f"{type(exc).__name__}: {exc}")
                return False
            for (state, _), (paid, granted) in zip(asked, answers, strict=True):
                with state.lock:
                    state.owed -= paid
                    state.tokens += granted
            if self.degraded:
                self._set_degraded(False, "")
            return True

    def _set_degraded(self, degraded: bool, reason: str) -> None:
        if degraded == self.degraded:
            self.degraded_reason = reason or self.degraded_reason
            return
        self.degraded, self.degraded_reason = degraded, reason
        now = self._clock()
        for state in list(self.states.values()):
            with state.lock:
                state.stamp = now
                if not degraded:  # tokens made up locally were never granted: no more than H
                    state.tokens = min(state.tokens, float(self.hold_max(state.rate)))
        if degraded:
            log.error(
                "rate limits: the shared quota is unreachable (%s); each worker limits alone at rate / %d",
                reason,
                self.workers,
            )
        else:
            log.warning("rate limits: the shared quota answers again")
        if self._on_degraded is not None:
            self._on_degraded(degraded)

    def start(self) -> None:
        """Sync from a daemon thread of this process every ``sync_seconds`` (after fork)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sync_forever, name="rate-limits", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the sync thread and close the quota's connections (tests)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        close = getattr(self.quota, "close", None)
        if close is not None:
            close()

    def _sync_forever(self) -> None:
        while not self._stop.wait(self.sync_seconds):
            try:
                self.sync()
            except Exception:  # never let the thread die
                log.exception("rate limit sync failed")

    def after_fork(self) -> None:
        """A forked worker: its own states, id, connections and thread."""
        self.states = {}
        self._sync_lock = threading.Lock()
        self._thread = None
        self.worker_id = uuid.uuid4().hex
        self._next_heartbeat = -math.inf
        self.workers, self._counted = 1, False
        self.quota.after_fork()
        self.start()
