"""Three small non-negative ids as one int64 whose order is theirs (a, then b, then c).

PERF: numpy sorts and counts one integer a row several times faster than rows of three
(`np.unique(axis=0)` compares them as opaque bytes): the build's groups (street, place,
municipality names) and the LVBAG join's counts (municipality code, woonplaats, postcode) are
made over such keys; `lexorder` sorts by several keys packed the same way.
"""

from __future__ import annotations

import numpy as np

ID_BITS = 21                 # each id below 2**21: three of them fill 63 bits of an int64
ID_LIMIT = 1 << ID_BITS
_MASK = np.int64(ID_LIMIT - 1)


def fits3(*ids: np.ndarray) -> bool:
    """Whether every id of the arrays can be packed (below ID_LIMIT)."""
    return all(len(x) == 0 or int(x.max()) < ID_LIMIT for x in ids)


def pack3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The key of each row (a[i], b[i], c[i]); the caller has checked `fits3`."""
    u = np.int64
    return (a.astype(u) << u(2 * ID_BITS)) | (b.astype(u) << u(ID_BITS)) | c.astype(u)


def unpack3(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three ids of each key (`pack3` undone), as int64 arrays."""
    keys = np.asarray(keys, dtype=np.int64)
    return keys >> (2 * ID_BITS), (keys >> ID_BITS) & _MASK, keys & _MASK


def lexorder(keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """The order of `np.lexsort(keys)` (the last key primary, ties kept in place), for keys of
    non-negative integers.

    PERF: when their bits fit in 64 together, the keys are packed into one unsigned integer
    whose order is theirs, sorted once (stable): the whole country's addresses by five keys
    took 4.7 CPU s as a lexsort, 1 s so. Otherwise (keys too wide, or negative) `np.lexsort`."""
    widths = [int(k.max()).bit_length() if len(k) else 0 for k in keys]
    if sum(widths) > 64 or any(len(k) and int(k.min()) < 0 for k in keys):
        return np.lexsort(keys)
    u = np.uint64
    packed = np.zeros(len(keys[0]) if keys else 0, dtype=u)
    shift = 0
    for k, w in zip(keys, widths, strict=True):   # the first key the lowest bits
        if w:
            packed |= k.astype(u) << u(shift)
        shift += w
    return np.argsort(packed, kind="stable")
