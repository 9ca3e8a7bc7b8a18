# cython: language_level=3
"""The compiled core: memory-mapped columns, a sorted-prefix index and the scoring loop.

Layout (every array is a read-only, C-contiguous numpy array memory-mapped from `NAME.npy`):

* Addresses `a_*` (N rows) are ordered by group, then house number, letter, addition, so the
  addresses of one street in one place are one contiguous run `g_start[g] .. g_start[g+1]`,
  sorted by number. `a_group[i]` names the group of address i.
* Groups `g_*` (G rows): one per (street, locality, municipality); ids of their names in the
  string table `s_blob/s_off` (JSON-escaped UTF-8), a prior in [0, PRIOR_MAX], the mean point,
  and their tokens `g_tok[g_tok_start[g] .. g_tok_start[g+1]]` with a kind per token
  (street / locality / municipality, ALIAS flag) and the real street words each one covers.
* Vocabulary `v_*` (V tokens): every token text, sorted bytewise, so that a typed prefix is one
  contiguous range of token ids [lo, hi), found by two binary searches, and "word w is a prefix
  of token t" is the range test lo <= t < hi. `v_post[v_post_start[t] ..]` lists the groups that
  hold token t, highest prior first.
* Typo index `del_hash/del_tok`: FNV-1a hashes of every token with up to one (two for tokens of
  7+ letters) letters deleted, sorted, so that a word within one or two edits of a token shares
  a hash with it (symmetric deletion).
* Postcode index: `pc_code` sorted distinct postcodes, `pc_addr[pc_start[p] .. pc_start[p+1]]`
  the addresses of postcode p in house-number order.

Invariants: ids are int32 and in range; every group has at least one address and one street
token; group token counts fit in 64 (cover masks). The query path (`_search`) runs without the
GIL over raw pointers into these arrays and allocates only its own scratch.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.math cimport cos, exp, log10, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

import json
import numbers
import sys
from bisect import bisect_left
from decimal import Decimal

import numpy as np

from .normalize import FOLD_LIMIT as _FOLD_LIMIT, fold_table

cimport numpy as cnp

cnp.import_array()

# ---------------------------------------------------------------------------------------------
# folding table (shared with engine/normalize.py)

cdef char _fold_out[FOLD_MAX][FOLD_W]
cdef uint8_t _fold_len[FOLD_MAX]


def _init_fold():
    table = fold_table()
    assert len(table) == FOLD_MAX == _FOLD_LIMIT
    cdef int cp, j
    for cp in range(FOLD_MAX):
        s = table[cp].encode("ascii")
        if len(s) > FOLD_W:
            s = s[:FOLD_W]
        _fold_len[cp] = len(s)
        for j in range(len(s)):
            _fold_out[cp][j] = s[j]


_init_fold()

# ---------------------------------------------------------------------------------------------
# tuning: penalties are in "score" units; the prior of a group lies in [0, 0.9]. The values live
# in engine/params.py, shared with the Python twin (engine/_reference.py).

from . import params as _params

cdef float PREFIX_PEN = _params.PREFIX_PEN
cdef float PREFIX_FRAC = _params.PREFIX_FRAC
cdef float TYPO_PEN = _params.TYPO_PEN
cdef float TYPO_EDIT = _params.TYPO_EDIT
cdef float MUNI_PEN = _params.MUNI_PEN
cdef float ALIAS_PEN = _params.ALIAS_PEN
cdef float STREET_ALIAS_PEN = _params.STREET_ALIAS_PEN
cdef int ALIAS_WHOLE_LEN = _params.ALIAS_WHOLE_LEN
cdef float UNMATCHED_PEN = _params.UNMATCHED_PEN
cdef float ORDER_PEN = _params.ORDER_PEN
cdef float ORDER_PLACE_PEN = _params.ORDER_PLACE_PEN
cdef float EXTRA_SUFFIX_PEN = _params.EXTRA_SUFFIX_PEN
cdef float PART_PREFIX_PEN = _params.PART_PREFIX_PEN
cdef float NUM_PREFIX_PEN = _params.NUM_PREFIX_PEN
cdef float NUM_PREFIX_DIGIT = _params.NUM_PREFIX_DIGIT
cdef float UNKNOWN_WORD_PEN = _params.UNKNOWN_WORD_PEN
cdef float NO_LOCALITY_PRIOR = _params.NO_LOCALITY_PRIOR
cdef float LOCALITY_PRIOR = _params.LOCALITY_PRIOR
cdef float IJ_VARIANT_PEN = _params.IJ_VARIANT_PEN
cdef float ROUND_BASE = _params.ROUND_BASE
cdef float ROUND_SHORT = _params.ROUND_SHORT
cdef float PC_PRIOR = _params.PC_PRIOR
cdef float PRIOR_WEIGHT_MAX = max(_params.NO_LOCALITY_PRIOR, _params.LOCALITY_PRIOR)
cdef double FOCUS_NEAR = 0.9   # with a focus point: the prior term at the point itself ...
cdef double FOCUS_KM = 5.0     # ... halved this far away ...
cdef double FOCUS_SHARE = 0.1  # ... plus this share of the group's own prior
cdef double FOCUS_EPS = 1e-5   # the focus prior is computed in double and stored as float
cdef float LETTER_AS_ADDITION_PEN = _params.LETTER_AS_ADDITION_PEN


def _set_param(str name, float value):
    """Change one ranking weight of this process (for tuning runs; not thread-safe)."""
    global PREFIX_PEN, PREFIX_FRAC, TYPO_PEN, TYPO_EDIT, MUNI_PEN, ALIAS_PEN, STREET_ALIAS_PEN, UNMATCHED_PEN, ORDER_PEN, ORDER_PLACE_PEN, EXTRA_SUFFIX_PEN, PART_PREFIX_PEN, NUM_PREFIX_PEN, NUM_PREFIX_DIGIT, UNKNOWN_WORD_PEN, NO_LOCALITY_PRIOR, LOCALITY_PRIOR, IJ_VARIANT_PEN, ROUND_BASE, ROUND_SHORT, PC_PRIOR, LETTER_AS_ADDITION_PEN
    if name == "PREFIX_PEN":
        PREFIX_PEN = value
    elif name == "PREFIX_FRAC":
        PREFIX_FRAC = value
    elif name == "TYPO_PEN":
        TYPO_PEN = value
    elif name == "TYPO_EDIT":
        TYPO_EDIT = value
    elif name == "MUNI_PEN":
        MUNI_PEN = value
    elif name == "ALIAS_PEN":
        ALIAS_PEN = value
    elif name == "STREET_ALIAS_PEN":
        STREET_ALIAS_PEN = value
    elif name == "UNMATCHED_PEN":
        UNMATCHED_PEN = value
    elif name == "ORDER_PLACE_PEN":
        ORDER_PLACE_PEN = value
    elif name == "ORDER_PEN":
        ORDER_PEN = value
    elif name == "EXTRA_SUFFIX_PEN":
        EXTRA_SUFFIX_PEN = value
    elif name == "PART_PREFIX_PEN":
        PART_PREFIX_PEN = value
    elif name == "NUM_PREFIX_PEN":
        NUM_PREFIX_PEN = value
    elif name == "NUM_PREFIX_DIGIT":
        NUM_PREFIX_DIGIT = value
    elif name == "UNKNOWN_WORD_PEN":
        UNKNOWN_WORD_PEN = value
    elif name == "NO_LOCALITY_PRIOR":
        NO_LOCALITY_PRIOR = value
    elif name == "LOCALITY_PRIOR":
        LOCALITY_PRIOR = value
    elif name == "IJ_VARIANT_PEN":
        IJ_VARIANT_PEN = value
    elif name == "ROUND_BASE":
        ROUND_BASE = value
    elif name == "ROUND_SHORT":
        ROUND_SHORT = value
    elif name == "PC_PRIOR":
        PC_PRIOR = value
    elif name == "LETTER_AS_ADDITION_PEN":
        LETTER_AS_ADDITION_PEN = value
    else:
        raise KeyError(name)
    global PRIOR_WEIGHT_MAX
    PRIOR_WEIGHT_MAX = max(NO_LOCALITY_PRIOR, LOCALITY_PRIOR)


# ---------------------------------------------------------------------------------------------
# hashing (shared by the build and the query path)

cdef inline uint64_t _fnv(const char* s, int n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef int i
    for i in range(n):
        h ^= <uint8_t>s[i]
        h *= 1099511628211ULL
    return h


cdef inline int _first_bit(char c) noexcept nogil:
    return c - 97 if 97 <= c <= 122 else 26


def first_bit(str word):
    """The first-letter bit of a folded token (build.py: v_post_first)."""
    return _first_bit(ord(word[0]) if word else 32)


def xsig_bit(str word):
    """The whole-token signature bit of a folded token (build.py: v_post_xsig)."""
    cdef bytes b = word.encode("ascii")
    return <int>(_fnv(b, len(b)) >> 58)


cdef inline uint64_t _fnv_skip(const char* s, int n, int skip1, int skip2) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef int i
    for i in range(n):
        if i == skip1 or i == skip2:
            continue
        h ^= <uint8_t>s[i]
        h *= 1099511628211ULL
    return h


def deletion_index(words):
    """Return (hashes, token ids), sorted by hash: every token with up to 1 (2 for 7+ letters)
    letters deleted. Tokens shorter than 4 letters are left out (no typo is looked for there)."""
    cdef list hs = []
    cdef list ts = []
    cdef bytes b
    cdef const char* s
    cdef int n, i, j, tid
    cdef uint64_t h
    for tid, w in enumerate(words):
        seen = set()
        forms = [w.encode()]
        if "y" in w:
            forms.append(w.replace("y", "ij").encode())
        for b in forms:
            n = len(b)
            if n < 4 or n > 78:
                continue
            s = b
            seen.add(_fnv(s, n))
            for i in range(n):
                seen.add(_fnv_skip(s, n, i, -1))
                if n >= 7:
                    for j in range(i + 1, n):
                        seen.add(_fnv_skip(s, n, i, j))
        for h in seen:
            hs.append(h)
            ts.append(tid)
    hashes = np.array(hs, dtype=np.uint64)
    toks = np.array(ts, dtype=np.int32)
    order = np.lexsort((toks, hashes))
    return hashes[order], toks[order]


# ---------------------------------------------------------------------------------------------
# signatures: one bit per token, from its first two letters


cdef inline int _sig_bit(const char* w, int n) noexcept nogil:
    if n < 2:
        return (<uint8_t>w[0] * 7) & 63
    return (<uint8_t>w[0] * 31 + <uint8_t>w[1] * 7) & 63


def sig_bit(str word):
    """The signature bit of a token (build time)."""
    b = word.encode()
    return _sig_bit(b, len(b))


# ---------------------------------------------------------------------------------------------
# small helpers


cdef inline int _cmp_prefix(const Data* d, int32_t t, const char* w, int n) noexcept nogil:
    """Compare token t with word w over the first n bytes: <0, 0 (t starts with w), >0."""
    cdef int64_t a = d.v_off[t]
    cdef int tl = <int>(d.v_off[t + 1] - a)
    cdef int m = n if n < tl else tl
    cdef int c = memcmp(d.v_blob + a, w, m)
    if c != 0:
        return c
    if tl < n:
        return -1
    return 0


cdef inline int32_t _first_from(const Data* d, int32_t a, int32_t b, const char* w, int n,
                                bint past) noexcept nogil:
    """The first token id in [a, b) not below w[:n] (past: not below nor starting with it)."""
    cdef int32_t mid
    while a < b:
        mid = (a + b) >> 1
        if _cmp_prefix(d, mid, w, n) < past:
            a = mid + 1
        else:
            b = mid
    return a


cdef inline void _range_within(const Data* d, int32_t a, int32_t b, const char* w, int n,
                               int32_t* lo, int32_t* hi) noexcept nogil:
    """Token ids [lo, hi) within [a, b) whose text starts with w (every such id lies there)."""
    lo[0] = _first_from(d, a, b, w, n, False)
    hi[0] = _first_from(d, lo[0], b, w, n, True)


cdef inline void _prefix_range(const Data* d, const char* w, int n, int32_t* lo, int32_t* hi) noexcept nogil:
    """Token ids [lo, hi) whose text starts with w."""
    _range_within(d, 0, d.n_tok, w, n, lo, hi)


cdef inline int _lower_bound(const int32_t* arr, int lo, int hi, int32_t x) noexcept nogil:
    """The first index in [lo, hi) of sorted arr whose value is not below x (hi if none)."""
    cdef int mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int _tok_len(const Data* d, int32_t t) noexcept nogil:
    return <int>(d.v_off[t + 1] - d.v_off[t])


cdef int _dl_distance(const char* a, int n, const char* b, int m, int maxd) noexcept nogil:
    """Restricted Damerau-Levenshtein distance, or maxd + 1 when it exceeds maxd."""
    cdef int d0[80]
    cdef int d1[80]
    cdef int d2[80]
    cdef int* pp = d0
    cdef int* p = d1
    cdef int* c = d2
    cdef int* tmp
    cdef int i, j, cost, v, rowmin
    if n > 78 or m > 78:
        return maxd + 1
    if n - m > maxd or m - n > maxd:
        return maxd + 1
    for j in range(m + 1):
        p[j] = j
    for i in range(1, n + 1):
        c[0] = i
        rowmin = i
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = p[j - 1] + cost
            if p[j] + 1 < v:
                v = p[j] + 1
            if c[j - 1] + 1 < v:
                v = c[j - 1] + 1
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1] and pp[j - 2] + 1 < v:
                v = pp[j - 2] + 1
            c[j] = v
            if v < rowmin:
                rowmin = v
        if rowmin > maxd:
            return maxd + 1
        tmp = pp
        pp = p
        p = c
        c = tmp
    return p[m]


cdef inline int _lower(int c) noexcept nogil:
    if c >= 65 and c <= 90:
        return c + 32
    return c


# ---------------------------------------------------------------------------------------------
# query parsing


cdef void _tokenise(Search* s) noexcept nogil:
    """Split the folded query (ASCII a-z0-9 and spaces) into tokens; ij -> y; split letter|digit."""
    cdef char buf[QBUF]
    cdef int i, n = 0, c, prev = 32
    # ij -> y, and a space between a letter and a following digit
    i = 0
    while i < s.qlen and n < QBUF - 2:
        c = s.q[i]
        if c == 105 and i + 1 < s.qlen and s.q[i + 1] == 106:  # "ij"
            c = 121
            i += 1
        if 48 <= c <= 57 and 97 <= prev <= 122:
            buf[n] = 32
            n += 1
        buf[n] = <char>c
        n += 1
        prev = c
        i += 1
    memcpy(s.q, buf, n)
    s.qlen = n
    s.ntok = 0
    i = 0
    cdef Tok* t
    while i < n and s.ntok < MAXT:
        while i < n and s.q[i] == 32:
            i += 1
        if i >= n:
            break
        t = &s.tok[s.ntok]
        t.start = i
        while i < n and s.q[i] != 32:
            i += 1
        t.len = i - t.start
        t.digits = 0
        t.value = 0
        while t.digits < t.len and 48 <= s.q[t.start + t.digits] <= 57:
            if t.value < 1000000:
                t.value = t.value * 10 + (s.q[t.start + t.digits] - 48)
            t.digits += 1
        s.slip_n[s.ntok] = -1
        s.ntok += 1


cdef void _word_ranges(const Data* d, Search* s, int ti) noexcept nogil:
    """Fill the prefix ranges of token ti: the word itself, and `...y` for a word ending in i."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int32_t lo, hi
    cdef char alt[QBUF]
    w.nr = 0
    w.exact = -1
    w.cost = 0
    w.typo_done = 0
    w.first_typo = 0
    w.slips = 0
    _prefix_range(d, p, t.len, &lo, &hi)
    if lo < hi:
        if _tok_len(d, lo) == t.len:
            w.exact = lo
        w.lo[0] = lo
        w.hi[0] = hi
        w.base[0] = 0
        w.typo[0] = 0
        w.nr = 1
        w.cost += d.v_post_start[hi] - d.v_post_start[lo]
    if t.len >= 1 and p[t.len - 1] == 105:  # typing "ri" may be on its way to "rij" -> "ry"
        memcpy(alt, p, t.len)
        alt[t.len - 1] = 121
        _prefix_range(d, alt, t.len, &lo, &hi)
        if lo < hi:
            w.lo[w.nr] = lo
            w.hi[w.nr] = hi
            w.base[w.nr] = IJ_VARIANT_PEN
            w.typo[w.nr] = 0
            w.nr += 1
            w.cost += d.v_post_start[hi] - d.v_post_start[lo]
    w.first_typo = w.nr


