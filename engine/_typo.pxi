# Typo candidates (included by _core.pyx): the tokens within one or two slips of a word
# (the deletion index) and the tokens a word still being typed starts with a slip undone.

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
    """The word with every one of a sound written the other way (words.SOUND_SPELLINGS, read
    into _spell_ptr: kind 2 p writes the first spelling of pair p as the second, ei as ij (y),
    kind 2 p + 1 the second as the first): its length, or 0 when the word has none (or the
    result would not fit UNFOLD_MAX)."""
    return _sound_respelt(w, n, kind, -1, out)


cdef int _sound_respelt(const char* w, int n, int kind, int occ, char* out) noexcept nogil:
    """`_sound_variant`, with only the occ-th (from 0, left to right) of the sound respelt, or
    every one (occ -1); 0 when the word has no such one."""
    cdef const char* a = _spell_ptr[kind]
    cdef const char* b = _spell_ptr[kind ^ 1]
    cdef int la = _spell_len[kind], lb = _spell_len[kind ^ 1], i = 0, k = 0, hit = 0, seen = 0
    while i < n:
        if i + la <= n and memcmp(w + i, a, la) == 0 and (occ < 0 or seen == occ):
            if k + lb > UNFOLD_MAX:
                return 0
            memcpy(out + k, b, lb)
            k += lb
            i += la
            seen += 1
            hit = 1
        else:
            if i + la <= n and memcmp(w + i, a, la) == 0:
                seen += 1     # an occurrence left as it is: copied whole
                if k + la > UNFOLD_MAX:
                    return 0
                memcpy(out + k, w + i, la)
                k += la
                i += la
                continue
            if k + 1 > UNFOLD_MAX:
                return 0
            out[k] = w[i]
            k += 1
            i += 1
    return k if hit else 0


DEF SOUND_EACH = 4  # a sound written 2+ times: each of its first this many respelt alone too

cdef int _sound_respellings(const char* w, int n, char* out, int* lens) noexcept nogil:
    """Every other spelling of the word's sounds that a person may have meant, into
    out[i * UNFOLD_MAX:] and lens[i] (room for MAX_SPELLINGS * (SOUND_EACH + 1)); how many.
    Per sound (`_sound_variant`'s order), every one respelt, then, when the word has it twice
    or more, each alone ("vreiheid" is Vrijheid..., "heindeik" Heindijk)."""
    cdef int kind, j, m, c = 0, first
    for kind in range(_n_spell):
        m = _sound_respelt(w, n, kind, -1, out + c * UNFOLD_MAX)
        if m == 0:
            continue
        lens[c] = m
        c += 1
        first = c
        for j in range(SOUND_EACH):
            m = _sound_respelt(w, n, kind, j, out + c * UNFOLD_MAX)
            if m == 0:
                break
            lens[c] = m
            c += 1
        if c - first == 1:
            c = first  # the sound once: that one alone is every one, respelt above
    return c


cdef int _sound_key(const char* w, int n, bint whole, char* out, uint32_t* follow) noexcept nogil:
    """The sound key of the folded word w[:n] (words.SOUND_RULES, read into _snd_*) into out
    (room for UNFOLD_MAX): its length, 0 when it would not fit. At each position the first rule
    that stands there applies; then a consonant after itself is written once.

    Not `whole`, the word may still be being typed: no rule for the end of a word applies, and
    the key stops at the first position where a rule may yet apply that the letters typed do
    not decide ("e" of "ei", "c" of "ch", "ch" of "chr", a "d" that is "t" before a consonant),
    so that it starts the key of each word the typed one starts ("kristiaanstr", "agterw").
    Into follow (when not NULL): the letters the key of such a word has next there (bit i:
    letter a + i; for "e": `y` or `e`; for an "i", also `y`: the start of ij), else 0, also
    where the letter next is the consonant the key ends with, written once: "voorse" starts no
    Voorschoterlaan."""
    cdef int i = 0, k = 0, r, m, c, j, chosen
    cdef const char* f
    cdef bint open_, sure, anyf
    cdef uint32_t fol
    if follow != NULL:
        follow[0] = 0
    while i < n:
        c = <uint8_t>w[i]
        chosen = -1
        open_ = False
        sure = False
        anyf = False
        fol = 0
        for r in range(_snd_first[c], _snd_first[c + 1]):
            if _snd_start[r] and i > 0:
                continue
            m = _snd_from_len[r]
            f = _snd_from[r]
            if i + m > n:
                # the letters typed run out inside the rule's: it may apply once they are typed
                if whole or memcmp(w + i, f, n - i) != 0:
                    continue
            else:
                if memcmp(w + i, f, m) != 0:
                    continue
                if _snd_end[r]:
                    if i + m < n:
                        continue
                    sure = whole
                elif _snd_ctx_len[r] > 0:
                    if i + m == n and whole:
                        continue
                    if i + m < n:
                        if memchr(_snd_ctx[r], w[i + m], _snd_ctx_len[r]) == NULL:
                            continue
                        sure = True
                else:
                    sure = True
            if sure and not open_:
                chosen = r
                break
            open_ = True
            if _snd_to_len[r] == 0:
                anyf = True     # a letter not heard: what the key has next is not known
            elif 97 <= _snd_to[r][0] <= 122:
                fol |= (<uint32_t>1) << (_snd_to[r][0] - 97)
            if sure:
                break
        if open_:
            # the key stops here; no rule that surely applies: the letter as it is, next
            if not sure and 97 <= c <= 122:
                fol |= (<uint32_t>1) << (c - 97)
            # an i typed last may be the start of ij, folded y ("visserri": Visserij)
            if c == 105:
                fol |= (<uint32_t>1) << (121 - 97)
            # a consonant after the same one is written once: the key goes on with what the
            # letters after it make, which are not typed ("marnikss": Marniksstraat, "ks" +
            # "straat")
            if k > 0 and _snd_consonant[<uint8_t>out[k - 1]] and 97 <= out[k - 1] <= 122 \
                    and (fol >> (out[k - 1] - 97)) & 1:
                anyf = True
            if follow != NULL:
                follow[0] = 0 if anyf else fol
            return k
        if chosen >= 0:
            for j in range(_snd_to_len[chosen]):
                k = _key_put(out, k, _snd_to[chosen][j])
                if k < 0:
                    return 0
            i += _snd_from_len[chosen]
        else:
            k = _key_put(out, k, w[i])
            if k < 0:
                return 0
            i += 1
    return k


cdef inline int _key_put(char* out, int k, char c) noexcept nogil:
    """Append c to the key out[:k] (a consonant after itself is written once): the new length,
    -1 when it would not fit UNFOLD_MAX."""
    if k > 0 and out[k - 1] == c and _snd_consonant[<uint8_t>c]:
        return k
    if k >= UNFOLD_MAX:
        return -1
    out[k] = c
    return k + 1


def sound_key(str word, *, bint whole=True):
    """The sound key of a folded word (`_sound_key`): two words with the same key sound alike
    to a Dutch speaker (words.SOUND_RULES). The build keys every token with it; "" for a word
    whose key would not fit UNFOLD_MAX (no typed word has that key)."""
    cdef bytes b = word.encode("ascii")
    cdef char out[UNFOLD_MAX]
    cdef int m = 0
    if len(b) <= UNFOLD_MAX:
        m = _sound_key(b, len(b), whole, out, NULL)
    return out[:m].decode("ascii")


def sound_start(str word):
    """(key, follow) of a folded word still being typed (`_sound_key`, not whole): the start of
    the key of every word it starts, and the letters such a key may have next ("" for any)."""
    cdef bytes b = word.encode("ascii")
    cdef char out[UNFOLD_MAX]
    cdef int m = 0
    cdef uint32_t follow = 0
    if len(b) <= UNFOLD_MAX:
        m = _sound_key(b, len(b), False, out, &follow)
    return out[:m].decode("ascii"), "".join(chr(97 + i) for i in range(26) if (follow >> i) & 1)


