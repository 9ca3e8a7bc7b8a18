"""Latency of `AddressIndex.suggest_json` on the whole-country index (issues 2 and 4, "Speed").

Every benchmark round is ONE `suggest_json` call on the next query of a list (pedantic mode,
iterations=1, the query handed in by an untimed setup), so the table's median is per call; the
rounds walk the list exactly once. p50 / p90 / p99 / max per call come from the same round
timings and are stored in `extra_info` (and printed in the summary at the end).

Lists (benchlib.workloads): `full` = every public query as typed in full; `prefixes` = the
typing prefixes the evaluator's keystroke simulation asks; `typo` = the queries of form `typo`;
`all` = full queries and prefixes in keystroke order (the focus benchmark).

Each benchmark has its group (stored in the saved JSON): full-queries, typing-prefixes (each at
limit 1, 5, 10), typo, focus, threads; test_batch.py adds batch.
"""

from __future__ import annotations

import itertools
import os
import statistics

import pytest
from benchlib import LIMITS, run_split, run_split_control, summarize_ns

pytestmark = pytest.mark.full

WARMUP_ROUNDS = 500
GIL_BATCH = 4000
GIL_ROUNDS = 15


def _per_call(benchmark, index, queries: list[str], limit: int, label: str, summary, call=None,
              **extra) -> None:
    it = itertools.cycle(queries)
    kwargs = {"limit": limit, **extra}

    def setup():
        return (next(it),), kwargs

    benchmark.extra_info.update(workload=label, calls=len(queries), distinct=len(set(queries)))
    benchmark.pedantic(call or index.suggest_json, setup=setup, rounds=len(queries),
                       warmup_rounds=min(WARMUP_ROUNDS, len(queries)), iterations=1)
    data = benchmark.stats.stats.data
    assert len(data) == len(queries)
    s = summarize_ns([round(x * 1e9) for x in data])
    benchmark.extra_info.update({k: round(v, 2) for k, v in s.items() if k != "calls"})
    summary.append(f"{label:9} limit={limit:<3} {s['calls']:7d} calls  p50 {s['p50_us']:7.1f} µs"
                   f"  p90 {s['p90_us']:7.1f}  p99 {s['p99_us']:7.1f}  max {s['max_us']:8.1f}")


@pytest.mark.benchmark(group="full-queries")
@pytest.mark.parametrize("limit", LIMITS, ids=lambda v: f"limit={v}")
def test_full_queries(benchmark, full_index, workload, summary, limit, full_query_call):
    """The public queries as typed in full, at limit 1, 5 and 10 (`full_query_call`: the call
    a deliberate ENGINE_BENCH_SLOWDOWN slows, conftest.py)."""
    _per_call(benchmark, full_index, workload["full"], limit, "full", summary, call=full_query_call)


@pytest.mark.benchmark(group="typing-prefixes")
@pytest.mark.parametrize("limit", LIMITS, ids=lambda v: f"limit={v}")
def test_typing_prefixes(benchmark, full_index, workload, summary, limit):
    """The typing prefixes (short, open input: the widest candidate ranges), at each limit."""
    _per_call(benchmark, full_index, workload["prefixes"], limit, "prefixes", summary)


@pytest.mark.benchmark(group="typo")
@pytest.mark.parametrize("limit", [5], ids=lambda v: f"limit={v}")
def test_suggest_json_typo(benchmark, full_index, workload, summary, limit):
    """The `typo` form queries only (the deletion-neighbourhood path)."""
    _per_call(benchmark, full_index, workload["typo"], limit, "typo", summary)


@pytest.mark.benchmark(group="focus")
@pytest.mark.parametrize("limit", [5], ids=lambda v: f"limit={v}")
def test_suggest_json_focus(benchmark, full_index, workload, summary, limit):
    """All public queries + typing prefixes with a focus point (Utrecht centre): the ranking
    follows the distance, so the stored answers and the prior order help less."""
    _per_call(benchmark, full_index, workload["all"], limit, "focus", summary, lat=52.0907, lon=5.1214)


@pytest.mark.benchmark(group="threads")
@pytest.mark.parametrize("limit", [5], ids=lambda v: f"limit={v}")
def test_gil_released(benchmark, full_index, workload, summary, limit):
    """The same batch of GIL_BATCH queries in 1 thread vs dealt over 2 threads (pandas asv
    `gil.py` style). The benchmarked round is the 2-thread run; the untimed setup before each
    round runs the 1-thread run of the same batch and a GIL-bound control (`sum(range(..))`) in
    1 and 2 threads, so all see the same machine noise. Holding the GIL caps the speed-up at
    ~1 (the control shows where); releasing it lets it approach 2 when two cores are free.
    CPU/wall of the 2-thread run tells how much of two cores the run actually got."""
    queries = workload["all"]
    batch = queries[:: max(1, len(queries) // GIL_BATCH)][:GIL_BATCH]
    n_control = len(batch) * 5
    one, two, c_one, c_two = [], [], [], []

    def setup():
        one.append(run_split(full_index, batch, 1, limit))
        c_one.append(run_split_control(n_control, 1))
        c_two.append(run_split_control(n_control, 2))

    def two_threads():
        two.append(run_split(full_index, batch, 2, limit))

    benchmark.pedantic(two_threads, setup=setup, rounds=GIL_ROUNDS, warmup_rounds=1)

    def med(runs, i=0):
        return statistics.median(r[i] for r in runs[1:])  # [0] is the warm-up round

    t1, t2 = med(one), med(two)
    speedup, control = t1 / t2, med(c_one) / med(c_two)
    cpu_per_wall = statistics.median(r[1] / r[0] for r in two[1:])
    benchmark.extra_info.update(
        batch=len(batch), threads_1_ms=round(t1 * 1e3, 2), threads_2_ms=round(t2 * 1e3, 2),
        speedup=round(speedup, 3), threads_1_qps=round(len(batch) / t1),
        threads_2_qps=round(len(batch) / t2), cpu_per_wall_2_threads=round(cpu_per_wall, 3),
        gil_bound_control_speedup=round(control, 3), load_avg=os.getloadavg()[0])
    summary.append(f"GIL       limit={limit:<3} batch {len(batch)}: 1 thread {t1 * 1e3:.1f} ms, "
                   f"2 threads {t2 * 1e3:.1f} ms, speed-up {speedup:.2f}x, CPU/wall "
                   f"{cpu_per_wall:.2f} (GIL-bound control {control:.2f}x; median of "
                   f"{len(one) - 1} interleaved runs; load avg {os.getloadavg()[0]:.2f})")