cdef int _bsearch_hash(const Data* d, uint64_t h) noexcept nogil:
    cdef int a = d.del_bucket[h >> (64 - DEL_BUCKET_BITS)]
    cdef int b = d.del_bucket[(h >> (64 - DEL_BUCKET_BITS)) + 1], mid
    while a < b:
        mid = (a + b) >> 1
        if d.del_hash[mid] < h:
            a = mid + 1
        else:
            b = mid
    return a


cdef int _unfold_ij(const char* w, int n, char* out) noexcept nogil:
    """Write w with every y spelt ij (the register's own spelling; slips happen in that).

    `out` holds UNFOLD_MAX bytes; a longer result is cut there (and then fails the distance
    test, whose tables stop at 78 letters)."""
    cdef int i, k = 0
    for i in range(n):
        if k + 2 > UNFOLD_MAX:
            break
        if w[i] == 121:
            out[k] = 105
            out[k + 1] = 106
            k += 2
        else:
            out[k] = w[i]
            k += 1
    return k


cdef int _sound_variant(const char* w, int n, int kind, char* out) noexcept nogil:
    """The word with every ei spelt ij (kind 0; folded y), every ij (y) spelt ei (1), every
    au spelt ou (2), every ou spelt au (3): the sounds Dutch spelling writes two ways. Its
    length, or 0 when the word has none (or the result would not fit UNFOLD_MAX)."""
    cdef int i = 0, k = 0, hit = 0
    cdef char a = (101 if kind == 0 else 97 if kind == 2 else 111)
    cdef char b = (105 if kind == 0 else 117)
    while i < n:
        if k + 2 > UNFOLD_MAX:
            return 0
        if kind == 1 and w[i] == 121:
            out[k] = 101
            out[k + 1] = 105
            k += 2
            i += 1
            hit = 1
        elif kind != 1 and i + 1 < n and w[i] == a and w[i + 1] == b:
            if kind == 0:
                out[k] = 121
                k += 1
            else:
                out[k] = 111 if kind == 2 else 97
                out[k + 1] = 117
                k += 2
            i += 2
            hit = 1
        else:
            out[k] = w[i]
            k += 1
            i += 1
    return k if hit else 0


cdef inline int _typed_len(const char* w, int n) noexcept nogil:
    """The length of a folded word as a person types it: every y may stand for ij."""
    cdef int i, m = n
    for i in range(n):
        if w[i] == 121:
            m += 1
    return m


cdef struct TypoSet:
    int n
    int long_only       # two slips only in a token of TWO_SLIP_LEN+ letters (the word is shorter)
    int sound_n[4]      # the word spelt as it sounds otherwise (_sound_variant; 0: none),
    char sound[4][UNFOLD_MAX]
    int32_t tid[512]
    uint8_t dist[512]


cdef void _typo_check(const Data* d, Search* s, int ti, int32_t tid, int maxd, TypoSet* ts) noexcept nogil:
    """Measure token tid against word ti; remember it when within maxd edits."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef int r, dist, dist2, n1, n2
    cdef const char* tok = <const char*>(d.v_blob + d.v_off[tid])
    cdef char a[UNFOLD_MAX]
    cdef char b[UNFOLD_MAX]
    for r in range(ts.n):
        if ts.tid[r] == tid:
            return
    for r in range(w.nr):
        if w.lo[r] <= tid < w.hi[r]:
            return
    if ts.n >= 512:
        return
    dist = _dl_distance(s.q + t.start, t.len, tok, _tok_len(d, tid), maxd)
    if dist > 1:
        n1 = _unfold_ij(s.q + t.start, t.len, a)
        n2 = _unfold_ij(tok, _tok_len(d, tid), b)
        dist2 = _dl_distance(a, n1, b, n2, maxd)
        if dist2 < dist:
            dist = dist2
    # "reinlaan" for Rijnlaan, "gaudenweg" for Goudenweg: the other spelling of a sound is
    # one slip
    for r in range(4):
        if dist > 1 and ts.sound_n[r] > 0:
            dist2 = 1 + _dl_distance(ts.sound[r], ts.sound_n[r], tok, _tok_len(d, tid), maxd - 1)
            if dist2 < dist:
                dist = dist2
    if dist < 1 or dist > maxd:
        return
    if dist == 2 and ts.long_only and _typed_len(tok, _tok_len(d, tid)) < TWO_SLIP_LEN:
        return
    ts.tid[ts.n] = tid
    ts.dist[ts.n] = <uint8_t>dist
    ts.n += 1


cdef void _typo_lookup(const Data* d, Search* s, int ti, uint64_t h, int maxd, TypoSet* ts) noexcept nogil:
    cdef int k = _bsearch_hash(d, h)
    while k < d.n_del and d.del_hash[k] == h:
        _typo_check(d, s, ti, d.del_tok[k], maxd, ts)
        k += 1


cdef void _typo_variants(const Data* d, Search* s, int ti, const char* p, int n, int depth,
                         int maxd, TypoSet* ts) noexcept nogil:
    """Look up p with up to `depth` letters left out; keep the tokens within maxd slips."""
    cdef int i, j
    _typo_lookup(d, s, ti, _fnv(p, n), maxd, ts)
    if depth == 0:
        return
    for i in range(n):
        _typo_lookup(d, s, ti, _fnv_skip(p, n, i, -1), maxd, ts)
        if depth == 2:
            for j in range(i + 1, n):
                _typo_lookup(d, s, ti, _fnv_skip(p, n, i, j), maxd, ts)


cdef inline int _char_rank(char c) noexcept nogil:
    """0-9 for a digit, 10-35 for a letter (byte order), -1 otherwise."""
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 122:
        return c - 87
    return -1


cdef void _fill_blocks(Data* d) noexcept nogil:
    """d.block2: where the tokens starting with each two characters begin (sorted table)."""
    cdef char key[2]
    cdef int i
    for i in range(1296):
        key[0] = <char>(48 + i // 36 if i // 36 < 10 else 87 + i // 36)
        key[1] = <char>(48 + i % 36 if i % 36 < 10 else 87 + i % 36)
        d.block2[i] = _first_from(d, 0, d.n_tok, key, 2, False)
    d.block2[1296] = d.n_tok


cdef void _slip_start(const Data* d, Search* s, int ti, int32_t a, int32_t hi0, const char* v,
                      int m) noexcept nogil:
    """Remember the tokens that v starts, when there are at most PREFIX_SLIP_MAX; [a, hi0)
    holds every token that could."""
    cdef int32_t b = hi0
    cdef int32_t lo, hi, tid
    cdef int r, n, c0 = _char_rank(v[0]), c1 = _char_rank(v[1])
    # PERF: the tokens that start with v's first two characters are one known block
    if c0 >= 0 and c1 >= 0:
        if d.block2[c0 * 36 + c1] > a:
            a = d.block2[c0 * 36 + c1]
        if d.block2[c0 * 36 + c1 + 1] < b:
            b = d.block2[c0 * 36 + c1 + 1]
            hi0 = b
    # the first token not below v; PERF: when it does not start with v, none does
    lo = _first_from(d, a, b, v, m, False)
    if lo >= hi0 or _cmp_prefix(d, lo, v, m) != 0:
        return
    hi = _first_from(d, lo, hi0 if hi0 - lo <= PREFIX_SLIP_MAX + 1 else lo + PREFIX_SLIP_MAX + 1, v, m, True)
    if hi - lo > PREFIX_SLIP_MAX:
        return
    for tid in range(lo, hi):
        n = s.slip_n[ti]
        if n >= MAXSLIP:
            return
        for r in range(n):
            if s.slip_tid[ti][r] == tid:
                break
        else:
            s.slip_tid[ti][n] = tid
            s.slip_n[ti] = n + 1


# the keys beside each letter on a QWERTY keyboard, 7 bytes a letter (NUL-padded)
cdef const char* _NEAR_KEYS = b"qwsz\0\0\0vngh\0\0\0xvdf\0\0\0sferxc\0wrsd\0\0\0dgrtcv\0fhtyvb\0gjyubn\0uojk\0\0\0hkuinm\0jliom\0\0kop\0\0\0\0njk\0\0\0\0bmhj\0\0\0ipkl\0\0\0ol\0\0\0\0\0wa\0\0\0\0\0etdf\0\0\0adwezx\0ryfg\0\0\0yihj\0\0\0cbfg\0\0\0qeas\0\0\0zcsd\0\0\0tugh\0\0\0asx\0\0\0\0"


cdef void _prefix_slips(const Data* d, Search* s, int ti) noexcept nogil:
    """A word still being typed with a slip in it ("ruysdeal", "stationssqra"): the tokens
    that the word starts with one edit undone (s.slip_tid[ti], once per token of a query).

    No token starts with the whole word; let k be the length of its longest start that some
    token has. The slip lies at or before letter k; every edit at the last three positions up
    to k is tried, then (PERF: fewer) earlier a letter too many, two letters swapped or the
    key beside the one meant; each looked up among the tokens that start with the letters
    before it, as typed."""
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int n = t.len, i, k, c
    cdef char v[PREFIX_SLIP_LEN + 2]
    cdef int32_t lo, hi
    cdef int32_t rlo[PREFIX_SLIP_LEN + 1]
    cdef int32_t rhi[PREFIX_SLIP_LEN + 1]
    s.slip_n[ti] = 0
    rlo[0] = 0
    rhi[0] = d.n_tok
    k = 0
    while k < n - 1:
        _range_within(d, rlo[k], rhi[k], p, k + 1, &lo, &hi)
        if lo >= hi:
            break
        k += 1
        rlo[k] = lo
        rhi[k] = hi
    for i in range(k - 2 if k > 2 else 0, k + 1):
        lo = rlo[i]
        hi = rhi[i]
        memcpy(v, p, i)
        # a letter too many
        memcpy(v + i, p + i + 1, n - i - 1)
        _slip_start(d, s, ti, lo, hi, v, n - 1)
        # two letters swapped
        if i + 1 < n:
            v[i] = p[i + 1]
            v[i + 1] = p[i]
            memcpy(v + i + 2, p + i + 2, n - i - 2)
            _slip_start(d, s, ti, lo, hi, v, n)
        # a wrong letter
        memcpy(v + i + 1, p + i + 1, n - i - 1)
        for c in range(97, 123):
            if c != p[i]:
                v[i] = <char>c
                _slip_start(d, s, ti, lo, hi, v, n)
        # a letter left out
        memcpy(v + i + 1, p + i, n - i)
        for c in range(97, 123):
            v[i] = <char>c
            _slip_start(d, s, ti, lo, hi, v, n + 1)
    # earlier in the word (PERF: after the others, and fewer): a letter too many, two swapped,
    # the key beside the one meant ("krekla" for kerklaan, "dropstra" for dorpstraat)
    for i in range(k - 2 if k > 2 else 0):
        lo = rlo[i]
        hi = rhi[i]
        memcpy(v, p, i)
        memcpy(v + i, p + i + 1, n - i - 1)
        _slip_start(d, s, ti, lo, hi, v, n - 1)
        v[i] = p[i + 1]
        v[i + 1] = p[i]
        memcpy(v + i + 2, p + i + 2, n - i - 2)
        _slip_start(d, s, ti, lo, hi, v, n)
        v[i + 1] = p[i + 1]
        if 97 <= p[i] <= 122:
            for c in range(7):
                if _NEAR_KEYS[(p[i] - 97) * 7 + c] == 0:
                    break
                v[i] = _NEAR_KEYS[(p[i] - 97) * 7 + c]
                _slip_start(d, s, ti, lo, hi, v, n)


cdef int _add_slips(const Data* d, Search* s, int ti) noexcept nogil:
    """Add to word ti the tokens it starts with one slip undone (those not among its typo
    tokens yet, while ranges are left); return how many were added."""
    cdef Word* w = &s.word[ti]
    cdef int i, added = 0, n = s.tok[ti].len
    cdef int32_t tid
    if s.slip_n[ti] < 0:
        _prefix_slips(d, s, ti)
    for i in range(s.slip_n[ti]):
        if w.nr >= MAXR:
            break
        tid = s.slip_tid[ti][i]
        if _in_typo(w, tid):
            continue
        _push_typo(d, w, tid, TYPO_PEN + PREFIX_PEN + PREFIX_FRAC * (1.0 - (<float>n) / _tok_len(d, tid)))
        added += 1
    return added


cdef inline void _push_typo(const Data* d, Word* w, int32_t tid, float base) noexcept nogil:
    """Append token tid to word w as a typo range of penalty `base` (the caller checks room)."""
    w.lo[w.nr] = tid
    w.hi[w.nr] = tid + 1
    w.base[w.nr] = base
    w.typo[w.nr] = 1
    w.nr += 1
    w.cost += d.v_post_start[tid + 1] - d.v_post_start[tid]


cdef int _typo_ranges(const Data* d, Search* s, int ti, int max_edits) noexcept nogil:
    """Set the typo ranges of token ti: the tokens within 1 edit, or 2 when max_edits allows
    and the word or the token has 9+ letters and the word 7+ (symmetric deletion). Return 1
    when this looked further than before.

    Both the folded word and its spelling with ij for y are looked up: "zeedikj" is one slip
    from "zeedijk", though two from the folded "zeedyk". Closer tokens are kept first."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int n = t.len, i, maxd, look, m, dist, ulen
    cdef char un[UNFOLD_MAX]
    cdef TypoSet* ts
    # the length as the person typed it: "zuije" (folded "zuye") is a 5-letter word
    ulen = _typed_len(p, n)
    if ulen < 5 or t.digits > 0 or n > 38:
        return 0
    # two slips in a word of 9+ letters, which two left-out letters may have made 7 long
    maxd = 2 if ulen >= TWO_SLIP_TYPED and max_edits >= 2 else 1
    look = 2 if max_edits >= 2 else 1
    if w.typo_done >= look:
        return 0
    if w.typo_done == 1 and maxd == 1:
        # the last look at a word too short for two slips: what it may add is the start of
        # the tokens the word begins with one slip undone, where it is a slip from another
        # word ("matrin" is one from Martin, and meant Martinus) or the start of others
        # ("meere" starts Meeren..., and meant Meerweg; PERF: not a whole token, which a
        # person has typed to its end)
        w.typo_done = 2
        if w.nr > 0 and (w.first_typo == 0 or w.exact < 0) and n <= PREFIX_SLIP_LEN and s.max_pass > 2:
            i = _add_slips(d, s, ti)
            _sort_typo_ranges(w)
            return i > 0
        return 0
    w.typo_done = look
    # forget the typo ranges of a narrower look (the prefix ranges stay)
    for i in range(w.first_typo, w.nr):
        w.cost -= d.v_post_start[w.hi[i]] - d.v_post_start[w.lo[i]]
    w.nr = w.first_typo
    w.slips = 0
    ts = <TypoSet*>malloc(sizeof(TypoSet))
    if ts == NULL:
        return 1
    ts.n = 0
    ts.long_only = ulen < TWO_SLIP_LEN
    for i in range(4):
        ts.sound_n[i] = _sound_variant(p, n, i, ts.sound[i])
        if ts.sound_n[i] > 38:
            ts.sound_n[i] = 0
    _typo_variants(d, s, ti, p, n, maxd, maxd, ts)
    for i in range(n):
        if p[i] == 121:
            m = _unfold_ij(p, n, un)
            if m <= 38:
                _typo_variants(d, s, ti, un, m, maxd, maxd, ts)
            break
    # the other spelling of a sound is itself a slip: the rest within one slip less
    for i in range(4):
        if ts.sound_n[i] > 0:
            _typo_variants(d, s, ti, ts.sound[i], ts.sound_n[i], maxd - 1, maxd, ts)
    w.first_typo = w.nr
    for dist in range(1, maxd + 1):
        for i in range(ts.n):
            if ts.dist[i] != dist or w.nr >= MAXR:
                continue
            _push_typo(d, w, ts.tid[i], TYPO_PEN + TYPO_EDIT * (dist - 1))
    if (((ts.n == 0 and w.first_typo == 0) or (look == 2 and (w.first_typo == 0 or w.exact < 0)))
            and n <= PREFIX_SLIP_LEN and s.max_pass > 2):
        # no token starts with the word, and none is one slip away (or the last look has
        # come: "oosterbcroek" is one slip from the name Oosterbroek, though the street meant
        # is Oosterbroekweg; "meere" starts Meeren...): a slip in a word still being typed.
        # PERF: not in the retries (their words matched nothing, slips included)
        _add_slips(d, s, ti)
        w.slips = ts.n == 0 and w.first_typo == 0 and s.slip_n[ti] > 0
    free(ts)
    _sort_typo_ranges(w)
    return 1