cdef inline int _typed_len(const char* w, int n) noexcept nogil:
    """The length of a folded word as a person types it: every y may stand for ij."""
    cdef int i, m = n
    for i in range(n):
        if w[i] == 121:
            m += 1
    return m


# PERF: a token is found by many forms of a word (one a slip from a 10-letter word is found by
# up to 10 of its forms with a letter left out), and one turned down was measured again each
# time. The tokens measured are remembered in a small open-addressing table (token id + 1);
# what a token measures depends only on the word, so once is enough.
DEF MEASURED_BITS = 11   # 2048 slots ...
DEF MEASURED_MAX = 1024  # ... for this many tokens; past it, the found are told by ts.tid

cdef struct TypoSet:
    int n
    int long_only       # two slips only in a token of TWO_SLIP_LEN+ letters (the word is shorter)
    int sound_n[MAX_SPELLINGS]  # the word spelt as it sounds otherwise (_sound_variant; 0: none),
    char sound[MAX_SPELLINGS][UNFOLD_MAX]
    int32_t tid[512]
    uint8_t dist[512]
    int has_y           # the word holds a y (its ij spelling differs)
    int nmeasured       # tokens in `measured`
    int32_t measured[1 << MEASURED_BITS]


cdef inline bint _measured_before(TypoSet* ts, int32_t tid) noexcept nogil:
    """Whether token tid was measured against this word before; remember it if not (while the
    table has room)."""
    cdef uint32_t j = (<uint32_t>tid * 2654435761U) >> (32 - MEASURED_BITS)
    cdef int r
    if ts.nmeasured >= MEASURED_MAX:
        for r in range(ts.n):
            if ts.tid[r] == tid:
                return True
        return False
    while ts.measured[j]:
        if ts.measured[j] == tid + 1:
            return True
        j = (j + 1) & ((1 << MEASURED_BITS) - 1)
    ts.measured[j] = tid + 1
    ts.nmeasured += 1
    return False


cdef void _typo_check(const Data* d, Search* s, int ti, int32_t tid, int maxd, TypoSet* ts) noexcept nogil:
    """Measure token tid against word ti; remember it when within maxd edits."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef int r, dist, dist2, n1, n2
    cdef const char* tok = <const char*>(d.v_blob + d.v_off[tid])
    cdef char a[UNFOLD_MAX]
    cdef char b[UNFOLD_MAX]
    if ts.n >= 512 or _measured_before(ts, tid):
        return
    for r in range(w.nr):
        if w.lo[r] <= tid < w.hi[r]:
            return
    dist = _dl_distance(s.q + t.start, t.len, tok, _tok_len(d, tid), maxd)
    # the ij spellings differ from the folded ones only where the word or the token has a y
    if dist > 1 and (ts.has_y or memchr(tok, 121, _tok_len(d, tid)) != NULL):
        n1 = _unfold_ij(s.q + t.start, t.len, a)
        n2 = _unfold_ij(tok, _tok_len(d, tid), b)
        dist2 = _dl_distance(a, n1, b, n2, maxd)
        if dist2 < dist:
            dist = dist2
    # "reinlaan" for Rijnlaan, "gaudenweg" for Goudenweg: the other spelling of a sound is
    # one slip
    for r in range(_n_spell):
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


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define ENGINE_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #define ENGINE_KEEP_CALLS() __asm__ __volatile__("")
    #else
    #define ENGINE_PREFETCH(p) ((void)0)
    #define ENGINE_KEEP_CALLS() ((void)0)
    #endif
    """
    void _prefetch "ENGINE_PREFETCH"(const void* p) noexcept nogil
    # NOTE: GCC (12, -O3: its mod-ref analysis) takes a function whose only effects are
    # prefetches for one without effects and drops every call of it that it does not inline
    # (`cdef inline` is only a hint): a function that only prefetches calls this first (an
    # empty volatile asm, no code) to be kept
    void _keep_calls "ENGINE_KEEP_CALLS"() noexcept nogil


# PERF: a word within two slips is looked up as every form of it with up to two letters left
# out (56 forms of a 10-letter word), each a probe of the typo table (100 MB), then each
# token found measured: the probes were a third of the time of a query with two slips or a
# street that does not exist. The forms are hashed first, then their home slots fetched
# together (the misses overlap), then their runs read and the tokens measured in the order of
# the forms; a form that repeats an earlier one (the two a's of "straat") is probed once. What
# is found, its order and the work counted are as one probe at a time.
DEF TYPO_FORMS = 768     # 1 + n + n(n-1)/2 forms of a word of up to 38 letters (742)
DEF TYPO_FOUND = 2048    # index entries measured in one batch (more: measured as found)
DEF TYPO_SEEN_BITS = 11  # the table of forms seen: 2048 slots for up to TYPO_FORMS forms
DEF PROBE_AHEAD = 12     # the home slots fetched ahead of the one read

cdef void _typo_variants(const Data* d, Search* s, int ti, const char* p, int n, int depth,
                         int maxd, TypoSet* ts) noexcept nogil:
    """Look up p with up to `depth` letters left out; keep the tokens within maxd slips."""
    cdef uint64_t hs[TYPO_FORMS]
    cdef int32_t first[TYPO_FORMS]   # the form's first occurrence (itself when new)
    cdef int32_t found[TYPO_FORMS]   # index entries matched by the form (of its first occurrence)
    cdef int32_t ks[TYPO_FOUND]     # the tokens found, in order
    cdef uint16_t seen[1 << TYPO_SEEN_BITS]
    cdef int nf = 0, i, j, f, nk = 0, bits
    cdef uint64_t h, e, fp, k
    cdef uint64_t F[FORM_MAX + 1]
    _form_prep(p, n, F)
    hs[nf] = _form_hash(F, n, -1, -1)
    nf += 1
    if depth > 0:
        for i in range(n):
            hs[nf] = _form_hash(F, n, i, -1)
            nf += 1
            if depth == 2:
                for j in range(i + 1, n):
                    if nf < TYPO_FORMS:
                        hs[nf] = _form_hash(F, n, i, j)
                        nf += 1
    for f in range(nf if nf < PROBE_AHEAD else PROBE_AHEAD):
        _prefetch(&d.del_slot[_del_home(hs[f], d.n_home)])
    # a repeated form is found through a small open-addressing table of form numbers + 1, of
    # at least twice as many slots as forms (only those cleared: one form needs 2)
    bits = 1
    while (1 << bits) < 2 * nf:
        bits += 1
    memset(seen, 0, (<size_t>1 << bits) * sizeof(uint16_t))
    for f in range(nf):
        h = hs[f]
        first[f] = f
        j = <int>(h >> (64 - bits))
        while seen[j]:
            if hs[seen[j] - 1] == h:
                first[f] = seen[j] - 1
                break
            j = (j + 1) & ((1 << bits) - 1)
        else:
            seen[j] = <uint16_t>(f + 1)
    for f in range(nf):
        if f + PROBE_AHEAD < nf:
            _prefetch(&d.del_slot[_del_home(hs[f + PROBE_AHEAD], d.n_home)])
        s.slip_work += SLIP_PER_PROBE
        if first[f] != f:
            s.slip_work += SLIP_PER_CHECK * found[first[f]]
            found[f] = 0
            continue
        h = hs[f]
        fp = h >> DEL_TOK_BITS
        found[f] = 0
        # the run from the home slot to the first empty one (the table's last slot is empty)
        k = _del_home(h, d.n_home)
        e = d.del_slot[k]
        while e != 0:
            if e >> DEL_TOK_BITS == fp:
                found[f] += 1
                s.slip_work += SLIP_PER_CHECK
                if nk == TYPO_FOUND:
                    _typo_checks(d, s, ti, ks, nk, maxd, ts)
                    nk = 0
                ks[nk] = <int32_t>(e & ((<uint64_t>1 << DEL_TOK_BITS) - 1)) - 1
                _prefetch(&d.v_off[ks[nk]])
                nk += 1
            k += 1
            e = d.del_slot[k]
    _typo_checks(d, s, ti, ks, nk, maxd, ts)


