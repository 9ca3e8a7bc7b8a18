# Text folding and lookups (included by _core.pyx): the folding table, the hashes and
# signature bits shared with build.py, binary searches over the token table and the sorted
# string blobs, the distance of two words.

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


cdef inline int _xsig_bit(const char* w, int n) noexcept nogil:
    """The whole-token signature bit of a folded token (of 64; build.py: v_post_xsig)."""
    return <int>(_fnv(w, n) >> 58)


def xsig_bit(str word):
    """The whole-token signature bit of a folded token (build.py: v_post_xsig)."""
    cdef bytes b = word.encode("ascii")
    return _xsig_bit(b, len(b))


# PERF: the typo table is probed with every form of a word with up to two letters left out (56
# of a 10-letter word, 154 of a 17-letter one), and each form was hashed byte by byte (FNV-1a,
# a chain of multiplies as long as the word): a fifth of the time of a look-up with two slips.
# A polynomial hash of the form is the word's prefix hashes put together (a few multiplies,
# independent of the word's length), then mixed (the finaliser of MurmurHash3); it is the
# hash of the form's text whichever letters were left out to make it.
DEF FORM_MAX = 80        # the longest word whose forms are hashed (deletion_index: 78)
cdef extern from *:
    """
    #define ENGINE_FORM_B 0x9E3779B97F4A7C15ULL  /* the polynomial's base (odd) */
    """
    const uint64_t FORM_B "ENGINE_FORM_B"
cdef uint64_t _form_pow[FORM_MAX + 1]   # FORM_B ** k (mod 2 ** 64)


cdef void _init_form_pow() noexcept:
    cdef int k
    _form_pow[0] = 1
    for k in range(1, FORM_MAX + 1):
        _form_pow[k] = _form_pow[k - 1] * FORM_B


_init_form_pow()


cdef inline void _form_prep(const char* p, int n, uint64_t* F) noexcept nogil:
    """F[k] = the polynomial hash of p[:k], for k = 0 .. n (n <= FORM_MAX)."""
    cdef int k
    F[0] = 0
    for k in range(n):
        F[k + 1] = F[k] * FORM_B + <uint8_t>p[k] + 1


cdef inline uint64_t _form_hash(const uint64_t* F, int n, int i, int j) noexcept nogil:
    """The hash of the word of F (`_form_prep`, n letters) with the letters at i and j left out
    (-1: none; i < j): the same as the hash of the form's own text."""
    cdef uint64_t h
    cdef int m = n
    if i < 0:
        h = F[n]
    elif j < 0:
        # p[:i] + p[i+1:]
        h = F[i] * _form_pow[n - 1 - i] + (F[n] - F[i + 1] * _form_pow[n - 1 - i])
        m = n - 1
    else:
        # (p[:i] + p[i+1:j]) + p[j+1:]
        h = F[i] * _form_pow[j - i - 1] + (F[j] - F[i + 1] * _form_pow[j - i - 1])
        h = h * _form_pow[n - 1 - j] + (F[n] - F[j + 1] * _form_pow[n - 1 - j])
        m = n - 2
    h += <uint64_t>m
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


def _form_hashes(bytes w):
    """The hashes of the forms of w (at most FORM_MAX letters): w itself, then each with letter i
    left out, then each with letters i < j left out, in that order (tests)."""
    cdef uint64_t F[FORM_MAX + 1]
    cdef int n = len(w), i, j
    if n > FORM_MAX:
        raise ValueError(f"a word of at most {FORM_MAX} letters")
    _form_prep(w, n, F)
    out = [_form_hash(F, n, -1, -1)]
    out += [_form_hash(F, n, i, -1) for i in range(n)]
    out += [_form_hash(F, n, i, j) for i in range(n) for j in range(i + 1, n)]
    return out


def deletion_index(words):
    """Return (hashes, token ids), sorted by hash: every token with up to 1 (2 for 7+ letters)
    letters deleted. Tokens shorter than 4 letters are left out (no typo is looked for there)."""
    cdef list hs = []
    cdef list ts = []
    cdef bytes b
    cdef int n, i, j, tid
    cdef uint64_t h
    cdef uint64_t F[FORM_MAX + 1]
    for tid, w in enumerate(words):
        seen = set()
        forms = [w.encode()]
        if "y" in w:
            forms.append(w.replace("y", "ij").encode())
        for b in forms:
            n = len(b)
            if n < 4 or n > 78:
                continue
            _form_prep(b, n, F)
            seen.add(_form_hash(F, n, -1, -1))
            for i in range(n):
                seen.add(_form_hash(F, n, i, -1))
                if n >= 7:
                    for j in range(i + 1, n):
                        seen.add(_form_hash(F, n, i, j))
        for h in seen:
            hs.append(h)
            ts.append(tid)
    hashes = np.array(hs, dtype=np.uint64)
    toks = np.array(ts, dtype=np.int32)
    order = np.lexsort((toks, hashes))
    return hashes[order], toks[order]


