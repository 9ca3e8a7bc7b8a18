"""Fixtures of the server tests: a real index built once per session from the sample data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest
from testdata import build_sample_index  # tests/conftest.py builds the sample index once

import engine
from server.app import create_app
from server.config import Config
from server.keys import KeyStore


@pytest.fixture(scope="session")
def index_builder():
    """The sample index's build itself, for tests that need a second index."""
    return build_sample_index


@pytest.fixture(scope="session")
def index_dir(sample_index_dir: Path) -> Path:
    """The sample index, the one the engine's tests read (tests/conftest.py)."""
    return sample_index_dir


@pytest.fixture(scope="session")
def index(index_dir: Path) -> engine.AddressIndex:
    return engine.AddressIndex.open(index_dir)


class Keys:
    """A key store with a few keys, and the keys themselves."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.store = KeyStore(self.path)
        self.alice = self.store.create("alice", 1e6)  # practically unlimited
        self.slow = self.store.create("slow", 2)  # two requests, then 429


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """One key store for the session (tests that revoke add their own key to it)."""
    return Keys(tmp_path_factory.mktemp("keys") / "keys.sqlite3")


@pytest.fixture(params=["wsgi", "asgi"])
def flavour(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def app_factory(index: engine.AddressIndex, keys: Keys, flavour: str):
    def make(**config: object) -> falcon.testing.TestClient:
        app = create_app(index, Config(keystore_path=keys.path, **config), asgi=flavour == "asgi")
        return falcon.testing.TestClient(app)

    return make


@pytest.fixture
def client(app_factory) -> falcon.testing.TestClient:
    """The service (WSGI and ASGI in turn) through falcon.testing."""
    return app_factory()


@pytest.fixture
def auth(keys: Keys) -> dict[str, str]:
    return {"Authorization": f"Bearer {keys.alice}"}


@pytest.fixture
def get(client: falcon.testing.TestClient, auth: dict[str, str]):
    """GET /v1/address with a raw query string and alice's key."""

    def do(query: str, headers: dict[str, str] | None = None, path: str = "/v1/address"):
        return client.simulate_get(path, query_string=query, headers=auth if headers is None else headers)

    return do


@pytest.fixture(autouse=True)
def _no_multiprocess_metrics(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # In-process tests expose the app's own registry; the live server test uses the real thing.
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    yield


@pytest.fixture
def live_server(tmp_path: Path, index_dir: Path):
    """Start a real gunicorn (see liveserver.py): ``live_server(env={...})``; stopped after the
    test. Each gets its own key store with one key (``.key``, named ``live``) and directory."""
    from liveserver import Live

    servers = []

    def start(*, env: dict[str, str] | None = None, index: Path | None = None, **kw: object) -> Live:
        tmp = tmp_path / f"live-{len(servers)}"
        tmp.mkdir()
        key = KeyStore(str(tmp / "keys.sqlite3")).create("live", 1e6)
        servers.append(Live(tmp, index or index_dir, key=key, env=env, **kw))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def redis_server(tmp_path: Path):
    """A real redis-server on a free loopback port (``.url``), stopped after the test."""
    from redisserver import RedisServer

    server = RedisServer(tmp_path)
    yield server
    server.stop()