cdef bint _one_slip_token(const Data* d, const char* p, int n) noexcept nogil:
    """Is some token one slip from the whole word p[:n] (5 to 38 letters)? Probes the typo
    table with the word and each of its forms with a letter left out."""
    cdef uint64_t hs[39]
    cdef uint64_t h, fp, k, e
    cdef int f, nf = n + 1
    cdef int32_t tid
    cdef uint64_t F[FORM_MAX + 1]
    if n < 5 or n > 38:
        return False
    _form_prep(p, n, F)
    # PERF: the home slots fetched together (the misses overlap), as `_typo_variants` does
    for f in range(nf):
        hs[f] = _form_hash(F, n, f - 1, -1)
        _prefetch(&d.del_slot[_del_home(hs[f], d.n_home)])
    for f in range(nf):
        h = hs[f]
        fp = h >> DEL_TOK_BITS
        k = _del_home(h, d.n_home)
        e = d.del_slot[k]
        while e != 0:
            if e >> DEL_TOK_BITS == fp:
                tid = <int32_t>(e & ((<uint64_t>1 << DEL_TOK_BITS) - 1)) - 1
                if _dl_distance(p, n, <const char*>(d.v_blob + d.v_off[tid]), _tok_len(d, tid), 1) <= 1:
                    return True
            k += 1
            e = d.del_slot[k]
    return False


cdef void _typo_checks(const Data* d, Search* s, int ti, const int32_t* ks, int nk, int maxd,
                       TypoSet* ts) noexcept nogil:
    """Measure the tokens ks against word ti, in order (their text fetched together first; their
    offsets were fetched as they were found)."""
    cdef int i
    for i in range(nk):
        _prefetch(d.v_blob + d.v_off[ks[i]])
    for i in range(nk):
        _typo_check(d, s, ti, ks[i], maxd, ts)


cdef bint _slip_emit(Search* s, int ti, int32_t first, int32_t count) noexcept nogil:
    """Remember tokens [first, first + count) as word ti's slips (as `_slip_start` does once it
    has found them); whether the word's list is full."""
    cdef int32_t tid
    cdef int r, n
    if count == 0 or count > PREFIX_SLIP_MAX:
        return False
    for tid in range(first, first + count):
        n = s.slip_n[ti]
        if n >= MAXSLIP:
            return True
        for r in range(n):
            if s.slip_tid[ti][r] == tid:
                break
        else:
            s.slip_tid[ti][n] = tid
            s.slip_n[ti] = n + 1
    return s.slip_n[ti] >= MAXSLIP


cdef void _slip_start(const Data* d, Search* s, int ti, int32_t a, int32_t hi0, const char* v,
                      int m) noexcept nogil:
    """Remember the tokens that v starts, when there are at most PREFIX_SLIP_MAX; [a, hi0)
    holds every token that could. An ij that the edit made is spelt y, as the tokens are
    ("virjheidsh", two letters swapped, is "vrijheidsh": Vrijheidshof); then every token
    could."""
    cdef int32_t b
    cdef int32_t lo, hi
    cdef char f[PREFIX_SLIP_LEN + 2]
    cdef int j = 0, k = 0
    s.slip_work += SLIP_PER_PROBE
    # PERF: an ij is looked for only in a word with a j (nearly every edited word is the start
    # of no token, and the filter says so in a few steps: the search is all but its set-up)
    if memchr(v, 106, m) != NULL:
        while j < m:
            if j + 1 < m and v[j] == 105 and v[j + 1] == 106:
                f[k] = 121
                j += 2
            else:
                f[k] = v[j]
                j += 1
            k += 1
        if k < m:  # an ij was spelt y
            v = f
            m = k
            a = 0
            hi0 = d.n_tok
    if not _may_start(d, v, m):
        return
    b = hi0
    # PERF: the word's key decides most comparisons without reading a token's text
    cdef uint64_t wk = _word_key(v, m), mask = _key_mask(m)
    # PERF: the tokens that start with v's first three (or two) characters are one known block
    _within_block(d, v, m, &a, &b)
    hi0 = b
    # the first token not below v; PERF: when it does not start with v, none does
    lo = _first_from_key(d, a, b, v, m, wk, mask, False)
    if lo >= hi0 or _cmp_key(d, lo, wk, mask, v, m) != 0:
        return
    hi = _first_from_key(d, lo, hi0 if hi0 - lo <= PREFIX_SLIP_MAX + 1 else lo + PREFIX_SLIP_MAX + 1,
                         v, m, wk, mask, True)
    _slip_emit(s, ti, lo, hi - lo)


# the keys beside each letter on a QWERTY keyboard, 7 bytes a letter (NUL-padded)
cdef const char* _NEAR_KEYS = (
    b"qwsz\0\0\0vngh\0\0\0xvdf\0\0\0sferxc\0"  # a b c d
    b"wrsd\0\0\0dgrtcv\0fhtyvb\0gjyubn\0"  # e f g h
    b"uojk\0\0\0hkuinm\0jliom\0\0kop\0\0\0\0"  # i j k l
    b"njk\0\0\0\0bmhj\0\0\0ipkl\0\0\0ol\0\0\0\0\0"  # m n o p
    b"wa\0\0\0\0\0etdf\0\0\0adwezx\0ryfg\0\0\0"  # q r s t
    b"yihj\0\0\0cbfg\0\0\0qeas\0\0\0zcsd\0\0\0"  # u v w x
    b"tugh\0\0\0asx\0\0\0\0"  # y z
)


# PERF: the edits at one position of a word are 53 words to look up (a letter too many, two
# swapped, 25 wrong letters, 26 left out), each a binary search among the tokens that start
# with the letters before it: a thousand comparisons of a query with a street that does not
# exist, most of them cache misses. When those tokens are few (from the third letter on), one
# walk over them finds the tokens of every edit at once; they are remembered in the same order.
# (SLIP_SCAN_MAX, _core.pxd, is the most tokens so walked.)

cdef void _slip_scan(const Data* d, Search* s, int ti, int32_t lo, int32_t hi, const char* p,
                     int n, int i, bint near) noexcept nogil:
    """The tokens that word p starts with one edit at position i undone, among the tokens
    [lo, hi) (those that start with p[:i]): every edit, or (near) a letter too many, two
    swapped and the keys beside p[i] (`_prefix_slips`)."""
    # per edit, the first token and how many (each edit's tokens are one run of ids): 0 a
    # letter too many, 1 two swapped, 2 + c a wrong letter c, 28 + c the letter c left out
    cdef int32_t first[54]
    cdef int32_t count[54]
    cdef int32_t t
    cdef int tl, c, e
    cdef const char* tp
    memset(count, 0, sizeof(count))
    s.slip_work += (hi - lo) // SLIP_SCAN_TOKENS + 1
    for t in range(lo, hi):
        tp = <const char*>(d.v_blob + d.v_off[t])
        tl = <int>(d.v_off[t + 1] - d.v_off[t])
        if tl >= n - 1 and memcmp(tp + i, p + i + 1, n - 1 - i) == 0:
            if count[0] == 0:
                first[0] = t
            count[0] += 1
        if tl < n:
            continue
        if i + 1 < n and tp[i] == p[i + 1] and tp[i + 1] == p[i] and memcmp(tp + i + 2, p + i + 2, n - i - 2) == 0:
            if count[1] == 0:
                first[1] = t
            count[1] += 1
        c = <int>tp[i] - 97
        if c < 0 or c >= 26:
            continue
        if tp[i] != p[i] and memcmp(tp + i + 1, p + i + 1, n - i - 1) == 0:
            e = 2 + c
            if count[e] == 0:
                first[e] = t
            count[e] += 1
        if tl >= n + 1 and memcmp(tp + i + 1, p + i, n - i) == 0:
            e = 28 + c
            if count[e] == 0:
                first[e] = t
            count[e] += 1
    if _slip_emit(s, ti, first[0], count[0]):
        return
    if (near or i + 1 < n) and _slip_emit(s, ti, first[1], count[1]):
        return
    if near:
        if 97 <= p[i] <= 122:
            for e in range(7):
                c = _NEAR_KEYS[(p[i] - 97) * 7 + e]
                if c == 0:
                    break
                if _slip_emit(s, ti, first[2 + c - 97], count[2 + c - 97]):
                    return
        return
    for c in range(26):
        if c + 97 != p[i] and _slip_emit(s, ti, first[2 + c], count[2 + c]):
            return
    for c in range(26):
        if _slip_emit(s, ti, first[28 + c], count[28 + c]):
            return


