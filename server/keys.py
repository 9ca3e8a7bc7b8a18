"""The API keys: their model and the two stores that hold them (SQLite, Redis).

Key format: ``nlk_<key id: 16 hex>_<secret: 43 url-safe base64 chars>``.

- The secret is 256 random bits from :mod:`secrets`; the key id (64 random bits) is not secret:
  it finds the row, like a user name, so the secret itself is only ever *compared*, never used
  as a lookup key.
- SECURITY: a store holds ``sha256(key)`` only. A fast hash is enough (and right for a
  per-request check) because the key has 256 bits of entropy: there is nothing to brute-force,
  unlike a password. ``server.auth`` compares the digest with :func:`hmac.compare_digest`
  (constant time).
- A key is *secret* (server to server; the default) or *publishable* (for web pages, served
  only to the origins it lists; see ``server.cors``). A secret key may list origins too, which
  allows those pages to use it. Files written before these columns existed are migrated by the
  next CLI write (``ALTER TABLE``); workers read old and new files alike.

The stores, which the CLI writes and every worker reads (``server.auth.Authenticator``):

- :class:`KeyStore`: an SQLite file (``ADDRESS_KEYSTORE``, by default ``keys.sqlite3``).
- :class:`RedisKeyStore` (``ADDRESS_KEYSTORE=redis://host:port/db``), shared by every replica of
  a cluster, with the same keys, rules, kinds and origins. Layout (``PREFIX`` = ``nl-address:``):

  - ``nl-address:keys``: a hash, key name -> JSON ``{key_id, sha256 (hex), rate, created_at,
    revoked_at, kind, origins}``. ``HSETNX`` makes names unique; a revocation is a ``WATCH``
    transaction, so two CLIs never both revoke, and nothing is ever deleted.
  - ``nl-address:keys:version``: a counter, incremented by every change, and published on the
    channel ``nl-address:keys:changed``.

  Workers subscribe to the channel and read the whole hash again on each message (a new key or
  a revocation reaches every worker of every replica within a few milliseconds), and read the
  counter every ``key_refresh_seconds`` (1 s) from their refresh thread, reading the hash again
  when it moved: a message lost while a connection was down cannot keep a revoked key alive
  longer than that. Neither is ever on a request's path.

``open_store(spec)`` opens the store a setting names; ``migrate(source, target)`` copies the keys
of one store into another (``keys migrate``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import orjson
import redis

log = logging.getLogger("server.keys")

KEY_PREFIX = "nlk_"
_KEY_ID_HEX = 16
#: A key as ``new_key`` makes it; group 1 is its key id.
KEY_SHAPE = re.compile(r"nlk_([0-9a-f]{16})_[A-Za-z0-9_-]{43}\Z")
NAME_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")

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


# -- Redis ------------------------------------------------------------------------------------

PREFIX = "nl-address:"
KEYS = PREFIX + "keys"
VERSION = PREFIX + "keys:version"
CHANNEL = PREFIX + "keys:changed"
#: PERF: a worker's Redis calls give up after this long (the request path never waits for one).
SOCKET_TIMEOUT = 0.5
#: The CLI's (a person waits for it; a busy Redis is no reason to fail a `keys revoke`).
CLI_TIMEOUT = 5.0
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def is_redis_url(spec: str) -> bool:
    return spec.startswith(REDIS_SCHEMES)


def client_for(url: str, **options: Any) -> redis.Redis:
    """A client with short timeouts (a stopped or slow Redis costs a thread 0.5 s, no more)."""
    options.setdefault("socket_timeout", SOCKET_TIMEOUT)
    options.setdefault("socket_connect_timeout", SOCKET_TIMEOUT)
    return redis.Redis.from_url(url, **options)


def _display(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    head, sep, tail = url.partition("@")
    if not sep:
        return url
    scheme, _, _ = head.partition("://")
    return f"{scheme}://***@{tail}"


def _encode(key: StoredKey) -> bytes:
    return orjson.dumps(
        {
            "key_id": key.key_id,
            "sha256": key.digest.hex(),
            "rate": key.rate,
            "created_at": key.created_at,
            "revoked_at": key.revoked_at,
            "kind": key.kind,
            "origins": list(key.origins),
        }
    )


def _decode(name: bytes | str, raw: bytes) -> StoredKey:
    data = orjson.loads(raw)
    return StoredKey(
        name.decode() if isinstance(name, bytes) else name,
        data["key_id"],
        bytes.fromhex(data["sha256"]),
        float(data["rate"]),
        data["created_at"],
        data.get("revoked_at"),
        data.get("kind", "secret"),
        tuple(data.get("origins", ())),
    )


class RedisKeyStore:
    """The key store in Redis; the same methods as :class:`KeyStore`."""

    kind_name = "redis"

    def __init__(self, url: str, *, timeout: float = CLI_TIMEOUT) -> None:
        self.url = url
        self.path = _display(url)  # what messages show (never the password)
        self.timeout = timeout
        self._client = client_for(url, socket_timeout=timeout, socket_connect_timeout=timeout)

    def __str__(self) -> str:
        return self.path

    def after_fork(self) -> None:
        """A forked worker: no connection shared with the master."""
        self._client = client_for(self.url, socket_timeout=self.timeout, socket_connect_timeout=self.timeout)

    def close(self) -> None:
        self._client.close()

    def _call(self, what: Callable[[redis.Redis], Any]) -> Any:
        try:
            return what(self._client)
        except (redis.RedisError, OSError) as exc:
            raise KeyStoreError(f"key store {self.path}: {exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:  # a value that is not ours
            raise KeyStoreError(f"key store {self.path}: unreadable entry: {exc}") from exc

    def _changed(self, pipe: redis.client.Pipeline) -> None:
        pipe.incr(VERSION)
        pipe.publish(CHANNEL, b"1")

    def exists(self) -> bool:
        """Whether any key was ever created (raises :class:`KeyStoreError` if unreachable)."""
        return bool(self._call(lambda r: r.exists(KEYS)))

    def version(self) -> int:
        """The change counter (raises :class:`KeyStoreError` if unreachable)."""
        return int(self._call(lambda r: r.get(VERSION)) or 0)

    def rows(self) -> list[StoredKey]:
        """Every key with its digest, oldest first."""

        def read(r: redis.Redis) -> list[StoredKey]:
            keys = [_decode(name, raw) for name, raw in r.hgetall(KEYS).items()]
            return sorted(keys, key=lambda k: (k.created_at, k.name))

        return self._call(read)

    def snapshot(self) -> tuple[int, dict[str, KeyRecord], bool]:
        """``(version, active keys by key id, missing)`` read in one transaction."""

        def read(r: redis.Redis) -> tuple[int, dict[str, KeyRecord], bool]:
            pipe = r.pipeline(transaction=True)
            pipe.get(VERSION)
            pipe.hgetall(KEYS)
            version, raw = pipe.execute()
            keys = [_decode(name, value) for name, value in raw.items()]
            active = {k.key_id: k.record() for k in keys if k.revoked_at is None}
            return int(version or 0), active, not raw

        return self._call(read)

    def active(self) -> dict[str, KeyRecord]:
        return self.snapshot()[1]

    def list(self) -> list[KeyInfo]:
        return [k.info() for k in self.rows()]

    def put(self, key: StoredKey) -> bool:
        """Add ``key`` as it is unless its name exists; return whether it was added."""

        def add(r: redis.Redis) -> bool:
            if not r.hsetnx(KEYS, key.name, _encode(key)):
                return False
            pipe = r.pipeline(transaction=True)
            self._changed(pipe)
            pipe.execute()
            return True

        return self._call(add)

    def create(self, name: str, rate: float, *, kind: str = "secret", origins: Iterable[str] = ()) -> str:
        """Add a key named ``name`` and return it (the only time it is ever shown)."""
        allowed = check_new_key(name, rate, kind, origins)
        key, key_id = new_key()
        stored = StoredKey(name, key_id, hash_key(key), float(rate), _now(), None, kind, tuple(allowed))
        if not self.put(stored):
            raise KeyStoreError(f"a key named {name!r} exists (revoked keys keep their name); pick another")
        return key

    def revoke(self, name: str, *, at: str | None = None) -> bool:
        """Revoke the active key ``name``; return False if there is none."""

        def revoke(pipe: redis.client.Pipeline) -> bool:
            raw = pipe.hget(KEYS, name)
            if raw is None:
                return False
            key = _decode(name, raw)
            if key.revoked_at is not None:
                return False
            revoked = StoredKey(
                key.name, key.key_id, key.digest, key.rate, key.created_at, at or _now(), key.kind, key.origins
            )
            pipe.multi()
            pipe.hset(KEYS, name, _encode(revoked))
            self._changed(pipe)
            return True

        return self._call(lambda r: r.transaction(revoke, KEYS, value_from_callable=True))

    def watch(self, on_change: Callable[[], None], stop: threading.Event) -> None:
        """Call ``on_change`` for every change message until ``stop`` is set (a thread's body).

        Reconnects by itself; while Redis is down the refresh thread's version check notices
        the outage, and once it is back a change is noticed by the first of the two.
        """
        while not stop.is_set():
            pubsub = None
            try:
                # no socket timeout: the subscription is idle most of the time
                pubsub = client_for(self.url, socket_timeout=None, health_check_interval=5).pubsub(
                    ignore_subscribe_messages=True
                )
                pubsub.subscribe(CHANNEL)
                on_change()  # anything published before the subscription
                while not stop.is_set():
                    if pubsub.get_message(timeout=1.0) is not None:
                        on_change()
            except (redis.RedisError, OSError) as exc:
                log.debug("key change subscription: %s", exc)
                stop.wait(0.5)
            finally:
                if pubsub is not None:
                    try:
                        pubsub.close()
                    except (redis.RedisError, OSError):
                        pass


def open_store(spec: str, *, timeout: float = CLI_TIMEOUT) -> KeyStore | RedisKeyStore:
    """The store ``spec`` names: a ``redis://`` (``rediss://``, ``unix://``) URL or a file."""
    return RedisKeyStore(spec, timeout=timeout) if is_redis_url(spec) else KeyStore(spec)


def migrate(source: KeyStore | RedisKeyStore, target: KeyStore | RedisKeyStore) -> dict[str, int]:
    """Copy every key of ``source`` into ``target`` (``keys migrate``); never changes the source.

    Idempotent: a key already there (same name, same key id) is left alone, except that a
    revocation in the source is carried over (the safe direction; an active key is never
    revived). A name that holds a *different* key in the target is reported, not overwritten.
    Returns the counts ``copied``, ``present``, ``revoked`` and ``conflicts``.
    """
    if not isinstance(target, RedisKeyStore):
        raise KeyStoreError("keys migrate copies into a Redis store: give --keystore redis://...")
    if source.kind_name == target.kind_name and str(source) == str(target):
        raise KeyStoreError("the source and the target are the same store")
    counts = {"copied": 0, "present": 0, "revoked": 0, "conflicts": 0}
    existing = {k.name: k for k in target.rows()}
    for key in source.rows():
        have = existing.get(key.name)
        if have is None and target.put(key):
            counts["copied"] += 1
            continue
        if have is None:  # created meanwhile under that name
            have = next(k for k in target.rows() if k.name == key.name)
        if have.key_id != key.key_id or have.digest != key.digest:
            log.warning("keys migrate: %r holds a different key in the target; left alone", key.name)
            counts["conflicts"] += 1
        elif key.revoked_at is not None and have.revoked_at is None:
            target.revoke(key.name, at=key.revoked_at)
            counts["revoked"] += 1
        else:
            counts["present"] += 1
    return counts
