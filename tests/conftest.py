"""Shared fixtures: the real sample of the register, indexed once per test session for every
test directory (engine, server, browser)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/testdata.py, for every test module

from testdata import SAMPLE, build_sample_index  # noqa: E402


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
