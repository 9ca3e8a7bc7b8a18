"""The key store, its CLI, key checks, revocation and the token bucket."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from authenticators import authenticator
from testdata import REPO

from server.__main__ import main as cli
from server.auth import parse_bearer
from server.errors import ApiError
from server.keys import KeyStore, KeyStoreError
from server.limiter import Lease, bucket_take


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_cli_create_prints_the_key_alone_on_the_last_line(tmp_path):
    store = tmp_path / "keys.sqlite3"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "server",
            "--keystore",
            str(store),
            "keys",
            "create",
            "--name",
            "acme",
            "--rate",
            "7",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    key = out.splitlines()[-1]
    assert key.startswith("nlk_") and key == key.strip() and " " not in key
    assert len(key) == 4 + 16 + 1 + 43
    # stored only as a hash: neither the key nor its secret (which may itself hold "_")
    secret = key[len("nlk_") + 16 + 1 :]
    assert len(secret) == 43
    raw = store.read_bytes()
    assert key.encode() not in raw and secret.encode() not in raw
    record = KeyStore(str(store)).active()[key[4:20]]
    assert (record.name, record.rate) == ("acme", 7.0)


def test_cli_list_and_revoke(tmp_path, capsys):
    store = str(tmp_path / "keys.sqlite3")
    assert cli(["--keystore", store, "keys", "create", "--name", "one"]) == 0
    key = capsys.readouterr().out.splitlines()[-1]
    assert cli(["--keystore", store, "keys", "create", "--name", "two", "--rate", "2.5"]) == 0
    capsys.readouterr()
    assert cli(["--keystore", store, "keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert "one" in listing and "two" in listing and "2.5" in listing and "active" in listing
    assert key not in listing and "nlk_" not in listing
    assert cli(["--keystore", store, "keys", "revoke", "one"]) == 0
    assert cli(["--keystore", store, "keys", "revoke", "one"]) == 1
    assert cli(["--keystore", store, "keys", "revoke", "nobody"]) == 1
    capsys.readouterr()
    cli(["--keystore", store, "keys", "list"])
    assert "revoked" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["", "a b", "-x", "x" * 65, "naïve", "a/b"])
def test_cli_rejects_bad_names(tmp_path, capsys, name):
    assert cli(["--keystore", str(tmp_path / "k.sqlite3"), "keys", "create", f"--name={name}"]) == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("rate", ["0", "-1", "nan", "inf"])
def test_cli_rejects_bad_rates(tmp_path, rate):
    assert (
        cli(
            [
                "--keystore",
                str(tmp_path / "k.sqlite3"),
                "keys",
                "create",
                "--name",
                "a",
                "--rate",
                rate,
            ]
        )
        == 2
    )


def test_names_are_unique_even_after_revocation(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    store.create("a", 1)
    store.revoke("a")
    with pytest.raises(KeyStoreError, match="exists"):
        store.create("a", 1)


def test_keys_are_random(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    keys = {store.create(f"k{i}", 1) for i in range(20)}
    assert len(keys) == 20
    assert len({k[4:20] for k in keys}) == 20


def test_worker_never_creates_the_store(tmp_path):
    path = tmp_path / "missing.sqlite3"
    auth = authenticator(KeyStore(str(path)), refresh_seconds=1)
    assert not auth.ready
    assert not path.exists()


@pytest.mark.parametrize(
    ("header", "credentials"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BeArEr   abc  ", "abc"),
        (" Bearer abc", "abc"),
    ],
)
def test_parse_bearer(header, credentials):
    assert parse_bearer(header) == credentials


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer   ", "Basic abc", "Bearerabc"])
def test_parse_bearer_refuses(header):
    with pytest.raises(ApiError) as info:
        parse_bearer(header)
    assert info.value.status == 401
    assert info.value.headers == {"WWW-Authenticate": "Bearer"}


def test_revocation_reaches_a_worker_within_the_refresh_interval(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    key = store.create("a", 100)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=1.0, clock=clock)
    assert auth.authenticate(f"Bearer {key}").name == "a"
    store.revoke("a")
    clock.now += 0.5
    assert auth.authenticate(f"Bearer {key}").name == "a"  # cached copy, at most 1 s old
    clock.now += 0.6
    with pytest.raises(ApiError) as info:
        auth.authenticate(f"Bearer {key}")
    assert info.value.code == "unauthorized"


def test_new_keys_work_without_restart(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    store.create("first", 1)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=1.0, clock=clock)
    key = store.create("second", 1)
    clock.now += 1.0
    assert auth.authenticate(f"Bearer {key}").name == "second"


def test_unreadable_store_fails_closed_after_5_seconds(tmp_path):
    path = tmp_path / "k.sqlite3"
    store = KeyStore(str(path))
    key = store.create("a", 100)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=1.0, clock=clock)
    path.write_bytes(b"this is not a database")
    clock.now += 2
    assert auth.authenticate(f"Bearer {key}").name == "a"  # last good copy, 2 s old
    assert auth.ready
    clock.now += 3.5
    with pytest.raises(ApiError) as info:
        auth.authenticate(f"Bearer {key}")
    assert (info.value.status, info.value.code) == (503, "not_ready")
    assert not auth.ready


def test_store_locked_by_a_writer_keeps_the_last_copy(tmp_path):
    path = tmp_path / "k.sqlite3"
    store = KeyStore(str(path))
    key = store.create("a", 100)
    clock = Clock()
    auth = authenticator(store, refresh_seconds=1.0, clock=clock)
    writer = sqlite3.connect(path)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        clock.now += 1.5
        assert auth.authenticate(f"Bearer {key}").name == "a"
    finally:
        writer.rollback()
        writer.close()


def test_token_bucket_of_the_quota():
    one = Lease("k", 2.0, owed=0, want=1)
    tokens, paid, granted = bucket_take(2.0, 0.0, 0.0, one)
    assert (paid, granted) == (0, 1)
    tokens, _, granted = bucket_take(tokens, 0.0, 0.0, one)
    assert granted == 1
    tokens, _, granted = bucket_take(tokens, 0.0, 0.0, one)
    assert granted == 0
    tokens, _, granted = bucket_take(tokens, 0.0, 0.5, one)
    assert granted == 1  # one token back after 0.5 s
    tokens, _, granted = bucket_take(tokens, 0.5, 100.0, Lease("k", 2.0, owed=0, want=10))
    assert granted == 2  # never more than the capacity saved up
    tokens, paid, granted = bucket_take(tokens, 100.0, 100.0, Lease("k", 2.0, owed=1, want=1))
    assert (paid, granted, tokens) == (1, 0, -1.0)  # what is owed is paid first, into debt


def test_slow_rate_retry_after_rounds_up(tmp_path):
    store = KeyStore(str(tmp_path / "k.sqlite3"))
    store.create("trickle", 0.1)  # one request per 10 s
    record = next(iter(store.active().values()))
    clock = Clock()
    auth = authenticator(store, refresh_seconds=1.0, clock=clock)
    auth.throttle(record)
    with pytest.raises(ApiError) as info:
        auth.throttle(record)
    assert info.value.headers == {"Retry-After": "10"}