# PERF: the deletion index was sorted hashes and their tokens, with a bucket table on the top
# 20 bits: a probe read the bucket, then the hashes, then the token, three cache misses in a
# row (100 MB), and a word with two slips makes about 125 probes. In one open-addressing table
# (linear probing) an entry holds the hash's top 42 bits and the token: a probe reads one run
# of slots from its home slot, which the search fetches ahead for all the forms at once.
DEF DEL_LOAD = 0.6       # entries per slot (a miss reads about 3.6 slots, a hit 1.8)


cdef inline uint64_t _del_home(uint64_t h, uint64_t n_home) noexcept nogil:
    """The home slot of hash h in a table of n_home home slots: its top 32 bits, scaled, at the
    start of a bucket of DEL_BUCKET slots (PERF: a cache line, 64-byte aligned in the .npy file
    and in memory; a run from the start of its line ends in it unless the line is full, about
    one probe in eight; from anywhere in it, a run of 3.6 slots crossed into the next line, a
    second cache miss, nearly half the time)."""
    return (((h >> 32) * n_home) >> 32) & ~(<uint64_t>(DEL_BUCKET - 1))


def deletion_table(hashes, toks):
    """The typo table of `deletion_index`'s (hashes, token ids), sorted by hash then token: a
    uint64 per slot, 0 when empty, else the hash's top 64 - DEL_TOK_BITS bits followed by the
    token id + 1. An entry sits in the first free slot from its hash's home slot on
    (`_del_home`), in that order, so the entries of one hash are met in token order; DEL_TAIL
    slots past the last home slot leave every run room to end, and the last slot empty."""
    cdef const uint64_t[::1] h = np.ascontiguousarray(hashes, dtype=np.uint64)
    cdef const int32_t[::1] t = np.ascontiguousarray(toks, dtype=np.int32)
    cdef Py_ssize_t n = len(h), k
    if len(t) != n:
        raise ValueError("deletion hashes and tokens differ in length")
    if n and (int(np.min(toks)) < 0 or int(np.max(toks)) + 1 >= (1 << DEL_TOK_BITS)):
        raise ValueError(f"the typo table holds token ids below {(1 << DEL_TOK_BITS) - 1:,}")
    cdef uint64_t n_home = max(1024, int(n / DEL_LOAD)), j
    cdef uint64_t last = n_home + DEL_TAIL - 1   # stays empty: every run ends before it
    cdef uint64_t top = ~((<uint64_t>1 << DEL_TOK_BITS) - 1)
    cdef bint full = False
    table = np.zeros(n_home + DEL_TAIL, dtype=np.uint64)
    cdef uint64_t[::1] out = table
    with nogil:
        for k in range(n):
            j = _del_home(h[k], n_home)
            while j < last and out[j] != 0:
                j += 1
            if j >= last:
                full = True
                break
            out[j] = (h[k] & top) | <uint64_t>(t[k] + 1)
    if full:
        raise ValueError("the typo table's tail is full")
    return table


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


# PERF: each step of a binary search over the tokens read the token's offset, then its text:
# two cache misses in a row, and memcmp was a fifth of the time of a street that does not
# exist. The tokens' first 8 bytes, as one big-endian number each (built when the index opens,
# 8 bytes a token), decide most steps with one read; only a word of 9+ letters whose first 8
# equal the token's reads the text.
cdef inline uint64_t _word_key(const char* w, int n) noexcept nogil:
    """The first 8 bytes of w[:n] as one big-endian number, zero-padded (as d.tok_key)."""
    cdef uint64_t k = 0
    cdef int i
    for i in range(8):
        k = (k << 8) | (<uint8_t>w[i] if i < n else 0)
    return k


cdef inline uint64_t _key_mask(int n) noexcept nogil:
    """The bits of the first min(n, 8) bytes of a key."""
    if n >= 8:
        return 0xFFFFFFFFFFFFFFFFULL
    if n <= 0:
        return 0
    return ~((<uint64_t>1 << (64 - 8 * n)) - 1)