cdef inline bint _ij_near(const char* p, int n, int i) noexcept nogil:
    """Could an edit at position i of p make an ij of a j typed (a j within p[i-1:i+3])? Then
    the edits are looked up one by one (`_slip_start` spells it y), not by `_slip_scan`."""
    cdef int j
    for j in range(i - 1 if i > 0 else 0, i + 3 if i + 3 < n else n):
        if p[j] == 106:
            return True
    return False


# PERF: the tokens a word starts with one slip undone (`_prefix_slips`, 5-15 us a word: a
# hundred look-ups of edits) were found for every token of every reading, and counted by no
# budget (issue 37: a query of 28 four-letter words, most of them repeated, spent 0.5 of its
# 0.9 ms there, its slip work at 2,850 of 40,000). What they are follows from the word alone,
# so a query finds them once per word (`slipmemo`); and their look-ups count in the slip work
# (SLIP_PER_PROBE an edit looked up, one per SLIP_SCAN_TOKENS tokens walked), so that once it
# is spent a word not looked at yet gets none, as a word gets no typo tokens (`_typo_ranges`).
cdef void _word_slips(const Data* d, Search* s, int ti) noexcept nogil:
    """Set s.slip_tid[ti] and s.slip_n[ti] (`_prefix_slips`), once per word of the query."""
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int n = t.len, m
    cdef TypoMemo* e
    if s.slip_n[ti] >= 0:
        return
    for m in range(s.nslipmemo):
        e = &s.slipmemo[m]
        if e.n == n and memcmp(e.text, p, n) == 0:
            memcpy(s.slip_tid[ti], &s.slipmemo_tid[e.start * MAXSLIP], e.count * sizeof(int32_t))
            s.slip_n[ti] = e.count
            return
    if _slips_spent(s) or n > UNFOLD_MAX:
        s.slip_n[ti] = 0
        return
    _prefix_slips(d, s, ti)
    if s.nslipmemo < MEMO_MAX:
        e = &s.slipmemo[s.nslipmemo]
        memcpy(e.text, p, n)
        e.n = n
        e.maxd = 0
        e.start = s.nslipmemo
        e.count = s.slip_n[ti]
        memcpy(&s.slipmemo_tid[e.start * MAXSLIP], s.slip_tid[ti], e.count * sizeof(int32_t))
        s.nslipmemo += 1


cdef void _prefix_slips(const Data* d, Search* s, int ti) noexcept nogil:
    """A word still being typed with a slip in it ("ruysdeal", "stationssqra"): the tokens
    that the word starts with one edit undone (s.slip_tid[ti], once per token of a query).

    No token starts with the whole word; let k be the length of its longest start that some
    token has. The slip lies at or before letter k; every edit at the last three positions up
    to k is tried, then (PERF: fewer) earlier a letter too many, two letters swapped or the
    key beside the one meant; each looked up among the tokens that start with the letters
    before it, as typed. When that finds nothing, letter k is an i that, as ij (y),
    continues a token's start, and a j follows, the same again with that i spelt y
    ("jasminjh": "jasmynjh", a j too many, starts Jasmijnhof; the j was typed after the n).
    Before all these, the tokens that the other spelling of a sound in it starts (as a slip:
    the sound-alikes of the word, `_add_sounds`, were looked for before any slip)."""
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int n = t.len, k
    cdef char w[PREFIX_SLIP_LEN + 2]
    cdef int32_t lo, hi
    cdef char v[MAX_SPELLINGS * (SOUND_EACH + 1) * UNFOLD_MAX]
    cdef int lens[MAX_SPELLINGS * (SOUND_EACH + 1)]
    cdef int j, nv, sound
    s.slip_n[ti] = 0
    # first the other spelling of a sound, which a person who hears the word is the likeliest
    # to get wrong ("kijzerst", "reinm": Keizerstraat, Rijnmond; `_sound_respellings`)
    nv = _sound_respellings(p, n, v, lens)
    for j in range(nv):
        if lens[j] <= PREFIX_SLIP_LEN:
            _slip_start(d, s, ti, 0, d.n_tok, v + j * UNFOLD_MAX, lens[j])
    sound = s.slip_n[ti]
    k = _prefix_slips_of(d, s, ti, p, n)
    if s.slip_n[ti] == sound and k < n - 1 and p[k] == 105 and memchr(p + k + 1, 106, n - k - 1) != NULL:
        memcpy(w, p, n)
        w[k] = 121
        _prefix_range(d, w, k + 1, &lo, &hi)
        if lo < hi:
            _prefix_slips_of(d, s, ti, w, n)


cdef int _prefix_slips_of(const Data* d, Search* s, int ti, const char* p, int n) noexcept nogil:
    """`_prefix_slips` of the word p[:n], no token starting with it, for word ti; returns k."""
    cdef int i, k, c
    cdef char v[PREFIX_SLIP_LEN + 2]
    cdef int32_t lo, hi, a, b
    cdef int32_t rlo[PREFIX_SLIP_LEN + 1]
    cdef int32_t rhi[PREFIX_SLIP_LEN + 1]
    rlo[0] = 0
    rhi[0] = d.n_tok
    k = 0
    while k < n - 1:
        if not _may_start(d, p, k + 1):
            break
        a = rlo[k]
        b = rhi[k]
        # PERF: the tokens of the word's first two and three letters are a known block (`_block`),
        # narrower than those of one letter fewer: fewer steps to find their range
        if 2 <= k + 1 <= 3:
            _within_block(d, p, k + 1, &a, &b)
        _range_within(d, a, b, p, k + 1, &lo, &hi)
        if lo >= hi:
            break
        k += 1
        rlo[k] = lo
        rhi[k] = hi
    for i in range(k - 2 if k > 2 else 0, k + 1):
        lo = rlo[i]
        hi = rhi[i]
        if i >= 2 and hi - lo <= SLIP_SCAN_MAX and not _ij_near(p, n, i):
            _slip_scan(d, s, ti, lo, hi, p, n, i, False)
            continue
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
        if i >= 2 and hi - lo <= SLIP_SCAN_MAX and not _ij_near(p, n, i):
            _slip_scan(d, s, ti, lo, hi, p, n, i, True)
            continue
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
    return k


cdef int _add_slips(const Data* d, Search* s, int ti) noexcept nogil:
    """Add to word ti the tokens it starts with one slip undone (those not among its typo
    tokens yet, while ranges are left); return how many were added."""
    cdef Word* w = &s.word[ti]
    cdef int i, added = 0, n = s.tok[ti].len, had
    cdef int32_t tid
    _word_slips(d, s, ti)
    if s.slip_n[ti] == 0:
        return 0
    # PERF: a slip is looked for among the typo tokens the word had, sorted, by halving (it was
    # a walk over them all, for each: up to MAXSLIP x MAXR steps a word); the slips are
    # distinct, so the ones added here need no look
    _sort_typo_ranges(w)
    had = w.nr
    for i in range(s.slip_n[ti]):
        if w.nr >= MAXR:
            break
        tid = s.slip_tid[ti][i]
        if _typo_at(w, had, tid) >= 0:
            continue
        _push_typo(d, w, tid, _prefix_cost(TYPO_PEN, n, _tok_len(d, tid)), TYPO_START)
        added += 1
    return added