cdef inline bint _in_typo(const Word* w, int32_t tid) noexcept nogil:
    """Whether token tid is one of the word's typo tokens (unsorted yet)."""
    cdef int r
    for r in range(w.first_typo, w.nr):
        if w.lo[r] == tid:
            return True
    return False


cdef void _sort_typo_ranges(Word* w) noexcept nogil:
    """Sort the typo ranges by token id, so that matching one is a binary search."""
    cdef int i, j
    cdef int32_t lo, hi
    cdef float base
    cdef uint8_t typo
    for i in range(w.first_typo + 1, w.nr):
        lo, hi, base, typo = w.lo[i], w.hi[i], w.base[i], w.typo[i]
        j = i
        while j > w.first_typo and w.lo[j - 1] > lo:
            w.lo[j], w.hi[j], w.base[j], w.typo[j] = w.lo[j - 1], w.hi[j - 1], w.base[j - 1], w.typo[j - 1]
            j -= 1
        w.lo[j], w.hi[j], w.base[j], w.typo[j] = lo, hi, base, typo


cdef int _blob_lower_bound(const uint8_t* blob, const int64_t* off, int count, const char* w,
                           int n) noexcept nogil:
    """The first of `count` byte-sorted strings (blob[off[i]:off[i+1]]) not below w[:n]."""
    cdef int a = 0, b = count, mid, m, c
    cdef int64_t o
    while a < b:
        mid = (a + b) >> 1
        o = off[mid]
        m = <int>(off[mid + 1] - o)
        c = memcmp(blob + o, w, m if m < n else n)
        if c == 0:
            c = m - n
        if c < 0:
            a = mid + 1
        else:
            b = mid
    return a


cdef inline int _blob_find(const uint8_t* blob, const int64_t* off, int count, const char* w,
                           int n) noexcept nogil:
    """The index of the string equal to w[:n], or -1."""
    cdef int a = _blob_lower_bound(blob, off, count, w, n)
    if a >= count or off[a + 1] - off[a] != n or memcmp(blob + off[a], w, n) != 0:
        return -1
    return a


cdef bint _addition_prefix(const Data* d, const char* w, int n) noexcept nogil:
    """Is w[:n] the start of some registered addition (lower case)?"""
    cdef int a = _blob_lower_bound(d.addl_blob, d.addl_off, d.n_addl, w, n)
    return a < d.n_addl and d.addl_off[a + 1] - d.addl_off[a] >= n \
        and memcmp(d.addl_blob + d.addl_off[a], w, n) == 0


cdef inline bint _number_like(const Tok* t) noexcept nogil:
    """Could this token be a house number (with letters glued on)?"""
    return 0 < t.digits <= 5 and 1 <= t.value <= 99999 and t.len - t.digits <= 4


cdef int _area_tok(const Search* s, bint lone) noexcept nogil:
    """The token of a postcode being typed, or -1: four digits (from 1000), alone or with one
    letter glued on or apart at the end; after a number-like token, or (lone) the only one."""
    cdef int i, k = -1, numbers = 0
    cdef const Tok* t
    for i in range(s.ntok):
        t = &s.tok[i]
        if k < 0 and (numbers > 0 or lone) and t.digits == 4 and t.value >= 1000 and (
                t.len == 4 or (t.len == 5 and 97 <= s.q[t.start + 4] <= 122)):
            k = i
        numbers += _number_like(t)
    return k if not lone or numbers == 1 else -1


cdef void _parse(const Data* d, Search* s, int mode) noexcept nogil:
    """Work out the interpretations of the query: postcode, house number, letter/addition parts.
    Mode 1 also reads a postcode split in two ("5202 de") or being typed after the house number
    ("kerkstraat 12 1017"); mode 2 reads a lone four digits as a postcode being typed
    ("kerkstraat 1017"); mode 3 leaves out the postcode being typed of mode 1; mode 0 none of
    these."""
    cdef bint split_pc = mode == 1
    cdef int i, j, k, pc_tok = -1, pc_tok2 = -1, pc_lo = -1, pc_hi = -1, code, n_alpha = 0
    cdef Tok* t
    cdef Tok* u
    cdef int consumed[MAXT]
    cdef int numcand[MAXT]
    cdef int nnum = 0, all_known = 1, skip, strict, loose_words, no_addition
    cdef int area_lo = -1, area_hi = -1
    cdef Interp* it
    memset(consumed, 0, sizeof(consumed))
    for i in range(s.ntok):
        _word_ranges(d, s, i)
        if s.tok[i].digits == 0:
            n_alpha += 1
    # postcode: 1234AB | 1234 AB | 1234A (last) | 1234 A (last) | 1234 (a query of numbers only)
    for i in range(s.ntok):
        t = &s.tok[i]
        if t.digits != 4 or t.value < 1000:
            continue
        code = t.value * 676
        if t.len == 6:
            pc_lo = pc_hi = code + (s.q[t.start + 4] - 97) * 26 + (s.q[t.start + 5] - 97)
        elif t.len == 5 and i == s.ntok - 1 and n_alpha == 0:
            pc_lo = code + (s.q[t.start + 4] - 97) * 26
            pc_hi = pc_lo + 25
        elif split_pc and t.len == 4 and i + 1 < s.ntok and s.tok[i + 1].digits == 0 and s.tok[i + 1].len == 2:
            u = &s.tok[i + 1]
            pc_lo = pc_hi = code + (s.q[u.start] - 97) * 26 + (s.q[u.start + 1] - 97)
            pc_tok2 = i + 1
        elif split_pc and t.len == 4 and i + 1 == s.ntok - 1 and s.tok[i + 1].digits == 0 and s.tok[i + 1].len == 1 and n_alpha == 1:
            u = &s.tok[i + 1]
            pc_lo = code + (s.q[u.start] - 97) * 26
            pc_hi = pc_lo + 25
            pc_tok2 = i + 1
        elif t.len == 4 and n_alpha == 0 and i == 0:
            pc_lo = code
            pc_hi = code + 675
        else:
            continue
        pc_tok = i
        break
    s.split_pc = pc_tok2 >= 0
    s.area = 0
    if pc_tok >= 0:
        consumed[pc_tok] = 1
        if pc_tok2 >= 0:
            consumed[pc_tok2] = 1
    elif mode > 0 and n_alpha > 0:
        # a postcode being typed ("kerkstraat 12 1017", "... 1017 g", "... 1017g"): the words
        # are read within it; if that finds nothing, without it
        i = _area_tok(s, mode == 2)
        if i >= 0:
            t = &s.tok[i]
            consumed[i] = 1
            area_lo = t.value * 676
            area_hi = area_lo + 675
            if t.len == 5:
                area_lo += (s.q[t.start + 4] - 97) * 26
                area_hi = area_lo + 25
            elif i + 1 == s.ntok - 1 and s.tok[i + 1].digits == 0 and s.tok[i + 1].len == 1:
                consumed[i + 1] = 1
                area_lo += (s.q[s.tok[i + 1].start] - 97) * 26
                area_hi = area_lo + 25
            if mode == 3:
                area_lo = area_hi = -1
            else:
                s.area = t.value
                s.split_pc = 1
    # a word that only says a number follows, after another word and before the number
    # ("kerkstraat no 5", "herestraat nr. 12"), is no word of a name ("no" starts Noordwijk)
    for i in range(1, s.ntok - 1):
        if not consumed[i] and not consumed[i + 1] and s.tok[i].digits == 0 and _number_like(
                &s.tok[i + 1]) and _in_list(_number_ptr, _number_len, _n_number, s.q + s.tok[i].start,
                                            s.tok[i].len):
            consumed[i] = 1
    # house-number candidates: digits (1..5 of them, value 1..99999) with at most 4 letters glued
    for i in range(s.ntok):
        t = &s.tok[i]
        if consumed[i] or t.digits == 0:
            continue
        if _number_like(t) and nnum < 3:
            numcand[nnum] = i
            nnum += 1
        if s.word[i].nr == 0:
            all_known = 0
    s.ninterp = 0
    for k in range(nnum + 1):
        if k == nnum:
            # no house number typed: every numeric token must then be a word of a name
            if nnum > 0 and not all_known:
                continue
        for strict in range(2):
            it = &s.interp[s.ninterp]
            it.pc_lo = pc_lo
            it.pc_hi = pc_hi
            it.area_lo = area_lo
            it.area_hi = area_hi
            it.nparts = 0
            it.nwords = 0
            it.number = -1
            it.place_after = MAXT
            it.street_until = -1
            loose_words = 0
            no_addition = 0
            if k < nnum:
                j = numcand[k]
                t = &s.tok[j]
                it.number = t.value
                if t.len > t.digits:
                    it.part_tok[0] = j
                    it.part_off[0] = t.digits
                    it.nparts = 1
                # short tokens right after the number may be its letter / addition ("3a d37"
                # is the parts a, d, 37); read strictly, a word of 3+ letters ("12 poor") is
                # the start of a place instead
                i = j + 1
                while i < s.ntok and it.nparts < MAXP and not consumed[i] and s.tok[i].len <= 4:
                    if s.tok[i].digits == 0 and s.tok[i].len >= 3 and s.word[i].nr > 0:
                        loose_words += 1
                        if strict:
                            break
                        if not _addition_prefix(d, s.q + s.tok[i].start, s.tok[i].len):
                            no_addition += 1
                    it.part_tok[it.nparts] = i
                    it.part_off[it.nparts] = 0
                    it.nparts += 1
                    i += 1
            if strict and loose_words == 0:
                continue
            # PERF: a word no addition starts with ("dijk 21 sero") is no part of the number:
            # the strict reading has it, and the loose one would scan every `dijk` street
            if not strict and no_addition > 0:
                continue
            for i in range(s.ntok):
                if consumed[i] or (k < nnum and i == numcand[k]):
                    continue
                skip = 0
                for j in range(it.nparts):
                    if it.part_tok[j] == i:
                        skip = 1
                if not skip:
                    it.words[it.nwords] = i
                    it.nwords += 1
            if it.nwords == 0 and it.pc_lo < 0:
                continue
            if k < nnum and it.nwords > 0 and it.words[0] < numcand[k]:
                it.place_after = numcand[k]
                if it.words[it.nwords - 1] > numcand[k]:
                    it.street_until = numcand[k]
            s.ninterp += 1
            if s.ninterp >= MAXI:
                return


# ---------------------------------------------------------------------------------------------
# matching and scoring


cdef inline float _match_word(const Data* d, Search* s, int wi, int32_t t, uint8_t kind) noexcept nogil:
    """Penalty for word wi matching group token t, or -1 when it does not match."""
    cdef Word* w = &s.word[wi]
    cdef int r, k, a
    cdef float best = -1, p
    for r in range(w.first_typo + 1 if s.typo_mode and w.first_typo < w.nr else w.first_typo):
        k = r
        if r == w.first_typo:
            # PERF: the typo tokens are sorted singletons; one binary search finds t among them
            a = _lower_bound(w.lo, w.first_typo, w.nr, t)
            if a == w.nr or w.lo[a] != t:
                continue
            k = a
        if w.lo[k] <= t < w.hi[k]:
            if w.typo[k]:
                p = w.base[k]
            elif t == w.exact:
                p = 0
            elif kind & K_ALIAS and _tok_len(d, t) <= ALIAS_WHOLE_LEN:
                continue
            else:
                p = w.base[k] + PREFIX_PEN + PREFIX_FRAC * (1.0 - (<float>s.tok[wi].len) / _tok_len(d, t))
            if kind & K_ALIAS:
                p += STREET_ALIAS_PEN if (kind & 0x0F) == K_STREET else ALIAS_PEN
            if (kind & 0x0F) == K_MUNICIPALITY:
                p += MUNI_PEN
            if best < 0 or p < best:
                best = p
    return best


cdef inline int _popcount(uint64_t x) noexcept nogil:
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n


cdef bint _group_text(const Data* d, Search* s, const Interp* it, int32_t g, float* pen_out,
                      int* loc_out) noexcept nogil:
    """Do all words of `it` match tokens of group g? Sum their penalties into pen_out."""
    cdef int a = d.g_tok_start[g], b = d.g_tok_start[g + 1], wi, j, bestj
    cdef float pen = 0, p, bp
    cdef uint64_t covered = 0, all_street = 0
    cdef int loc = 0
    cdef uint8_t kind
    cdef uint64_t used = 0   # group tokens taken by earlier words (the first 64)
    for wi in range(it.nwords):
        bp = -1
        bestj = -1
        for j in range(a, b):
            # one token answers one word: "driehuizen 3 driehuizen" needs the street and the place
            if j - a < 64 and (used >> (j - a)) & 1:
                continue
            p = _match_word(d, s, it.words[wi], d.g_rec[j].tok, d.g_rec[j].kind)
            if p >= 0 and it.words[wi] > it.place_after and (d.g_rec[j].kind & 0x0F) == K_STREET:
                p += ORDER_PEN
            elif p >= 0 and it.words[wi] < it.street_until and (d.g_rec[j].kind & 0x0F) != K_STREET:
                p += ORDER_PLACE_PEN  # "schiedam 55 vlaa": Schiedamseweg in Vlaardingen
            if p >= 0 and (bp < 0 or p < bp):
                bp = p
                bestj = j
        if bp < 0:
            return False
        if bestj - a < 64:
            used |= (<uint64_t>1) << (bestj - a)
        pen += bp
        covered |= d.g_rec[bestj].cover
        kind = d.g_rec[bestj].kind & 0x0F
        if kind == K_LOCALITY or kind == K_MUNICIPALITY:
            loc = 1
    for j in range(a, b):
        if d.g_rec[j].kind == K_STREET:
            all_street |= d.g_rec[j].cover
    pen += UNMATCHED_PEN * _popcount(all_street & ~covered)
    pen_out[0] = pen
    loc_out[0] = loc
    return True


cdef inline int _addr_at(const Data* d, int pos, bint is_pc) noexcept nogil:
    return d.pc_addr[pos] if is_pc else pos


cdef int _lower_bound_number(const Data* d, int lo, int hi, int number, bint is_pc) noexcept nogil:
    cdef int mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if d.a_number[_addr_at(d, mid, is_pc)] < number:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef float _suffix_pen(const Data* d, Search* s, const Interp* it, int addr, int32_t g) noexcept nogil:
    """Penalty for the typed letter/addition parts against address addr, or -1 (no match)."""
    cdef int L = _lower(d.a_letter[addr])
    cdef int64_t ao = d.add_off[d.a_addition[addr]]
    cdef int alen = <int>(d.add_off[d.a_addition[addr] + 1] - ao)
    cdef const uint8_t* A = d.add_blob + ao
    cdef int used_l = 0, a_pos = 0, i, k, plen, match
    cdef const char* p
    cdef float pen = 0, wp, bp
    cdef int a, b, j
    for i in range(it.nparts):
        p = s.q + s.tok[it.part_tok[i]].start + it.part_off[i]
        plen = s.tok[it.part_tok[i]].len - it.part_off[i]
        if not used_l and a_pos == 0 and L and plen == 1 and p[0] == L:
            used_l = 1
            continue
        # the addition may come in pieces: "12 l1" arrives as the parts "l" and "1"
        if alen - a_pos >= plen:
            match = 1
            for k in range(plen):
                if _lower(A[a_pos + k]) != p[k]:
                    match = 0
                    break
            if match:
                if plen == 1 and not L and it.part_off[i] != 0:
                    pen += LETTER_AS_ADDITION_PEN  # "93h" reads as letter H before addition H
                a_pos += plen
                continue
        # not a letter or addition of this address: perhaps a word of the street ("10 op het
        # rooth") or the start of the place ("kerkstraat 12 ut"); after "street 12" it is the
        # place (a street word there is read by the strict interpretation, where one token
        # answers one word: "deurninger 23 deur" is not Deurningerstraat twice)
        if it.part_off[i] != 0 or g < 0:
            return -1
        a = d.g_tok_start[g]
        b = d.g_tok_start[g + 1]
        bp = -1
        for j in range(a, b):
            if it.place_after < MAXT and (d.g_rec[j].kind & 0x0F) == K_STREET:
                continue
            wp = _match_word(d, s, it.part_tok[i], d.g_rec[j].tok, d.g_rec[j].kind)
            if wp >= 0 and (bp < 0 or wp < bp):
                bp = wp
        if bp < 0:
            return -1
        pen += bp
    if (L and not used_l) or (alen > 0 and a_pos == 0):
        pen += EXTRA_SUFFIX_PEN  # the address has a letter or addition nobody typed
    if 0 < a_pos < alen:
        pen += PART_PREFIX_PEN   # ... and the typed addition is only its start
    return pen