cdef inline int _cmp_key(const Data* d, int32_t t, uint64_t wk, uint64_t mask, const char* w,
                         int n) noexcept nogil:
    """`_cmp_prefix(d, t, w, n)` through the token's key first (wk = _word_key(w, n), mask =
    _key_mask(n); no byte of w[:8] is 0). Two keys that differ in their first min(n, 8) bytes
    order as the texts do: a token shorter than that is padded with zeros, below any letter."""
    cdef uint64_t k = d.tok_key[t] & mask
    if k != wk:
        return -1 if k < wk else 1
    if n <= 8:
        return 0
    return _cmp_prefix(d, t, w, n)


cdef inline int32_t _first_from_key(const Data* d, int32_t a, int32_t b, const char* w, int n,
                                    uint64_t wk, uint64_t mask, bint past) noexcept nogil:
    """`_first_from` with the word's key and mask given."""
    cdef int32_t mid
    while a < b:
        mid = (a + b) >> 1
        if _cmp_key(d, mid, wk, mask, w, n) < past:
            a = mid + 1
        else:
            b = mid
    return a


cdef inline int32_t _first_from(const Data* d, int32_t a, int32_t b, const char* w, int n,
                                bint past) noexcept nogil:
    """The first token id in [a, b) not below w[:n] (past: not below nor starting with it)."""
    return _first_from_key(d, a, b, w, n, _word_key(w, n), _key_mask(n), past)


cdef uint64_t* _tok_keys(const Data* d) noexcept nogil:
    """Each token's first 8 bytes as one big-endian number (malloc'd; NULL when out of memory)."""
    cdef uint64_t* k = <uint64_t*>malloc((<size_t>d.n_tok + 1) * sizeof(uint64_t))
    cdef int32_t t
    if k == NULL:
        return NULL
    for t in range(d.n_tok):
        k[t] = _word_key(<const char*>(d.v_blob + d.v_off[t]), _tok_len(d, t))
    return k


cdef inline void _range_within(const Data* d, int32_t a, int32_t b, const char* w, int n,
                               int32_t* lo, int32_t* hi) noexcept nogil:
    """Token ids [lo, hi) within [a, b) whose text starts with w (every such id lies there)."""
    cdef uint64_t wk = _word_key(w, n), mask = _key_mask(n)
    lo[0] = _first_from_key(d, a, b, w, n, wk, mask, False)
    hi[0] = _first_from_key(d, lo[0], b, w, n, wk, mask, True)


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


# PERF: a long word with slips finds hundreds of tokens to measure (`mraastraat`: 460 index
# entries), each a whole n x m table before. A cell off the diagonal by more than maxd holds
# more than maxd (the distance of two prefixes is at least the difference of their lengths),
# and so does every path through it: only the band of cells within maxd of the diagonal is
# filled (5 cells a letter within two slips), the cells just outside it counting as maxd + 1.
# PERF: a word of up to 64 letters is measured a whole column at a time instead, its cells
# as the bits of machine words (`_dl_bits`); the band stays for longer ones.
cdef int _dl_distance(const char* a, int n, const char* b, int m, int maxd) noexcept nogil:
    """Restricted Damerau-Levenshtein distance, or maxd + 1 when it exceeds maxd."""
    if _dl_beyond(n, m, maxd):
        return maxd + 1
    if 0 < n <= 64:
        return _dl_bits(a, n, b, m, maxd)
    return _dl_band(a, n, b, m, maxd)


cdef inline bint _dl_beyond(int n, int m, int maxd) noexcept nogil:
    """Is the distance of words of n and m letters more than maxd by their lengths alone (or
    are they longer than the table takes)?"""
    return n > 78 or m > 78 or maxd < 0 or n - m > maxd or m - n > maxd


