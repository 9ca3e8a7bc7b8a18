# Parsing (included by _core.pyx): the folded query into tokens, each word's prefix
# ranges, and the interpretations of the tokens (postcode, house number, parts, words).

# ---------------------------------------------------------------------------------------------
# query parsing


cdef int _fold_words(char* q, Src* src, int qlen) noexcept nogil:
    """q[:qlen] (folded: ASCII a-z0-9 and spaces) with ij -> y and a space between a letter and a
    following digit, in place, `src` kept beside it (the y of ij came from both); the new length."""
    cdef char buf[QBUF]
    cdef Src bsrc[QBUF]
    cdef int i = 0, n = 0, c, prev = 32
    while i < qlen and n < QBUF - 2:
        c = q[i]
        bsrc[n] = src[i]
        if c == 105 and i + 1 < qlen and q[i + 1] == 106:  # "ij"
            c = 121
            i += 1
            bsrc[n].b = src[i].b
        if 48 <= c <= 57 and 97 <= prev <= 122:
            bsrc[n + 1] = bsrc[n]
            bsrc[n].a = bsrc[n].b = -1
            buf[n] = 32
            n += 1
        buf[n] = <char>c
        n += 1
        prev = c
        i += 1
    memcpy(q, buf, n)
    memcpy(src, bsrc, n * sizeof(Src))
    return n


cdef inline int _put_bytes(char* out, Src* osrc, int m, const char* q, const Src* src, int n) noexcept nogil:
    """Copy q[:n], and where its bytes came from, to out and osrc at offset m; the new end."""
    memcpy(out + m, q, n)
    memcpy(osrc + m, src, n * sizeof(Src))
    return m + n


cdef inline int _put_space(char* out, Src* osrc, int m) noexcept nogil:
    """Put a space (which no code point made) at offset m; the new end."""
    out[m] = 32
    osrc[m].a = osrc[m].b = -1
    return m + 1


cdef void _tokenise(Search* s) noexcept nogil:
    """Split the folded query (ASCII a-z0-9 and spaces) into tokens; ij -> y; split letter|digit."""
    cdef int i, n
    n = s.qlen = _fold_words(s.q, s.qsrc, s.qlen)
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


cdef inline void _ij_variant(const char* p, int n, char* alt) noexcept nogil:
    """alt[:n]: word p[:n], which ends in i, with that i as "y" (on its way to "ij", folded)."""
    memcpy(alt, p, n)
    alt[n - 1] = 121


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
    w.sound_done = 0
    w.tbits_nr = -1
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
        _ij_variant(p, t.len, alt)
        _prefix_range(d, alt, t.len, &lo, &hi)
        if lo < hi:
            w.lo[w.nr] = lo
            w.hi[w.nr] = hi
            w.base[w.nr] = IJ_VARIANT_PEN
            w.typo[w.nr] = 0
            w.nr += 1
            w.cost += d.v_post_start[hi] - d.v_post_start[lo]
    w.first_typo = w.nr


cdef bint _addition_prefix(const Data* d, const char* w, int n) noexcept nogil:
    """Is w[:n] the start of some registered addition (lower case)?"""
    cdef int a = _blob_lower_bound(d.addl_blob, d.addl_off, d.n_addl, w, n)
    return a < d.n_addl and d.addl_off[a + 1] - d.addl_off[a] >= n \
        and memcmp(d.addl_blob + d.addl_off[a], w, n) == 0


cdef inline bint _number_like(const Tok* t) noexcept nogil:
    """Could this token be a house number (with letters glued on)?"""
    return 0 < t.digits <= 5 and 1 <= t.value <= NUMBER_MAX and t.len - t.digits <= 4


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


cdef inline int _postcode_reading(Search* s, bint split_pc, int n_alpha, int* pc_lo, int* pc_hi) noexcept nogil:
    """The typed postcode: 1234AB | 1234 AB | 1234A (last) | 1234 A (last) | 1234 (a query of
    numbers only). Sets its range in pc_lo..pc_hi and s.pc_tok / s.pc_tok2 / s.split_pc;
    returns its token, or -1."""
    cdef int i, code, pc_tok = -1, pc_tok2 = -1
    cdef Tok* t
    cdef Tok* u
    for i in range(s.ntok):
        t = &s.tok[i]
        if t.digits != 4 or t.value < 1000:
            continue
        code = t.value * 676
        if t.len == 6:
            pc_lo[0] = pc_hi[0] = code + (s.q[t.start + 4] - 97) * 26 + (s.q[t.start + 5] - 97)
        elif t.len == 5 and i == s.ntok - 1 and n_alpha == 0:
            pc_lo[0] = code + (s.q[t.start + 4] - 97) * 26
            pc_hi[0] = pc_lo[0] + 25
        elif split_pc and t.len == 4 and i + 1 < s.ntok and s.tok[i + 1].digits == 0 and s.tok[i + 1].len == 2:
            u = &s.tok[i + 1]
            pc_lo[0] = pc_hi[0] = code + (s.q[u.start] - 97) * 26 + (s.q[u.start + 1] - 97)
            pc_tok2 = i + 1
        elif (split_pc and t.len == 4 and i + 1 == s.ntok - 1 and s.tok[i + 1].digits == 0
              and s.tok[i + 1].len == 1 and n_alpha == 1):
            u = &s.tok[i + 1]
            pc_lo[0] = code + (s.q[u.start] - 97) * 26
            pc_hi[0] = pc_lo[0] + 25
            pc_tok2 = i + 1
        elif t.len == 4 and n_alpha == 0 and i == 0:
            pc_lo[0] = code
            pc_hi[0] = code + 675
        else:
            continue
        pc_tok = i
        break
    s.split_pc = pc_tok2 >= 0
    s.pc_tok = pc_tok
    s.pc_tok2 = pc_tok2
    return pc_tok