cdef inline bint _in_area(const Data* d, const Interp* it, int pos, bint is_pc) noexcept nogil:
    """Is the address at pos of a text run within the postcode being typed (if one is)?"""
    return is_pc or it.area_lo < 0 or it.area_lo <= d.a_postcode[pos] <= it.area_hi


cdef int _near_numbers(const Data* d, const Interp* it, int lo, int hi, bint is_pc, int want,
                       int* out_pos, float* out_pen) noexcept nogil:
    """Up to `want` addresses of the run [lo, hi) nearest to the typed number, which none has:
    number by number, the nearer first (the lower of two as near), each number's addresses in
    run order; the typed letter and addition do not count. Each costs as a number prefix."""
    cdef int n = 0, e, a, b, k, start, number = it.number
    cdef int64_t da, db
    e = _lower_bound_number(d, lo, hi, number, is_pc)
    a = e - 1
    b = e
    while n < want and (a >= lo or b < hi):
        da = number - d.a_number[_addr_at(d, a, is_pc)] if a >= lo else 1 << 40
        db = d.a_number[_addr_at(d, b, is_pc)] - number if b < hi else 1 << 40
        if da <= db:
            start = a
            while start > lo and d.a_number[_addr_at(d, start - 1, is_pc)] == d.a_number[_addr_at(d, a, is_pc)]:
                start -= 1
            k = start
            while k <= a and n < want:
                if _in_area(d, it, k, is_pc):
                    out_pos[n] = k
                    out_pen[n] = NUM_PREFIX_PEN
                    n += 1
                k += 1
            a = start - 1
        else:
            k = b
            while k < hi and d.a_number[_addr_at(d, k, is_pc)] == d.a_number[_addr_at(d, b, is_pc)]:
                if n < want and _in_area(d, it, k, is_pc):
                    out_pos[n] = k
                    out_pen[n] = NUM_PREFIX_PEN
                    n += 1
                k += 1
            b = k
    return n


cdef int _addresses(const Data* d, Search* s, const Interp* it, int lo, int hi, bint is_pc,
                    int32_t g, int want, int* out_pos, float* out_pen) noexcept nogil:
    """Up to `want` addresses of the run [lo, hi) for the typed number, in this order.

    Exact house numbers first (by suffix penalty, then position); then numbers that start with
    the typed digits, block by block (10..19 before 100..199) in house-number order, each block
    in the order of the run (120A before 121). With no number typed: the lowest numbers first.
    """
    cdef int n = 0, i, e, pos, addr, lo2, hi2, digits, j, k
    cdef float pen
    cdef int number = it.number
    cdef int64_t scale
    if s.near_number and number >= 0:
        return _near_numbers(d, it, lo, hi, is_pc, want, out_pos, out_pen)
    if number < 0:
        i = lo
        while i < hi and n < want:
            if _in_area(d, it, i, is_pc):
                out_pos[n] = i
                out_pen[n] = 0
                n += 1
            i += 1
        return n
    e = _lower_bound_number(d, lo, hi, number, is_pc)
    i = e
    while i < hi and d.a_number[_addr_at(d, i, is_pc)] == number and i - e < SAME_NUMBER_CAP:
        addr = _addr_at(d, i, is_pc)
        pen = _suffix_pen(d, s, it, addr, d.a_group[addr] if is_pc else g) if _in_area(
            d, it, i, is_pc) else -1
        if pen >= 0:
            # insertion into the sorted output (small arrays)
            k = n if n < want else want - 1
            if n < want or pen < out_pen[want - 1]:
                while k > 0 and out_pen[k - 1] > pen:
                    if k < want:
                        out_pos[k] = out_pos[k - 1]
                        out_pen[k] = out_pen[k - 1]
                    k -= 1
                out_pos[k] = i
                out_pen[k] = pen
                if n < want:
                    n += 1
        i += 1
    if it.nparts > 0 or n >= want or s.pc_strict == 2:
        # (a postcode with a slip undone is read for the house number as typed)
        return n
    scale = 10
    digits = 1
    while number * scale <= 99999 and n < want:
        lo2 = _lower_bound_number(d, lo, hi, <int>(number * scale), is_pc)
        i = lo2
        while i < hi and n < want and d.a_number[_addr_at(d, i, is_pc)] < number * scale + scale:
            addr = _addr_at(d, i, is_pc)
            if not _in_area(d, it, i, is_pc):
                i += 1
                continue
            out_pos[n] = i
            out_pen[n] = NUM_PREFIX_PEN + NUM_PREFIX_DIGIT * (digits - 1)
            if d.a_letter[addr] or d.a_addition[addr]:
                out_pen[n] += EXTRA_SUFFIX_PEN
            n += 1
            i += 1
        scale *= 10
        digits += 1
    return n


cdef inline float _prior(const Data* d, Search* s, int32_t g, int loc_typed) noexcept nogil:
    cdef double dy, dx, km
    if s.has_focus:
        dy = (d.g_lat[g] * 1e-6 - s.focus_lat) * 111.2
        dx = (d.g_lon[g] * 1e-6 - s.focus_lon) * 111.2 * s.cos_lat
        km = sqrt(dx * dx + dy * dy)
        return <float>(FOCUS_NEAR / (1.0 + km / FOCUS_KM)) + FOCUS_SHARE * d.g_prior[g]
    return d.g_prior[g] * (LOCALITY_PRIOR if loc_typed else NO_LOCALITY_PRIOR)


cdef inline bint _below(float score_a, int32_t id_a, float score_b, int32_t id_b) noexcept nogil:
    """Does (score_a, id_a) rank below (score_b, id_b)? Higher score first, then lower id."""
    return score_a < score_b or (score_a == score_b and id_a > id_b)


cdef void _pool_add(Search* s, int32_t g, float score, float text_pen, int interp, int loc) noexcept nogil:
    cdef int i, worst = 0
    for i in range(s.npool):
        if s.pool[i].group == g:
            if score > s.pool[i].score:
                s.pool[i].score = score
                s.pool[i].text_pen = text_pen
                s.pool[i].interp = interp
                s.pool[i].loc = loc
            return
    if s.npool < s.pool_cap:
        i = s.npool
        s.npool += 1
    else:
        for i in range(1, s.npool):
            if _below(s.pool[i].score, s.pool[i].group, s.pool[worst].score, s.pool[worst].group):
                worst = i
        if _below(score, g, s.pool[worst].score, s.pool[worst].group):
            return
        i = worst
    s.pool[i].group = g
    s.pool[i].score = score
    s.pool[i].text_pen = text_pen
    s.pool[i].interp = interp
    s.pool[i].loc = loc
    if s.npool == s.pool_cap:
        s.floor = s.pool[0].score
        for i in range(1, s.npool):
            if s.pool[i].score < s.floor:
                s.floor = s.pool[i].score


cdef inline bint _beyond_reach(Search* s, float prior) noexcept nogil:
    """True when a group of this prior, and every later group of a list in prior order, cannot
    enter the full pool: its score is at most its prior minus the least penalties of the words.
    With a focus point the prior term is at most its value at the point itself (`_prior`)."""
    if s.has_focus:
        return FOCUS_NEAR + FOCUS_SHARE * prior + FOCUS_EPS - s.min_pen - s.tok_pen < s.floor
    return prior * PRIOR_WEIGHT_MAX - s.min_pen - s.tok_pen < s.floor


cdef inline bint _out_of_reach(const Data* d, Search* s, int32_t g, float prior, uint8_t meta,
                               uint64_t xsig, uint32_t first) noexcept nogil:
    """True when this one group cannot enter the full pool through the scanned token, by what is
    stored beside its posting (build.py `_posting_meta`): the token's kind (municipality,
    alias), the street words it leaves uncovered that the other words cannot all cover, and the
    other words that are whole tokens somewhere but not in this group (those cost a prefix).
    With a focus point, the group's own distance term (two reads beside the group's prior)."""
    cdef float extra = 0
    cdef int unc = meta & 15, glued = (meta >> 4) & 1, k = s.others, lb, i
    if (first & s.need1) != s.need1:
        return True       # a one-letter word that no token of the group starts with
    if meta & 0x80:
        extra += MUNI_PEN
    if meta & 0x40:
        extra += ALIAS_PEN if meta & 0xA0 else STREET_ALIAS_PEN   # of a place, or of a street
    # each other word covers one street word, or two through a glued form ("hc", "thofje")
    lb = unc - k - (k if k < glued else glued)
    if lb > 0:
        extra += UNMATCHED_PEN * lb
    for i in range(s.nx):
        if not (xsig >> s.xbit[i]) & 1:
            extra += PREFIX_PEN if PREFIX_PEN < TYPO_PEN else TYPO_PEN
    if s.has_focus:
        return _prior(d, s, g, 0) + FOCUS_EPS - s.min_pen - s.tok_pen - extra < s.floor
    # matched through a place token, the place was typed: the prior counts LOCALITY_PRIOR
    return prior * (LOCALITY_PRIOR if meta & 0xA0 else PRIOR_WEIGHT_MAX) - s.min_pen - s.tok_pen - extra < s.floor


cdef void _consider_group(const Data* d, Search* s, int ii, int32_t g) noexcept nogil:
    cdef float text_pen, score
    cdef int loc, n
    cdef int pos[1]
    cdef float apen[1]
    cdef Interp* it = &s.interp[ii]
    # PERF: a bound on the work of one query; only inputs of a few very common letters reach
    # it ("de ha"), where the groups seen first (highest prior) are the ones to show anyway
    if s.considered >= MAX_CONSIDER or _spent(s):
        return
    s.considered += 1
    s.work += WORK_PER_GROUP
    if s.province >= 0 and d.g_province[g] != s.province:
        return
    if not _group_text(d, s, it, g, &text_pen, &loc):
        return
    n = _addresses(d, s, it, d.g_start[g], d.g_start[g + 1], False, g, 1, pos, apen)
    if n == 0:
        return
    score = -(text_pen + apen[0]) + _prior(d, s, g, loc)
    _pool_add(s, g, score, text_pen, ii, loc)


cdef bint _scan_short_prefix(const Data* d, Search* s, int ii, int wi, uint64_t need) noexcept nogil:
    """Scan the precomputed best groups of a short prefix; False when it has no such list."""
    cdef Tok* t = &s.tok[wi]
    cdef int a = _blob_find(d.sp_blob, d.sp_off, d.n_sp, s.q + t.start, t.len), p
    if a < 0:
        return False
    # the complete word first (a person who typed "s" may mean the token "s" itself)
    s.tok_pen = 0
    if s.word[wi].exact >= 0:
        for p in range(d.v_post_start[s.word[wi].exact], d.v_post_start[s.word[wi].exact + 1]):
            if p - d.v_post_start[s.word[wi].exact] >= EXACT_CAP or _beyond_reach(s, d.v_post_prior[p]):
                break
            if (d.v_post_sig[p] & need) == need and not _out_of_reach(
                    d, s, d.v_post[p], d.v_post_prior[p], d.v_post_meta[p], d.v_post_xsig[p],
                    d.v_post_first[p]):
                _consider_group(d, s, ii, d.v_post[p])
    # the list is in order of prior minus the word's penalty on the group's shortest token;
    # each entry is checked on its own, from data stored beside it
    for p in range(d.sp_start[a], d.sp_start[a + 1]):
        if (d.sp_sig[p] & need) != need:
            continue
        if d.sp_toklen[p] == t.len:
            s.tok_pen = 0
        else:
            s.tok_pen = PREFIX_PEN + PREFIX_FRAC * (1.0 - (<float>t.len) / d.sp_toklen[p])
        if _out_of_reach(d, s, d.sp_group[p], d.sp_prior[p], d.sp_meta[p], d.sp_xsig[p], d.sp_first[p]):
            continue
        _consider_group(d, s, ii, d.sp_group[p])
    return True


cdef inline float _tok_pen(const Data* d, Search* s, int wi, int r, int32_t t) noexcept nogil:
    """The least penalty of word wi on token t reached through its range r (kinds add more)."""
    cdef Word* w = &s.word[wi]
    if w.typo[r]:
        return w.base[r]
    if t == w.exact:
        return 0
    return w.base[r] + PREFIX_PEN + PREFIX_FRAC * (1.0 - (<float>s.tok[wi].len) / _tok_len(d, t))


cdef float _min_pen(Search* s, Interp* it, int driver) noexcept nogil:
    """A lower bound of the text penalty of the words but the driver: a word with no complete
    token costs at least a prefix."""
    cdef float pen = 0
    cdef int wi
    for wi in range(it.nwords):
        if it.words[wi] != driver and s.word[it.words[wi]].exact < 0:
            pen += PREFIX_PEN if PREFIX_PEN < TYPO_PEN else TYPO_PEN
    return pen


cdef uint64_t _need_mask(Search* s, Interp* it, int driver) noexcept nogil:
    """Signature bits that every group matching all words but the driver must carry."""
    cdef uint64_t need = 0
    cdef int wi, ti, r, skip
    cdef Tok* t
    for wi in range(it.nwords):
        ti = it.words[wi]
        t = &s.tok[ti]
        if ti == driver or t.len < 2:
            continue
        if t.len == 2 and s.q[t.start + 1] == 105:  # "ri" may be "ry..." (ij)
            continue
        skip = 0
        if s.typo_mode:
            for r in range(s.word[ti].nr):
                if s.word[ti].typo[r]:
                    skip = 1
        if not skip:
            need |= (<uint64_t>1) << _sig_bit(s.q + t.start, t.len)
    return need


cdef void _scan_text(const Data* d, Search* s, int ii) noexcept nogil:
    """Walk the postings of the rarest word of interpretation ii and score every group."""
    cdef Interp* it = &s.interp[ii]
    cdef int wi, best = -1, r, t, cap, p, pe
    cdef int64_t bestcost = -1, total, budget
    cdef uint64_t need
    cdef Word* w
    for wi in range(it.nwords):
        w = &s.word[it.words[wi]]
        if w.nr == 0:
            return
        if bestcost < 0 or w.cost < bestcost:
            bestcost = w.cost
            best = it.words[wi]
    if best < 0:
        return
    need = _need_mask(s, it, best)
    s.min_pen = _min_pen(s, it, best)
    s.others = it.nwords - 1
    s.nx = 0
    s.need1 = 0
    for wi in range(it.nwords):
        t = it.words[wi]
        if t != best and s.word[t].exact >= 0:
            s.xbit[s.nx] = <int>(_fnv(s.q + s.tok[t].start, s.tok[t].len) >> 58)
            s.nx += 1
        # "i" may be on its way to "ij", folded "y": no filter for it
        if t != best and s.tok[t].len == 1 and s.q[s.tok[t].start] != 105:
            s.need1 |= (<uint32_t>1) << _first_bit(s.q[s.tok[t].start])
    s.considered = 0  # the bound holds per interpretation: one reading cannot starve another
    # PERF: with other words to filter on, the signatures make a long scan cheap
    budget = SCAN_BUDGET if need else SCAN_ALONE
    w = &s.word[best]
    for r in range(w.nr):
        if w.typo[r] and not s.typo_mode:
            continue
        total = d.v_post_start[w.hi[r]] - d.v_post_start[w.lo[r]]
        if total > budget and r == 0 and _scan_short_prefix(d, s, ii, best, need):
            continue
        if total <= budget:
            # each token's postings are in prior order: stop a token once out of reach
            for t in range(w.lo[r], w.hi[r]):
                s.tok_pen = _tok_pen(d, s, best, r, t)
                if _spent(s):
                    return
                s.work += d.v_post_start[t + 1] - d.v_post_start[t]
                for p in range(d.v_post_start[t], d.v_post_start[t + 1]):
                    # PERF: the signature rejects most groups without touching them
                    if (d.v_post_sig[p] & need) == need:
                        if _beyond_reach(s, d.v_post_prior[p]):
                            break
                        if not _out_of_reach(d, s, d.v_post[p], d.v_post_prior[p], d.v_post_meta[p],
                                             d.v_post_xsig[p], d.v_post_first[p]):
                            _consider_group(d, s, ii, d.v_post[p])
        else:
            # PERF: a very short prefix ("a", "ka"): take the exact token in full and the
            # best-prior groups of every other token, within the budget.
            cap = budget // (w.hi[r] - w.lo[r])
            if cap < TOKEN_CAP_MIN:
                cap = TOKEN_CAP_MIN
            # NOTE: a group's best token may be one whose postings the cap cut, so the bound
            # here cannot count on this token's penalty
            s.tok_pen = 0
            for t in range(w.lo[r], w.hi[r]):
                p = d.v_post_start[t]
                pe = d.v_post_start[t + 1]
                if t != w.exact and pe - p > cap:
                    pe = p + cap
                if _spent(s):
                    return
                s.work += pe - p
                while p < pe:
                    if (d.v_post_sig[p] & need) == need:
                        if _beyond_reach(s, d.v_post_prior[p]):
                            break
                        if not _out_of_reach(d, s, d.v_post[p], d.v_post_prior[p], d.v_post_meta[p],
                                             d.v_post_xsig[p], d.v_post_first[p]):
                            _consider_group(d, s, ii, d.v_post[p])
                    p += 1


