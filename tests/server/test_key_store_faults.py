"""A key store that cannot be read (a directory, unreadable, locked) never gives a 500, never
stops a worker or the service, never slows an answer, and is forgotten once it is readable."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from authenticators import authenticator
from testdata import REPO

from server.auth import Authenticator
from server.errors import ApiError
from server.keys import KeyStore


def answer(auth: Authenticator, key: str) -> str:
    """The key's name, or the error code authenticating it gives."""
    try:
        return auth.authenticate(f"Bearer {key}").name
    except ApiError as exc:
        assert exc.code != "not_ready" or exc.headers == {"Retry-After": "5"}
        return exc.code


def test_a_directory_for_a_store_is_503_not_ready_then_recovers(tmp_path):
    path = tmp_path / "k.sqlite3"
    key = KeyStore(str(path)).create("a", 100)
    saved = path.read_bytes()
    path.unlink()
    path.mkdir()
    auth = authenticator(KeyStore(str(path)), refresh_seconds=0.0)  # does not raise
    assert answer(auth, key) == "not_ready"
    assert not auth.ready
    path.rmdir()
    path.write_bytes(saved)
    assert answer(auth, key) == "a"  # by itself, at the next read
    assert auth.ready


def test_the_app_answers_a_directory_store_with_503(index, tmp_path):
    import falcon.testing

    from server.app import create_app
    from server.config import Config

    path = tmp_path / "k.sqlite3"
    key = KeyStore(str(path)).create("a", 100)
    saved = path.read_bytes()
    path.unlink()
    path.mkdir()
    for asgi in (False, True):
        client = falcon.testing.TestClient(
            create_app(index, Config(keystore_path=str(path), key_refresh_seconds=0), asgi=asgi)
        )
        resp = client.simulate_get(
            "/v1/address", query_string="country=NLD&q=a", headers={"Authorization": f"Bearer {key}"}
        )
        assert (resp.status_code, resp.json["code"], resp.headers["retry-after"]) == (503, "not_ready", "5")
        assert client.simulate_get("/readyz").status_code == 503
    path.rmdir()
    path.write_bytes(saved)
    headers = {"Authorization": f"Bearer {key}"}
    assert client.simulate_get("/v1/address", query_string="country=NLD&q=a", headers=headers).status_code == 200


