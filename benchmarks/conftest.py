"""Fixtures of the benchmarks: the whole-country index, the public queries, the regression gate.

Run only when named (the default testpaths is `tests`). The regression pair (docs/operations.md, "Benchmarks
as a regression gate"; `make bench-baseline` and `make bench-compare`):

    ADDRESS_FULL_INDEX=DIR pytest benchmarks --benchmark-autosave          # save a baseline
    ADDRESS_FULL_INDEX=DIR pytest benchmarks --benchmark-compare \
        --benchmark-compare-fail=median:10%                                  # compare, gate

Use the `pytest` command (not `python -m pytest`, which puts the working directory first on
sys.path) so that `engine` is the installed package, editable or not. A compare run with no
saved baseline yet (the first run) saves itself as the baseline instead of stopping with a usage
error. Beside the median gate, `--benchmark-p99-fail=PCT` (default 50) fails a compare run
whose p99 per call (stored in each benchmark's extra_info) grew by more than PCT % over the
baseline's: pytest-benchmark cannot compare a percentile itself.

ENGINE_BENCH_SLOWDOWN=N makes every call of the full-query benchmarks run the search N times
(the typing prefixes are untouched): `ENGINE_BENCH_SLOWDOWN=2` must fail the gate, which shows
the gate works.

ADDRESS_FULL_INDEX is required: without it, or with an index that does not open, every benchmark
fails with the reason (never a silent skip). ADDRESS_EVAL_DIR (default ../shared/eval) holds
queries-public.jsonl. Every benchmark takes a `limit` parameter, so grouping by `param:limit`
works too; each has its group (full-queries, typing-prefixes, typo, focus, threads, batch),
stored in the saved JSON. At the end a summary prints p50 / p99 per call (which the
pytest-benchmark table lacks), the 1- vs 2-thread timings, the batch rows/s and the shared-pages
figures.
"""

from __future__ import annotations

import os

import pytest
from benchlib import LIMITS, WorkloadError, load_public, warm, workloads

_SUMMARY: list[str] = []
P99_FAIL_DEFAULT = 50.0


def pytest_addoption(parser):
    parser.addoption("--benchmark-p99-fail", type=float, default=P99_FAIL_DEFAULT, metavar="PCT",
                     help="with --benchmark-compare: fail when a benchmark's p99 per call grew by "
                          f"more than PCT %% over the baseline's (default {P99_FAIL_DEFAULT:g})")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """A compare run with no baseline saved yet saves itself as the baseline (pytest-benchmark
    would stop with '--benchmark-compare-fail requires valid --benchmark-compare')."""
    compare = config.getoption("benchmark_compare", None)
    if not compare:
        return
    from pytest_benchmark.logger import Logger
    from pytest_benchmark.utils import get_machine_id, get_tag, load_storage

    storage = load_storage(config.getoption("benchmark_storage"), logger=Logger(Logger.QUIET, config=config),
                           default_machine_id=get_machine_id(), netrc=config.getoption("benchmark_netrc"))
    if list(storage.load() if compare is True else storage.load(compare)):
        return
    config.option.benchmark_compare = None
    config.option.benchmark_compare_fail = None
    config.option.benchmark_autosave = config.option.benchmark_autosave or get_tag()
    _SUMMARY.append(f"baseline  none saved yet in {storage}: this run is saved as the baseline, "
                    "nothing compared")


def pytest_sessionfinish(session):
    """The p99 gate: each benchmark's p99 per call against the compared baseline's."""
    bs = getattr(session.config, "_benchmarksession", None)
    if bs is None or not bs.compared_mapping:
        return
    limit = session.config.getoption("benchmark_p99_fail") / 100
    for path, baseline in bs.compared_mapping.items():
        for bench in bs.benchmarks:
            before = baseline.get(bench.fullname, {}).get("extra_info", {}).get("p99_us")
            now = bench.extra_info.get("p99_us")
            if before and now:
                change = now / before - 1
                verdict = "FAIL" if change > limit else "ok"
                _SUMMARY.append(f"p99 gate  {verdict:4} {bench.name:42} {before:8.1f} -> {now:8.1f} us "
                                f"({change:+.0%}; limit +{limit:.0%}; baseline {path})")
                if change > limit:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _slowdown() -> int:
    raw = os.environ.get("ENGINE_BENCH_SLOWDOWN", "1")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise pytest.UsageError(f"ENGINE_BENCH_SLOWDOWN must be a whole number >= 1, not {raw!r}")
    return n


@pytest.fixture(scope="session")
def full_query_call(full_index):
    """What the full-query benchmarks time: `suggest_json`, run ENGINE_BENCH_SLOWDOWN times."""
    n = _slowdown()
    if n == 1:
        return full_index.suggest_json
    call = full_index.suggest_json
    _SUMMARY.append(f"slowdown  ENGINE_BENCH_SLOWDOWN={n}: every full-query call searches {n} times")

    def slowed(q, **kw):
        for _ in range(n - 1):
            call(q, **kw)
        return call(q, **kw)

    return slowed


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