cdef inline void _push_typo(const Data* d, Word* w, int32_t tid, float base, uint8_t mark) noexcept nogil:
    """Append token tid to word w as a typo range of penalty `base` and kind `mark` (TYPO_WHOLE,
    TYPO_START; the caller checks room)."""
    _push_range(d, w, tid, tid + 1, base, mark)


cdef inline void _push_range(const Data* d, Word* w, int32_t lo, int32_t hi, float base,
                             uint8_t mark) noexcept nogil:
    """Append tokens [lo, hi) to word w as a typo range of penalty `base` and kind `mark` (a
    single token, `_push_typo`, or a run of sound-alikes, TYPO_RUN; the caller checks room)."""
    w.lo[w.nr] = lo
    w.hi[w.nr] = hi
    w.base[w.nr] = base
    w.typo[w.nr] = mark
    w.nr += 1
    w.cost += d.v_post_start[hi] - d.v_post_start[lo]
    w.tbits_nr = -1


# PERF: the slips of a word are looked up once per query (issue 11). A word repeated
# ("oensstraat 29 oensstraat 320 ... oensstraat") or read again by each retry was looked up
# again every time: 40 look-ups of three words took 1.7 of that query's 2.0 ms. What a
# look-up finds depends only on the word and the slips allowed (the tokens the word starts,
# which it leaves out, follow from the word alone: _word_ranges), so it is remembered.
cdef bint _memo_get(Search* s, const char* p, int n, int maxd, TypoSet* ts) noexcept nogil:
    """Fill ts with the tokens within maxd slips of word p[:n] if this query looked them up
    before; whether it did."""
    cdef int i
    cdef const TypoMemo* m
    for i in range(s.nmemo):
        m = &s.memo[i]
        if m.n == n and m.maxd == maxd and memcmp(m.text, p, n) == 0:
            memcpy(ts.tid, &s.memo_tid[m.start], m.count * sizeof(int32_t))
            memcpy(ts.dist, &s.memo_dist[m.start], m.count)
            ts.n = m.count
            return True
    return False


cdef void _memo_put(Search* s, const char* p, int n, int maxd, const TypoSet* ts) noexcept nogil:
    """Remember what the look-up of word p[:n] within maxd slips found, while there is room."""
    cdef TypoMemo* m
    if s.nmemo >= MEMO_MAX or s.memo_used + ts.n > MEMO_POOL or n > UNFOLD_MAX:
        return
    m = &s.memo[s.nmemo]
    memcpy(m.text, p, n)
    m.n = n
    m.maxd = maxd
    m.start = s.memo_used
    m.count = ts.n
    memcpy(&s.memo_tid[m.start], ts.tid, ts.n * sizeof(int32_t))
    memcpy(&s.memo_dist[m.start], ts.dist, ts.n)
    s.memo_used += ts.n
    s.nmemo += 1


cdef void _slip_lookup(const Data* d, Search* s, int ti, int maxd, TypoSet* ts) noexcept nogil:
    """Fill ts with the tokens within maxd slips of word ti (of 5 to 38 letters, as typed)
    through the typo table: the word, its ij spelling, the other spellings of its sounds."""
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int n = t.len, i, m
    cdef char un[UNFOLD_MAX]
    ts.n = 0
    ts.long_only = _typed_len(p, n) < TWO_SLIP_LEN
    ts.has_y = memchr(p, 121, n) != NULL
    ts.nmeasured = 0
    memset(ts.measured, 0, sizeof(ts.measured))
    for i in range(_n_spell):
        ts.sound_n[i] = _sound_variant(p, n, i, ts.sound[i])
        if ts.sound_n[i] > 38:
            ts.sound_n[i] = 0
    _typo_variants(d, s, ti, p, n, maxd, maxd, ts)
    if ts.has_y:
        m = _unfold_ij(p, n, un)
        if m <= 38:
            _typo_variants(d, s, ti, un, m, maxd, maxd, ts)
    # the other spelling of a sound is itself a slip: the rest within one slip less
    for i in range(_n_spell):
        if ts.sound_n[i] > 0:
            _typo_variants(d, s, ti, ts.sound[i], ts.sound_n[i], maxd - 1, maxd, ts)


# PERF: a word typed whole looks for its slips too, when the query finds nothing without them
# ("kegrkstiaat 60 ijmuiden": the place, within two, cost half the probes of the query). What
# that look-up finds depends only on the word, so the build stores it for every token that a
# query can type whole (`slip_lists`): slip_tok/slip_dist[slip_start[k]:slip_start[k + 1]] for
# k = 2 * token + maxd - 1, and the work it counts, slip_work[k] (-1: none stored).
cdef inline bint _slips_stored(const Data* d, int32_t tid, int maxd) noexcept nogil:
    """Whether the look-up of token tid within maxd slips is stored."""
    return d.slip_work[2 * <int64_t>tid + maxd - 1] >= 0


cdef inline bint _stored_slips(const Data* d, Search* s, int32_t tid, int maxd,
                               TypoSet* ts) noexcept nogil:
    """Fill ts with the stored look-up of token tid within maxd slips; False when none is
    stored (the caller looks up)."""
    cdef int64_t k = 2 * <int64_t>tid + maxd - 1
    cdef int32_t a, n
    if not _slips_stored(d, tid, maxd):
        return False
    a = d.slip_start[k]
    n = d.slip_start[k + 1] - a
    memcpy(ts.tid, d.slip_tok + a, n * sizeof(int32_t))
    memcpy(ts.dist, d.slip_dist + a, n)
    ts.n = n
    s.slip_work += d.slip_work[k]
    return True


def slip_lists(Index index):
    """(slip_start int32, slip_tok int32, slip_dist uint8, slip_work int32): for every token a
    query can type as one whole word, what `_typo_ranges` looks up for it within one slip and
    (7+ letters as typed) within two, through the index's typo table (which must store none
    yet: each is looked up here); slip_work -1 where nothing is stored."""
    cdef Data* d = &index.d
    cdef int32_t t, n
    cdef int maxd, ulen
    cdef int64_t k, used = 0, cap = 1 << 20
    cdef Search* s = NULL
    cdef TypoSet* ts = NULL
    cdef int32_t* tok = NULL
    cdef int32_t* grown
    cdef uint8_t* dist = NULL
    cdef uint8_t* grown8
    cdef bint bad = False
    start = np.zeros(2 * <int64_t>d.n_tok + 1, dtype=np.int32)
    work = np.full(2 * <int64_t>d.n_tok, -1, dtype=np.int32)
    cdef int32_t[::1] st = start
    cdef int32_t[::1] wk = work
    if d.n_tok and int(index.arrays["slip_work"].max()) >= 0:
        raise ValueError("the index stores slip lists already: they must be looked up afresh")
    try:
        s = <Search*>calloc(1, sizeof(Search))
        ts = <TypoSet*>malloc(sizeof(TypoSet))
        tok = <int32_t*>malloc(cap * sizeof(int32_t))
        dist = <uint8_t*>malloc(cap)
        if s == NULL or ts == NULL or tok == NULL or dist == NULL:
            raise MemoryError()
        with nogil:
            for t in range(d.n_tok):
                for maxd in range(1, 3):
                    st[2 * t + maxd] = <int32_t>used
                n = _tok_len(d, t)
                if n > QBUF - 8:
                    continue
                # the token as a query: one word, itself, found whole
                memcpy(s.q, d.v_blob + d.v_off[t], n)
                s.qlen = n
                _tokenise(s)
                if s.ntok != 1 or s.tok[0].start != 0 or s.tok[0].len != n \
                        or memcmp(s.q, d.v_blob + d.v_off[t], n) != 0:
                    continue
                _word_ranges(d, s, 0)
                ulen = _typed_len(s.q, n)
                if s.word[0].exact != t or ulen < 5 or s.tok[0].digits > 0 or n > 38:
                    continue
                for maxd in range(1, 3 if ulen >= TWO_SLIP_TYPED else 2):
                    s.slip_work = 0
                    _slip_lookup(d, s, 0, maxd, ts)
                    if used + ts.n > cap:
                        cap = 2 * cap
                        grown = <int32_t*>realloc(tok, cap * sizeof(int32_t))
                        if grown != NULL:
                            tok = grown
                        grown8 = <uint8_t*>realloc(dist, cap)
                        if grown8 != NULL:
                            dist = grown8
                        if grown == NULL or grown8 == NULL:
                            bad = True
                            break
                    memcpy(tok + used, ts.tid, ts.n * sizeof(int32_t))
                    memcpy(dist + used, ts.dist, ts.n)
                    used += ts.n
                    k = 2 * <int64_t>t + maxd - 1
                    wk[k] = <int32_t>s.slip_work
                    st[k + 1] = <int32_t>used
                if bad:
                    break
                st[2 * t + 2] = <int32_t>used
        if bad:
            raise MemoryError()
        return (start, np.array(<int32_t[:used]>tok if used else [], dtype=np.int32),
                np.array(<uint8_t[:used]>dist if used else [], dtype=np.uint8), work)
    finally:
        free(s)
        free(ts)
        free(tok)
        free(dist)


