"""Latency of the other questions (issue 39, "Speed") on the whole-country index, in-process.

Every round is ONE call (pedantic mode, iterations=1, the arguments handed in by an untimed
setup), as in test_latency.py; p50 / p90 / p99 / max per call go to `extra_info` and the summary.

- lookup: `lookup_json` (the body of /v1/address/postcode) of 100,000 (postcode, number) pairs
  of real addresses drawn at random (bar: p50 <= 2 us, p99 <= 20 us); `lookup_ids` of the same.
- reverse: `reverse_json` at limit 5 of 100,000 random points inside the country: a random
  address's point moved by a normal offset of 500 m each way (where people are: the country's
  box holds much sea and Germany) (bar: p50 <= 5 us, p99 <= 30 us); and its answers, on
  10,000 of them, the same addresses in the same order and the same distances as a brute-force
  numpy search (every address near enough to be among the nearest, by (distance, row)).
- empty: a call that does nothing, through the same harness, as a reference (the harness's
  own share of every row).
- restricted: `suggest_json` of the public queries, each restricted to its target's
  municipality, against the same queries unrestricted in the same run (bar: p50 and p99
  within 1.5x).

The bars are printed beside the figures, not asserted (a busy machine is not a regression);
the brute-force comparison is asserted.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from benchlib import drawn_questions, summarize_ns

import engine

pytestmark = pytest.mark.full

N_POINTS = 100_000
N_CHECKED = 10_000
WARMUP_ROUNDS = 2000


_STATS: dict[str, dict] = {}   # label -> summarize_ns of its run, for the ratios


def _timed(benchmark, call, args: list[tuple], kwargs: dict, label: str, summary, bar: str = "") -> dict:
    it = itertools.cycle(args)

    def setup():
        return next(it), kwargs

    benchmark.extra_info.update(workload=label, calls=len(args))
    benchmark.pedantic(call, setup=setup, rounds=len(args), warmup_rounds=min(WARMUP_ROUNDS, len(args)),
                       iterations=1)
    s = summarize_ns([round(x * 1e9) for x in benchmark.stats.stats.data])
    benchmark.extra_info.update({k: round(v, 2) for k, v in s.items() if k != "calls"})
    summary.append(f"{label:11} {s['calls']:7d} calls  p50 {s['p50_us']:7.2f} µs  p90 {s['p90_us']:7.2f}"
                   f"  p99 {s['p99_us']:7.2f}  max {s['max_us']:8.1f}  {bar}")
    _STATS[label] = s
    return s


@pytest.fixture(scope="module")
def drawn(full_index) -> tuple[list[tuple[str, int]], list[tuple[float, float]]]:
    return drawn_questions(full_index, N_POINTS)


@pytest.fixture(scope="module")
def points(drawn) -> list[tuple[float, float]]:
    return drawn[1]


def _empty(*args, **kwargs) -> None:
    """A call that does nothing: what the harness itself costs a round."""


@pytest.mark.benchmark(group="questions")
def test_empty_lookup_call(benchmark, drawn, summary):
    """A reference row, first: an empty call through the same harness with the look-ups'
    arguments, so the reader sees the share of each row that is the timing's own (the
    pedantic round, the argument unpacking, the two clock reads)."""
    _timed(benchmark, _empty, drawn[0], {}, "empty", summary, "(the harness's own share)")


@pytest.mark.benchmark(group="questions")
def test_lookup(benchmark, full_index, drawn, summary):
    _timed(benchmark, full_index.lookup_json, drawn[0], {}, "lookup", summary, "(bar: p50 <= 2, p99 <= 20)")


@pytest.mark.benchmark(group="questions")
def test_lookup_ids(benchmark, full_index, drawn, summary):
    """The look-up without its JSON (the rows only), for comparison."""
    _timed(benchmark, full_index.lookup_ids, drawn[0], {}, "lookup_ids", summary)


@pytest.mark.benchmark(group="questions")
def test_reverse(benchmark, full_index, points, summary):
    _timed(benchmark, full_index.reverse_json, points, {"limit": 5}, "reverse", summary,
           "(bar: p50 <= 5, p99 <= 30)")


def test_reverse_is_the_brute_force_search(full_index, points):
    """The tree's answer against numpy's over every address that could be among the nearest:
    those in a box around the point as wide as the tree's fifth distance (any address nearer
    than that lies in it, so a nearer one the tree missed would show)."""
    a = full_index.arrays
    by_lat = np.argsort(a["a_lat"], kind="stable")
    lats = a["a_lat"][by_lat]
    m_per_udeg = engine.params.KM_PER_DEGREE * 1000 * engine.params.MICRODEGREE
    for lat, lon in points[:N_CHECKED]:
        got = full_index.reverse_ids(lat, lon, limit=5)
        assert len(got) == 5
        reach = got[-1][1] / m_per_udeg + 1   # microdegrees of latitude
        lo, hi = np.searchsorted(lats, [lat * 1e6 - reach, lat * 1e6 + reach + 1])
        rows = by_lat[lo:hi]
        dy = a["a_lat"][rows] - lat * 1e6
        dx = (a["a_lon"][rows] - lon * 1e6) * np.cos(np.radians(lat))
        d2 = dy * dy + dx * dx
        order = np.lexsort((rows, d2))[:5]
        assert [r for r, _ in got] == rows[order].tolist(), (lat, lon)
        want = [round(float(np.sqrt(d2[i])) * m_per_udeg, 1) for i in order]
        assert [m for _, m in got] == pytest.approx(want, abs=0.051), (lat, lon)


@pytest.fixture(scope="module")
def restricted_queries(full_index, public_rows) -> list[tuple[str, str]]:
    out = []
    for row in public_rows:
        t = row["target"]
        hits = full_index.lookup(t["postcode"], t["number"])
        if hits:
            out.append((row["q"], hits[0].municipality))
    return out


@pytest.mark.benchmark(group="restricted")
@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "municipality"])
def test_restricted_autocomplete(benchmark, full_index, restricted_queries, summary, restricted):
    """The public queries, each restricted to its target's municipality, and the same
    unrestricted: compare the two rows of the summary (bar: within 1.5x)."""
    if restricted:
        args = [(q, m) for q, m in restricted_queries]

        def call(q, m):
            return full_index.suggest_json(q, limit=5, municipality=m)
    else:
        args = [(q, None) for q, _ in restricted_queries]

        def call(q, m):
            return full_index.suggest_json(q, limit=5)
    label = "restricted" if restricted else "unrestr."
    s = _timed(benchmark, call, args, {}, label, summary)
    base = _STATS.get("unrestr.")
    if restricted and base:
        summary.append(f"restricted / unrestricted: p50 {s['p50_us'] / base['p50_us']:.2f}x, "
                       f"p99 {s['p99_us'] / base['p99_us']:.2f}x (bar: <= 1.5x each)")