_AS_NOBODY = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, sys.argv[2])
    from server.auth import Authenticator
    from server.keys import KeyStore
    from server.limiter import ClientBuckets, Limiter, MemoryQuota
    from server.errors import ApiError
    if os.geteuid() == 0:  # become nobody: root reads every file
        os.setgid(65534); os.setgroups([]); os.setuid(65534)
    auth = Authenticator(KeyStore(sys.argv[1]), limiter=Limiter(MemoryQuota()), clients=ClientBuckets(),
                         refresh_seconds=0.0)
    for line in sys.stdin:
        try:
            print(auth.authenticate("Bearer " + line.strip()).name, flush=True)
        except ApiError as exc:
            print(exc.code, exc.status, (exc.headers or {}).get("Retry-After"), flush=True)
    """
)


def test_a_store_this_user_cannot_read_is_503_then_recovers():
    tmp = Path(tempfile.mkdtemp(prefix="keystore-"))
    try:
        os.chmod(tmp, 0o755)
        path = tmp / "k.sqlite3"
        key = KeyStore(str(path)).create("a", 100)  # mode 0600, owned by this user
        if os.geteuid() != 0:
            os.chmod(path, 0)
        with subprocess.Popen(
            [sys.executable, "-c", _AS_NOBODY, str(path), str(REPO)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as child:
            child.stdin.write(key + "\n")
            child.stdin.flush()
            assert child.stdout.readline().split() == ["not_ready", "503", "5"]
            os.chmod(path, 0o644)
            child.stdin.write(key + "\n")
            child.stdin.flush()
            assert child.stdout.readline().split() == ["a"]
            child.stdin.close()
            assert child.wait(timeout=30) == 0, child.stderr.read()
    finally:
        shutil.rmtree(tmp)


def block_reads(store: KeyStore) -> tuple[threading.Event, threading.Event]:
    """Make every read of ``store`` block, as behind another process's BEGIN EXCLUSIVE: the
    first event is set once a read is inside the store, and setting the second lets it go on."""
    blocked, release = threading.Event(), threading.Event()
    active = store.active

    def stuck_active():
        blocked.set()
        release.wait()
        return active()

    store.active = stuck_active
    return blocked, release


def test_a_request_never_waits_for_the_store(tmp_path):
    """With its reader thread running, a worker answers from the table it has, whatever the
    store is doing (here: blocked, as behind another process's BEGIN EXCLUSIVE)."""
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    key = store.create("a", 100)
    auth = authenticator(store, refresh_seconds=0.05)
    auth.start()
    blocked, release = block_reads(store)
    try:
        assert blocked.wait(5)  # the reader is inside the store now
        answers = []
        worker = threading.Thread(target=lambda: answers.extend(answer(auth, key) for _ in range(100)))
        worker.start()
        worker.join(timeout=5)
        assert answers == ["a"] * 100  # answered while the read is still blocked
    finally:
        release.set()
        auth.stop()


def test_the_reader_swaps_in_revocations(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    key = store.create("a", 100)
    auth = authenticator(store, refresh_seconds=0.05)
    auth.start()
    try:
        assert answer(auth, key) == "a"
        store.revoke("a")
        deadline = time.monotonic() + 5
        while answer(auth, key) != "unauthorized":
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        auth.stop()


@pytest.mark.slow
def test_gunicorn_survives_a_directory_store_and_a_hup(live_server):
    live = live_server()
    saved = live.keystore.read_bytes()
    live.keystore.unlink()
    live.keystore.mkdir()
    try:
        deadline = time.monotonic() + 15
        in_a_row = 0
        # new connections, so both workers (each one's last good table ages out 5 s after its
        # own last read: one may still answer for a moment after the other refuses)
        while in_a_row < 10:
            assert time.monotonic() < deadline
            status, headers, body = live.address("kerkstraat")
            ready = live.get("/readyz", auth=False)[0]
            in_a_row = in_a_row + 1 if (status, ready) == (503, 503) else 0
        assert (json.loads(body)["code"], headers["retry-after"]) == ("not_ready", "5")
        live.proc.send_signal(signal.SIGHUP)  # new workers boot with the directory
        time.sleep(3)
        assert live.proc.poll() is None, live.log.read_text()[-3000:]
        assert live.address("kerkstraat")[0] == 503
        assert live.get("/healthz", auth=False)[0] == 200
    finally:
        live.keystore.rmdir()
        live.keystore.write_bytes(saved)
    deadline = time.monotonic() + 5
    while live.address("kerkstraat")[0] != 200:  # recovers by itself
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert "Traceback" not in live.log.read_text()


@pytest.mark.slow
def test_gunicorn_answers_at_once_while_the_store_is_locked(live_server):
    live = live_server()
    writer = sqlite3.connect(live.keystore, timeout=1)
    writer.execute("BEGIN EXCLUSIVE")
    durations, statuses = [], []
    try:
        end = time.monotonic() + 4  # several refreshes of both workers
        while time.monotonic() < end:
            start = time.monotonic()
            statuses.append(live.address("kerkstraat")[0])
            durations.append(time.monotonic() - start)
    finally:
        writer.rollback()
        writer.close()
    assert set(statuses) == {200}
    # a refresh on the request path waited up to 0.5 s for the lock (the reader's sqlite busy
    # timeout; p99 0.49 s): each worker refreshes every second, so about 8 of these requests
    # took 0.4 s or more. NOTE: not a bound on one request's time: on a loaded machine (load
    # average 8-12) one request in a few hundred took 0.6 s for want of a core, no lock wait.
    waited = [round(d, 3) for d in durations if d >= 0.4]
    assert len(waited) <= 2, f"{len(waited)} of {len(durations)} requests took 0.4 s or more: {waited}"


class Clock:
    """A clock the test moves: a pause of the process is time passing with no thread running."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_pause_of_the_process_is_not_a_failing_store(tmp_path):
    """After the whole process was paused for longer than MAX_KEY_REFRESH_SECONDS (the reader
    thread had no chance to read either), the first requests are answered from the table, not
    refused with 503 as if the store could not be read; a store that fails is still refused."""
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    key = store.create("a", 100)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=4.0, clock=clock)  # the reader sleeps 4 s (real)
    auth.start()
    try:
        clock.now += 7.0  # the pause: 7 s pass, and the reader has not run since
        assert answer(auth, key) == "a"
        assert auth.ready
        store.path = str(tmp_path / "no-such-dir" / "k.sqlite3")  # now reads fail ...
        (tmp_path / "no-such-dir").mkdir()
        (tmp_path / "no-such-dir" / "k.sqlite3").mkdir()
        assert not auth.refresh()
        assert answer(auth, key) == "not_ready"  # ... and the old table is refused
        assert not auth.ready
    finally:
        auth.stop()


def test_a_reader_stuck_in_a_read_is_a_failing_store(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    key = store.create("a", 100)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=0.05, clock=clock)
    blocked, release = block_reads(store)
    auth.start()
    try:
        assert blocked.wait(5)
        assert answer(auth, key) == "a"  # a read under way, the table fresh enough
        clock.now += 6.0  # the read has been stuck for 6 s
        assert answer(auth, key) == "not_ready"
    finally:
        release.set()
        auth.stop()


@pytest.mark.slow
def test_gunicorn_paused_under_load_answers_every_request(live_server):
    """SIGSTOP every worker for 7 s while clients wait, then SIGCONT: no 503 (the soak on a
    loaded machine, and this test before the fix, had them)."""
    live = live_server()
    workers = [int(pid) for pid in Path(f"/proc/{live.proc.pid}/task/{live.proc.pid}/children").read_text().split()]
    assert workers
    statuses: list[int] = []
    stop = threading.Event()

    def client():
        while not stop.is_set():
            statuses.append(live.address("kerkstraat")[0])

    clients = [threading.Thread(target=client) for _ in range(4)]
    for c in clients:
        c.start()
    time.sleep(1)
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(7)
    for pid in workers:
        os.kill(pid, signal.SIGCONT)
    time.sleep(2)
    stop.set()
    for c in clients:
        c.join(timeout=30)
    assert len(statuses) > 20
    assert set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