# PERF: the slips looked up have a budget of their own (issue 11): many different long words,
# each looked up within two slips ("noensstjaat ... amsterda oensstraat"), cost up to 60 us
# a word, none of it postings or groups (_spent). Once a query has spent _slip_budget, a word
# not looked up yet gets no slips (the words looked up keep theirs). A unit is about 10 ns
# here; a slip in every word of the public set's queries, or two, took at most about 29,000
# (benchmarks/fuzz.py reports the slowest queries).
cdef int64_t _slip_budget = 40000


def _set_slip_budget(int64_t budget):
    """Set the slip look-up budget of a query (tests and benchmarks/fuzz.py; not for serving)."""
    global _slip_budget
    _slip_budget = budget


cdef inline bint _slips_spent(const Search* s) noexcept nogil:
    return s.slip_work >= _slip_budget


cdef int _typo_ranges(const Data* d, Search* s, int ti, int max_edits) noexcept nogil:
    """Set the typo ranges of token ti: the tokens within 1 edit, or 2 when max_edits allows
    and the word or the token has 9+ letters and the word 7+ (symmetric deletion). Return 1
    when this looked further than before.

    Both the folded word and its spelling with ij for y are looked up: "zeedikj" is one slip
    from "zeedijk", though two from the folded "zeedyk". Closer tokens are kept first."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef int n = t.len, i, maxd, look, dist, ulen, nsound
    cdef bint capped, found
    cdef TypoSet* ts
    # the length as the person typed it: "zuije" (folded "zuye") is a 5-letter word
    ulen = _typed_len(p, n)
    if t.digits > 0 or n > 38:
        return 0
    if ulen < 5:
        if ulen >= 3 and w.typo_done == 0 and s.max_pass > RETRY_PASSES:
            return _sound_ranges(d, s, ti)
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
        if w.nr > 0 and (w.first_typo == 0 or w.exact < 0) and n <= PREFIX_SLIP_LEN and s.max_pass > RETRY_PASSES:
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
    w.tbits_nr = -1
    ts = <TypoSet*>malloc(sizeof(TypoSet))
    if ts == NULL:
        return 1
    ts.n = 0
    capped = False
    found = _memo_get(s, p, n, maxd, ts)
    # PERF: an address has few words, and fewer that are two slips from every registered word;
    # a query with more (a pasted list of misspelt street names, "westvjensekale meerwedespngel
    # s kroezenboomheg wittergeg durtstwaat huyckstrgat") looked each up within two slips, and
    # each as the start of a word with a slip, about 12 us a word, and then found nothing. Past
    # TWO_SLIP_WORDS words looked up afresh within two slips (a whole token's stored look-up is
    # no fresh one), a word keeps what one slip finds (the trace says "slips" was spent).
    if (not found and maxd == 2 and s.two_slip_words >= TWO_SLIP_WORDS
            and (w.exact < 0 or not _slips_stored(d, w.exact, maxd))):
        capped = True
        s.spent |= SPENT_SLIPS
        maxd = 1
        found = _memo_get(s, p, n, maxd, ts)
    if not found and not _slips_spent(s):
        # a whole token as typed: what its look-up finds was stored when the index was built
        if w.exact < 0 or not _stored_slips(d, s, w.exact, maxd, ts):
            s.two_slip_words += maxd == 2
            _slip_lookup(d, s, ti, maxd, ts)
        _memo_put(s, p, n, maxd, ts)
    w.first_typo = w.nr
    # the word's sound-alikes stay, first and at their own penalty (a slip that is one, as
    # "reinlaan" is of Rijnlaan, is one of them)
    nsound = _add_sounds(d, s, ti) if w.sound_done else 0
    for dist in range(1, maxd + 1):
        for i in range(ts.n):
            if ts.dist[i] != dist or w.nr >= MAXR:
                continue
            if nsound and _typo_at(w, w.first_typo + nsound, ts.tid[i]) >= 0:
                continue
            _push_typo(d, w, ts.tid[i], TYPO_PEN + TYPO_EDIT * (dist - 1), TYPO_WHOLE)
    if (((ts.n == 0 and w.first_typo == 0) or (look == 2 and (w.first_typo == 0 or w.exact < 0)))
            and n <= PREFIX_SLIP_LEN and s.max_pass > RETRY_PASSES and not capped):
        # no token starts with the word, and none is one slip away (or the last look has
        # come: "oosterbcroek" is one slip from the name Oosterbroek, though the street meant
        # is Oosterbroekweg; "meere" starts Meeren...): a slip in a word still being typed.
        # PERF: not in the retries (their words matched nothing, slips included)
        _add_slips(d, s, ti)
        w.slips = ts.n == 0 and w.first_typo == 0 and s.slip_n[ti] > 0
    if w.nr >= MAXR or ts.n >= 512:
        s.spent |= SPENT_TYPO  # (the trace's) the word's typo tokens were cut to their caps
    free(ts)
    _sort_typo_ranges(w)
    return 1


cdef int _sound_ranges(const Data* d, Search* s, int ti) noexcept nogil:
    """The typo ranges of word ti of 3 or 4 letters as typed, too short for a slip of a key
    ("rein", "mij", "zijs"): the other spelling of a sound in it (`_sound_respellings`: Rijn, Mei,
    Zeis), the token so spelt and, when at most PREFIX_SLIP_MAX, the tokens that start so (as
    a word's start, `_prefix_cost`). Looked at once; return 1 when it added a range."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef char v[MAX_SPELLINGS * (SOUND_EACH + 1) * UNFOLD_MAX]
    cdef int lens[MAX_SPELLINGS * (SOUND_EACH + 1)]
    cdef int j, nv, m, tl, added = 0
    cdef int32_t lo, hi, tid
    w.typo_done = 2
    nv = _sound_respellings(s.q + t.start, t.len, v, lens)
    for j in range(nv):
        m = lens[j]
        _prefix_range(d, v + j * UNFOLD_MAX, m, &lo, &hi)
        if hi - lo > PREFIX_SLIP_MAX:
            hi = lo + 1 if _tok_len(d, lo) == m else lo  # too many: only the token itself
        for tid in range(lo, hi):
            if w.nr >= MAXR:
                break
            if _in_typo(w, tid):
                continue
            tl = _tok_len(d, tid)
            _push_typo(d, w, tid, TYPO_PEN if tl == m else _prefix_cost(TYPO_PEN, m, tl),
                       TYPO_WHOLE if tl == m else TYPO_START)
            added += 1
    _sort_typo_ranges(w)
    return added > 0


# ---------------------------------------------------------------------------------------------
# sound-alikes (issue 40): the tokens that sound as the typed word does (`_sound_key`), found in
# the index's tokens sorted by their keys (snd_blob/snd_off/snd_tok)

cdef int _sound_entries(const Data* d, const Word* w, const char* key, int m, int a,
                        int* first) noexcept nogil:
    """The entries of the tokens sorted by sound key whose key is key[:m], from a (the first
    not below it): the first (into first) and how many; MAXR + 1 when more than MAXR of them
    are tokens the word does not match as typed (`_as_typed`), or more than SOUND_WALK_MAX have
    it."""
    cdef int b = a, new = 0
    cdef int64_t o
    first[0] = a
    while b < d.n_tok:
        o = d.snd_off[b]
        if d.snd_off[b + 1] - o != m or memcmp(d.snd_blob + o, key, m) != 0:
            break
        if not _as_typed(w, d.snd_tok[b]):
            new += 1
        b += 1
        if new > MAXR or b - a > SOUND_WALK_MAX:
            return MAXR + 1
    return b - a


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define ENGINE_CTZ64(x) __builtin_ctzll(x)
    #else
    static int ENGINE_CTZ64(unsigned long long x) { int n = 0; while (!(x & 1)) { x >>= 1; n++; } return n; }
    #endif
    """
    int _ctz64 "ENGINE_CTZ64"(uint64_t x) noexcept nogil


cdef inline int64_t _next_bit(const uint64_t* bits, int64_t nbits, int64_t i, bint setbit) noexcept nogil:
    """The first bit at or after i that is set (setbit) or clear among the nbits of bits, or
    nbits (bits holds nbits / 64 + 1 words, the bits past nbits clear)."""
    cdef int64_t k = i >> 6, nw = (nbits >> 6) + 1
    cdef uint64_t x
    if i >= nbits:
        return nbits
    x = (bits[k] if setbit else ~bits[k]) & (~(<uint64_t>0) << (i & 63))
    while x == 0:
        k += 1
        if k >= nw:
            return nbits
        x = bits[k] if setbit else ~bits[k]
    i = (k << 6) + _ctz64(x)
    return i if i < nbits else nbits


cdef int _key_spans(const Data* d, const char* key, int m, uint32_t follow, int a, int end,
                    int32_t* lo, int32_t* hi) noexcept nogil:
    """The entries of the tokens sorted by sound key whose key starts with key[:m] (the entries
    [a, end): `_key_start`), as spans [lo[i], hi[i]) of those entries (room for 26); how many
    spans. One span, of every key that starts so, while they are at most SOUND_WALK_MAX (the
    walk keeps those that go on with a letter of `follow`, `_goes_on`); more, and within it the
    span of each letter of `follow` (bit i: letter a + i; 0: with anything, or nothing), those
    the word may go on as.

    PERF: a span is found by halving, never walked: "hac" starts the keys of 6,719 tokens
    ("a..."), of which the 1,158 that go on with g, k or s are the ones it may mean (Sybrands
    Acker); the spans of the letters are halved within the first span."""
    cdef char past[UNFOLD_MAX + 1]
    cdef int c, n = 0
    memcpy(past, key, m)
    if follow == 0 or end - a <= SOUND_WALK_MAX:
        lo[0] = a
        hi[0] = end
        return 1
    for c in range(26):
        if (follow >> c) & 1:
            past[m] = 97 + c
            lo[n] = a + _blob_lower_bound(d.snd_blob, d.snd_off + a, end - a, past, m + 1)
            past[m] += 1
            hi[n] = a + _blob_lower_bound(d.snd_blob, d.snd_off + a, end - a, past, m + 1)
            n += 1
    return n


cdef inline int _snd_code(const char* key, int m) noexcept nogil:
    """The slot of a sound key's first two bytes in d.snd_first2 (0 for none; a key of one byte
    has a second of 0, which sorts first), -1 for a byte past 127 (no key has one)."""
    cdef int b0 = <uint8_t>key[0] if m > 0 else 0, b1 = <uint8_t>key[1] if m > 1 else 0
    return -1 if b0 > 127 or b1 > 127 else (b0 << 7) | b1


cdef int32_t* _snd_firsts(const Data* d) noexcept nogil:
    """d.snd_first2: for each slot of two bytes (`_snd_code`), the first entry of the tokens
    sorted by sound key whose key's slot is not below it (SND_FIRST2 + 1 of them); NULL when
    out of memory (the caller raises)."""
    cdef int32_t* t = <int32_t*>malloc((SND_FIRST2 + 1) * sizeof(int32_t))
    cdef int x, e = 0, c
    if t == NULL:
        return NULL
    for x in range(SND_FIRST2 + 1):
        while e < d.n_tok:
            c = _snd_code(<const char*>(d.snd_blob + d.snd_off[e]), <int>(d.snd_off[e + 1] - d.snd_off[e]))
            if c < 0 or c >= x:
                break
            e += 1
        t[x] = e
    return t


cdef int _snd_lower_bound(const Data* d, const char* key, int m) noexcept nogil:
    """The first entry of the tokens sorted by sound key whose key is not below key[:m].

    PERF: halved among the keys of its first two letters only (`_snd_firsts`: of the 116,187
    keys of w40, 191 a slot on average, 3,026 at most), not among all of them, where most
    steps were a cache miss, one after the other."""
    cdef int c = _snd_code(key, m), a
    if c < 0:
        return _blob_lower_bound(d.snd_blob, d.snd_off, d.n_tok, key, m)
    a = d.snd_first2[c]
    if m < 2:
        return a        # the keys of slot c are key itself: those past are above it
    return a + _blob_lower_bound(d.snd_blob, d.snd_off + a, d.snd_first2[c + 1] - a, key, m)


cdef int _key_start(const Data* d, const char* key, int m, int* end) noexcept nogil:
    """The entries of the tokens sorted by sound key whose key starts with key[:m] (m > 0):
    the first, and the first past them into end (the first key that starts with key[:m] with
    its last letter the next; PERF: found from the first in steps that double, most keys of a
    word being typed being a few)."""
    cdef char past[UNFOLD_MAX]
    cdef int a = _snd_lower_bound(d, key, m)
    memcpy(past, key, m)
    past[m - 1] += 1
    end[0] = _blob_gallop(d.snd_blob, d.snd_off, a, d.n_tok, past, m)
    return a


cdef const SoundMemo* _sound_look(const Data* d, Search* s, int ti, SoundMemo* spare) noexcept nogil:
    """Where the sound-alikes of word ti (letters only, at most UNFOLD_MAX) are among the tokens
    sorted by sound key (SoundMemo): looked up once a query per word (into `spare` when the
    memo is full). What it finds depends on the word alone (its prefix ranges too).

    PERF: each pass after the first and each reading after the first looked them up again,
    three halvings of the 116,187 keys a word, most steps a cache miss (perf: a fifth of the
    slowest garbage, pasted lists of slipped street names). The whole key is halved within the
    keys that start with the key of the word still being typed, which it starts (nearly always)."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef const char* p = s.q + t.start
    cdef char key[UNFOLD_MAX]
    cdef char start[UNFOLD_MAX]
    cdef SoundMemo* e
    cdef int i, m, a = 0, end = 0, walk = 0
    for i in range(s.nsoundmemo):
        e = &s.soundmemo[i]
        if e.n == t.len and memcmp(e.text, p, t.len) == 0:
            return e
    e = spare
    if s.nsoundmemo < MEMO_MAX:
        e = &s.soundmemo[s.nsoundmemo]
        s.nsoundmemo += 1
    memcpy(e.text, p, t.len)
    e.n = t.len
    e.nspan = 0
    e.m = _sound_key(p, t.len, False, start, &e.follow)
    if e.m > 0:
        a = _key_start(d, start, e.m, &end)
        e.nspan = _key_spans(d, start, e.m, e.follow, a, end, e.lo, e.hi)
        for i in range(e.nspan):
            walk += e.hi[i] - e.lo[i]
        if walk > SOUND_WALK_MAX:
            e.nspan = 0
    e.k = MAXR + 1
    m = _sound_key(p, t.len, True, key, NULL)
    if m > 0:
        if e.m == 0 or m < e.m or memcmp(key, start, e.m) != 0:
            a = _snd_lower_bound(d, key, m)
        else:
            a += _blob_lower_bound(d.snd_blob, d.snd_off + a, end - a, key, m)
        e.k = _sound_entries(d, w, key, m, a, &e.a)
    return e


