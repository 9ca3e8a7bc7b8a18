"""Beside each posting, its group's house number range (build.py `_number_ranges`), the starts
of its letters and additions (`_suffix_starts`) and its range of postcode digits
(`_postcode_ranges`): the scan leaves a group that cannot hold the typed number, parts or
postcode being typed without touching it, so the range must hold every number of the group (a
cap may only widen it), the starts every letter and addition, the digits every postcode."""

from __future__ import annotations

import numpy as np
import pytest

from engine import _core

LOW = _core.BITS["NUM_LOW_BITS"]
HIGH_MAX = _core.BITS["NUM_HIGH_MAX"]


def test_each_posting_carries_its_groups_number_range(sample_index):
    a = sample_index.arrays
    g_start, number = a["g_start"], a["a_number"]
    top = number[g_start[1:] - 1]
    bottom = number[g_start[:-1]]
    # every group's numbers are sorted, so these are its highest and lowest
    assert all(np.all(np.diff(number[g_start[g]:g_start[g + 1]]) >= 0) for g in range(0, len(top), 50))
    for name, groups in (("v_post_num", a["v_post"]), ("sp_num", a["sp_group"])):
        packed = a[name]
        assert len(packed) == len(groups)
        high, low = packed >> LOW, packed & ((1 << LOW) - 1)
        assert np.all(high >= top[groups]) and np.all(low <= bottom[groups])
        # exact where the bits hold them
        fits = (top[groups] <= HIGH_MAX) & (bottom[groups] < (1 << LOW))
        assert fits.mean() > 0.99
        assert np.array_equal(high[fits], top[groups][fits]) and np.array_equal(low[fits], bottom[groups][fits])


def test_a_range_that_does_not_fit_the_postings_does_not_open(sample_index):
    arrays = sample_index.arrays
    for name in ("v_post_num", "sp_num"):
        with pytest.raises(ValueError, match="do not match"):
            _core.Index({**arrays, name: np.ascontiguousarray(arrays[name][1:])})


def test_each_posting_carries_the_starts_of_its_groups_letters_and_additions(sample_index):
    """`v_post_sfx`: bit i when an address of the group has the letter i (a = 0) or an
    addition starting with it, bit 26 when an addition starts with a digit: exactly these."""
    a = sample_index.arrays
    g_start, letter, addition = a["g_start"], a["a_letter"], a["a_addition"]
    add_blob, add_off = a["add_blob"], a["add_off"]

    def starts(g: int) -> int:
        bits = 0
        for r in range(g_start[g], g_start[g + 1]):
            if letter[r]:
                bits |= 1 << (ord(chr(letter[r]).lower()) - 97)
            text = bytes(add_blob[add_off[addition[r]]:add_off[addition[r] + 1]]).decode()
            if text and text[0].isascii() and text[0].isalpha():
                bits |= 1 << (ord(text[0].lower()) - 97)
            elif text and text[0].isdigit():
                bits |= 1 << 26
        return bits

    groups = sorted(set(a["v_post"][::40].tolist()) | set(a["sp_group"][::40].tolist()))
    want = {g: starts(g) for g in groups}
    assert any(want.values()) and not all(want.values())
    for name, gname in (("v_post_sfx", "v_post"), ("sp_sfx", "sp_group")):
        for p in range(0, len(a[gname]), 40):
            assert int(a[name][p]) == want[int(a[gname][p])], (name, p)


def test_each_posting_carries_its_groups_postcode_digits(sample_index):
    """`v_post_pcr`: the lowest four postcode digits of the group's addresses above
    PC_DIGIT_BITS bits of the highest, exactly."""
    a = sample_index.arrays
    bits = _core.BITS["PC_DIGIT_BITS"]
    g_start, digits = a["g_start"], a["a_postcode"] // 676
    for name, gname in (("v_post_pcr", "v_post"), ("sp_pcr", "sp_group")):
        groups = a[gname]
        for p in range(0, len(groups), 25):
            g = int(groups[p])
            span = digits[g_start[g]:g_start[g + 1]]
            assert int(a[name][p]) == (int(span.min()) << bits) | int(span.max()), (name, p)
