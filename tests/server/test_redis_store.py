"""Issue 15: Redis as the shared key store, on a real redis-server; and the rate limit shared by
every worker (SQLite file or Redis), not one per worker."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import falcon.testing
import pytest

from server.app import _build
from server.config import Config
from server.errors import ApiError
from server.keys import KeyStore, RedisKeyStore, migrate
from server.limiter import FileQuota, Limiter, RedisQuota

REPO = Path(__file__).resolve().parents[2]
QUERY = "country=NLD&q=damrak"

# every test here starts a real redis-server (or gunicorn): not in `make check`
pytestmark = pytest.mark.slow


def cli(*args: str, keystore: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", "--keystore", keystore, *args],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )


@pytest.fixture
def service(index):
    """``service(url, running=False, **config)``: the app on that store, and its parts, with the
    key reader and limiter threads started when ``running``; stopped (threads, connections)
    after the test."""
    made = []

    def make(url: str, *, running: bool = False, **config: object):
        app, svc = _build(index, Config(keystore_path=url, **config), asgi=False)
        made.append(svc)
        if running:
            svc.auth.start()
            svc.auth.limiter.start()
        return falcon.testing.TestClient(app), svc

    yield make
    for svc in made:
        svc.auth.stop()


@pytest.fixture
def redis_store(redis_server):
    store = RedisKeyStore(redis_server.url)
    yield store
    store.close()


def bearer(key: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **extra}


def test_cli_creates_lists_and_revokes_keys_in_redis(redis_server, redis_store, service):
    made = cli("keys", "create", "--name", "alice", "--rate", "50", keystore=redis_server.url)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip().splitlines()[-1]
    shop = cli("keys", "create", "--name", "shop", "--publishable", "--origin", "https://Shop.Example:443",
               keystore=redis_server.url)
    assert shop.returncode == 0, shop.stderr
    again = cli("keys", "create", "--name", "alice", keystore=redis_server.url)
    assert again.returncode == 2 and "exists" in again.stderr
    listed = cli("keys", "list", keystore=redis_server.url).stdout
    assert "alice" in listed and "shop" in listed and "https://shop.example" in listed and key not in listed
    # only the digest is stored
    raw = redis_store._client.hgetall("nl-address:keys")
    assert key.encode() not in b"".join(raw.values())

    client, svc = service(redis_server.url)
    assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(key)).status_code == 200
    shop_key = shop.stdout.strip().splitlines()[-1]
    ok = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(shop_key, Origin="https://shop.example"))
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://shop.example"
    other = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(shop_key, Origin="https://evil.example"))
    assert other.status_code == 403
    assert cli("keys", "revoke", "alice", keystore=redis_server.url).returncode == 0
    assert cli("keys", "revoke", "alice", keystore=redis_server.url).returncode == 1
    assert "revoked" in cli("keys", "list", keystore=redis_server.url).stdout
    svc.auth.refresh()
    assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(key)).status_code == 401


def test_migrate_copies_sqlite_to_redis_idempotently_and_leaves_the_source(
    redis_server, redis_store, tmp_path, service
):
    path = tmp_path / "keys.sqlite3"
    sqlite = KeyStore(str(path))
    alice = sqlite.create("alice", 10)
    sqlite.create("gone", 10)
    shop = sqlite.create("shop", 5, kind="publishable", origins=["https://shop.example"])
    sqlite.revoke("gone")
    before = path.read_bytes()
    first = cli("keys", "migrate", str(path), keystore=redis_server.url)
    assert first.returncode == 0, first.stderr
    assert "copied 3" in first.stdout
    second = cli("keys", "migrate", str(path), keystore=redis_server.url)
    assert second.returncode == 0 and "copied 0, already there 3" in second.stdout
    assert path.read_bytes() == before
    assert [(k.name, k.revoked_at is None) for k in redis_store.list()] == [
        ("alice", True), ("gone", False), ("shop", True)]
    # a revocation made in SQLite later is carried over; a key is never revived
    sqlite.revoke("alice")
    assert migrate(sqlite, redis_store)["revoked"] == 1
    # a different key under a taken name is reported, not overwritten
    other = KeyStore(str(tmp_path / "other.sqlite3"))
    other.create("shop", 1)
    clash = cli("keys", "migrate", str(tmp_path / "other.sqlite3"), keystore=redis_server.url)
    assert clash.returncode == 1 and "conflicts 1" in clash.stdout
    client, _ = service(redis_server.url)
    assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(alice)).status_code == 401
    ok = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(shop, Origin="https://shop.example"))
    assert ok.status_code == 200
    missing = cli("keys", "migrate", str(tmp_path / "nope.sqlite3"), keystore=redis_server.url)
    assert missing.returncode == 2 and "no SQLite key store" in missing.stderr


def test_new_and_revoked_keys_reach_a_worker_by_message_within_a_second(redis_server, redis_store, service):
    store = redis_store
    store.create("first", 100)
    client, svc = service(redis_server.url, key_refresh_seconds=4.0)  # the poll alone is too slow
    svc.auth.start()
    try:
        time.sleep(0.3)  # subscribed
        key = store.create("fresh", 100)
        start = time.monotonic()
        while client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(key)).status_code != 200:
            assert time.monotonic() - start < 1.0
            time.sleep(0.01)
        store.revoke("fresh")
        start = time.monotonic()
        while client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(key)).status_code != 401:
            assert time.monotonic() - start < 1.0
            time.sleep(0.01)
    finally:
        svc.auth.stop()


def test_redis_down_serves_known_keys_refuses_unknown_ones_and_recovers(redis_server, redis_store, service):
    store = redis_store
    known = store.create("known", 1e6)
    client, svc = service(redis_server.url, running=True)
    try:
        assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(known)).status_code == 200
        ready = client.simulate_get("/readyz")
        assert ready.status_code == 200 and ready.json["keystore"] == {"backend": "redis", "state": "ok"}
        redis_server.stop()
        time.sleep(2.0)
        for _ in range(20):
            assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(known)).status_code == 200
        stranger = bearer("nlk_" + "0" * 16 + "_" + "A" * 43)
        unknown = client.simulate_get("/v1/address", query_string=QUERY, headers=stranger)
        assert unknown.status_code == 503 and unknown.json["code"] == "not_ready"
        assert unknown.headers["retry-after"] == "5"
        ready = client.simulate_get("/readyz")
        assert ready.status_code == 200 and ready.json["keystore"]["state"] == "degraded"
        assert "address_shared_store_degraded 1.0" in client.simulate_get("/metrics").text
        redis_server.start()
        deadline = time.monotonic() + 5
        while client.simulate_get("/readyz").json["keystore"]["state"] != "ok":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        while "address_shared_store_degraded 0.0" not in client.simulate_get("/metrics").text:
            assert time.monotonic() < deadline + 2  # /metrics is up to 1 s old
            time.sleep(0.1)
        assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(known)).status_code == 200
        store.revoke("known")  # and changes reach the worker again
        deadline = time.monotonic() + 1
        while client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(known)).status_code != 401:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        svc.auth.stop()


def _hammer(limiters: list[Limiter], rate: float, seconds: float) -> int:
    """Every limiter (a worker) takes tokens as fast as it can for ``seconds``; return the total served."""
    served = [0] * len(limiters)
    stop = time.monotonic() + seconds

    def run(i: int) -> None:
        while time.monotonic() < stop:
            try:
                limiters[i].throttle("k", rate)
                served[i] += 1
            except ApiError:
                time.sleep(0.002)  # leave the GIL to the sync threads (one process plays 4 workers)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(limiters))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(served)


@pytest.mark.parametrize("quota", ["file", "redis"])
def test_a_key_rate_is_shared_by_all_workers(quota, tmp_path, redis_server):
    rate, seconds, workers = 50.0, 3.0, 4
    make = (lambda: FileQuota(str(tmp_path / "limits.sqlite3"))) if quota == "file" else (
        lambda: RedisQuota(redis_server.url))
    limiters = [Limiter(make(), sync_seconds=0.1) for _ in range(workers)]
    for limiter in limiters:
        limiter.start()
    try:
        served = _hammer(limiters, rate, seconds)
    finally:
        for limiter in limiters:
            limiter.stop()
    bound = rate * (seconds + 1) + workers * limiters[0].ahead_max(rate)  # server/limiter.py
    assert served <= bound
    assert served >= rate * seconds * 0.5  # and the key is served (the cluster test measures how well)
    assert limiters[0].workers == workers  # each counts the others (heartbeats)


def test_redis_quota_unreachable_limits_each_worker_to_its_share(redis_server, request):
    limiter = Limiter(RedisQuota(redis_server.url), sync_seconds=0.1)
    other = Limiter(RedisQuota(redis_server.url), sync_seconds=0.1)
    request.addfinalizer(limiter.stop)
    request.addfinalizer(other.stop)
    assert limiter.sync() and other.sync()
    time.sleep(1.1)  # the next heartbeat
    limiter.sync()
    assert limiter.workers == 2
    redis_server.stop()
    limiter.throttle("k", 20.0)  # on credit: owed to the quota
    assert not limiter.sync() and limiter.degraded
    served = _hammer([limiter], 20.0, 2.0)
    assert 20 / 2 * 2 <= served <= 20 / 2 * 2 + 10 + 3  # rate / workers, plus one bucket and the credit


def test_one_machine_limit_is_per_key_not_per_worker(live_server, tmp_path):
    """Two gunicorn workers share one key's rate (the SQLite file of the machine's limits)."""
    live = live_server(env={"ADDRESS_LIMITS_FILE": str(tmp_path / "limits.sqlite3")})
    key = KeyStore(str(live.keystore)).create("limited", 20)
    time.sleep(1.5)  # every worker has read the key
    import http.client

    seconds, statuses, pids = 3.0, [], set()
    stop = time.monotonic() + seconds

    def run() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
        while time.monotonic() < stop:
            conn.request("GET", "/v1/address?" + QUERY, headers=bearer(key))
            resp = conn.getresponse()
            resp.read()
            statuses.append(resp.status)
        conn.close()

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    del pids
    served = statuses.count(200)
    assert set(statuses) <= {200, 429}
    assert served <= 20 * (seconds + 1) + 2 * (5 + 3)  # not 2 x 20 a second
    assert served >= 20 * seconds * 0.8
    body = json.loads(live.get("/readyz", auth=False)[2])
    assert body["keystore"] == {"backend": "sqlite", "state": "ok"}


def test_a_frozen_redis_never_slows_a_known_key(redis_server, redis_store, service):
    """Redis that accepts connections and never answers (SIGSTOP): the request path never waits."""
    store = redis_store
    known = store.create("known", 1e6)
    client, svc = service(redis_server.url, running=True)
    try:
        assert client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(known)).status_code == 200
        redis_server.pause()
        slowest = 0.0
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            start = time.monotonic()
            status = client.simulate_get("/v1/address", query_string=QUERY, headers=bearer(known)).status_code
            slowest = max(slowest, time.monotonic() - start)
            assert status == 200
            time.sleep(0.01)
        assert slowest < 0.25  # the Redis timeout is 0.5 s: no request waited for one
        assert client.simulate_get("/readyz").json["keystore"]["state"] == "degraded"
        redis_server.resume()
        deadline = time.monotonic() + 5
        while client.simulate_get("/readyz").json["keystore"]["state"] != "ok":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        redis_server.resume()
        svc.auth.stop()