cdef inline int _pc_index(const Data* d, int code) noexcept nogil:
    return _lower_bound(d.pc_code, 0, d.n_pc, code)


cdef inline int _pc_find(const Data* d, const char* digits, const char* letters) noexcept nogil:
    """The index of the registered postcode of four digits and two (lower-case) letters, or -1."""
    cdef int code, p
    if digits[0] == 48 or not (97 <= letters[0] <= 122 and 97 <= letters[1] <= 122):
        return -1
    code = (((digits[0] - 48) * 10 + digits[1] - 48) * 10 + digits[2] - 48) * 10 + digits[3] - 48
    code = code * 676 + (letters[0] - 97) * 26 + (letters[1] - 97)
    p = _pc_index(d, code)
    return p if p < d.n_pc and d.pc_code[p] == code else -1


cdef inline bint _pc_holds(const Data* d, int p, int number) noexcept nogil:
    """Does postcode p (an index into pc_code) hold a house with this number?"""
    cdef int hi = d.pc_start[p + 1]
    cdef int a = _lower_bound_number(d, d.pc_start[p], hi, number, True)
    return a < hi and d.a_number[d.pc_addr[a]] == number


cdef void _cand_add(Search* s, float score, int32_t addr, int32_t key, int interp) noexcept nogil:
    cdef int i, worst
    for i in range(s.ncand):
        if s.cand[i].addr == addr:
            if score > s.cand[i].score:
                s.cand[i].score = score
            return
    if s.ncand >= POOL * MAXLIMIT + 64:
        # full: the new one replaces the worst, if it is better (ties: the lower address)
        worst = 0
        for i in range(1, s.ncand):
            if _below(s.cand[i].score, s.cand[i].addr, s.cand[worst].score, s.cand[worst].addr):
                worst = i
        if _below(score, addr, s.cand[worst].score, s.cand[worst].addr):
            return
        s.cand[worst].score = score
        s.cand[worst].addr = addr
        s.cand[worst].key = key
        s.cand[worst].interp = interp
        return
    s.cand[s.ncand].score = score
    s.cand[s.ncand].addr = addr
    s.cand[s.ncand].key = key
    s.cand[s.ncand].interp = interp
    s.ncand += 1


cdef float _round_pen(int limit) noexcept nogil:
    """Spreading: a second address of the same street or postcode costs this much per place.

    A short list spreads harder than a long one: with 3 slots a second Kerkstraat in the same
    town is worth less than the likeliest Kerkstraat elsewhere; with 10 slots there is room."""
    return ROUND_BASE + ROUND_SHORT / limit


cdef inline bint _names_elsewhere(const Search* s, int ti) noexcept nogil:
    """Postcode mode: does typed word ti, which names nothing of an address, rule it out? A
    number does, and a whole registered word of 4+ letters as typed ("zijl"); with pc_strict
    (a reading with a slip undone, or respaced) every word does."""
    cdef const Tok* t = &s.tok[ti]
    return (s.pc_strict or t.digits == t.len
            or (t.digits == 0 and s.word[ti].exact >= 0 and _typed_len(s.q + t.start, t.len) >= 4))


cdef void _collect_pc(const Data* d, Search* s, int ii) noexcept nogil:
    """Postcode mode: score the addresses of the typed postcode (or postcode prefix)."""
    cdef Interp* it = &s.interp[ii]
    cdef int p0 = _pc_index(d, it.pc_lo), p, lo, hi, n, j, addr, g, wi, jj, scanned = 0
    cdef int n_pc, want
    cdef int pos[MAXLIMIT]
    cdef float apen[MAXLIMIT]
    cdef float wp, bp, rp = _round_pen(s.limit)
    cdef int last_g, last_ok = 1
    cdef float last_pen = 0
    # a postcode prefix spreads over postcodes: with enough of them one address each will do
    n_pc = _pc_index(d, it.pc_hi + 1) - p0
    want = s.limit if n_pc <= 1 else (s.limit + n_pc - 1) // n_pc
    p = p0
    while p < d.n_pc and d.pc_code[p] <= it.pc_hi and scanned < PC_PREFIX_CAP:
        lo = d.pc_start[p]
        hi = d.pc_start[p + 1]
        scanned += hi - lo
        n = _addresses(d, s, it, lo, hi, True, -1, want, pos, apen)
        last_g = -1
        for j in range(n):
            addr = d.pc_addr[pos[j]]
            g = d.a_group[addr]
            if g != last_g:
                last_g = g
                last_pen = 0
                last_ok = 1
                # typed words should name this street or place; unknown ones cost, never hide,
                # except a number, which must be the house number or in the name ("1017 gl
                # 12 2" is no house 2 with a stray 12), and a whole name of 4+ letters that
                # is not this address's ("azaleastraat 111 9675cd": a slip in the postcode)
                for wi in range(it.nwords):
                    bp = -1
                    for jj in range(d.g_tok_start[g], d.g_tok_start[g + 1]):
                        wp = _match_word(d, s, it.words[wi], d.g_rec[jj].tok, d.g_rec[jj].kind)
                        if wp >= 0 and (bp < 0 or wp < bp):
                            bp = wp
                    if bp < 0 and _names_elsewhere(s, it.words[wi]):
                        last_ok = 0
                    last_pen += bp if bp >= 0 else UNKNOWN_WORD_PEN
            if not last_ok:
                continue
            _cand_add(s, -(apen[j] + last_pen) + PC_PRIOR * d.g_prior[g] - rp * j, addr, p, ii)
        p += 1


cdef void _collect_text(const Data* d, Search* s) noexcept nogil:
    """Turn the pool of best groups into candidate addresses, spread over groups and names."""
    cdef int i, j, n
    cdef int pos[MAXLIMIT]
    cdef float apen[MAXLIMIT]
    cdef PoolItem* pi
    cdef float base, rp = _round_pen(s.limit)
    cdef int32_t g
    for i in range(s.npool):
        pi = &s.pool[i]
        g = pi.group
        n = _addresses(d, s, &s.interp[pi.interp], d.g_start[g], d.g_start[g + 1], False, g,
                       s.limit, pos, apen)
        base = -pi.text_pen + _prior(d, s, g, pi.loc)
        for j in range(n):
            _cand_add(s, base - apen[j] - rp * j, pos[j], g, pi.interp)


cdef void _select(Search* s, int* out, int* nout) noexcept nogil:
    """Pick the `limit` best candidates; ties break on the address id (deterministic)."""
    cdef int i, j, best, n = 0
    cdef uint8_t taken[POOL * MAXLIMIT + 64]
    memset(taken, 0, s.ncand)
    while n < s.limit:
        best = -1
        for i in range(s.ncand):
            if taken[i]:
                continue
            if best < 0 or s.cand[i].score > s.cand[best].score or (
                    s.cand[i].score == s.cand[best].score and s.cand[i].addr < s.cand[best].addr):
                best = i
        if best < 0:
            break
        taken[best] = 1
        out[n] = s.cand[best].addr
        n += 1
    nout[0] = n


# PERF: the work of one query, whatever it is, is bounded (issue 11): queries of many one-letter
# words and numbers ("d b br br 1 o b b 9288 b br") have many readings, each retried with
# slips, respaced and without some words, and every reading walks postings and scores groups;
# their product took 15 ms. Each posting walked counts 1 and each group scored WORK_PER_GROUP;
# once a query has spent _work_budget, no further group is scored and no further reading is
# tried: the answer is the best found so far (deterministic: the same query stops at the same
# point). No query of the public set comes near it (see benchmarks/fuzz.py).
cdef int64_t _work_budget = 25000


def _set_work_budget(int64_t budget):
    """Set the work budget of a query (benchmarks/fuzz.py calibrates it; not for serving)."""
    global _work_budget
    _work_budget = budget


cdef inline bint _spent(const Search* s) noexcept nogil:
    return s.work >= _work_budget


cdef int _search(const Data* d, Search* s, int* out) noexcept nogil:
    """Run one query (already folded into s.q); write up to s.limit address ids to out."""
    cdef int n = 0
    s.work = 0
    _tokenise(s)
    if s.ntok == 0:
        return 0
    if s.ntok == 1 and not s.has_focus and d.n_sa > 0:
        n = _stored_answer(d, s, out)
        if n >= 0:
            return n
    cdef int nothing[MAXT]
    cdef int whole[MAXT]
    cdef int loose[MAXT]
    cdef int i
    s.max_pass = 4
    s.near_number = 0
    s.province = -1
    s.defer_slips = s.ntok <= DROP_MAX_TOKENS and s.ntok > 1
    s.deferred = 0
    _read(d, s)
    s.defer_slips = 0
    if s.ncand == 0 and s.ntok <= DROP_MAX_TOKENS:
        # the words that match nothing at all, not even with a slip (a slip in a word still
        # being typed is a guess too far to keep the word for); the whole tokens
        for i in range(s.ntok):
            nothing[i] = s.tok[i].digits == 0 and (s.word[i].nr == 0 or s.word[i].slips)
            whole[i] = s.word[i].exact >= 0
            # ... and, for leaving out, also the words that match only with a slip, with which
            # the query found nothing ("wirle de zwijgerlaan 5 cast": a slip in willem, whose
            # start, undone, too many words share to list)
            loose[i] = s.tok[i].digits == 0 and s.word[i].first_typo == 0
        # PERF: a respaced reading is read as typed only; a retry without some words looks
        # for one slip only in words that match nothing as typed
        s.max_pass = 1
        # (in postcode mode a respaced reading must name the address with every word: "es
        # weg" for "esweg" is no reading of a postcode's Legroweg)
        s.pc_strict = 1
        _respace_retry(d, s, nothing, whole)
        s.pc_strict = 0
        s.max_pass = 2
        if s.ncand == 0 and s.ntok > 1:
            _drop_retry(d, s, nothing, loose, whole)
        if s.ncand == 0 and s.ntok > 1:
            # "oudegracht 98 utrecht": the street is there, the number not (or not yet in the
            # register): its nearest numbers, read as typed or with one slip in a word that
            # matches nothing
            for i in range(s.ntok):
                if _number_like(&s.tok[i]):
                    s.near_number = 1
                    s.max_pass = 2
                    _read(d, s)
                    s.near_number = 0
                    break
        if s.ncand == 0 and s.deferred:
            s.max_pass = 4
            _read(d, s)
    _select(s, out, &n)
    return n


cdef int _stored_answer(const Data* d, Search* s, int* out) noexcept nogil:
    """The stored answer of a one-word query (build.py `_stored_answers`), or -1 if none."""
    cdef int a = _blob_find(d.sa_blob, d.sa_off, d.n_sa, s.q + s.tok[0].start, s.tok[0].len), i, lo, hi
    if a < 0:
        return -1
    lo = d.sa_start[a * MAXLIMIT + s.limit - 1]
    hi = d.sa_start[a * MAXLIMIT + s.limit]
    for i in range(hi - lo):
        out[i] = d.sa_addr[lo + i]
    return hi - lo


cdef void _focus_area(const Data* d, Search* s, int digits) noexcept nogil:
    """Take as focus point the first address of the first postcode from these four digits."""
    cdef int p = _pc_index(d, (digits if digits >= 1000 else 1000) * 676)
    cdef int32_t a
    if p >= d.n_pc:
        p = d.n_pc - 1
    a = d.pc_addr[d.pc_start[p]]
    s.has_focus = 1
    s.focus_lat = d.a_lat[a] * 1e-6
    s.focus_lon = d.a_lon[a] * 1e-6
    s.cos_lat = cos(s.focus_lat * 3.141592653589793 / 180.0)


cdef void _read(const Data* d, Search* s) noexcept nogil:
    """Parse the tokens and score every reading of them."""
    cdef int focus = s.has_focus, area
    _parse(d, s, 1)
    _passes(d, s)
    if s.ncand == 0 and s.split_pc:
        # "5202 de run veldhoven": 5202 DE was no postcode here, so 5202 is a house number;
        # "kastanjestraat 1 9000": no 9000 postcode here, but the addition 9000
        area = s.area
        _parse(d, s, 0)
        _passes(d, s)
        if s.ncand == 0 and area:
            # "kerkstraat 12 2011": the words without it, near it (unless the caller gave a
            # focus point)
            _parse(d, s, 3)
            if not focus:
                _focus_area(d, s, area)
            _passes(d, s)
            s.has_focus = focus
    if s.ncand == 0 and _area_tok(s, True) >= 0:
        # "kerkstraat 1017": no such house number, so a postcode being typed
        _parse(d, s, 2)
        _passes(d, s)


cdef int _list_index(const char** ptr, const int* lens, int count, const char* w, int n) noexcept nogil:
    cdef int i
    for i in range(count):
        if lens[i] == n and memcmp(ptr[i], w, n) == 0:
            return i
    return -1


cdef inline bint _in_list(const char** ptr, const int* lens, int count, const char* w, int n) noexcept nogil:
    return _list_index(ptr, lens, count, w, n) >= 0


cdef int32_t _typed_province(const Data* d, Search* s, const Tok* t, const int* drop, int n) noexcept nogil:
    """The province that the region words left out name (the last that names one), or -1:
    "bergen limburg", "oosterhout nb", "hoorn noord-holland"."""
    cdef int i, j
    cdef int32_t p = -1
    for i in range(n):
        if drop[i] != 2:
            continue
        j = _list_index(_region_ptr, _region_len, _n_region, s.q + t[i].start, t[i].len)
        if j < 0:
            continue
        if d.region_prov[j] >= 0:
            p = d.region_prov[j]
        elif t[i].len == 7 and memcmp(s.q + t[i].start, b"holland", 7) == 0 and i > 0 and drop[i - 1] == 2:
            if t[i - 1].len == 5 and memcmp(s.q + t[i - 1].start, b"noord", 5) == 0:
                p = d.prov_nh
            elif t[i - 1].len == 4 and memcmp(s.q + t[i - 1].start, b"zuid", 4) == 0:
                p = d.prov_zh
    return p


cdef struct Respace:
    # the state of `_respace_retry`: the query as typed, and the cuts of the word being split
    char orig[QBUF]
    Tok tok[MAXT]
    int olen
    int n
    int cut[MAXCUT]     # offsets in token `word` where a space goes, ascending
    int ncut
    int word
    int whole_word      # r.word is a whole token itself: cut it only into two whole tokens
    int tries
    int probes          # prefix searches left for cutting words


cdef int _respell(const Respace* r, int glue, char* out) noexcept nogil:
    """The typed tokens joined by single spaces, with the cuts of r.word made (r.ncut spaces
    inserted) or, for glue >= 0, token glue glued to the next. Returns the length, or -1 when
    it would not fit the query buffer."""
    cdef int j, c, m = 0, a, prev
    for j in range(r.n):
        if m + r.tok[j].len + r.ncut + 1 >= QBUF - 2:
            return -1
        if j > 0 and j != glue + 1:
            out[m] = 32
            m += 1
        a = r.tok[j].start
        prev = 0
        if j == r.word:
            for c in range(r.ncut):
                memcpy(out + m, r.orig + a + prev, r.cut[c] - prev)
                m += r.cut[c] - prev
                out[m] = 32
                m += 1
                prev = r.cut[c]
        memcpy(out + m, r.orig + a + prev, r.tok[j].len - prev)
        m += r.tok[j].len - prev
    return m


cdef bint _try_respelled(const Data* d, Search* s, Respace* r, int glue) noexcept nogil:
    """Read the query respelled (`_respell`) instead; True when that finds something."""
    cdef int m = _respell(r, glue, s.q)
    if m < 0:
        return False
    r.tries += 1
    s.qlen = m
    _tokenise(s)
    _read(d, s)
    return s.ncand > 0