cdef int _sound_runs(const Data* d, Word* w, const SoundMemo* e, float base) noexcept nogil:
    """Add to word w, as runs of neighbouring tokens (TYPO_RUN of penalty `base`, and a prefix's
    at the match), the tokens whose sound key starts with the key of the word still being typed
    and goes on with a letter of its `follow` (e.nspan spans, `_key_spans`, and `_goes_on`), that
    the word neither matches as typed nor has among its (sorted) typo ranges: only when at most
    SOUND_WALK_MAX keys are so (PERF: "myn" starts the keys of the 36 words that start "mijn",
    which the word matches already, and of 35 others; `_sound_look`) and the tokens make at
    most SOUND_RUNS_MAX runs. Return how many runs it added.

    Runs, not tokens: the tokens that start with a sound are few runs of the alphabet ("mollen"
    sounds as the 316 tokens that start with molen, one run; "westhe" as 382 that start with
    weste or westh), which as single tokens were too many for a word's ranges. PERF: the tokens
    are put in order by a bitmap over their span, not a sort."""
    cdef int k, b, runs = 0, added = 0
    cdef int32_t tid, lo = -1, hi = -1
    cdef int64_t i, j, nbits
    cdef uint64_t* bits
    for k in range(e.nspan):
        for b in range(e.lo[k], e.hi[k]):
            tid = d.snd_tok[b]
            if lo < 0 or tid < lo:
                lo = tid
            if tid >= hi:
                hi = tid + 1
    if lo < 0:
        return 0
    nbits = hi - lo
    bits = <uint64_t*>calloc((nbits >> 6) + 1, sizeof(uint64_t))
    if bits == NULL:
        return 0
    for k in range(e.nspan):
        for b in range(e.lo[k], e.hi[k]):
            tid = d.snd_tok[b]
            if _goes_on(d, b, e.m, e.follow) and not _as_typed(w, tid) and _typo_at(w, w.nr, tid) < 0:
                bits[(tid - lo) >> 6] |= (<uint64_t>1) << ((tid - lo) & 63)
    i = _next_bit(bits, nbits, 0, True)
    while i < nbits:
        runs += 1
        i = _next_bit(bits, nbits, _next_bit(bits, nbits, i, False), True)
    i = _next_bit(bits, nbits, 0, True)
    while runs <= SOUND_RUNS_MAX and i < nbits and w.nr < MAXR:
        j = _next_bit(bits, nbits, i, False)
        _push_range(d, w, lo + <int32_t>i, lo + <int32_t>j, base, TYPO_RUN)
        added += 1
        i = _next_bit(bits, nbits, j, True)
    free(bits)
    return added


