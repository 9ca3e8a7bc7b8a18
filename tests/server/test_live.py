"""The service under real gunicorn: requests, HUP reload, revocation, schemathesis, shutdown.

One gunicorn (the default worker, 2 processes) on a free loopback port serves the sample index
through a ``current`` symlink for the whole module; the tests run in file order.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from liveserver import Live
from testdata import REPO

import engine

pytestmark = pytest.mark.slow


def cli(*args: str, keystore: Path) -> str:
    return subprocess.run(
        [sys.executable, "-m", "server", "--keystore", str(keystore), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture(scope="module")
def live(tmp_path_factory, index_dir):
    tmp = tmp_path_factory.mktemp("live")
    keystore = tmp / "keys.sqlite3"
    key = cli("keys", "create", "--name", "live", "--rate", "1e6", keystore=keystore).splitlines()[-1]
    victim = cli("keys", "create", "--name", "victim", "--rate", "1e6", keystore=keystore).splitlines()[-1]
    server = Live(tmp, index_dir, key=key)
    server.victim = victim
    yield server
    server.stop()


def test_serves_the_engines_bytes(live, index):
    for q, limit in [("kerkstraat 1", 1), ("2514KP 1", 5), ("s gravenhage", 10)]:
        status, headers, body = live.address(q, limit)
        assert status == 200
        assert headers["content-type"] == "application/json"
        assert body == index.suggest_json(q, limit=limit)


def test_errors_over_the_wire(live, index):
    status, headers, body = live.address("damrak", auth=False)
    assert (status, headers["www-authenticate"]) == (401, "Bearer")
    assert json.loads(body)["code"] == "unauthorized"
    for query, code in [
        ("country=NLD&q=" + "a" * 5_000, "query_too_long"),  # the request line limit is 8190
        ("country=NLD&q=%FF", "invalid_parameter"),
        ("country=NLD&q=a&limit=05", "invalid_parameter"),
        ("country=NLD&q=a&q=b", "invalid_parameter"),
        ("country=NLD&q=%00", "invalid_parameter"),
    ]:
        status, headers, body = live.get("/v1/address?" + query)
        assert (status, headers["content-type"]) == (400, "application/problem+json")
        assert json.loads(body)["code"] == code
    status, headers, _ = live.get("/nowhere")
    assert status == 404
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
    conn.request("DELETE", "/v1/address")
    resp = conn.getresponse()
    assert (resp.status, resp.getheader("allow")) == (405, "GET, HEAD")
    conn.close()


def test_raw_bytes_the_http_parser_refuses_are_400_not_500(live):
    for line in [b"GET /v1/address?country=NLD&q=\xff HTTP/1.1", b"GET /v1/a\x00 HTTP/1.1"]:
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as s:
            s.sendall(line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert s.recv(64).startswith(b"HTTP/1.1 400 ")


def test_metrics_add_up_all_workers(live):
    def count() -> float:
        text = live.get("/metrics", auth=False)[2].decode()
        prefix = 'address_api_key_requests_total{key="live",status="200"} '
        return sum(float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix))

    def settled() -> float:
        # Workers add their requests to the shared metrics once a second (FLUSH_SECONDS), and
        # each worker keeps its rendering for RENDER_SECONDS, so one scrape may come from a
        # worker whose text is a moment old: the total, which only grows, is the largest seen
        # once two scrapes 1.5 s apart agree (a single scrape after a fixed wait, under load,
        # once saw 26 of 43).
        last, deadline = -1.0, time.monotonic() + 20
        while time.monotonic() < deadline:
            now = max(count() for _ in range(4))
            if now == last:
                return now
            last = now
            time.sleep(1.5)
        return last

    before = settled()
    for _ in range(40):  # new connections: both workers answer some
        assert live.address("kerkstraat")[0] == 200
    assert settled() == before + 40
    text = live.get("/metrics", auth=False)[2].decode()
    assert "address_index_age_seconds" in text
    assert live.key not in text


class Asker(threading.Thread):
    """Keeps asking, each request on a new connection, until stopped.

    A request fails if it gets anything but a 200, including a refused or reset connection:
    no retries (see server/workers.py for why a reload resets no connection).
    """

    def __init__(self, live: Live) -> None:
        super().__init__(daemon=True)
        self.live = live
        self.stop = threading.Event()
        self.ok = 0
        self.failures: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                status = self.live.address("kerkstraat 1", 5)[0]
            except (OSError, http.client.HTTPException) as exc:
                self.failures.append(repr(exc))
                continue
            if status == 200:
                self.ok += 1
            else:
                self.failures.append(f"status {status}")


class KeepAliveAsker(Asker):
    """Keeps asking on one kept-alive connection (reopened only after the server says
    `Connection: close`), as browsers, wrk and connection pools do: a reload must not reset it."""

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.live.port, timeout=10)
        path = "/v1/address?country=NLD&q=kerkstraat+1&limit=5"
        headers = {"Authorization": f"Bearer {self.live.key}"}
        while not self.stop.is_set():
            try:
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                resp.read()
            except (OSError, http.client.HTTPException) as exc:
                self.failures.append(repr(exc))
                conn.close()
                continue
            if resp.status == 200:
                self.ok += 1
            else:
                self.failures.append(f"status {resp.status}")
        conn.close()


def test_hup_switches_to_a_new_index_with_no_failed_request(live, tmp_path_factory, index_builder):
    build_index = index_builder
    new_dir = build_index(tmp_path_factory.mktemp("indexes") / "sample-2")
    new_built = engine.AddressIndex.open(new_dir).manifest["built_at"]
    old_built = json.loads(live.get("/readyz", auth=False)[2])["index"]["built_at"]
    if new_built == old_built:  # built within the same second: make them distinguishable
        time.sleep(1.1)
        shutil.rmtree(new_dir)
        new_dir = build_index(new_dir)
        new_built = engine.AddressIndex.open(new_dir).manifest["built_at"]

    askers = [Asker(live) for _ in range(2)] + [KeepAliveAsker(live) for _ in range(4)]
    for a in askers:
        a.start()
    time.sleep(0.5)
    out = cli("switch-index", str(new_dir), "--link", str(live.link), keystore=live.keystore)
    assert str(new_dir) in out
    live.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30
    seen_new = 0
    while seen_new < 20:  # 20 answers in a row from the new index: every worker switched
        assert time.monotonic() < deadline, "the new index was not served within 30 s"
        ready = json.loads(live.get("/readyz", auth=False)[2])
        seen_new = seen_new + 1 if ready["index"]["built_at"] == new_built else 0
        time.sleep(0.05)
    time.sleep(0.5)
    for a in askers:
        a.stop.set()
    for a in askers:
        a.join(timeout=15)
    ok = sum(a.ok for a in askers)
    failures = [f for a in askers for f in a.failures]
    print(f"HUP: {ok} requests answered, {len(failures)} failed")
    assert failures == []
    assert ok > 100
    assert live.proc.poll() is None


def test_hup_to_a_broken_index_keeps_serving_the_current_one(live):
    before = json.loads(live.get("/readyz", auth=False)[2])["index"]["built_at"]
    target = os.path.realpath(live.link)
    live.link.unlink()
    live.link.symlink_to(live.tmp / "no-such-index")
    try:
        live.proc.send_signal(signal.SIGHUP)
        time.sleep(3)  # new workers have started and the old ones are gone
        assert live.proc.poll() is None
        status, _, body = live.get("/readyz", auth=False)
        assert (status, json.loads(body)["index"]["built_at"]) == (200, before)
        assert live.address("kerkstraat")[0] == 200
        assert "no index at" in live.log.read_text()
    finally:
        live.link.unlink()
        live.link.symlink_to(target)


def test_revoked_key_is_refused_within_5_seconds(live):
    assert live.address("kerkstraat", auth=live.victim)[0] == 200
    cli("keys", "revoke", "victim", keystore=live.keystore)
    revoked = time.monotonic()
    refused_in_a_row = 0
    while refused_in_a_row < 20:  # 20 answers in a row on new connections: both workers
        elapsed = time.monotonic() - revoked
        assert elapsed < 5.0, "a worker still accepted the revoked key after 5 s"
        status = live.address("kerkstraat", auth=live.victim)[0]
        refused_in_a_row = refused_in_a_row + 1 if status == 401 else 0
    print(f"revoked key refused everywhere {elapsed:.2f} s after `keys revoke`")
    assert live.address("kerkstraat")[0] == 200  # other keys unaffected


def test_a_key_works_as_soon_as_keys_create_returns(live):
    """The README's `KEY=$(python -m server keys create ... | tail -n1); curl ...`: the printed
    key answered 401 for up to a second (the workers read the store once a second); and a key is
    refused everywhere when `keys revoke` returns. Each request a new connection: both workers;
    three keys, so that no lucky moment of the workers' reads passes it."""
    for name in ("at-once-1", "at-once-2", "at-once-3"):
        key = cli("keys", "create", "--name", name, "--rate", "1e6", keystore=live.keystore).splitlines()[-1]
        assert [live.address("kerkstraat", auth=key)[0] for _ in range(10)] == [200] * 10
        cli("keys", "revoke", name, keystore=live.keystore)
        assert [live.address("kerkstraat", auth=key)[0] for _ in range(10)] == [401] * 10


def test_schemathesis_finds_no_server_error_or_schema_violation(live):
    """The live server against its own /openapi.json: every check schemathesis has."""
    # NOTE: the interpreter's own scripts first: a venv that is not activated is not on PATH
    here = os.path.dirname(sys.executable)
    st = shutil.which("schemathesis", path=here) or shutil.which("schemathesis")
    assert st is not None, "schemathesis is not installed (pip install -e .[test])"
    result = subprocess.run(
        [
            st,
            "--config-file",
            str(REPO / "tests" / "server" / "schemathesis.toml"),
            "run",
            f"http://127.0.0.1:{live.port}/openapi.json",
            "--header",
            f"Authorization: Bearer {live.key}",
            "--checks",
            "all",
            "--max-examples",
            "100",
            "--seed",
            "20261122",
            "--request-timeout",
            "10",
        ],
        cwd=live.tmp,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_stops_cleanly_on_term(live):
    live.proc.send_signal(signal.SIGTERM)
    assert live.proc.wait(timeout=60) == 0
    log = live.log.read_text()
    assert "Traceback" not in log, log[-5000:]
    assert live.key not in log

