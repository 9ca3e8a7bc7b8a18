"""Redis as the key store shared by every replica: ``ADDRESS_KEYSTORE=redis://host:port/db``.

The same keys as the SQLite store (``server.auth.KeyStore``), with the same rules, kinds and
origins; only ``sha256(key)`` is stored. Layout (``PREFIX`` = ``nl-address:``):

- ``nl-address:keys``: a hash, key name -> JSON ``{key_id, sha256 (hex), rate, created_at,
  revoked_at, kind, origins}``. ``HSETNX`` makes names unique; a revocation is a ``WATCH``
  transaction, so two CLIs never both revoke, and nothing is ever deleted.
- ``nl-address:keys:version``: a counter, incremented by every change, and published on the
  channel ``nl-address:keys:changed``.

Workers (``server.auth.Authenticator``) subscribe to the channel and read the whole hash again
on each message (a new key or a revocation reaches every worker of every replica within a few
milliseconds), and read the counter every ``key_refresh_seconds`` (1 s) from their refresh
thread, reading the hash again when it moved: a message lost while a connection was down cannot
keep a revoked key alive longer than that. Neither is ever on a request's path.

``migrate(source, target)`` copies the keys of one store into another (``keys migrate``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

import orjson
import redis

from server.auth import (
    KeyInfo,
    KeyRecord,
    KeyStore,
    KeyStoreError,
    StoredKey,
    _now,
    check_new_key,
    hash_key,
    new_key,
)

log = logging.getLogger("server.redis_store")

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
    """The key store in Redis; the same methods as ``server.auth.KeyStore``."""

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