cdef inline bint _goes_on(const Data* d, int j, int m, uint32_t follow) noexcept nogil:
    """Does the key of entry j, which starts with a key of m letters, go on with one of the
    letters of `follow` (0: with anything, or nothing)?"""
    cdef int64_t o = d.snd_off[j]
    cdef int c
    if follow == 0:
        return True
    if d.snd_off[j + 1] - o <= m:
        return False
    c = d.snd_blob[o + m] - 97
    return 0 <= c < 26 and (follow >> c) & 1


cdef inline bint _as_typed(const Word* w, int32_t tid) noexcept nogil:
    """Does word w match token tid as typed (through its prefix ranges)?"""
    cdef int r
    for r in range(w.first_typo):
        if w.lo[r] <= tid < w.hi[r]:
            return True
    return False


cdef inline int _push_sound(const Data* d, Word* w, int32_t tid, float base, uint8_t mark) noexcept nogil:
    """Add token tid to word w as a sound-alike of penalty `base` and kind `mark` (`_push_typo`),
    unless the word matches it as typed (its prefix ranges) or has it already, or has no room;
    1 when added."""
    if w.nr >= MAXR or _as_typed(w, tid):
        return 0
    if _in_typo(w, tid):
        return 0
    _push_typo(d, w, tid, base, mark)
    return 1


cdef int _add_sounds(const Data* d, Search* s, int ti) noexcept nogil:
    """Add to word ti, as typo ranges, the tokens it sounds like (words.SOUND_RULES): those
    whose sound key is the word's, at SOUND_PEN ("agterweg": Achterweg, "kristiaan": Christiaan,
    "dorpstraat": Dorpsstraat), when at most MAXR of them are new (`_sound_entries`); then, as
    runs (`_sound_runs`), those whose key starts with the key of the word still being typed, at
    a sound-alike's and a prefix's penalty ("agterw", "ofstr"). Not the tokens it matches as
    typed. Return how many ranges it added."""
    cdef Word* w = &s.word[ti]
    cdef Tok* t = &s.tok[ti]
    cdef SoundMemo spare
    cdef const SoundMemo* e
    cdef int j, added = 0
    if t.digits > 0 or t.len > UNFOLD_MAX or _typed_len(s.q + t.start, t.len) < SOUND_MIN:
        return 0
    e = _sound_look(d, s, ti, &spare)
    if e.k <= MAXR:
        for j in range(e.a, e.a + e.k):
            added += _push_sound(d, w, d.snd_tok[j], SOUND_PEN, TYPO_WHOLE)
    _sort_typo_ranges(w)
    added += _sound_runs(d, w, e, SOUND_PEN)
    _sort_typo_ranges(w)
    return added


cdef inline bint _in_typo(const Word* w, int32_t tid) noexcept nogil:
    """Whether token tid is in one of the word's typo ranges (unsorted yet)."""
    cdef int r
    for r in range(w.first_typo, w.nr):
        if w.lo[r] <= tid < w.hi[r]:
            return True
    return False


cdef inline int _typo_at(const Word* w, int end, int32_t tid) noexcept nogil:
    """The typo range of word w among [first_typo, end) that holds token tid, or -1 (they are
    sorted by token id and apart: a halving finds the last that starts at tid or before)."""
    cdef int a = _lower_bound(w.lo, w.first_typo, end, tid + 1) - 1
    return a if a >= w.first_typo and tid < w.hi[a] else -1


cdef struct _TypoRange:
    int32_t lo
    int32_t hi
    float base
    uint8_t typo


cdef int _by_token(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const _TypoRange*>a).lo, y = (<const _TypoRange*>b).lo
    return (x > y) - (x < y)


cdef void _sort_typo_ranges(Word* w) noexcept nogil:
    """Sort the typo ranges by token id, so that matching one is a binary search.

    PERF: the tokens of a look-up come in the order found, and an insertion sort of up to MAXR
    of them took up to MAXR^2 / 4 moves, a word and a pass (issue 37: a quarter of a query of 28
    short words). Each token is one typo range at most, so the order is the same with any sort;
    ranges already in order (the usual second call) are left as they are."""
    cdef int i, m = w.nr - w.first_typo
    cdef _TypoRange r[MAXR]
    for i in range(w.first_typo + 1, w.nr):
        if w.lo[i - 1] > w.lo[i]:
            break
    else:
        return
    for i in range(m):
        r[i].lo, r[i].hi, r[i].base, r[i].typo = (w.lo[w.first_typo + i], w.hi[w.first_typo + i],
                                                  w.base[w.first_typo + i], w.typo[w.first_typo + i])
    qsort(r, m, sizeof(_TypoRange), _by_token)
    for i in range(m):
        w.lo[w.first_typo + i], w.hi[w.first_typo + i] = r[i].lo, r[i].hi
        w.base[w.first_typo + i], w.typo[w.first_typo + i] = r[i].base, r[i].typo
