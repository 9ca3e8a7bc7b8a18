# Scoring and selection (included by _core.pyx): a word against a group's tokens, the
# addresses of a group or postcode for the typed number, the pool of best groups, the
# candidate addresses and the final pick.

# ---------------------------------------------------------------------------------------------
# matching and scoring


cdef inline float _prefix_cost(float base, int typed, int tlen) noexcept nogil:
    """The penalty of a word of `typed` letters that is only the start of a token of `tlen`:
    `base` (its range's: 0, or a slip's) and a prefix's, more the less of the token it typed
    (the twin: engine/_reference.py, PREFIX_FRAC)."""
    return base + PREFIX_PEN + PREFIX_FRAC * (1.0 - (<float>typed) / tlen)


cdef inline float _typo_pen(const Word* w, int k, int typed, int tlen) noexcept nogil:
    """The penalty of typo range k of a word of `typed` letters on a token of `tlen`: the
    range's, and for a run of tokens whose sound the word starts (TYPO_RUN) a prefix's too,
    which is never less than a whole token's (letters not heard make a word longer than the
    token it starts: "hooster", Ooster; "zzzzzz", whose key is "z", Zuilen)."""
    if w.typo[k] == TYPO_RUN:
        return _prefix_cost(w.base[k], typed if typed < tlen else tlen, tlen)
    return w.base[k]


cdef inline float _range_pen(const Word* w, int k, int typed, int32_t t, int tlen,
                             uint8_t kind) noexcept nogil:
    """The penalty of a word of `typed` letters on token t (of tlen letters, a group token of
    `kind`, 0: any) through its range k, before what the kind adds: a typo range's
    (`_typo_pen`), none for the whole word, else a prefix's (`_prefix_cost`); -1 where it only
    starts an alias of at most ALIAS_WHOLE_LEN letters (such an alias is matched whole)."""
    if w.typo[k]:
        return _typo_pen(w, k, typed, tlen)
    if t == w.exact:
        return 0
    if kind & K_ALIAS and tlen <= ALIAS_WHOLE_LEN:
        return -1
    return _prefix_cost(w.base[k], typed, tlen)


cdef inline float _match_word(const Data* d, Search* s, int wi, const TokRec* rec) noexcept nogil:
    """Penalty for word wi matching the group token of `rec`, or -1 when it does not match."""
    return _match_range(d, s, wi, rec, NULL)


cdef inline float _match_range(const Data* d, Search* s, int wi, const TokRec* rec,
                               int* range_out) noexcept nogil:
    """`_match_word`, and the word's range that matched into range_out (unless NULL: the search
    itself; engine.explain reads it: a typo range is a slip, the word's own the start or all)."""
    cdef Word* w = &s.word[wi]
    cdef int32_t t = rec.tok
    cdef uint8_t kind = rec.kind
    cdef int r, k, tlen = rec.tlen if rec.tlen < TLEN_LONG else _tok_len(d, t)
    cdef float best = -1, p
    for r in range(w.first_typo + 1 if s.typo_mode and w.first_typo < w.nr else w.first_typo):
        k = r
        if r == w.first_typo:
            # PERF: the typo ranges are sorted and apart; one binary search finds t's
            k = _typo_at(w, w.nr, t)
            if k < 0:
                continue
        if w.lo[k] <= t < w.hi[k]:
            p = _range_pen(w, k, s.tok[wi].len, t, tlen, kind)
            if p < 0:
                continue
            if kind & K_ALIAS:
                p += STREET_ALIAS_PEN if (kind & K_KIND) == K_STREET else ALIAS_PEN
            if (kind & K_KIND) == K_MUNICIPALITY:
                p += MUNI_PEN
            if best < 0 or p < best:
                best = p
                if range_out != NULL:
                    range_out[0] = k
    return best


cdef inline int _popcount(uint64_t x) noexcept nogil:
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n


