"""The typo table (`_core.deletion_table`): every deletion form of every token is found from its
hash's home slot, the tokens of one form in token order, and a table that cannot be built or
read says so."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine import _core

TOK_BITS = _core.SIZES["DEL_TOK_BITS"]
TAIL = _core.SIZES["DEL_TAIL"]
BUCKET = _core.SIZES["DEL_BUCKET"]


def _find(table: np.ndarray, h: int) -> list[int]:
    """The tokens of hash h, read as the search reads them: the run of slots from its home slot
    to the first empty one, the entries whose top bits are the hash's."""
    n_home = len(table) - TAIL
    k = (((h >> 32) * n_home) >> 32) & ~(BUCKET - 1)
    out = []
    while table[k]:
        e = int(table[k])
        if e >> TOK_BITS == h >> TOK_BITS:
            out.append((e & ((1 << TOK_BITS) - 1)) - 1)
        k += 1
    return out


@pytest.fixture(scope="module")
def vocabulary(sample_index) -> list[str]:
    blob, off = sample_index.arrays["v_blob"], sample_index.arrays["v_off"]
    return [bytes(blob[off[t]:off[t + 1]]).decode() for t in range(len(off) - 1)]


def test_every_form_finds_its_tokens_in_order(sample_index, vocabulary):
    hashes, toks = _core.deletion_index(vocabulary)
    table = _core.deletion_table(hashes, toks)
    assert np.array_equal(table, sample_index.arrays["del_slot"])   # what the build wrote
    assert table[-1] == 0 and len(table) > TAIL
    assert np.count_nonzero(table) == len(hashes)
    by_hash: dict[int, list[int]] = {}
    for h, t in zip(hashes.tolist(), toks.tolist(), strict=True):
        by_hash.setdefault(h, []).append(t)
    rng = random.Random(9)
    for h in rng.sample(sorted(by_hash), 3000):
        assert _find(table, h) == by_hash[h]                 # sorted by token: the build's order
    # forms that no token has find nothing
    for _ in range(3000):
        h = rng.getrandbits(64)
        if h not in by_hash:
            assert _find(table, h) == []


def test_a_form_hashes_as_its_own_text_whichever_letters_were_left_out(vocabulary):
    """The forms of a word are hashed from its prefix hashes: each must be the hash of the
    form's text, or a slip would not meet the token that has the same form ("kerkstrat"
    without its t and "kerkstraat" without an a are both "kerkstrat" less a letter)."""
    rng = random.Random(3)
    words = [w.encode() for w in rng.sample(vocabulary, 300)] + [b"abcd", b"aaaaaaaa", b"x" * 80]
    for w in words:
        n = len(w)
        forms = [w] + [w[:i] + w[i + 1:] for i in range(n)]
        forms += [w[:i] + w[i + 1:j] + w[j + 1:] for i in range(n) for j in range(i + 1, n)]
        assert _core._form_hashes(w) == [_core._form_hashes(f)[0] for f in forms], w
    # different texts, different hashes (of all the forms of these words)
    seen: dict[int, bytes] = {}
    for w in words[:100]:
        n = len(w)
        forms = [w] + [w[:i] + w[i + 1:] for i in range(n)]
        forms += [w[:i] + w[i + 1:j] + w[j + 1:] for i in range(n) for j in range(i + 1, n)]
        for f, h in zip(forms, _core._form_hashes(w), strict=True):
            assert seen.setdefault(h, f) == f
    with pytest.raises(ValueError):
        _core._form_hashes(b"x" * 81)


def test_a_table_that_cannot_hold_its_entries_is_refused():
    # one hash 5,000 times, homed at the last home slot: its run would go past the tail
    with pytest.raises(ValueError, match="tail is full"):
        _core.deletion_table(np.full(5000, 0xFFFFFFFF00000000, dtype=np.uint64),
                             np.arange(5000, dtype=np.int32))
    with pytest.raises(ValueError, match="token ids below"):
        _core.deletion_table(np.array([1], dtype=np.uint64), np.array([1 << TOK_BITS], dtype=np.int32))
    with pytest.raises(ValueError, match="differ in length"):
        _core.deletion_table(np.array([1, 2], dtype=np.uint64), np.array([1], dtype=np.int32))
    # at the very end of the home slots, a run has the whole tail
    table = _core.deletion_table(np.full(TAIL - 1, 0xFFFFFFFF00000000, dtype=np.uint64),
                                 np.arange(TAIL - 1, dtype=np.int32))
    assert _find(table, 0xFFFFFFFF00000000) == list(range(TAIL - 1))


def test_an_index_whose_table_has_no_empty_end_does_not_open(sample_index):
    arrays = dict(sample_index.arrays)
    full = arrays["del_slot"].copy()
    full[-1] = 1
    with pytest.raises(ValueError, match="typo table"):
        _core.Index({**arrays, "del_slot": full})
    with pytest.raises(ValueError, match="typo table"):
        _core.Index({**arrays, "del_slot": np.zeros(TAIL, dtype=np.uint64)})
