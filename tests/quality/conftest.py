"""The whole-country index for the `full` tests: its path from ADDRESS_FULL_INDEX (make
test-full builds it once and sets it), opened once per run."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def full_index_path() -> str:
    path = os.environ.get("ADDRESS_FULL_INDEX")
    if not path:
        pytest.fail("set ADDRESS_FULL_INDEX to the whole-country index (make test-full does)")
    return path


@pytest.fixture(scope="session")
def full_index(full_index_path):
    import engine

    return engine.AddressIndex.open(full_index_path)
