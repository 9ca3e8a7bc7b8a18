"""Batch matching end to end (issue 12, part 6): `match_file` on a file of 1,000,000 messy lines
made at run time from the register (benchmarks/messy.py; ENGINE_BENCH_BATCH_ROWS changes the
count), CSV .zst in and out, all cores; the bar is >= 100,000 rows/s on the 2-core machine.

The round is one whole run (pedantic, rounds=1): its time / rows is the figure, stored with the
load average in extra_info and printed in the summary. Afterwards (untimed) every row's answer
is checked against a one-at-a-time loop over `suggest(text, limit=1)`: the same address, score
and quality, the same reason when there is none.
"""

from __future__ import annotations

import csv
import io
import os
import time
from pathlib import Path

import pytest
import zstandard
from messy import write_messy

from engine.match import OUTPUT_COLUMNS, QUALITIES, match_file, quality

pytestmark = pytest.mark.full

REGISTER = Path(os.environ.get("ADDRESS_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data")) \
    / "nl-addresses.csv.zst"


@pytest.fixture(scope="session")
def batch_rows() -> int:
    return int(os.environ.get("ENGINE_BENCH_BATCH_ROWS", "1000000"))


@pytest.fixture(scope="session")
def messy_file(tmp_path_factory, batch_rows) -> Path:
    if not REGISTER.exists():
        pytest.fail(f"the register is missing: {REGISTER} (set ADDRESS_DATA_DIR)", pytrace=False)
    return write_messy(REGISTER, batch_rows, tmp_path_factory.mktemp("batch") / "messy.csv.zst")


def _rows(path: Path) -> list[list[str]]:
    with zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True) as raw:
        return list(csv.reader(io.TextIOWrapper(raw, encoding="utf-8", newline="")))


@pytest.mark.benchmark(group="batch")
@pytest.mark.parametrize("limit", [1], ids=lambda v: f"limit={v}")
def test_match_file(benchmark, full_index, messy_file, batch_rows, summary, tmp_path, limit):
    out = tmp_path / "matched.csv.zst"
    cpu = []

    def run():
        c0 = time.process_time()
        counts = match_file(full_index, messy_file, "address", out, force=True, progress=False)
        cpu.append(time.process_time() - c0)
        return counts

    load_before = os.getloadavg()[0]
    counts = benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    wall = benchmark.stats.stats.data[0]
    rate = batch_rows / wall
    benchmark.extra_info.update(rows_per_s=round(rate), cpu_s=round(cpu[0], 2),
                                wall_s=round(wall, 2), load_avg_before=load_before,
                                load_avg_after=os.getloadavg()[0], cores=os.cpu_count(), **counts)
    summary.append(f"batch     {batch_rows:,} messy rows matched end to end in {wall:.2f} s: "
                   f"{rate:,.0f} rows/s (CPU {cpu[0]:.2f} s = {cpu[0] / wall:.2f} cores; load avg "
                   f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after; "
                   + " ".join(f"{k}={v}" for k, v in counts.items()) + ")")

    # the same answers as a one-at-a-time loop (untimed)
    source, matched = _rows(messy_file), _rows(out)
    assert len(matched) == len(source) == batch_rows + 1
    n = len(OUTPUT_COLUMNS)
    assert matched[0] == source[0] + list(OUTPUT_COLUMNS)
    differ = 0
    for src, got in zip(source[1:], matched[1:], strict=True):
        assert got[:-n] == src
        got = dict(zip(OUTPUT_COLUMNS, got[-n:], strict=True))
        text = src[1]
        try:
            hits = full_index.suggest(text, limit=1)
        except Exception:
            hits = []
        if not hits:
            differ += got["match_street"] != "" or got["match_reason"] == ""
            continue
        h = hits[0]
        want = (h.street, str(h.number), h.postcode, f"{h.score:.3f}", quality(h.found, h.score))
        differ += (got["match_street"], got["match_number"], got["match_postcode"], got["match_score"],
                   got["match_quality"]) != want
    summary.append(f"batch     answers equal to a suggest(text, limit=1) loop: {batch_rows - differ:,} "
                   f"of {batch_rows:,} rows")
    assert differ == 0
    assert set(counts) <= {"rows", *QUALITIES, "no_match", "empty", "too_long", "not_text", "missing"}