cdef int _dl_bits(const char* a, int n, const char* b, int m, int maxd) noexcept nogil:
    """`_dl_distance` of a word a of 1 to 64 letters (not `_dl_beyond` b): the table's columns
    as bit vectors of the differences between neighbouring cells (Hyyrö 2003, "A bit-vector
    algorithm for computing Levenshtein and Damerau edit distances"), a swap of two letters as
    one edit as in the table; stops as soon as the letters left of b cannot bring the distance
    within maxd."""
    cdef uint64_t peq[256]
    cdef uint64_t vp = ~(<uint64_t>0), vn = 0, d0 = 0, hp, hn, pm, pm_prev = 0, tr
    cdef uint64_t last = (<uint64_t>1) << (n - 1)
    cdef int i, j, dist = n
    # the letters' bit masks: only those of a and b are read, so only they are cleared
    for j in range(m):
        peq[<uint8_t>b[j]] = 0
    for i in range(n):
        peq[<uint8_t>a[i]] = 0
    for i in range(n):
        peq[<uint8_t>a[i]] |= (<uint64_t>1) << i
    for j in range(m):
        pm = peq[<uint8_t>b[j]]
        tr = (((~d0) & pm) << 1) & pm_prev
        d0 = (((pm & vp) + vp) ^ vp) | pm | vn | tr
        hp = vn | ~(d0 | vp)
        hn = d0 & vp
        if hp & last:
            dist += 1
        elif hn & last:
            dist -= 1
        if dist - (m - 1 - j) > maxd:
            return maxd + 1
        hp = (hp << 1) | 1
        hn = hn << 1
        vp = hn | ~(d0 | hp)
        vn = d0 & hp
        pm_prev = pm
    return dist if dist <= maxd else maxd + 1


cdef int _dl_band(const char* a, int n, const char* b, int m, int maxd) noexcept nogil:
    """`_dl_distance` by the band of the table within maxd of its diagonal (the words not
    `_dl_beyond` it)."""
    cdef int d0[80]
    cdef int d1[80]
    cdef int d2[80]
    cdef int* pp = d0
    cdef int* p = d1
    cdef int* c = d2
    cdef int* tmp
    cdef int i, j, lo, hi, cost, v, rowmin, big = maxd + 1
    # row 0 within the band, and the cell just past it
    hi = m if m < maxd else maxd
    for j in range(hi + 1):
        p[j] = j
    if hi < m:
        p[hi + 1] = big
    for i in range(1, n + 1):
        lo = i - maxd if i - maxd > 1 else 1
        hi = i + maxd if i + maxd < m else m
        # the cell before the band: column 0 (i edits), or outside it
        c[lo - 1] = (i if i < big else big) if lo == 1 else big
        rowmin = c[lo - 1]
        for j in range(lo, hi + 1):
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
        if hi < m:
            c[hi + 1] = big
        if rowmin > maxd:
            return big
        tmp = pp
        pp = p
        p = c
        c = tmp
    return p[m] if p[m] <= maxd else big


def _distance(bytes a, bytes b, int maxd, bint band=False):
    """`_dl_distance` of two folded words, or (band) `_dl_band`'s (tests: each against the
    twin's whole table)."""
    if band:
        return maxd + 1 if _dl_beyond(len(a), len(b), maxd) else _dl_band(a, len(a), b, len(b), maxd)
    return _dl_distance(a, len(a), b, len(b), maxd)


cdef inline int _lower(int c) noexcept nogil:
    if c >= 65 and c <= 90:
        return c + 32
    return c


cdef inline int _char_rank(char c) noexcept nogil:
    """0-9 for a digit, 10-35 for a letter (byte order), -1 otherwise."""
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 122:
        return c - 87
    return -1


cdef inline bint _block(const Data* d, const char* w, int n, int32_t* a, int32_t* b) noexcept nogil:
    """[a, b): the known block of tokens holding every token that starts with w (n >= 2): those
    of its first three characters (d.block3) when it has three of 0-9a-z, else of its first two
    (d.block2). False when its first two are not both of 0-9a-z (no block is known)."""
    cdef int c0 = _char_rank(w[0]), c1 = _char_rank(w[1]), k
    if c0 < 0 or c1 < 0:
        return False
    k = c0 * 36 + c1
    if n >= 3 and d.block3 != NULL and _char_rank(w[2]) >= 0:
        k = k * 36 + _char_rank(w[2])
        a[0], b[0] = d.block3[k], d.block3[k + 1]
    else:
        a[0], b[0] = d.block2[k], d.block2[k + 1]
    return True


cdef inline void _within_block(const Data* d, const char* w, int n, int32_t* a, int32_t* b) noexcept nogil:
    """Narrow the token range [a, b) to the block of w's first three (or two) characters
    (`_block`), where every token that starts with w lies; left as it is when `_block` has
    none."""
    cdef int32_t ba, bb
    if _block(d, w, n, &ba, &bb):
        if ba > a[0]:
            a[0] = ba
        if bb < b[0]:
            b[0] = bb


cdef inline void _prefix_range_block(const Data* d, const char* w, int n, int32_t* lo, int32_t* hi) noexcept nogil:
    """`_prefix_range` for a word of 2+ characters, searched within its block (`_block`)."""
    cdef int32_t a, b
    if not _block(d, w, n, &a, &b):
        lo[0] = hi[0] = 0
        return
    _range_within(d, a, b, w, n, lo, hi)


