"""Shared fixtures: the real sample of the register, indexed once per test session for every
test directory (engine, server, browser)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/testdata.py, for every test module

from testdata import SAMPLE, build_sample_index  # noqa: E402

#: The fixtures that start a real process (gunicorn, redis-server): a test that uses one is
#: ``slow`` (pyproject.toml's markers), whatever its module says, so that `make check` starts none.
PROCESS_FIXTURES = frozenset({"live_server", "redis_server"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def sample_source() -> Path:
    if not SAMPLE.exists():
        pytest.fail(f"the sample data is missing: {SAMPLE} (set ADDRESS_DATA_DIR)")
    return SAMPLE


@pytest.fixture(scope="session")
def sample_index_dir(tmp_path_factory) -> Path:
    """The sample index, built once per session (the server's tests serve this one too)."""
    return build_sample_index(tmp_path_factory.mktemp("index") / "sample")


@pytest.fixture(scope="session")
def sample_index(sample_index_dir):
    import engine

    return engine.AddressIndex.open(sample_index_dir)