cdef bint _group_text(const Data* d, Search* s, const Interp* it, int32_t g, float* pen_out,
                      int* loc_out, int* chosen) noexcept nogil:
    """Do all words of `it` match tokens of group g? Sum their penalties into pen_out; unless
    chosen is NULL, the group token (an index into g_rec) each word took into chosen[word],
    -1 for the words after one that matches none (engine.explain)."""
    cdef int a = d.g_tok_start[g], b = d.g_tok_start[g + 1], wi, j, bestj
    cdef float pen = 0, p, bp
    cdef uint64_t covered = 0, all_street = 0
    cdef int loc = 0
    cdef uint8_t kind
    cdef uint64_t used = 0   # group tokens taken by earlier words (the first 64)
    if chosen != NULL:
        for wi in range(it.nwords):
            chosen[wi] = -1
    for wi in range(it.nwords):
        bp = -1
        bestj = -1
        for j in range(a, b):
            # one token answers one word: "driehuizen 3 driehuizen" needs the street and the place
            if j - a < 64 and (used >> (j - a)) & 1:
                continue
            p = _match_word(d, s, it.words[wi], &d.g_rec[j])
            if p >= 0 and it.words[wi] > it.place_after and (d.g_rec[j].kind & K_KIND) == K_STREET:
                p += ORDER_PEN
            elif p >= 0 and it.words[wi] < it.street_until and (d.g_rec[j].kind & K_KIND) != K_STREET:
                p += ORDER_PLACE_PEN  # "schiedam 55 vlaa": Schiedamseweg in Vlaardingen
            if p >= 0 and (bp < 0 or p < bp):
                bp = p
                bestj = j
        if bp < 0:
            return False
        if chosen != NULL:
            chosen[wi] = bestj
        if bestj - a < 64:
            used |= (<uint64_t>1) << (bestj - a)
        pen += bp
        covered |= d.g_rec[bestj].cover
        kind = d.g_rec[bestj].kind & K_KIND
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


# PERF: a group scored is searched for the typed number, and a typed number is mostly low in
# its run (1, 2, 12 of a street of hundreds): halving from the middle read a cache line a step
# (one more miss each, cold), where a search that gallops from the run's start reads its first
# line (fetched ahead by the scan: `_fetch_group_rows`) for numbers up to the 16th address,
# then lines in steps that double ("i1": 0.7 of the time in `_addresses`).
cdef int _lower_bound_number(const Data* d, int lo, int hi, int number, bint is_pc) noexcept nogil:
    """The first position of the run [lo, hi), sorted by number, whose number is not below
    `number` (hi when none is)."""
    cdef int mid, step = 1
    if lo >= hi or d.a_number[_addr_at(d, lo, is_pc)] >= number:
        return lo
    # the number at lo is below: gallop until one at lo + step is not, or the run ends
    while lo + step < hi and d.a_number[_addr_at(d, lo + step, is_pc)] < number:
        lo += step
        step <<= 1
    if lo + step < hi:
        hi = lo + step
    lo += 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if d.a_number[_addr_at(d, mid, is_pc)] < number:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _number_lower_bound(Index index, int lo, int hi, int number, bint is_pc=False):
    """`_lower_bound_number` on an open index (for the tests)."""
    index._check_open()
    return _lower_bound_number(&index.d, lo, hi, number, is_pc)


cdef struct PartMatch:
    # what `_suffix_pen` read a typed letter/addition part as (engine.explain)
    int what            # PART_*
    int at              # the addition: its first character the part matched; a word: the
                        # group token (an index into g_rec)


cdef enum:
    PART_NONE = 0       # nothing (the parts after one that matches nothing, too)
    PART_LETTER = 1
    PART_ADDITION = 2
    PART_WORD = 3       # a word of the street or the place


cdef float _suffix_pen(const Data* d, Search* s, const Interp* it, int addr, int32_t g,
                       PartMatch* parts) noexcept nogil:
    """Penalty for the typed letter/addition parts against address addr, or -1 (no match);
    unless parts is NULL, what each part matched into parts[i]."""
    cdef int L = _lower(d.a_letter[addr])
    cdef int64_t ao = d.add_off[d.a_addition[addr]]
    cdef int alen = <int>(d.add_off[d.a_addition[addr] + 1] - ao)
    cdef const uint8_t* A = d.add_blob + ao
    cdef int used_l = 0, a_pos = 0, i, k, plen, match
    cdef const char* p
    cdef float pen = 0, wp, bp
    cdef int a, b, j, bj
    if parts != NULL:
        for i in range(it.nparts):
            parts[i].what = PART_NONE
    for i in range(it.nparts):
        p = s.q + s.tok[it.part_tok[i]].start + it.part_off[i]
        plen = s.tok[it.part_tok[i]].len - it.part_off[i]
        if not used_l and a_pos == 0 and L and plen == 1 and p[0] == L:
            used_l = 1
            if parts != NULL:
                parts[i].what = PART_LETTER
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
                if parts != NULL:
                    parts[i].what = PART_ADDITION
                    parts[i].at = a_pos
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
        bj = -1
        for j in range(a, b):
            if it.place_after < MAXT and (d.g_rec[j].kind & K_KIND) == K_STREET:
                continue
            wp = _match_word(d, s, it.part_tok[i], &d.g_rec[j])
            if wp >= 0 and (bp < 0 or wp < bp):
                bp = wp
                bj = j
        if bp < 0:
            return -1
        if parts != NULL:
            parts[i].what = PART_WORD
            parts[i].at = bj
        pen += bp
    if s.huis and (used_l or not L) and a_pos == 0 and (alen == 0 or (alen == 1 and _lower(A[0]) == 104)):
        # "hs" or "huis" left out (`Search.huis`) said the register's addition H, as Amsterdam
        # registers some 40,000 ground floors ("damrak 11 hs": 11-H first); a house without
        # any addition is the whole house, next
        if alen == 0:
            pen += HS_ADDITION_PEN
    elif (L and not used_l) or (alen > 0 and a_pos == 0):
        pen += EXTRA_SUFFIX_PEN  # the address has a letter or addition nobody typed
    if 0 < a_pos < alen:
        pen += PART_PREFIX_PEN   # ... and the typed addition is only its start
    return pen


