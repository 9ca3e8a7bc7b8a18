"""The slips of each token typed whole, stored by the build (`_core.slip_lists`): a search that
reads them answers exactly as one that looks them up in the typo table, and an index whose
stored slips do not fit its tokens does not open."""

from __future__ import annotations

import random

import numpy as np
import pytest
from testdata import EVAL_DIR

from engine import _core

TWO_SLIP_TYPED = _core.SIZES["TWO_SLIP_TYPED"]


def _none_stored(arrays: dict) -> dict:
    n = len(arrays["v_off"]) - 1
    return {**arrays, "slip_start": np.zeros(2 * n + 1, np.int32), "slip_tok": np.zeros(0, np.int32),
            "slip_dist": np.zeros(0, np.uint8), "slip_work": np.full(2 * n, -1, np.int32)}


@pytest.fixture(scope="module")
def looked_up(sample_index):
    """The sample index searching without stored slips: every look-up in the typo table."""
    return _core.Index(_none_stored(sample_index.arrays))


def _vocabulary(arrays) -> list[str]:
    blob, off = arrays["v_blob"], arrays["v_off"]
    return [bytes(blob[off[t]:off[t + 1]]).decode() for t in range(len(off) - 1)]


def _slipped(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1:] if rng.random() < 0.5 else word[:i] + word[i + 1] + word[i] + word[i + 2:]


def test_the_build_stores_what_the_search_looks_up(sample_index, looked_up):
    start, tok, dist, work = _core.slip_lists(looked_up)
    arrays = sample_index.arrays
    for name, got in (("slip_start", start), ("slip_tok", tok), ("slip_dist", dist), ("slip_work", work)):
        assert np.array_equal(arrays[name], got), name
    # a list for every token of 5+ letters typed whole (two for 7+), none for one of digits
    words = _vocabulary(arrays)
    for t, w in enumerate(words):
        whole = len(w.replace("y", "ij")) >= 5 and not w[0].isdigit() and len(w) <= 38
        assert (work[2 * t] >= 0) == whole, w
        assert (work[2 * t + 1] >= 0) == (whole and len(w.replace("y", "ij")) >= TWO_SLIP_TYPED), w
    assert all(d in (1, 2) for d in dist.tolist())
    # and within two slips, a word finds itself in none of its own lists
    for t in range(0, len(words), 97):
        assert t not in tok[start[2 * t]:start[2 * t + 2]].tolist()


def _untimed(readings: list[dict]) -> list[dict]:
    """The readings without their times (the work counted stays: a stored list counts what its
    look-up would have)."""
    return [{k: v for k, v in r.items() if k != "us"} for r in readings]


def test_stored_and_looked_up_slips_answer_alike(sample_index, looked_up):
    """Queries whose whole words are looked up for slips (a street with one or two slips, a
    street that does not exist, beside a place typed whole), and public queries: the same ids
    and the same readings, at limits 1, 5 and 10."""
    rng = random.Random(10)
    arrays = sample_index.arrays
    ids = rng.sample(range(len(arrays["a_number"])), 150)
    queries = []
    for a in ids:
        g = int(arrays["a_group"][a])
        street = _name(arrays, int(arrays["g_street"][g]))
        place = _name(arrays, int(arrays["g_locality"][g]))
        number = int(arrays["a_number"][a])
        long = max(street.split(), key=len)
        if len(long) >= 6:
            queries.append(f"{street.replace(long, _slipped(long, rng))} {number} {place}")
            queries.append(f"{street.replace(long, _slipped(_slipped(long, rng), rng))} {number} {place}")
        queries.append(f"Wrongstreetname {number} {place}")
        queries.append(f"{place} {street} {number}")
    lines = (EVAL_DIR / "queries-public.jsonl").read_text().splitlines()
    queries += [line.split('"q": "')[1].split('"')[0] for line in rng.sample(lines, 200)]
    differ = []
    for q in queries:
        for limit in (1, 5, 10):
            a, b = sample_index.trace(q, limit=limit), looked_up.trace(q, limit=limit)
            if a["ids"] != b["ids"] or _untimed(a["readings"]) != _untimed(b["readings"]):
                differ.append(f"{q!r} limit {limit}: {a['ids']} / {b['ids']}")
    assert len(queries) > 600
    assert not differ, "\n".join(differ[:20])


def test_a_search_reads_the_stored_slips(sample_index):
    """The stored lists are what answers: a street typed whole that a place does not have, but
    has one slip away, is found there; with the lists emptied (but marked stored), it is not."""
    from engine._reference import group_token_arrays

    arrays = sample_index.arrays
    n = len(arrays["v_off"]) - 1
    emptied = _core.Index({**arrays, "slip_start": np.zeros(2 * n + 1, np.int32),
                           "slip_tok": np.zeros(0, np.int32), "slip_dist": np.zeros(0, np.uint8),
                           "slip_work": np.zeros(2 * n, np.int32)})
    words = _vocabulary(arrays)
    start, tok, dist = arrays["slip_start"], arrays["slip_tok"], arrays["slip_dist"]
    gtok, kind, _ = group_token_arrays(arrays["g_tokrec"])
    gstart = arrays["g_tok_start"]
    street_of = {}       # street token -> the localities of its groups
    for g in range(len(gstart) - 1):
        toks = gtok[gstart[g]:gstart[g + 1]]
        for t, k in zip(toks.tolist(), kind[gstart[g]:gstart[g + 1]].tolist(), strict=True):
            if k == _core.BITS["K_STREET"]:
                street_of.setdefault(t, set()).add(int(arrays["g_locality"][g]))
    found = 0
    for t in random.Random(3).sample(sorted(street_of), len(street_of)):
        near = [int(u) for u, d in zip(tok[start[2 * t]:start[2 * t + 1]], dist[start[2 * t]:start[2 * t + 1]],
                                       strict=True) if d == 1 and int(u) in street_of]
        places = {p for u in near for p in street_of[u]} - street_of[t]
        if not places or " " in words[t]:
            continue
        q = f"{words[t]} {_name(arrays, min(places))}"
        hits = sample_index.search_ids(q, limit=1)
        if hits and emptied.search_ids(q, limit=1) != hits:
            found += 1
            if found == 5:
                break
    assert found == 5


def test_slip_lists_are_looked_up_afresh_only(sample_index):
    with pytest.raises(ValueError, match="stores slip lists already"):
        _core.slip_lists(sample_index)


def test_an_index_whose_stored_slips_do_not_fit_does_not_open(sample_index):
    arrays = sample_index.arrays
    for name, bad in (("slip_start", arrays["slip_start"][:-1]), ("slip_work", arrays["slip_work"][1:]),
                      ("slip_dist", arrays["slip_dist"][1:]), ("slip_tok", arrays["slip_tok"][1:])):
        with pytest.raises(ValueError, match="stored slips"):
            _core.Index({**arrays, name: np.ascontiguousarray(bad)})


def _name(arrays, sid: int) -> str:
    import json

    off = arrays["s_off"]
    raw = bytes(arrays["s_blob"][off[sid]:off[sid + 1]]).decode()
    return json.loads(f'"{raw}"')