cdef inline void _area_reading(Search* s, int mode, int* consumed, int* area_lo, int* area_hi) noexcept nogil:
    """A postcode being typed ("kerkstraat 12 1017", "... 1017 g", "... 1017g"): the words are
    read within it; if that finds nothing, without it. Mode 3 consumes its tokens but leaves
    the range out."""
    cdef int i = _area_tok(s, mode == 2)
    cdef Tok* t
    if i < 0:
        return
    t = &s.tok[i]
    consumed[i] = 1
    area_lo[0] = t.value * 676
    area_hi[0] = area_lo[0] + 675
    if t.len == 5:
        area_lo[0] += (s.q[t.start + 4] - 97) * 26
        area_hi[0] = area_lo[0] + 25
    elif i + 1 == s.ntok - 1 and s.tok[i + 1].digits == 0 and s.tok[i + 1].len == 1:
        consumed[i + 1] = 1
        area_lo[0] += (s.q[s.tok[i + 1].start] - 97) * 26
        area_hi[0] = area_lo[0] + 25
        s.area_tok2 = i + 1
    if mode == 3:
        area_lo[0] = area_hi[0] = -1
        s.area_tok2 = -1
    else:
        s.area = t.value
        s.split_pc = 1
        s.area_tok = i


cdef inline int _number_candidates(Search* s, int* consumed, int* numcand, int* all_known) noexcept nogil:
    """The house-number candidates (at most 3) into numcand, returning how many: digits (1..5
    of them, value 1..NUMBER_MAX) with at most 4 letters glued. A word that only says a number
    follows, after another word and before the number ("kerkstraat no 5", "herestraat nr.
    12"), is consumed first: it is no word of a name ("no" starts Noordwijk). all_known is
    cleared when a numeric token is no word of any name."""
    cdef int i, nnum = 0
    cdef Tok* t
    for i in range(1, s.ntok - 1):
        if not consumed[i] and not consumed[i + 1] and s.tok[i].digits == 0 and _number_like(
                &s.tok[i + 1]) and _in_list(_number_ptr, _number_len, _n_number, s.q + s.tok[i].start,
                                            s.tok[i].len):
            consumed[i] = 1
    for i in range(s.ntok):
        t = &s.tok[i]
        if consumed[i] or t.digits == 0:
            continue
        if _number_like(t) and nnum < 3:
            numcand[nnum] = i
            nnum += 1
        if s.word[i].nr == 0:
            all_known[0] = 0
    return nnum


cdef inline void _add_reading(const Data* d, Search* s, const int* consumed, int j, bint strict,
                              int pc_lo, int pc_hi, int area_lo, int area_hi) noexcept nogil:
    """Append one interpretation to s.interp: token j the house number (-1: none typed), read
    strictly or loosely (strictly only when that differs from the loose reading); kept when it
    has something to look for."""
    cdef Interp* it = &s.interp[s.ninterp]
    cdef Tok* t
    cdef int i, p, skip, loose_words = 0, no_addition = 0
    it.pc_lo = pc_lo
    it.pc_hi = pc_hi
    it.area_lo = area_lo
    it.area_hi = area_hi
    it.nparts = 0
    it.nwords = 0
    it.number = -1
    it.num_tok = -1
    it.place_after = MAXT
    it.street_until = -1
    if j >= 0:
        t = &s.tok[j]
        it.number = t.value
        it.num_tok = j
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
        return
    # PERF: a word no addition starts with ("dijk 21 sero") is no part of the number:
    # the strict reading has it, and the loose one would scan every `dijk` street
    if not strict and no_addition > 0:
        return
    for i in range(s.ntok):
        if consumed[i] or i == j:
            continue
        skip = 0
        for p in range(it.nparts):
            if it.part_tok[p] == i:
                skip = 1
        if not skip:
            it.words[it.nwords] = i
            it.nwords += 1
    if it.nwords == 0 and it.pc_lo < 0:
        return
    if j >= 0 and it.nwords > 0 and it.words[0] < j:
        it.place_after = j
        if it.words[it.nwords - 1] > j:
            it.street_until = j
    s.ninterp += 1