# PERF: `_range_within` searches twice, for the first token that starts with the word and for
# the first past it; a caller that asks only whether some token starts with the word, and
# which is the first (the word itself when it is a token), needs the first search alone. The
# glued-words reading asks that of every word of 5+ letters of every query, and `_segment` of
# every piece it walks.
cdef inline bint _first_within(const Data* d, int32_t a, int32_t b, const char* w, int n,
                               int32_t* lo) noexcept nogil:
    """Whether a token within [a, b) starts with w (every such token lies there); lo: the first
    token of [a, b) not below w, the first that starts with it when one does."""
    cdef uint64_t wk = _word_key(w, n), mask = _key_mask(n)
    lo[0] = _first_from_key(d, a, b, w, n, wk, mask, False)
    return lo[0] < b and _cmp_key(d, lo[0], wk, mask, w, n) == 0


cdef inline bint _first_start(const Data* d, const char* w, int n, int32_t* lo) noexcept nogil:
    """`_first_within` the block of w (n >= 2; `_prefix_range_block`): whether a token starts
    with w, and lo the first that does."""
    cdef int32_t a, b
    if not _block(d, w, n, &a, &b):
        return False
    return _first_within(d, a, b, w, n, lo)


cdef inline void _prefix_range(const Data* d, const char* w, int n, int32_t* lo, int32_t* hi) noexcept nogil:
    """Token ids [lo, hi) whose text starts with w (PERF: within the block of its first two
    characters when it has two)."""
    if n >= 2:
        _prefix_range_block(d, w, n, lo, hi)
    else:
        _range_within(d, 0, d.n_tok, w, n, lo, hi)