cdef inline int _probe(const Data* d, Respace* r, const char* w, int n) noexcept nogil:
    """1 when w[:n] starts a token, 2 when it also is one, 0 otherwise."""
    cdef int32_t lo, hi
    r.probes -= 1
    _prefix_range(d, w, n, &lo, &hi)
    if lo >= hi:
        return 0
    return 2 if _tok_len(d, lo) == n else 1


cdef bint _cut_word(const Data* d, Search* s, Respace* r, int pos, int pieces) noexcept nogil:
    """Cut r.word from offset pos on into `pieces` pieces: whole tokens of 2+ letters and a
    last piece that starts one, trying each such cutting (leftmost cuts first) until one
    finds something."""
    cdef const char* w = r.orig + r.tok[r.word].start
    cdef int L = r.tok[r.word].len, c
    for c in range(pos + 2, L - 1):
        if r.tries >= RESPACE_TRIES or r.probes <= 0:
            return False
        if _probe(d, r, w + pos, c - pos) != 2:
            continue
        r.cut[r.ncut] = c
        r.ncut += 1
        if pieces == 2:
            if _probe(d, r, w + c, L - c) > r.whole_word and _try_respelled(d, s, r, -1):
                return True
        elif _cut_word(d, s, r, c, pieces - 1):
            return True
        r.ncut -= 1
    return False


cdef void _respace_retry(const Data* d, Search* s, const int* nothing, const int* whole) noexcept nogil:
    """Nothing found: read the query again with its words spaced as the register spaces them.
    First digits cut from what is glued to them ("12utrecht", "9711ljgroningen", "129711lj");
    then two typed words glued where together they start a registered word ("kerk straat",
    "paters woldseweg", "hooi str"); then one typed word cut into words that are ("dehoven",
    "vanspeykstraat", "ankvandermoerstraat"): each piece but the last a whole token of 2+
    letters, the last the start of one, the fewest pieces first. A word that is a whole token
    itself is cut only in two whole tokens ("nieuwedijk" is a street, not in Kesteren). At
    most RESPACE_TRIES readings, in that order; the first that finds something answers.
    PERF: a word that matches nothing, even with a slip, fails every reading it is not
    respelled in: then only that word is cut, and no words are glued."""
    cdef Respace r
    cdef int i, L, pieces, n_nothing = 0
    cdef char both[QBUF]
    cdef const Tok* t
    cdef const char* w
    cdef int c, p, number
    r.n = s.ntok
    r.olen = s.qlen
    r.ncut = 0
    r.word = -1
    r.whole_word = 0
    r.tries = 0
    r.probes = RESPACE_PROBES
    memcpy(r.orig, s.q, s.qlen)
    memcpy(r.tok, s.tok, sizeof(Tok) * r.n)
    for i in range(r.n):
        n_nothing += nothing[i]
    for i in range(r.n):
        # digits glued to what follows them: a number to the word after it ("kerkstraat
        # 12utrecht": 5+ letters are more than an addition has, and they start a registered
        # word); a registered postcode to the place ("9711ljgroningen"); the house number to a
        # registered postcode, where a pasted address lost its line break ("herestraat 129711 lj")
        if r.tries >= RESPACE_TRIES:
            break
        t = &r.tok[i]
        w = r.orig + t.start
        c = 0
        if 0 < t.digits <= 5 and t.len - t.digits >= 5 and n_nothing == 0 and _probe(
                d, &r, w + t.digits, t.len - t.digits) > 0:
            c = t.digits
        elif t.digits == 4 and t.len >= 9 and _pc_find(d, w, w + 4) >= 0 and _probe(d, &r, w + 6, t.len - 6) > 0:
            c = 6
        elif 5 <= t.digits <= 9:
            # the postcode must hold that house number: then the break is what was lost
            p = -1
            if t.len == t.digits + 2:
                p = _pc_find(d, w + t.digits - 4, w + t.digits)
            elif t.len == t.digits and i + 1 < r.n and r.tok[i + 1].len == 2 and r.tok[i + 1].digits == 0:
                p = _pc_find(d, w + t.digits - 4, r.orig + r.tok[i + 1].start)
            if p >= 0:
                number = 0
                for L in range(t.digits - 4):
                    number = number * 10 + w[L] - 48
                if _pc_holds(d, p, number):
                    c = t.digits - 4
        if c > 0:
            r.word = i
            r.cut[0] = c
            r.ncut = 1
            if _try_respelled(d, s, &r, -1):
                return
            r.ncut = 0
            r.word = -1
    for i in range(r.n - 1):
        if r.tries >= RESPACE_TRIES or n_nothing > 0:
            break
        if r.tok[i].digits or r.tok[i + 1].digits:
            continue
        L = r.tok[i].len + r.tok[i + 1].len
        memcpy(both, r.orig + r.tok[i].start, r.tok[i].len)
        memcpy(both + r.tok[i].len, r.orig + r.tok[i + 1].start, r.tok[i + 1].len)
        if _probe(d, &r, both, L) > 0 and _try_respelled(d, s, &r, i):
            return
    for i in range(r.n):
        if r.tok[i].digits or r.tok[i].len < 4 or n_nothing > nothing[i]:
            continue
        r.word = i
        r.whole_word = whole[i]
        # the fewest pieces first: "burgemeestercreutzlaan" is two words, not "bu rg ..."
        for pieces in range(2, 3 if whole[i] else MAXCUT + 2):
            r.ncut = 0
            if _cut_word(d, s, &r, 0, pieces):
                return
    memcpy(s.q, r.orig, r.olen)
    s.qlen = r.olen
    memcpy(s.tok, r.tok, sizeof(Tok) * r.n)
    s.ntok = r.n


cdef inline bint _postcode_at(const Tok* t, const int* drop, int n, int k) noexcept nogil:
    """Do the kept tokens from k on start with a postcode: 1234ab, or 1234 and ab?"""
    return t[k].digits == 4 and (t[k].len == 6 or (t[k].len == 4 and k + 1 < n and drop[k + 1] == 0
                                                   and t[k + 1].digits == 0 and t[k + 1].len == 2))


cdef void _drop_retry(const Data* d, Search* s, const int* nothing, const int* loose,
                      const int* whole) noexcept nogil:
    """Nothing found: try again without the words that match nothing at all ("kerkstraat 1
    zzzzzz utrecht"), the words that only say a number follows ("kerkstraat nr 12") and the
    words that label a form's field ("gemeente amsterdam"; LABEL_WORDS); then
    also without the country or province words that end the query ("..., Den Haag, Nederland",
    "hengelo ov"; REGION_WORDS) and the country words that open it (COUNTRY_WORDS; at most 3 in
    all); then also without the words that match only with a
    slip (loose: "wirle de zwijgerlaan 5 cast"); then also without the letters and additions typed
    with the house number, which this house may not have ("damrak 1 hs", "kerkstraat 12-2"),
    or the floor ("damrak 1 3 hoog"; FLOOR_WORDS), for the last two numbers typed; then
    without a postcode the address does not have (_postcode_retry). The first try that finds
    something answers; the other words of the query all still count."""
    cdef Tok saved[MAXT]
    cdef Tok* t
    cdef int drop[MAXT]
    cdef int n = s.ntok, i, j, k, nn = 0, nr = 0, nl = 0, tr, stripped, last, numbers = 0
    cdef int numbers_typed = 0
    memcpy(saved, s.tok, sizeof(Tok) * n)
    for i in range(n):
        drop[i] = nothing[i] or (i + 1 < n and saved[i].digits == 0 and saved[i + 1].digits > 0
                                 and _in_list(_number_ptr, _number_len, _n_number,
                                              s.q + saved[i].start, saved[i].len)) or (
            saved[i].digits == 0 and _in_list(_label_ptr, _label_len, _n_label,
                                              s.q + saved[i].start, saved[i].len))
        nn += drop[i]
    i = n - 1
    while i >= 0 and nr < 3:
        if drop[i]:
            i -= 1
        elif saved[i].digits == 0 and _in_list(_region_ptr, _region_len, _n_region,
                                               s.q + saved[i].start, saved[i].len):
            drop[i] = 2
            nr += 1
            i -= 1
        else:
            break
    # ... and the country that opens it ("nederland, groningen, herestraat 12"; a province there
    # is the place of that name more likely)
    i = 0
    while i < n and nr < 3:
        if drop[i]:
            i += 1
        elif saved[i].digits == 0 and _in_list(_region_ptr, _region_len, _n_country,
                                               s.q + saved[i].start, saved[i].len):
            drop[i] = 2
            nr += 1
            i += 1
        else:
            break
    for i in range(n):
        if drop[i] == 0 and loose[i] != 0:
            nl += 1
    for tr in range(3):
        if ((tr == 0 and nn == 0) or (tr == 1 and nr == 0) or (tr == 2 and nl == 0)
                or nn + (nr if tr > 0 else 0) + (nl if tr > 1 else 0) >= n):
            continue
        j = 0
        for i in range(n):
            if (drop[i] == 0 or (drop[i] == 2 and tr == 0)) and not (tr == 2 and drop[i] == 0 and loose[i] != 0):
                s.tok[j] = saved[i]
                j += 1
        s.ntok = j
        if tr == 1:
            # a province left out still says where: its streets first ("kerkstraat 1 bergen
            # limburg" is Bergen L, not Bergen op Zoom)
            s.province = _typed_province(d, s, saved, drop, n)
            if s.province >= 0:
                _read(d, s)
                s.province = -1
                if s.ncand > 0:
                    return
        _read(d, s)
        if s.ncand > 0:
            return
    for i in range(n):
        numbers_typed += drop[i] == 0 and _number_like(&saved[i])
    k = n - 1
    while k >= 0 and numbers < 2:
        t = &saved[k]
        if drop[k] or not _number_like(t) or (_postcode_at(saved, drop, n, k) and numbers_typed > 1):
            # (a postcode beside the house number is no number with an addition: the postcode
            # retry reads it; "tolhuis 1233hs" alone is house 1233 with HS)
            k -= 1
            continue
        numbers += 1
        # the parts that follow it: digits, one or two letters, or a short word no token is
        stripped = t.len > t.digits
        last = k
        i = k + 1
        while i < n and i <= k + MAXP:
            if not drop[i]:
                if _postcode_at(saved, drop, n, i):
                    break
                if (saved[i].len > 4 or not (saved[i].digits == saved[i].len or saved[i].len <= 2
                                             or not whole[i])) and not (
                        saved[i].digits == 0 and _in_list(_floor_ptr, _floor_len, _n_floor,
                                                          s.q + saved[i].start, saved[i].len)):
                    break
                stripped = 1
                last = i
            i += 1
        if stripped:
            j = 0
            for i in range(n):
                if drop[i] == 0 and not (k < i <= last):
                    s.tok[j] = saved[i]
                    if i == k:
                        s.tok[j].len = saved[i].digits
                    j += 1
            s.ntok = j
            _read(d, s)
            if s.ncand > 0:
                return
        k -= 1
    if _postcode_retry(d, s, saved, drop, n):
        return
    memcpy(s.tok, saved, sizeof(Tok) * n)
    s.ntok = n


cdef bint _postcode_slips(const Data* d, Search* s, const Tok* saved, const int* drop, int n,
                          int k, int last) noexcept nogil:
    """The postcodes one slip from the typed one (tokens k..last) that exist, each read with
    the other words, every one of which must then name the address, as typed: the first that
    finds something answers. A slip is a wrong letter, a wrong digit, or two neighbouring
    digits or the letters swapped. PERF: when numbers were typed, only a postcode that holds
    one of them as a house number is read."""
    cdef int i, j, m, v, c, pos, a, b, at = s.qlen + 1, saved_pass = s.max_pass, nnum = 0, vi = 0
    cdef int32_t typed
    cdef char pc[6]
    cdef int found = 0
    cdef int nums[MAXT]
    for i in range(n):
        if (drop[i] == 0 and not (k <= i <= last) and saved[i].digits > 0
                and saved[i].digits <= 5 and 1 <= saved[i].value <= 99999):
            nums[nnum] = saved[i].value
            nnum += 1
    if at + 6 > QBUF:
        return False
    # the typed postcode: four digits and two letters, glued or apart
    memcpy(pc, s.q + saved[k].start, 4)
    if last == k:
        memcpy(pc + 4, s.q + saved[k].start + 4, 2)
    else:
        memcpy(pc + 4, s.q + saved[last].start, 2)
    for i in range(4, 6):
        if not 97 <= pc[i] <= 122:
            return False
    typed = saved[k].value * 676 + (pc[4] - 97) * 26 + (pc[5] - 97)
    # the query without the postcode, with one token (vi) where it stood for the variant
    j = 0
    for i in range(n):
        if drop[i] == 0 and not (k < i <= last):
            s.tok[j] = saved[i]
            if i == k:
                vi = j
                s.tok[j].start = at
                s.tok[j].len = 6
            j += 1
    s.ntok = j
    s.max_pass = 1
    s.pc_strict = 2
    # variants: 2 x 25 letters, 3 + 1 swaps, 4 x 9 digits
    for v in range(90):
        memcpy(s.q + at, pc, 6)
        if v < 50:
            pos = 4 + v // 25
            c = 97 + v % 25
            if c >= pc[pos]:
                c += 1
            s.q[at + pos] = <char>c
        elif v < 54:
            a = v - 50 if v < 53 else 4
            b = a + 1
            if pc[a] == pc[b]:
                continue
            s.q[at + a] = pc[b]
            s.q[at + b] = pc[a]
        else:
            pos = (v - 54) // 9
            c = 48 + (v - 54) % 9
            if c >= pc[pos]:
                c += 1
            s.q[at + pos] = <char>c
        i = _pc_find(d, s.q + at, s.q + at + 4)
        if i < 0 or d.pc_code[i] == typed:
            continue
        if nnum > 0:
            for m in range(nnum):
                if _pc_holds(d, i, nums[m]):
                    break
            else:
                continue
        s.tok[vi].value = d.pc_code[i] // 676
        _read(d, s)
        if s.ncand > 0:
            found = 1
            break
    s.max_pass = saved_pass
    s.pc_strict = 0
    return found


cdef bint _postcode_retry(const Data* d, Search* s, const Tok* saved, const int* drop,
                          int n) noexcept nogil:
    """A postcode the address does not have ("herestraat 12 9711lk", "kerkstraat 1 1071 gl"):
    read the words again without it, near where its four digits lie (the first address of
    the first postcode from them), unless the caller gave a focus point. Whether it found
    something."""
    cdef int i, j = 0, k = -1, last, words = 0, focus = s.has_focus
    for i in range(n):
        # (0833 is no postcode, but may be 8033 with two digits swapped)
        if drop[i] == 0 and _postcode_at(saved, drop, n, i):
            k = i
            break
    if k < 0:
        return False
    last = k + 1 if saved[k].len == 4 else k
    for i in range(n):
        if drop[i] == 0 and not (k <= i <= last):
            words += saved[i].digits == 0
    if words == 0:
        return False
    if _postcode_slips(d, s, saved, drop, n, k, last):
        return True
    for i in range(n):
        if drop[i] == 0 and not (k <= i <= last):
            s.tok[j] = saved[i]
            j += 1
    s.ntok = j
    if not focus:
        _focus_area(d, s, saved[k].value)
    _read(d, s)
    s.has_focus = focus
    return s.ncand > 0


cdef bint _whole_words_and_number(const Search* s) noexcept nogil:
    """Is every word of letters of every reading a whole token as typed, and is a house
    number typed (in some reading)?"""
    cdef int ii, wi, ti
    cdef bint number = 0
    for ii in range(s.ninterp):
        number = number or s.interp[ii].number >= 0
        for wi in range(s.interp[ii].nwords):
            ti = s.interp[ii].words[wi]
            if s.tok[ti].digits == 0 and s.word[ti].exact < 0:
                return False
    return number


