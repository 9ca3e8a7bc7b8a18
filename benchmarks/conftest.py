"""Fixtures of the latency benchmarks: the whole-country index and the public queries.

Run only when named (the default testpaths is `tests`):

    ADDRESS_FULL_INDEX=/path/to/index python -m pytest benchmarks --benchmark-group-by=param:limit

ADDRESS_FULL_INDEX is required: without it, or with an index that does not open, every benchmark
fails with the reason (never a silent skip). ADDRESS_EVAL_DIR (default ../shared/eval) holds
queries-public.jsonl. Every benchmark takes a `limit` parameter so that grouping by
`param:limit` works for all of them. At the end a summary prints p50 / p99 per call (which the
pytest-benchmark table lacks), the 1- vs 2-thread timings and the shared-pages figures.
"""

from __future__ import annotations

import os

import pytest
from benchlib import LIMITS, WorkloadError, load_public, warm, workloads

_SUMMARY: list[str] = []


@pytest.fixture(scope="session")
def full_index_dir() -> str:
    path = os.environ.get("ADDRESS_FULL_INDEX")
    if not path:
        pytest.fail("ADDRESS_FULL_INDEX is not set: point it at a whole-country index built by "
                    "`python -m engine build ../shared/data/nl-addresses.csv.zst DIR`",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def full_index(full_index_dir):
    import engine

    try:
        return engine.AddressIndex.open(full_index_dir)
    except engine.IndexOpenError as e:
        pytest.fail(f"ADDRESS_FULL_INDEX={full_index_dir} does not open: {e}", pytrace=False)


@pytest.fixture(scope="session")
def public_rows() -> list[dict]:
    try:
        return load_public()
    except WorkloadError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def workload(full_index, public_rows) -> dict[str, list[str]]:
    """The query lists (`all`, `typo`, `prefixes`), asked once at every limit beforehand so the
    benchmarks time a warm index, as a running server has."""
    lists = workloads(public_rows)
    warm(full_index, lists["all"], LIMITS)
    return lists


@pytest.fixture(scope="session")
def summary() -> list[str]:
    """Lines for the end-of-run summary."""
    return _SUMMARY


def pytest_terminal_summary(terminalreporter):
    if _SUMMARY:
        terminalreporter.section("address engine latency summary")
        for line in _SUMMARY:
            terminalreporter.write_line(line)