cdef void _fill_blocks(Data* d) noexcept nogil:
    """d.block2: where the tokens starting with each two characters begin (sorted table)."""
    cdef char key[2]
    cdef int i
    for i in range(1296):
        key[0] = <char>(48 + i // 36 if i // 36 < 10 else 87 + i // 36)
        key[1] = <char>(48 + i % 36 if i % 36 < 10 else 87 + i % 36)
        d.block2[i] = _first_from(d, 0, d.n_tok, key, 2, False)
    d.block2[1296] = d.n_tok


# PERF: a word's range within the tokens of its first two characters is still a binary search
# over thousands ("st": 9,000); the slips of a word still being typed search such a block once
# per edit of its first letters. With the tokens of each three-character start found once when
# the index opens (one walk over the sorted tokens, about a millisecond), each of those
# searches is a few steps.
cdef int32_t* _block3(const Data* d) noexcept nogil:
    """Where the tokens starting with each three characters (0-9a-z) begin, then n_tok (malloc'd;
    NULL when out of memory: the two-character blocks serve alone)."""
    cdef int32_t* b = <int32_t*>malloc((46656 + 1) * sizeof(int32_t))
    cdef char key[3]
    cdef int i, r, k
    cdef int32_t t = 0
    if b == NULL:
        return NULL
    for i in range(46656):
        for r in range(3):
            k = (i // (1296 if r == 0 else 36 if r == 1 else 1)) % 36
            key[r] = <char>(48 + k if k < 10 else 87 + k)
        while t < d.n_tok and _cmp_prefix(d, t, key, 3) < 0:
            t += 1
        b[i] = t
    b[46656] = d.n_tok
    return b


# PERF: a slip in a word still being typed is looked for as some 160 edited words, each a
# binary search among the tokens of its first three characters (`_slip_start`), and a glued
# word is cut by the starts of tokens found at each of its letters (`_segment`, `_cut_word`):
# nearly all of those words are the start of no token, and each search read 8 or so tokens'
# keys to say so, a cache miss each. A bit per start of 4 to 8 bytes of every token (a
# filter of 128 KB, set when the index opens, in a few ms) says at once that no token starts
# with most of them: a clear bit is certain (each start's bit is set), a set one may be
# another start's, and the search decides.
cdef inline uint64_t _pfx_step(uint64_t h, char c) noexcept nogil:
    """The filter's hash of a start, one byte longer (FNV-1a)."""
    return (h ^ <uint8_t>c) * 0x100000001b3ULL


cdef inline uint64_t _pfx_slot(uint64_t h) noexcept nogil:
    return (h * 0x9E3779B97F4A7C15ULL) >> (64 - PFX_BITS)


cdef uint64_t* _pfx_filter(const Data* d) noexcept nogil:
    """The bits of every token's starts of PFX_MIN to PFX_MAX bytes (malloc'd; NULL when out
    of memory: the searches decide alone)."""
    cdef uint64_t* bits = <uint64_t*>calloc((<size_t>1 << PFX_BITS) // 64, sizeof(uint64_t))
    cdef uint64_t h[PFX_MAX + 1]
    cdef uint64_t k
    cdef int32_t t
    cdef int i, same, m, prev_m = 0
    cdef const char* p
    cdef const char* prev = NULL
    if bits == NULL:
        return NULL
    h[0] = 0xcbf29ce484222325ULL
    for t in range(d.n_tok):
        p = <const char*>(d.v_blob + d.v_off[t])
        m = _tok_len(d, t)
        if m > PFX_MAX:
            m = PFX_MAX
        # the tokens are sorted: the starts this one shares with the one before are set, and
        # h holds their hashes
        same = 0
        while same < m and same < prev_m and p[same] == prev[same]:
            same += 1
        for i in range(same, m):
            h[i + 1] = _pfx_step(h[i], p[i])
            if i + 1 >= PFX_MIN:
                k = _pfx_slot(h[i + 1])
                bits[k >> 6] |= (<uint64_t>1) << (k & 63)
        prev = p
        prev_m = m
    return bits


cdef inline bint _may_start(const Data* d, const char* w, int n) noexcept nogil:
    """False when no token starts with w[:n] (certain); True when one may."""
    cdef uint64_t h = 0xcbf29ce484222325ULL, k
    cdef int i
    if d.pfx_bits == NULL or n < PFX_MIN:
        return True
    for i in range(n if n < PFX_MAX else PFX_MAX):
        h = _pfx_step(h, w[i])
        if i + 1 >= PFX_MIN:
            k = _pfx_slot(h)
            if not (d.pfx_bits[k >> 6] >> (k & 63)) & 1:
                return False
    return True


def _may_start_word(Index index, bytes w):
    """`_may_start` of a folded word: False when no token of the index starts with it (tests)."""
    index._check_open()
    return _may_start(&index.d, w, len(w))


cdef inline int _blob_cmp(const uint8_t* blob, const int64_t* off, int i, const char* w,
                          int n) noexcept nogil:
    """String i of a blob (blob[off[i]:off[i+1]]) against w[:n]: < 0, 0 or > 0, in byte order."""
    cdef int64_t o = off[i]
    cdef int m = <int>(off[i + 1] - o)
    cdef int c = memcmp(blob + o, w, m if m < n else n)
    return c if c != 0 else m - n


cdef int _blob_lower_bound(const uint8_t* blob, const int64_t* off, int count, const char* w,
                           int n) noexcept nogil:
    """The first of `count` byte-sorted strings (blob[off[i]:off[i+1]]) not below w[:n]."""
    cdef int a = 0, b = count, mid
    while a < b:
        mid = (a + b) >> 1
        if _blob_cmp(blob, off, mid, w, n) < 0:
            a = mid + 1
        else:
            b = mid
    return a


cdef int _blob_gallop(const uint8_t* blob, const int64_t* off, int lo, int count, const char* w,
                      int n) noexcept nogil:
    """`_blob_lower_bound` among the strings [lo, count) (those before lo are below w[:n]), found
    from lo by steps that double, then halving the last: a few reads near lo when it is near."""
    cdef int hi = lo, step = 1
    while hi < count and _blob_cmp(blob, off, hi, w, n) < 0:
        lo = hi + 1
        hi = lo + step
        step <<= 1
    if hi > count:
        hi = count
    return lo + _blob_lower_bound(blob, off + lo, hi - lo, w, n)


cdef inline int _blob_find(const uint8_t* blob, const int64_t* off, int count, const char* w,
                           int n) noexcept nogil:
    """The index of the string equal to w[:n], or -1."""
    cdef int a = _blob_lower_bound(blob, off, count, w, n)
    if a >= count or off[a + 1] - off[a] != n or memcmp(blob + off[a], w, n) != 0:
        return -1
    return a


cdef int _list_index(const char** ptr, const int* lens, int count, const char* w, int n) noexcept nogil:
    cdef int i
    for i in range(count):
        if lens[i] == n and memcmp(ptr[i], w, n) == 0:
            return i
    return -1


cdef inline bint _in_list(const char** ptr, const int* lens, int count, const char* w, int n) noexcept nogil:
    return _list_index(ptr, lens, count, w, n) >= 0
