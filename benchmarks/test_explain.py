"""Cost of saying how a hit matched (engine.explain) on the whole-country index, per hit.

The hits are those of the public queries and their typing prefixes at limit 5, explained in the
order they come. Each round is ONE call on the next hit (the query searched again and the hit
read from its reading: engine/_explain.pxi); p50 / p99 per hit are printed in the summary. The
service's highlight=true writes the highlights of a whole answer with its search instead
(`suggest_json(highlight=True)`: no second search).

    ADDRESS_FULL_INDEX=indexes/nl python -m pytest benchmarks/test_explain.py
"""

from __future__ import annotations

import itertools

import pytest
from benchlib import summarize_ns

from engine.explain import explain, highlights

pytestmark = pytest.mark.full

PAIRS = 20000       # (query, hit) pairs timed


@pytest.fixture(scope="module")
def pairs(full_index, workload) -> list[tuple[str, int]]:
    out = []
    for q in workload["all"]:
        out.extend((q, hit.address_id) for hit in full_index.suggest(q, limit=5))
        if len(out) >= PAIRS:
            break
    return out[:PAIRS]


@pytest.mark.parametrize("func", [explain, highlights], ids=lambda f: f.__name__)
@pytest.mark.parametrize("limit", [5], ids=lambda v: f"limit={v}")
def test_explain_per_hit(benchmark, full_index, pairs, summary, func, limit):
    """One hit explained (or its highlights computed) per round."""
    it = itertools.cycle(pairs)

    def setup():
        q, hit = next(it)
        return (full_index, q, hit), {}

    benchmark.extra_info.update(workload="all", calls=len(pairs))
    benchmark.pedantic(func, setup=setup, rounds=len(pairs), iterations=1)
    s = summarize_ns([round(x * 1e9) for x in benchmark.stats.stats.data])
    benchmark.extra_info.update({k: round(v, 2) for k, v in s.items() if k != "calls"})
    summary.append(f"{func.__name__:10} per hit {s['calls']:7d} calls  p50 {s['p50_us']:7.1f} µs"
                   f"  p90 {s['p90_us']:7.1f}  p99 {s['p99_us']:7.1f}  max {s['max_us']:8.1f}")