cdef inline bint _in_area(const Data* d, const Search* s, const Interp* it, int pos, bint is_pc) noexcept nogil:
    """Is the address at pos of a run in the caller's area (s.area, when on), and of a text
    run within the postcode being typed (if one is)?"""
    if s.within.on and not _address_in(d, &s.within, _addr_at(d, pos, is_pc)):
        return False
    return is_pc or it.area_lo < 0 or it.area_lo <= d.a_postcode[pos] <= it.area_hi


cdef int _near_numbers(const Data* d, const Search* s, const Interp* it, int lo, int hi, bint is_pc, int want,
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
                if _in_area(d, s, it, k, is_pc):
                    out_pos[n] = k
                    out_pen[n] = NUM_PREFIX_PEN
                    n += 1
                k += 1
            a = start - 1
        else:
            k = b
            while k < hi and d.a_number[_addr_at(d, k, is_pc)] == d.a_number[_addr_at(d, b, is_pc)]:
                if n < want and _in_area(d, s, it, k, is_pc):
                    out_pos[n] = k
                    out_pen[n] = NUM_PREFIX_PEN
                    n += 1
                k += 1
            b = k
    return n


# PERF: a query whose house number no group of its words holds (garbage such as "9407 g 84a
# nijm", a number typed into the street) matched every group's words first, reading its
# tokens, to find no address. A group's addresses are sorted by number: its lowest and
# highest say whether it can hold the typed number or one that starts with its digits. They
# are stored beside each posting (v_post_num, sp_num), so that such a group is left without
# being touched: on garbage with numbers, that read of the group was half of the scan's time.
cdef inline bint _may_hold(const Search* s, const Interp* it, uint32_t numbers) noexcept nogil:
    """False when `_addresses` finds nothing in a group for the typed number, by the group's
    house number range stored beside its posting (`numbers`: the highest, at least, above
    NUM_LOW_BITS bits of the lowest, at most): a necessary condition, the twin of its rules."""
    cdef int number = it.number
    cdef int top = <int>(numbers >> NUM_LOW_BITS), bottom = <int>(numbers & ((1 << NUM_LOW_BITS) - 1))
    cdef int64_t scale = 10
    if number <= 0 or s.near_number:
        return True
    if number > top:
        return False      # every number it starts (12 -> 120..129, ...) is higher still
    if number >= bottom:
        return True
    if it.nparts > 0 or s.pc_strict == 2:
        return False      # the number as typed only
    # the numbers that start with the typed digits, block by block (as `_addresses`)
    while number * scale <= NUMBER_MAX:
        if number * scale <= top and (number + 1) * scale > bottom:
            return True
        scale *= 10
    return False


cdef int _addresses(const Data* d, Search* s, const Interp* it, int lo, int hi, bint is_pc,
                    int32_t g, int want, int* out_pos, float* out_pen) noexcept nogil:
    """Up to `want` addresses of the run [lo, hi) for the typed number, in this order.

    Exact house numbers first (by suffix penalty, then position); then numbers that start with
    the typed digits, block by block (10..19 before 100..199) in house-number order, each block
    in the order of the run (120A before 121). With no number typed: the lowest numbers first.
    """
    cdef int n = 0, i, e, addr, lo2, digits, k
    cdef float pen
    cdef int number = it.number
    cdef int64_t scale
    if s.near_number and number >= 0:
        return _near_numbers(d, s, it, lo, hi, is_pc, want, out_pos, out_pen)
    if number < 0:
        i = lo
        while i < hi and n < want:
            if _in_area(d, s, it, i, is_pc):
                out_pos[n] = i
                out_pen[n] = 0
                n += 1
            i += 1
        return n
    e = _lower_bound_number(d, lo, hi, number, is_pc)
    i = e
    while i < hi and d.a_number[_addr_at(d, i, is_pc)] == number and i - e < SAME_NUMBER_CAP:
        addr = _addr_at(d, i, is_pc)
        pen = _suffix_pen(d, s, it, addr, d.a_group[addr] if is_pc else g, NULL) if _in_area(
            d, s, it, i, is_pc) else -1
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
    while number * scale <= NUMBER_MAX and n < want:
        lo2 = _lower_bound_number(d, lo, hi, <int>(number * scale), is_pc)
        i = lo2
        while i < hi and n < want and d.a_number[_addr_at(d, i, is_pc)] < number * scale + scale:
            addr = _addr_at(d, i, is_pc)
            if not _in_area(d, s, it, i, is_pc):
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
        dy = (d.g_lat[g] * MICRODEGREE - s.focus_lat) * KM_PER_DEGREE
        dx = (d.g_lon[g] * MICRODEGREE - s.focus_lon) * KM_PER_DEGREE * s.cos_lat
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


# PERF (issue 39): a postcode's place in pc_code (460,000 codes) was a binary search of 19
# steps, the last ones cache misses; then a table of where each four digits start (40 KB) left
# a search among that area's letters (up to 676: three or four misses, each waiting for the
# one before). Now one word per four digits and first letter (2 MB, made when the index opens)
# holds where they start in pc_code, above PC_RANK_BITS, and a bit per second letter that is
# registered: a postcode's place is that start plus the bits below its own, one read.
DEF PC_RANK_BITS = 26


cdef uint64_t* _pc_ranks(const Data* d) noexcept nogil:
    """d.pc_rank: for each slot k = digits * 26 + first letter (a code // 26), the first index of
    pc_code at or above k * 26, shifted up PC_RANK_BITS, with bit r set when k * 26 + r is in
    pc_code (strictly rising: `Index._check`); NULL when out of memory (the caller raises)."""
    cdef uint64_t* t = <uint64_t*>calloc(PC_RANK_SLOTS, sizeof(uint64_t))
    cdef int k, p = 0
    if t == NULL:
        return NULL
    for k in range(PC_RANK_SLOTS):
        while p < d.n_pc and d.pc_code[p] < k * 26:
            p += 1
        t[k] = <uint64_t>p << PC_RANK_BITS
        while p < d.n_pc and d.pc_code[p] < k * 26 + 26:
            t[k] |= (<uint64_t>1) << (d.pc_code[p] - k * 26)
            p += 1
    return t


cdef inline int _pc_index(const Data* d, int code) noexcept nogil:
    """The first index of pc_code whose code is not below `code` (n_pc when none is)."""
    cdef int k
    cdef uint64_t w
    if code < 0:
        return 0
    k = code // 26
    if k >= PC_RANK_SLOTS:
        return _lower_bound(d.pc_code, <int>(d.pc_rank[PC_RANK_SLOTS - 1] >> PC_RANK_BITS), d.n_pc, code)
    w = d.pc_rank[k]
    return <int>(w >> PC_RANK_BITS) + _popcount(w & (((<uint64_t>1) << (code - k * 26)) - 1))


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


cdef inline float _pc_word(const Data* d, Search* s, int ti, int32_t g, int* bestj) noexcept nogil:
    """Postcode mode: the least penalty of typed word ti on a token of group g, or -1 when it
    matches none; that token (an index into g_rec) into bestj."""
    cdef int j
    cdef float bp = -1, wp
    for j in range(d.g_tok_start[g], d.g_tok_start[g + 1]):
        wp = _match_word(d, s, ti, &d.g_rec[j])
        if wp >= 0 and (bp < 0 or wp < bp):
            bp = wp
            bestj[0] = j
    return bp


cdef void _collect_pc(const Data* d, Search* s, int ii) noexcept nogil:
    """Postcode mode: score the addresses of the typed postcode (or postcode prefix)."""
    cdef Interp* it = &s.interp[ii]
    cdef int p0 = _pc_index(d, it.pc_lo), p, lo, hi, n, j, addr, g, wi, jj, scanned = 0
    cdef int n_pc, want
    cdef int pos[MAXLIMIT]
    cdef float apen[MAXLIMIT]
    cdef float bp, rp = _round_pen(s.limit)
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
                    bp = _pc_word(d, s, it.words[wi], g, &jj)
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
    cdef int i, best, n = 0
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