cdef void _parse(const Data* d, Search* s, int mode) noexcept nogil:
    """Work out the interpretations of the query: postcode, house number, letter/addition parts.
    Mode 1 also reads a postcode split in two ("5202 de") or being typed after the house number
    ("kerkstraat 12 1017"); mode 2 reads a lone four digits as a postcode being typed
    ("kerkstraat 1017"); mode 3 leaves out the postcode being typed of mode 1; mode 0 none of
    these."""
    cdef int i, k, pc_tok, pc_lo = -1, pc_hi = -1, n_alpha = 0
    cdef int consumed[MAXT]
    cdef int numcand[MAXT]
    cdef int nnum, strict, all_known = 1
    cdef int area_lo = -1, area_hi = -1
    s.parse_mode = mode
    memset(consumed, 0, sizeof(consumed))
    for i in range(s.ntok):
        _word_ranges(d, s, i)
        if s.tok[i].digits == 0:
            n_alpha += 1
    pc_tok = _postcode_reading(s, mode == 1, n_alpha, &pc_lo, &pc_hi)
    s.area_tok = s.area_tok2 = -1
    s.area = 0
    if pc_tok >= 0:
        consumed[pc_tok] = 1
        if s.pc_tok2 >= 0:
            consumed[s.pc_tok2] = 1
    elif mode > 0 and n_alpha > 0:
        _area_reading(s, mode, consumed, &area_lo, &area_hi)
    nnum = _number_candidates(s, consumed, numcand, &all_known)
    s.ninterp = 0
    for k in range(nnum + 1):
        # no house number typed: every numeric token must then be a word of a name
        if k == nnum and nnum > 0 and not all_known:
            continue
        for strict in range(2):
            _add_reading(d, s, consumed, numcand[k] if k < nnum else -1, strict,
                         pc_lo, pc_hi, area_lo, area_hi)
            if s.ninterp >= MAXI:
                return


# ---------------------------------------------------------------------------------------------
# the layout of a pasted address: notes in brackets, lines that are no part of it


cdef bint _addressee_line(const char* w, int n) noexcept nogil:
    """Does the line w[:n] (folded) open with words naming whom a letter is for (ADDRESSEE_WORDS:
    "t a v j jansen", "fam bakker")? A space in such words matches a run of spaces."""
    cdef int k, i, j, m
    cdef const char* p
    for k in range(_n_addressee):
        p = _addressee_ptr[k]
        m = _addressee_len[k]
        i = 0
        while i < n and w[i] == 32:
            i += 1
        j = 0
        while j < m and i < n:
            if p[j] == 32:
                if w[i] != 32:
                    break
                while i < n and w[i] == 32:
                    i += 1
            elif p[j] != w[i]:
                break
            else:
                i += 1
            j += 1
        if j == m and (i == n or w[i] == 32):
            return True
    return False


cdef inline bint _alnum(char c) noexcept nogil:
    return 97 <= c <= 122 or 48 <= c <= 57


cdef int _without_noise(const char* q, int n, int tier, char* out) noexcept nogil:
    """The folded query q[:n] (with the layout marks "(", ")" and "," that `_prepare` keeps)
    without what is no part of an address, as spaces: tier 1 the notes in brackets ("kerkstraat
    4, hillegom (achterom)"; a bracket left open runs to the end); tier 2 also the lines of
    words only that name whom it is for ("t.a.v. J. Jansen, Damrak 1, Amsterdam") or that come
    before the street's line when the place's line follows it ("A. de Boer, Van Speykstraat 8c,
    Groningen"). Returns the length (n), or -1 when the tier leaves out nothing more than the
    one before it, or leaves no letter or digit."""
    cdef int i, depth = 0, g, a, nseg = 0, first_num = -1, last_words = -1, left = 0
    cdef int seg_start[MAXT + 1]
    cdef int seg_digit[MAXT + 1]
    cdef int seg_alnum[MAXT + 1]
    cdef bint dropped = False
    for i in range(n):
        if q[i] == 40:
            depth += 1
            out[i] = 32
        elif q[i] == 41:
            if depth > 0:
                depth -= 1
            out[i] = 32
        elif depth > 0:
            dropped = dropped or _alnum(q[i])
            out[i] = 32
        else:
            out[i] = q[i]
    if tier == 2:
        dropped = False
        seg_start[0] = 0
        seg_digit[0] = seg_alnum[0] = 0
        for i in range(n):
            if out[i] == 44:
                if nseg < MAXT:
                    nseg += 1
                    seg_start[nseg] = i + 1
                    seg_digit[nseg] = seg_alnum[nseg] = 0
            elif _alnum(out[i]):
                seg_digit[nseg] |= 48 <= out[i] <= 57
                seg_alnum[nseg] = 1
        nseg += 1
        seg_start[nseg] = n + 1
        for g in range(nseg):
            if seg_digit[g] and first_num < 0:
                first_num = g
            if seg_alnum[g]:
                last_words = g
        for g in range(nseg):
            if not seg_alnum[g] or seg_digit[g]:
                continue
            a = seg_start[g]
            if _addressee_line(out + a, seg_start[g + 1] - 1 - a) or (0 <= first_num < last_words and g < first_num):
                for i in range(a, seg_start[g + 1] - 1):
                    out[i] = 32
                dropped = True
    for i in range(n):
        if out[i] == 44:
            out[i] = 32
        left += _alnum(out[i])
    return n if dropped and left > 0 else -1