cdef void _passes(const Data* d, Search* s) noexcept nogil:
    """Score the interpretations; when nothing is found, again with slips of a key allowed."""
    cdef int ii, wi, pass_, added, ti, max_pass = s.max_pass
    if _spent(s):
        # the query's work budget is spent: this reading is not scored (the readings before
        # it found nothing, or it would not be read), so it finds nothing either
        s.npool = 0
        s.ncand = 0
        return
    if s.area and s.max_pass > 2:
        # within a postcode being typed, slips only in words that match nothing as typed
        # ("kerkstraat 12 2011" is no Parkstraat in 2011, but Kerkstraat near it)
        s.max_pass = 2
    for pass_ in range(s.max_pass):
        if pass_ == 2 and s.defer_slips and _whole_words_and_number(s):
            # "kerkstraat 101-h amsterdam", "herestraat 200 groningen": every word is a whole
            # token as typed, and the house may not have the letter or addition typed
            # (_drop_retry), or the street not the number (near_number), more likely than a
            # slip in one of those words (Van der Pekstraat 101-H, Grote Beerstraat 200)
            s.deferred = 1
            break
        s.typo_mode = pass_ > 0
        s.floor = -1e30
        s.min_pen = 0
        s.tok_pen = 0
        s.considered = 0
        s.pool_cap = s.limit + 1 if s.limit + 1 < POOL else POOL
        s.npool = 0
        s.ncand = 0
        if pass_ > 0:
            # nothing found: look for slips of a key, the closest first: one edit in the words
            # that match nothing at all, then one edit in every word, then two in long words
            added = 0
            for ii in range(s.ninterp):
                for wi in range(s.interp[ii].nwords):
                    ti = s.interp[ii].words[wi]
                    if pass_ >= 2 or s.word[ti].first_typo == 0:
                        added += _typo_ranges(d, s, ti, 2 if pass_ == 3 else 1)
            if added == 0:
                continue
        for ii in range(s.ninterp):
            if s.interp[ii].pc_lo >= 0:
                _collect_pc(d, s, ii)
            else:
                _scan_text(d, s, ii)
        _collect_text(d, s)
        if s.ncand > 0:
            break
    s.max_pass = max_pass


# ---------------------------------------------------------------------------------------------
# JSON output


cdef struct Buf:
    char* p
    Py_ssize_t n
    Py_ssize_t cap


