"""Opening the whole-country index: time in fresh processes, and shared pages (issue 2, "Open":
open in <= 1 s; two processes that open the same index share its pages). Plain tests, not
benchmarks; their figures go to the summary at the end of the run."""

from __future__ import annotations

import pytest
from benchlib import index_size, open_times, shared_pages

pytestmark = pytest.mark.full

OPEN_RUNS = 5


def test_open_time(full_index, summary, full_index_dir):
    # full_index first: a clear failure if the index does not open at all
    t = open_times(full_index_dir, OPEN_RUNS)
    size = index_size(full_index_dir)
    summary.append(f"open      AddressIndex.open median {t['open_ms_median']:.1f} ms "
                   f"(min {t['open_ms_min']:.1f}, max {t['open_ms_max']:.1f}; {t['runs']} fresh "
                   f"processes), first query after it {t['first_query_ms_median']:.1f} ms; "
                   f"index {size['bytes'] / 2**20:.1f} MiB in {size['files']} files")
    assert t["open_ms_median"] <= 1000


def test_two_processes_share_index_pages(full_index, summary, full_index_dir):
    size_kb = index_size(full_index_dir)["bytes"] / 1024
    r = shared_pages(full_index_dir)
    alone, a, b = r["alone"], r["a"], r["b"]
    summary.append(
        f"memory    index mappings of child A alone: Rss {alone['index_rss_kb'] / 1024:.0f} MiB "
        f"Pss {alone['index_pss_kb'] / 1024:.0f} MiB; with child B up: "
        f"A Rss {a['index_rss_kb'] / 1024:.0f} Pss {a['index_pss_kb'] / 1024:.0f}, "
        f"B Rss {b['index_rss_kb'] / 1024:.0f} Pss {b['index_pss_kb'] / 1024:.0f} MiB "
        f"(whole process A Rss {a['total_rss_kb'] / 1024:.0f} Pss {a['total_pss_kb'] / 1024:.0f}"
        f", B Rss {b['total_rss_kb'] / 1024:.0f} Pss {b['total_pss_kb'] / 1024:.0f} MiB)")
    for child in (a, b):
        assert child["index_maps"] == r["touched_maps"] > 0
        # every page of the index is resident in each child ...
        assert child["index_rss_kb"] >= 0.95 * size_kb
        # ... and counted at most about half to each: the page-cache pages are shared
        assert child["index_pss_kb"] <= 0.55 * child["index_rss_kb"]
        assert child["index_private_kb"] <= 0.05 * child["index_rss_kb"]