cdef inline int _grow(Buf* b, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t cap
    cdef char* np_
    if b.n + extra <= b.cap:
        return 0
    cap = b.cap * 2
    while cap < b.n + extra:
        cap *= 2
    np_ = <char*>realloc(b.p, cap)
    if np_ == NULL:
        return -1
    b.p = np_
    b.cap = cap
    return 0


cdef inline void _put(Buf* b, const char* s, Py_ssize_t n) noexcept nogil:
    if _grow(b, n) == 0:
        memcpy(b.p + b.n, s, n)
        b.n += n


cdef inline void _puts(Buf* b, const char* s) noexcept nogil:
    cdef Py_ssize_t n = 0
    while s[n]:
        n += 1
    _put(b, s, n)


cdef inline void _put_int(Buf* b, int64_t v) noexcept nogil:
    cdef char tmp[24]
    cdef int n = 0, i
    cdef int neg = v < 0
    if neg:
        v = -v
    while True:
        tmp[n] = <char>(48 + v % 10)
        n += 1
        v //= 10
        if v == 0:
            break
    if neg:
        tmp[n] = 45
        n += 1
    if _grow(b, n) == 0:
        for i in range(n):
            b.p[b.n + i] = tmp[n - 1 - i]
        b.n += n


cdef inline void _put_micro(Buf* b, int32_t v) noexcept nogil:
    """Micro-degrees as a decimal with 6 places: 52376053 -> 52.376053."""
    cdef int64_t x = v
    cdef char frac[6]
    cdef int i
    if x < 0:
        _put(b, "-", 1)
        x = -x
    _put_int(b, x // 1000000)
    x = x % 1000000
    for i in range(5, -1, -1):
        frac[i] = <char>(48 + x % 10)
        x //= 10
    _put(b, ".", 1)
    _put(b, frac, 6)


cdef inline void _put_str(Buf* b, const Data* d, int32_t sid) noexcept nogil:
    _put(b, <const char*>(d.s_blob + d.s_off[sid]), d.s_off[sid + 1] - d.s_off[sid])


cdef inline void _put_postcode(Buf* b, int32_t code) noexcept nogil:
    cdef char pc[7]
    cdef int digits = code // 676, r = code % 676
    pc[0] = <char>(48 + digits // 1000)
    pc[1] = <char>(48 + digits // 100 % 10)
    pc[2] = <char>(48 + digits // 10 % 10)
    pc[3] = <char>(48 + digits % 10)
    pc[4] = 32
    pc[5] = <char>(65 + r // 26)
    pc[6] = <char>(65 + r % 26)
    _put(b, pc, 7)


cdef void _put_component(Buf* b, const char* typ) noexcept nogil:
    _puts(b, "{\"type\":\"")
    _puts(b, typ)
    _puts(b, "\",\"value\":")


cdef void _put_hit(Buf* b, const Data* d, int32_t a) noexcept nogil:
    cdef int32_t g = d.a_group[a]
    cdef char letter = <char>d.a_letter[a]
    cdef int32_t add = d.a_addition[a]
    cdef int64_t ao = d.add_off[add]
    cdef Py_ssize_t alen = d.add_off[add + 1] - ao
    _puts(b, "{\"components\":[")
    _put_component(b, "NLD_PUBLIC_SPACE")
    _put(b, "\"", 1)
    _put_str(b, d, d.g_street[g])
    _put(b, "\"},", 3)
    _put_component(b, "NLD_HOUSE_NUMBER")
    _put_int(b, d.a_number[a])
    _put(b, "},", 2)
    if letter:
        _put_component(b, "NLD_HOUSE_LETTER")
        _put(b, "\"", 1)
        _put(b, &letter, 1)
        _put(b, "\"},", 3)
    if alen:
        _put_component(b, "NLD_HOUSE_NUMBER_ADDITION")
        _put(b, "\"", 1)
        _put(b, <const char*>(d.add_blob + ao), alen)
        _put(b, "\"},", 3)
    _put_component(b, "NLD_POSTAL_CODE")
    _put(b, "\"", 1)
    _put_postcode(b, d.a_postcode[a])
    _put(b, "\"},", 3)
    _put_component(b, "NLD_LOCALITY")
    _put(b, "\"", 1)
    _put_str(b, d, d.g_locality[g])
    _put(b, "\"},", 3)
    _put_component(b, "NLD_MUNICIPALITY")
    _put(b, "\"", 1)
    _put_str(b, d, d.g_municipality[g])
    _put(b, "\"},", 3)
    _put_component(b, "NLD_PROVINCE")
    _put(b, "\"", 1)
    _put_str(b, d, d.g_province[g])
    _put(b, "\"},", 3)
    _puts(b, "{\"type\":\"NLD_COUNTRY\",\"value\":\"Nederland\"}],\"country\":\"NLD\",\"lines\":[\"")
    _put_str(b, d, d.g_street[g])
    _put(b, " ", 1)
    _put_int(b, d.a_number[a])
    if letter:
        _put(b, &letter, 1)
    if alen:
        _put(b, "-", 1)
        _put(b, <const char*>(d.add_blob + ao), alen)
    _put(b, "\",\"", 3)
    _put_postcode(b, d.a_postcode[a])
    _put(b, " ", 1)
    _put_str(b, d, d.g_locality[g])
    _puts(b, "\",\"Nederland\"],\"location\":{\"latitude\":")
    _put_micro(b, d.a_lat[a])
    _puts(b, ",\"longitude\":")
    _put_micro(b, d.a_lon[a])
    _puts(b, "}}")


cdef int _render(const Data* d, const int* hits, int n, int limit, Buf* b) noexcept nogil:
    cdef int i
    _puts(b, "{\"hits\":[")
    for i in range(n):
        if i:
            _put(b, ",", 1)
        _put_hit(b, d, hits[i])
    _puts(b, "],\"limit\":")
    _put_int(b, limit)
    _put(b, "}", 1)
    return 0


# ---------------------------------------------------------------------------------------------
# the Python-facing class


# the fixed sizes of the search, which are part of its behaviour (the Python twin reads them)
SIZES = {
    "MAX_Q": MAX_Q, "QBUF": QBUF, "FOLD_W": FOLD_W, "MAXT": MAXT, "MAXR": MAXR,
    "MAXSLIP": MAXSLIP, "POOL": POOL,
    "MAXLIMIT": MAXLIMIT, "SCAN_BUDGET": SCAN_BUDGET, "SCAN_ALONE": SCAN_ALONE,
    "EXACT_CAP": EXACT_CAP, "TOKEN_CAP_MIN": TOKEN_CAP_MIN, "PC_PREFIX_CAP": PC_PREFIX_CAP,
    "MAXP": MAXP, "MAXI": MAXI, "MAX_CONSIDER": MAX_CONSIDER, "SAME_NUMBER_CAP": SAME_NUMBER_CAP,
    "DROP_MAX_TOKENS": DROP_MAX_TOKENS, "RESPACE_TRIES": RESPACE_TRIES,
    "RESPACE_PROBES": RESPACE_PROBES, "MAXCUT": MAXCUT, "PREFIX_SLIP_MAX": PREFIX_SLIP_MAX,
    "PREFIX_SLIP_LEN": PREFIX_SLIP_LEN, "TWO_SLIP_LEN": TWO_SLIP_LEN, "TWO_SLIP_TYPED": TWO_SLIP_TYPED,
}


class QueryError(ValueError):
    """A bad argument to `suggest`: `code` and `parameter` name it as the HTTP contract does."""

    def __init__(self, message, *, code="invalid_parameter", parameter="q"):
        super().__init__(message)
        self.code = code
        self.parameter = parameter


class IndexClosedError(ValueError):
    """The index was closed (`close()`, or the end of its `with` block) and cannot be used."""


ARRAYS = {
    "a_group": np.int32, "a_number": np.int32, "a_letter": np.uint8, "a_addition": np.int32,
    "a_postcode": np.int32, "a_lat": np.int32, "a_lon": np.int32,
    "g_street": np.int32, "g_locality": np.int32, "g_municipality": np.int32,
    "g_province": np.int32, "g_start": np.int32, "g_prior": np.float32, "g_lat": np.int32,
    "g_lon": np.int32, "g_tok_start": np.int32, "g_tok": np.int32, "g_tok_kind": np.uint8,
    "g_tok_cover": np.uint64, "v_blob": np.uint8, "v_off": np.int64, "v_post_start": np.int32,
    "v_post": np.int32, "del_hash": np.uint64, "del_tok": np.int32, "pc_code": np.int32,
    "pc_start": np.int32, "pc_addr": np.int32, "add_blob": np.uint8, "add_off": np.int64,
    "s_blob": np.uint8, "s_off": np.int64,
    "sp_blob": np.uint8, "sp_off": np.int64, "sp_start": np.int32, "sp_group": np.int32,
    "del_bucket": np.int32, "g_sig": np.uint64, "v_post_sig": np.uint64, "v_post_prior": np.float32,
    "sp_sig": np.uint64, "sp_prior": np.float32, "sp_toklen": np.uint8, "g_tokrec": np.uint64,
    "v_post_meta": np.uint8, "v_post_xsig": np.uint64, "sp_meta": np.uint8, "sp_xsig": np.uint64,
    "addl_blob": np.uint8, "addl_off": np.int64, "v_post_first": np.uint32, "sp_first": np.uint32,
    "sa_blob": np.uint8, "sa_off": np.int64, "sa_start": np.int32, "sa_addr": np.int32,
}

_EMPTY = {name: np.zeros(1, dtype=dt) for name, dt in ARRAYS.items()}


cdef const void* _ptr(dict arrays, str name) except NULL:
    cdef cnp.ndarray a = arrays[name]
    if a.dtype != np.dtype(ARRAYS[name]) or not a.flags.c_contiguous or a.ndim != 1:
        raise ValueError(f"array {name} must be 1-d C-contiguous {np.dtype(ARRAYS[name])}")
    if a.shape[0] == 0:
        a = _EMPTY[name]
    return cnp.PyArray_DATA(a)


cdef object _last(a):
    """The last entry of a 1-d array. NOTE: never `a[-1]`: with wraparound off, Cython hands -1
    to the array as it is, and numpy >= 2.5 reads it as out of bounds (setup.py makes the
    warning Cython gives for such an index a build error)."""
    cdef Py_ssize_t n = len(a)
    if n == 0:
        raise ValueError("an offset table is empty")
    return a[n - 1]


# words that may end a pasted address line without naming any address: the country, a
# province or its abbreviation ("hengelo ov"); dropped only when the query finds nothing. The
# country may also open it ("nederland, groningen, ...")
COUNTRY_WORDS = ("nederland", "netherlands", "the", "holland", "nl", "nld")
REGION_WORDS = COUNTRY_WORDS + ("noord", "zuid", "brabant", "gelderland", "overijssel", "friesland", "fryslan", "drenthe",
                "flevoland", "zeeland", "limburg", "ov", "gld", "gl", "nh", "zh", "nb", "lb", "li",
                "zl", "ze", "fl", "fr", "dr", "gn", "gr", "ut",
                # a part of town after the place ("amsterdam centrum", "utrecht oost")
                "centrum", "oost", "west", "zuidoost", "zuidwest", "noordoost", "noordwest",
                "binnenstad", "stad")
_REGION_BYTES = [w.encode() for w in REGION_WORDS]
# the province each of them names (two words name Noord- and Zuid-Holland: _typed_province)
REGION_PROVINCE = {"friesland": "Friesland", "fryslan": "Friesland", "fr": "Friesland",
                   "groningen": "Groningen", "gn": "Groningen", "gr": "Groningen",
                   "drenthe": "Drenthe", "dr": "Drenthe", "overijssel": "Overijssel", "ov": "Overijssel",
                   "flevoland": "Flevoland", "fl": "Flevoland", "gelderland": "Gelderland",
                   "gld": "Gelderland", "gl": "Gelderland", "utrecht": "Utrecht", "ut": "Utrecht",
                   "nh": "Noord-Holland", "zh": "Zuid-Holland", "zeeland": "Zeeland", "zl": "Zeeland",
                   "ze": "Zeeland", "brabant": "Noord-Brabant", "nb": "Noord-Brabant",
                   "limburg": "Limburg", "lb": "Limburg", "li": "Limburg"}
# words that only say a house number follows ("kerkstraat nr 12"): between another word and the
# number read as that at once (_parse); elsewhere dropped only when the query finds nothing
# ("Nummer" is also a street)
NUMBER_WORDS = ("nr", "no", "nummer", "huisnummer", "hnr", "number", "num")
_NUMBER_BYTES = [w.encode() for w in NUMBER_WORDS]
# words that say which floor or part of a house, typed after its number ("damrak 1 3 hoog",
# "1 huis", "2 boven"): left out with the letters and additions the house may not have
FLOOR_WORDS = ("hoog", "huis", "hs", "boven", "beneden", "bg", "bis", "etage", "verdieping",
               "verd", "vd", "bel", "sous", "souterrain", "zolder", "achter", "voor", "links",
               "rechts", "app", "appartement", "kamer", "unit", "achterhuis", "voorhuis",
               "bovenhuis", "benedenhuis", "bovenwoning", "benedenwoning")
_FLOOR_BYTES = [w.encode() for w in FLOOR_WORDS]
# words of a form that label what follows ("adres: ...", "gemeente amsterdam", "postcode
# 1017 gl"); dropped, wherever they stand, only when the query finds nothing
LABEL_WORDS = ("adres", "address", "postcode", "pc", "gemeente", "gem", "woonplaats", "plaats",
               "straatnaam", "toevoeging", "toev")
_LABEL_BYTES = [w.encode() for w in LABEL_WORDS]
cdef const char* _floor_ptr[48]
cdef int _floor_len[48]
cdef int _n_floor = 0
cdef const char* _number_ptr[16]
cdef int _number_len[16]
cdef int _n_number = 0
cdef const char* _label_ptr[16]
cdef int _label_len[16]
cdef int _n_label = 0
cdef const char* _region_ptr[64]
cdef int _region_len[64]
cdef int _n_region = 0
cdef int _n_country = len(COUNTRY_WORDS)   # the first words of _region_ptr


cdef int _point_at(list words, const char** ptr, int* lens, int cap) except -1:
    """Point ptr/lens at the bytes of each word (kept alive by the module's list); the count."""
    cdef int i
    cdef bytes b
    if len(words) > cap:
        raise ValueError("word list too long")
    for i, b in enumerate(words):
        ptr[i] = <const char*>b
        lens[i] = len(b)
    return len(words)


def _init_regions():
    global _n_region, _n_number, _n_floor, _n_label
    _n_region = _point_at(_REGION_BYTES, _region_ptr, _region_len, 64)
    _n_number = _point_at(_NUMBER_BYTES, _number_ptr, _number_len, 16)
    _n_floor = _point_at(_FLOOR_BYTES, _floor_ptr, _floor_len, 48)
    _n_label = _point_at(_LABEL_BYTES, _label_ptr, _label_len, 16)


_init_regions()


cdef inline bint _is_letter(Py_UCS4 ch) noexcept:
    """Does this code point fold to a letter?"""
    cdef int cp = <int>ch
    return cp < FOLD_MAX and _fold_len[cp] > 0 and 97 <= _fold_out[cp][0] <= 122


cdef class Index:
    """The compiled index over a dict of 1-d numpy arrays (usually memory-mapped)."""

    def __init__(self, arrays):
        if not isinstance(arrays, dict):
            raise TypeError(f"{type(self).__name__}() takes the dict of arrays of an index; to open "
                            f"an index directory, call {type(self).__name__}.open(path)")
        missing = sorted(set(ARRAYS) - set(arrays))
        if missing:
            raise ValueError(f"index arrays missing: {', '.join(missing)}")
        self._arrays = arrays
        d = &self.d
        d.a_group = <const int32_t*>_ptr(arrays, "a_group")
        d.a_number = <const int32_t*>_ptr(arrays, "a_number")
        d.a_letter = <const uint8_t*>_ptr(arrays, "a_letter")
        d.a_addition = <const int32_t*>_ptr(arrays, "a_addition")
        d.a_postcode = <const int32_t*>_ptr(arrays, "a_postcode")
        d.a_lat = <const int32_t*>_ptr(arrays, "a_lat")
        d.a_lon = <const int32_t*>_ptr(arrays, "a_lon")
        d.g_street = <const int32_t*>_ptr(arrays, "g_street")
        d.g_locality = <const int32_t*>_ptr(arrays, "g_locality")
        d.g_municipality = <const int32_t*>_ptr(arrays, "g_municipality")
        d.g_province = <const int32_t*>_ptr(arrays, "g_province")
        d.g_start = <const int32_t*>_ptr(arrays, "g_start")
        d.g_prior = <const float*>_ptr(arrays, "g_prior")
        d.g_lat = <const int32_t*>_ptr(arrays, "g_lat")
        d.g_lon = <const int32_t*>_ptr(arrays, "g_lon")
        d.g_tok_start = <const int32_t*>_ptr(arrays, "g_tok_start")
        d.g_rec = <const TokRec*>_ptr(arrays, "g_tokrec")
        if len(arrays["g_tokrec"]) != 2 * len(arrays["g_tok"]):
            raise ValueError("group token records do not match the group tokens")
        if sys.byteorder != "little":
            raise ValueError("this index layout needs a little-endian machine")
        d.v_blob = <const uint8_t*>_ptr(arrays, "v_blob")
        d.v_off = <const int64_t*>_ptr(arrays, "v_off")
        d.v_post_start = <const int32_t*>_ptr(arrays, "v_post_start")
        d.v_post = <const int32_t*>_ptr(arrays, "v_post")
        d.del_hash = <const uint64_t*>_ptr(arrays, "del_hash")
        d.del_tok = <const int32_t*>_ptr(arrays, "del_tok")
        d.pc_code = <const int32_t*>_ptr(arrays, "pc_code")
        d.pc_start = <const int32_t*>_ptr(arrays, "pc_start")
        d.pc_addr = <const int32_t*>_ptr(arrays, "pc_addr")
        d.add_blob = <const uint8_t*>_ptr(arrays, "add_blob")
        d.add_off = <const int64_t*>_ptr(arrays, "add_off")
        d.s_blob = <const uint8_t*>_ptr(arrays, "s_blob")
        d.s_off = <const int64_t*>_ptr(arrays, "s_off")
        d.sp_blob = <const uint8_t*>_ptr(arrays, "sp_blob")
        d.sp_off = <const int64_t*>_ptr(arrays, "sp_off")
        d.sp_start = <const int32_t*>_ptr(arrays, "sp_start")
        d.sp_group = <const int32_t*>_ptr(arrays, "sp_group")
        d.n_sp = len(arrays["sp_start"]) - 1
        d.del_bucket = <const int32_t*>_ptr(arrays, "del_bucket")
        d.v_post_sig = <const uint64_t*>_ptr(arrays, "v_post_sig")
        d.v_post_prior = <const float*>_ptr(arrays, "v_post_prior")
        d.sp_sig = <const uint64_t*>_ptr(arrays, "sp_sig")
        d.sp_prior = <const float*>_ptr(arrays, "sp_prior")
        d.sp_toklen = <const uint8_t*>_ptr(arrays, "sp_toklen")
        d.v_post_meta = <const uint8_t*>_ptr(arrays, "v_post_meta")
        d.v_post_xsig = <const uint64_t*>_ptr(arrays, "v_post_xsig")
        d.sp_meta = <const uint8_t*>_ptr(arrays, "sp_meta")
        d.sp_xsig = <const uint64_t*>_ptr(arrays, "sp_xsig")
        d.v_post_first = <const uint32_t*>_ptr(arrays, "v_post_first")
        d.sp_first = <const uint32_t*>_ptr(arrays, "sp_first")
        d.sa_blob = <const uint8_t*>_ptr(arrays, "sa_blob")
        d.sa_off = <const int64_t*>_ptr(arrays, "sa_off")
        d.sa_start = <const int32_t*>_ptr(arrays, "sa_start")
        d.sa_addr = <const int32_t*>_ptr(arrays, "sa_addr")
        d.n_sa = len(arrays["sa_off"]) - 1
        if len(arrays["sa_start"]) != d.n_sa * MAXLIMIT + 1 or _last(arrays["sa_start"]) != len(arrays["sa_addr"]):
            raise ValueError("stored answers do not match their table")
        if len(arrays["sa_addr"]) and (int(arrays["sa_addr"].min()) < 0 or int(arrays["sa_addr"].max()) >= len(arrays["a_number"])):
            raise ValueError("stored answers name addresses that do not exist")
        d.addl_blob = <const uint8_t*>_ptr(arrays, "addl_blob")
        d.addl_off = <const int64_t*>_ptr(arrays, "addl_off")
        d.n_addl = len(arrays["addl_off"]) - 1
        if len(arrays["del_bucket"]) != (1 << DEL_BUCKET_BITS) + 1:
            raise ValueError("typo bucket index has the wrong size")
        for name in ("v_post_sig", "v_post_prior", "v_post_meta", "v_post_xsig", "v_post_first"):
            if len(arrays[name]) != len(arrays["v_post"]):
                raise ValueError("posting signatures, priors or bounds do not match the postings")
        for name in ("sp_sig", "sp_prior", "sp_toklen", "sp_meta", "sp_xsig", "sp_first"):
            if len(arrays[name]) != len(arrays["sp_group"]):
                raise ValueError("short-prefix lists do not match their tables")
        d.n_addr = len(arrays["a_number"])
        d.n_groups = len(arrays["g_start"]) - 1
        d.n_tok = len(arrays["v_off"]) - 1
        d.n_del = len(arrays["del_hash"])
        d.n_pc = len(arrays["pc_code"])
        self._check()
        self._provinces(arrays)
        _fill_blocks(d)

    def _provinces(self, dict arrays):
        """The string id of each province a REGION_WORDS word names, or -1: looked up in the
        sorted string table (PERF: a few pages, not the group table, so opening stays cheap)."""
        cdef Data* d = &self.d
        cdef int i
        blob, off = memoryview(arrays["s_blob"]), memoryview(arrays["s_off"])
        n = len(off) - 1

        def name(k):
            b = bytes(blob[off[k]:off[k + 1]])
            return json.loads(b'"' + b + b'"') if b"\\" in b else b.decode()

        ids = {}
        for text in sorted(set(REGION_PROVINCE.values()) | {"Noord-Holland", "Zuid-Holland"}):
            k = bisect_left(range(n), text, key=name)
            ids[text] = k if k < n and name(k) == text else -1
        for i, w in enumerate(REGION_WORDS):
            d.region_prov[i] = ids[REGION_PROVINCE[w]] if w in REGION_PROVINCE else -1
        d.prov_nh = ids["Noord-Holland"]
        d.prov_zh = ids["Zuid-Holland"]

    def _check(self):
        """Cheap structural checks, so that a corrupt index fails here, not in a query."""
        a = self._arrays
        n, g, v = self.d.n_addr, self.d.n_groups, self.d.n_tok
        for name in ("a_group", "a_letter", "a_addition", "a_postcode", "a_lat", "a_lon", "pc_addr"):
            if len(a[name]) != n:
                raise ValueError(f"array {name} has {len(a[name])} rows, expected {n}")
        for name in ("g_street", "g_locality", "g_municipality", "g_province", "g_prior", "g_lat", "g_lon"):
            if len(a[name]) != g:
                raise ValueError(f"array {name} has {len(a[name])} rows, expected {g}")
        if len(a["g_tok_start"]) != g + 1 or len(a["v_post_start"]) != v + 1:
            raise ValueError("group or token offsets do not match their tables")
        if len(a["pc_start"]) != len(a["pc_code"]) + 1 or len(a["del_tok"]) != self.d.n_del:
            raise ValueError("postcode or typo index offsets do not match their tables")
        if g and (a["g_start"][0] != 0 or _last(a["g_start"]) != n):
            raise ValueError("group address ranges do not cover the address table")
        if _last(a["g_tok_start"]) != len(a["g_tok"]) or _last(a["v_post_start"]) != len(a["v_post"]):
            raise ValueError("token lists do not end where their tables end")
        if len(a["sp_off"]) != self.d.n_sp + 1 or _last(a["sp_start"]) != len(a["sp_group"]):
            raise ValueError("short-prefix lists do not match their tables")
        if _last(a["v_off"]) != len(a["v_blob"]) or _last(a["s_off"]) != len(a["s_blob"]) or _last(a["add_off"]) != len(a["add_blob"]):
            raise ValueError("string offsets do not end where their blobs end")

    @property
    def arrays(self):
        """The arrays of the index by name (read-only numpy arrays, memory-mapped by `open`)."""
        self._check_open()
        return self._arrays

    def __len__(self):
        self._check_open()
        return self.d.n_addr

    @property
    def closed(self):
        """True once `close()` was called."""
        return self._closed

    def close(self):
        """Release the index: unmap its arrays and close their files.

        Searches running in other threads finish first (the last one to end releases the
        files); every later use raises IndexClosedError. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._busy == 0:
            self._release()

    def __enter__(self):
        self._check_open()
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _release(self):
        """Forget every array (a subclass also closes the files behind them). NOTE: called once
        the index is closed and no search runs, so no pointer into the arrays is read again."""
        memset(&self.d, 0, sizeof(Data))
        self._arrays = None

    cdef int _check_open(self) except -1:
        if self._closed:
            raise IndexClosedError(f"this {type(self).__name__} is closed")
        return 0

    cdef int _enter(self) except -1:
        """Count a search that is about to read the arrays (under the GIL, as `close` runs)."""
        self._check_open()
        self._busy += 1
        return 0

    cdef int _leave(self) except -1:
        """The search is done; release the arrays if the index was closed meanwhile."""
        self._busy -= 1
        if self._closed and self._busy == 0:
            self._release()
        return 0

    cdef Search* _prepare(self, q, limit, lat, lon) except NULL:
        """Check the arguments (`_arguments`), fold the query; the caller frees."""
        cdef Search* s
        cdef int cp, j, k = 0, n_limit
        cdef double focus_lat, focus_lon
        cdef Py_ssize_t i, n
        cdef Py_UCS4 ch
        _arguments(q, limit, lat, lon, &n_limit, &focus_lat, &focus_lon)
        s = <Search*>malloc(sizeof(Search))
        if s == NULL:
            raise MemoryError()
        s.limit = n_limit
        s.has_focus = lat is not None
        s.pc_strict = 0
        s.focus_lat = focus_lat
        s.focus_lon = focus_lon
        s.cos_lat = cos(s.focus_lat * 3.141592653589793 / 180.0)
        # fold: code points -> ASCII a-z0-9 and spaces (the table of engine/normalize.py); an
        # apostrophe between a lone letter and a word glues them: "a'dam" is "adam", as the
        # index holds "d'Arc" also as "darc"
        n = len(<str>q)
        for i in range(n):
            ch = (<str>q)[i]
            cp = <int>ch
            if (cp == 39 or cp == 0x2019 or cp == 0x2018 or cp == 96) and 0 < i < n - 1 \
                    and _is_letter((<str>q)[i - 1]) and _is_letter((<str>q)[i + 1]) \
                    and (i == 1 or not _is_letter((<str>q)[i - 2])):
                continue
            if cp < FOLD_MAX:
                for j in range(_fold_len[cp]):
                    s.q[k] = _fold_out[cp][j]
                    k += 1
            else:
                s.q[k] = 32
                k += 1
        s.qlen = k
        return s

    def suggest_json(self, q, *, limit=5, lat=None, lon=None):
        """Return the response body of the contract for query `q` as JSON bytes."""
        cdef Search* s = NULL
        cdef int hits[MAXLIMIT]
        cdef int n = 0
        cdef Buf b
        b.p = NULL
        self._enter()
        try:
            s = self._prepare(q, limit, lat, lon)
            b.cap = 4096
            b.n = 0
            b.p = <char*>malloc(b.cap)
            if b.p == NULL:
                raise MemoryError()
            with nogil:
                n = _search(&self.d, s, hits)
                _render(&self.d, hits, n, s.limit, &b)
            return PyBytes_FromStringAndSize(b.p, b.n)
        finally:
            free(b.p)
            free(s)
            self._leave()

    def search_ids(self, q, *, limit=5, lat=None, lon=None):
        """Return the address row ids of the hits (for tests and tools)."""
        cdef Search* s = NULL
        cdef int hits[MAXLIMIT]
        cdef int n = 0, j
        self._enter()
        try:
            s = self._prepare(q, limit, lat, lon)
            with nogil:
                n = _search(&self.d, s, hits)
            return [hits[j] for j in range(n)]
        finally:
            free(s)
            self._leave()


# The rules for the arguments of a search, one per argument; a wrong type is a TypeError, a
# wrong value a QueryError (code and parameter as the HTTP contract names them):
#   q        a str (a subclass too) of at most MAX_Q (128) code points
#   limit    an integer (numbers.Integral: int, numpy integers; not bool) from 1 to MAXLIMIT
#   lat/lon  both or neither; each a real number (numbers.Real: int, float, numpy floating and
#            integers, Fraction; or Decimal; not bool) with -90 <= lat <= 90, -180 <= lon <= 180
cdef int _arguments(q, limit, lat, lon, int* limit_out, double* lat_out, double* lon_out) except -1:
    if not isinstance(q, str):
        raise TypeError(f"q must be a str, not {type(q).__name__}")
    if type(limit) is not int:  # PERF: the usual int skips the ABC checks
        if isinstance(limit, bool) or not isinstance(limit, numbers.Integral):
            raise TypeError(f"limit must be an int (numbers.Integral), not {type(limit).__name__}")
        limit = int(limit)
    if not 1 <= limit <= MAXLIMIT:
        raise QueryError(f"limit must be an integer from 1 to {MAXLIMIT}", parameter="limit")
    if len(<str>q) > MAX_Q:
        raise QueryError(f"q must be at most {MAX_Q} characters", code="query_too_long", parameter="q")
    if (lat is None) != (lon is None):
        raise QueryError("lat and lon go together", parameter="lat" if lat is None else "lon")
    limit_out[0] = limit
    lat_out[0] = _coordinate(lat, "lat", 90.0) if lat is not None else 0.0
    lon_out[0] = _coordinate(lon, "lon", 180.0) if lon is not None else 0.0
    return 0


def check_arguments(q, limit, lat, lon):
    """Apply the rules above; return (limit, lat, lon) as an int and floats (None, None
    without a focus point). For the reference twin and other callers of the engine."""
    cdef int n_limit
    cdef double focus_lat, focus_lon
    _arguments(q, limit, lat, lon, &n_limit, &focus_lat, &focus_lon)
    return n_limit, (focus_lat if lat is not None else None), (focus_lon if lon is not None else None)


def _coordinate(value, str name, double bound):
    cdef double v
    if type(value) is not float and type(value) is not int:  # PERF: the usual types go straight on
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
            raise TypeError(f"{name} must be a real number (int, float, Decimal, numpy floating), "
                            f"not {type(value).__name__}")
    try:
        v = float(value)
    except (OverflowError, ValueError):  # 10**400, Decimal("sNaN")
        v = float("nan")
    if not (-bound <= v <= bound):  # NaN too
        raise QueryError(f"{name} must be a number from {-bound:g} to {bound:g}", parameter=name)
    return v


include "_batch.pxi"
