# Scanning postings (included by _core.pyx): walk the postings of an interpretation's
# rarest word in prior order, skip the groups that cannot reach the pool, score the rest.

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
    With a focus point, the group's own distance term (two reads beside the group's prior).
    Also when a word with slips and no start of its own has none of its tokens here."""
    cdef float extra = 0, bound
    cdef int unc = meta & META_UNCOVERED, glued = (meta & META_GLUED) != 0, k = s.others, lb, i
    if (first & s.need1) != s.need1:
        return True       # a one-letter word that no token of the group starts with
    if meta & META_MUNICIPALITY:
        extra += MUNI_PEN
    if meta & META_ALIAS:
        extra += ALIAS_PEN if meta & META_PLACE else STREET_ALIAS_PEN   # of a place, or of a street
    # each other word covers one street word, or two through a glued form ("hc", "thofje")
    lb = unc - k - (k if k < glued else glued)
    if lb > 0:
        extra += UNMATCHED_PEN * lb
    for i in range(s.nx):
        if not (xsig >> s.xbit[i]) & 1:
            extra += PREFIX_PEN if PREFIX_PEN < TYPO_PEN else TYPO_PEN
    if s.has_focus:
        bound = _prior(d, s, g, 0) + FOCUS_EPS - s.min_pen - s.tok_pen - extra
    else:
        # matched through a place token, the place was typed: the prior counts LOCALITY_PRIOR
        bound = prior * (LOCALITY_PRIOR if meta & META_PLACE else PRIOR_WEIGHT_MAX) - s.min_pen - s.tok_pen - extra
    if bound < s.floor:
        return True
    # what follows would have been scored, and failed: it counts as scored, so that the budgets
    # run out where they did
    for i in range(s.nslipped):
        if not (xsig & s.slipped[i]):
            _charge_group(s)
            return True
    # PERF: a capped walk of a very short word's tokens bounds with no penalty for the word (the
    # group's best token may be one the cap cut); but without the whole word among its tokens
    # (its whole-token bit) the word costs at least a prefix or a slip in the group ("i 1": six
    # hundred groups of streets starting with i or y were scored, none of them near the pool)
    if s.cap_xbit != -2 and (s.cap_xbit < 0 or not (xsig >> s.cap_xbit) & 1) \
            and bound - (PREFIX_PEN if PREFIX_PEN < TYPO_PEN else TYPO_PEN) < s.floor:
        _charge_group(s)
        return True
    return False


cdef inline bint _charge_group(Search* s) noexcept nogil:
    """Count one group as scored against the budgets; False when they are spent."""
    # PERF: a bound on the work of one query; only inputs of a few very common letters reach
    # it ("de ha"), where the groups seen first (highest prior) are the ones to show anyway
    if s.considered >= MAX_CONSIDER or _spent(s):
        return False
    s.considered += 1
    s.groups += 1
    s.work += s.group_work
    return True


# PERF: garbage with a letter or addition ("oe2 8r", "I1b", "emmeloord 11 3612 3612") matched
# the words of a thousand groups a reading, to find in none an address with that number and
# suffix: the scan's work budget ran out on them, at a cache miss or two a group. Beside each
# posting are the first letters of its group's letters and additions (v_post_sfx): the first
# typed part must start one of them, or be a word of the group (a first letter of its tokens,
# v_post_first, and for two letters or more the signature bit of its start, v_post_sig) when
# it is not glued to the number.
cdef inline bint _may_fit(const Search* s, const Interp* it, uint32_t numbers, uint32_t sfx,
                          uint32_t first, uint32_t pcr, uint64_t sig) noexcept nogil:
    """False when `_addresses` finds nothing in a group for the typed number, parts and postcode
    being typed, or `_group_text` no token for a word, by what is stored beside its posting
    (`_may_hold`; the first letters of the words; the group's postcode digits against the area
    typed; the first part as `_suffix_pen` reads it: a letter, the start of an addition, or a
    word of the group; a necessary condition)."""
    if not _may_hold(s, it, numbers) or (first & s.need_first) != s.need_first:
        return False
    # PERF: "sg 21 5163": every group of "sg" with a 21, but none in 5163
    if it.area_lo >= 0 and (<int>(pcr >> PC_DIGIT_BITS) > it.area_hi // 676
                            or <int>(pcr & ((1 << PC_DIGIT_BITS) - 1)) < it.area_lo // 676):
        return False
    if s.sfx_bit < 0 or (sfx >> s.sfx_bit) & 1:
        return True
    # PERF: "m6 tgbz": "tgbz" is no addition here, so a word, and no token starts with "tg"
    return s.sfx_word >= 0 and (first >> s.sfx_word) & 1 and (sig & s.sfx_sig) == s.sfx_sig


cdef void _fit_part(Search* s, const Interp* it) noexcept nogil:
    """Set what the first typed part needs of a group (s.sfx_bit, s.sfx_word, s.sfx_sig:
    `_may_fit`)."""
    cdef int ti
    cdef char c
    s.sfx_bit = -1
    s.sfx_word = -1
    s.sfx_sig = 0
    # parts are fitted to the exact number only (nearest numbers leave them out)
    if it.nparts == 0 or it.number < 0 or s.near_number:
        return
    ti = it.part_tok[0]
    c = s.q[s.tok[ti].start + it.part_off[0]]
    if it.part_off[0] == 0:
        # a part that is a whole token may be a word of the group (_suffix_pen), through its
        # prefix ranges (its first letter) ... or its ij range ("i" may start "y...") or slips,
        # whose first letters may be any: then no filter
        if (c == 105 and s.tok[ti].len == 1) or (s.typo_mode and s.word[ti].nr > s.word[ti].first_typo):
            return
        s.sfx_word = _first_bit(c)
        # as a word it starts a token with its first two letters, as the others (`_need_mask`)
        s.sfx_sig = _start_bit(s, ti)
    s.sfx_bit = _first_bit(c)


cdef void _consider_group(const Data* d, Search* s, int ii, int32_t g, uint32_t numbers,
                          uint32_t sfx, uint32_t first, uint32_t pcr, uint64_t sig) noexcept nogil:
    cdef float text_pen, score, prior
    cdef int loc, n
    cdef int pos[1]
    cdef float apen[1]
    cdef Interp* it = &s.interp[ii]
    # a group out of the area is left before it counts as scored: the budgets are the area's
    if s.within.on and (not _group_in(d, &s.within, g) or not _pcr_meets(&s.within, pcr)):
        return
    if not _charge_group(s):
        return
    if s.province >= 0 and d.g_province[g] != s.province:
        return
    # PERF: before its words are matched (it still counts as scored: the budgets run as before)
    if not _may_fit(s, it, numbers, sfx, first, pcr, sig):
        return
    if not _group_text(d, s, it, g, &text_pen, &loc, NULL):
        return
    # PERF: the addresses add a penalty of zero or more, so a group whose words alone put it
    # below the full pool's floor is not searched for the number ("d 3077 39": 220 groups with
    # a word "d" were searched for a 3077, and 34 of them came near the pool)
    prior = _prior(d, s, g, loc)
    if prior - text_pen < s.floor:
        return
    n = _addresses(d, s, it, d.g_start[g], d.g_start[g + 1], False, g, 1, pos, apen)
    if n == 0:
        return
    score = -(text_pen + apen[0]) + prior
    _pool_add(s, g, score, text_pen, ii, loc)


# PERF: scoring a group reads its tokens and its addresses, two cache misses or more each on a
# cold query (the whole-country arrays are hundreds of MB). A walk fetches them ahead: the group
# of a posting GROUP_AHEAD further on (its token and address bounds), and the tokens and the
# first line of house numbers (where `_lower_bound_number` starts) of one half as far on, whose
# bounds were fetched by then.
DEF GROUP_AHEAD = 8


cdef inline void _fetch_group(const Data* d, int32_t g) noexcept nogil:
    _prefetch(&d.g_tok_start[g])
    _prefetch(&d.g_start[g])
    _prefetch(&d.g_prior[g])


cdef inline void _fetch_group_rows(const Data* d, int32_t g) noexcept nogil:
    _prefetch(&d.g_rec[d.g_tok_start[g]])
    _prefetch(&d.a_number[d.g_start[g]])


cdef inline bint _worth_fetching(const Search* s, const Interp* it, const uint64_t* sig,
                                 const uint32_t* nums, const uint32_t* sfx, const uint32_t* first,
                                 const uint32_t* pcr, int q, uint64_t need) noexcept nogil:
    return (sig[q] & need) == need and _may_fit(s, it, nums[q], sfx[q], first[q], pcr[q], sig[q])


cdef inline void _fetch_ahead(const Data* d, const Search* s, const Interp* it, const uint64_t* sig,
                              const int32_t* group, const uint32_t* nums, const uint32_t* sfx,
                              const uint32_t* first, const uint32_t* pcr, int p, int start, int pe,
                              uint64_t need) noexcept nogil:
    """Before entry p of a walk [start, pe) over (sig, group, nums, sfx, first) is checked: fetch
    the groups of the entries GROUP_AHEAD and GROUP_AHEAD / 2 further on that pass the signature
    and may fit the typed number (at its start, the bounds of the first GROUP_AHEAD too)."""
    cdef int q
    if p == start:
        for q in range(p, pe if pe - p < GROUP_AHEAD else p + GROUP_AHEAD):
            if _worth_fetching(s, it, sig, nums, sfx, first, pcr, q, need):
                _fetch_group(d, group[q])
    q = p + GROUP_AHEAD
    if q < pe and _worth_fetching(s, it, sig, nums, sfx, first, pcr, q, need):
        _fetch_group(d, group[q])
    q = p + GROUP_AHEAD // 2
    if q < pe and _worth_fetching(s, it, sig, nums, sfx, first, pcr, q, need):
        _fetch_group_rows(d, group[q])


cdef inline void _walk_postings(const Data* d, Search* s, int ii, int p, int pe,
                                uint64_t need) noexcept nogil:
    """Score the groups of the postings [p, pe) of one token, which are in prior order: stop at
    the first that cannot reach the pool (nor can any after it); skip the ones whose signature
    lacks a bit of `need` or that their own stored bounds put out of reach."""
    cdef int start = p
    # PERF: once the query's budget is spent no group is scored (`_charge_group`), so the walk
    # ends there (issue 37). It went on to the end of the token's postings, counted beforehand
    # (up to SCAN_BUDGET of them), which can spend the budget at once: the bounds of those
    # postings were checked to score nothing, each a read of the group's point with a focus
    # point ("van van v vany van 1 van ... 9288 van ...", whose 9288 reads as a postcode's
    # digits: 1.7 of its 2.2 ms in one reading). Nothing else changes: past the budget, the
    # walk's checks had no effect.
    while p < pe and not _spent(s):
        s.walked += 1
        _fetch_ahead(d, s, &s.interp[ii], d.v_post_sig, d.v_post, d.v_post_num, d.v_post_sfx,
                     d.v_post_first, d.v_post_pcr, p, start, pe, need)
        # PERF: the signature rejects most groups without touching them
        if (d.v_post_sig[p] & need) == need:
            if _beyond_reach(s, d.v_post_prior[p]):
                break
            if not _out_of_reach(d, s, d.v_post[p], d.v_post_prior[p], d.v_post_meta[p],
                                 d.v_post_xsig[p], d.v_post_first[p]):
                _consider_group(d, s, ii, d.v_post[p], d.v_post_num[p], d.v_post_sfx[p],
                                d.v_post_first[p], d.v_post_pcr[p], d.v_post_sig[p])
        p += 1


cdef bint _scan_short_prefix(const Data* d, Search* s, int ii, int wi, uint64_t need,
                             const char* text, bint variant) noexcept nogil:
    """Scan the precomputed best groups of the short prefix `text` (as long as word wi): the
    word as typed, or (variant) its `...y` range ("i", "ri" on their way to "ij", "rij");
    False when it has no such list."""
    cdef Tok* t = &s.tok[wi]
    cdef int a = _blob_find(d.sp_blob, d.sp_off, d.n_sp, text, t.len), p, pe
    cdef int32_t x = s.word[wi].exact
    if a < 0:
        return False
    # the complete word first (a person who typed "s" may mean the token "s" itself), its best
    # EXACT_CAP groups
    s.tok_pen = 0
    if x >= 0 and not variant:
        p = d.v_post_start[x]
        pe = d.v_post_start[x + 1]
        _walk_postings(d, s, ii, p, pe if pe - p <= EXACT_CAP else p + EXACT_CAP, need)
    # the list is in order of prior minus the word's penalty on the group's shortest token;
    # each entry is checked on its own, from data stored beside it
    # PERF: a group of the variant's list bounds with no penalty for its token, but the word
    # costs a prefix or more in it (a variant's token, a longer token of its own, a slip) unless
    # the group holds the whole word ("i 1": 170 groups of streets in Capelle aan den IJssel
    # were scored, where "i" costs 1.5 on "ijssel", none of them near the pool)
    if variant:
        s.cap_xbit = _xsig_bit(s.q + t.start, t.len) if x >= 0 else -1
    pe = d.sp_start[a + 1]
    for p in range(d.sp_start[a], pe):
        if _spent(s):
            break  # (as `_walk_postings`)
        s.walked += 1
        _fetch_ahead(d, s, &s.interp[ii], d.sp_sig, d.sp_group, d.sp_num, d.sp_sfx, d.sp_first,
                     d.sp_pcr, p, d.sp_start[a], pe, need)
        if (d.sp_sig[p] & need) != need:
            continue
        if d.sp_toklen[p] == t.len or variant:
            # (NOTE: a group of the variant's list may match the word better through the word's
            # own range: no bound from this token)
            s.tok_pen = 0
        else:
            s.tok_pen = _prefix_cost(0, t.len, d.sp_toklen[p])
        if _out_of_reach(d, s, d.sp_group[p], d.sp_prior[p], d.sp_meta[p], d.sp_xsig[p], d.sp_first[p]):
            continue
        _consider_group(d, s, ii, d.sp_group[p], d.sp_num[p], d.sp_sfx[p], d.sp_first[p], d.sp_pcr[p],
                        d.sp_sig[p])
    s.cap_xbit = -2
    return True


cdef void _walk_area(const Data* d, Search* s, int ii) noexcept nogil:
    """Score the groups of the area (its runs of ar_group, each best prior first) for
    interpretation ii, after a scan of its rarest word that was cut short: a short prefix's list
    holds the best groups of the whole country, and a capped walk the first of each token, so
    that a restricted search would miss the area's own ("k" in Urk). Each run stops at its first
    group out of reach, as a walk of postings does."""
    cdef int r, p
    cdef int32_t g
    # what `_may_fit` is given for a group reached by no posting: any number, letter, addition,
    # first letter and postcode may be there (`_group_text` and `_addresses` read the group)
    cdef uint32_t any_numbers = (<uint32_t>NUM_HIGH_MAX) << NUM_LOW_BITS, any_bits = 0xFFFFFFFF
    cdef uint32_t any_postcodes = 9999
    s.tok_pen = 0
    for r in range(s.within.nwalk):
        for p in range(s.within.walk_lo[r], s.within.walk_hi[r]):
            if _spent(s):
                return
            g = d.ar_group[p]
            s.walked += 1
            s.work += s.post_work
            if _beyond_reach(s, d.g_prior[g]):
                break
            _consider_group(d, s, ii, g, any_numbers, any_bits, any_bits, any_postcodes, 0)


cdef bint _variant_list(const Data* d, Search* s, int ii, int wi, uint64_t need) noexcept nogil:
    """`_scan_short_prefix` of the `...y` variant of word wi (which ends in i)."""
    cdef Tok* t = &s.tok[wi]
    cdef char alt[QBUF]
    _ij_variant(s.q + t.start, t.len, alt)
    return _scan_short_prefix(d, s, ii, wi, need, alt, True)


cdef inline float _tok_pen(const Data* d, Search* s, int wi, int r, int32_t t) noexcept nogil:
    """The least penalty of word wi on token t reached through its range r (kinds add more)."""
    return _range_pen(&s.word[wi], r, s.tok[wi].len, t, _tok_len(d, t), 0)


cdef float _min_pen(Search* s, Interp* it, int driver) noexcept nogil:
    """A lower bound of the text penalty of the words but the driver: a word with no complete
    token costs at least a prefix."""
    cdef float pen = 0
    cdef int wi
    for wi in range(it.nwords):
        if it.words[wi] != driver and s.word[it.words[wi]].exact < 0:
            pen += PREFIX_PEN if PREFIX_PEN < TYPO_PEN else TYPO_PEN
    return pen


cdef inline uint64_t _start_bit(const Search* s, int ti) noexcept nogil:
    """The signature bit of the first two letters of word ti, which a group's token carries when
    the word starts it as typed; 0 for a word of one letter, or "ri", which may be on its way to
    "ry..." (ij)."""
    cdef const Tok* t = &s.tok[ti]
    if t.len < 2 or (t.len == 2 and s.q[t.start + 1] == 105):
        return 0
    return (<uint64_t>1) << _sig_bit(s.q + t.start, t.len)


cdef uint64_t _need_mask(const Data* d, Search* s, Interp* it, int driver) noexcept nogil:
    """Signature bits that every group matching all words but the driver must carry: a word's
    start, unless (with slips or sound-alikes looked up) one of its typo tokens starts
    otherwise (PERF: "koninngin julianastraat 17 bergeijk": the tokens that sound like
    Julianastraat and Bergeijk start as they do, and the scan keeps their filter)."""
    cdef uint64_t need = 0, bit
    cdef int wi, ti
    cdef Word* w
    for wi in range(it.nwords):
        ti = it.words[wi]
        if ti == driver:
            continue
        w = &s.word[ti]
        bit = _start_bit(s, ti)
        if s.typo_mode and w.first_typo < w.nr:
            _typo_bits(d, w)
            if w.tsig & ~bit:
                continue
        need |= bit
    return need


cdef uint64_t _typo_bits(const Data* d, Word* w) noexcept nogil:
    """The whole-token signature bits of word w's typo tokens, and (into w.tsig) their start
    signature bits (PERF: made when a scan needs
    them, once for the ranges the word has: reading each token's text as it was added cost a
    cache miss a token of the lists stored for whole words, which no scan needs)."""
    cdef int r
    cdef int32_t t
    if w.tbits_nr != w.nr:
        w.tbits = 0
        w.tsig = 0
        for r in range(w.first_typo, w.nr):
            for t in range(w.lo[r], w.hi[r]):
                w.tbits |= (<uint64_t>1) << _xsig_bit(<const char*>(d.v_blob + d.v_off[t]), _tok_len(d, t))
                w.tsig |= (<uint64_t>1) << _sig_bit(<const char*>(d.v_blob + d.v_off[t]), _tok_len(d, t))
        w.tbits_nr = w.nr
    return w.tbits


cdef inline int _rarest_word(const Search* s, const Interp* it) noexcept nogil:
    """The word of interpretation it with the fewest postings to walk, or -1 when a word
    matches nothing (or there is none)."""
    cdef int wi, best = -1
    cdef int64_t bestcost = -1
    cdef const Word* w
    for wi in range(it.nwords):
        w = &s.word[it.words[wi]]
        if w.nr == 0:
            return -1
        if bestcost < 0 or w.cost < bestcost:
            bestcost = w.cost
            best = it.words[wi]
    return best


cdef inline void _other_word_filters(const Data* d, Search* s, const Interp* it, int best) noexcept nogil:
    """What the words of it other than best ask of a group before it is scored: their typo
    tokens' bits, their whole-token bits, their first letters."""
    cdef int wi, t
    for wi in range(it.nwords):
        t = it.words[wi]
        # PERF: a word with slips that starts no token (`kegrkstiaat`) has no signature bit
        # (_need_mask); it matches only its typo tokens, whole, whose bits a group then needs:
        # a scan driven by the place no longer scores every group of the place
        if t != best and s.typo_mode and s.word[t].first_typo == 0 and s.word[t].nr > 0:
            s.slipped[s.nslipped] = _typo_bits(d, &s.word[t])
            s.nslipped += 1
        if t != best and s.word[t].exact >= 0:
            s.xbit[s.nx] = _xsig_bit(s.q + s.tok[t].start, s.tok[t].len)
            s.nx += 1
        # "i" may be on its way to "ij", folded "y": no filter for it
        if t != best and s.tok[t].len == 1 and s.q[s.tok[t].start] != 105:
            s.need1 |= (<uint32_t>1) << _first_bit(s.q[s.tok[t].start])
        # PERF: every other word matches a token that starts as it does (its prefix ranges;
        # not through slips, nor "i" as "y"): a group whose tokens start otherwise is left
        # once it counts as scored ("ro 47 utrecht": the signature bit of "ro" is shared with
        # 1 in 64 other starts, and a thousand groups of Utrecht passed it)
        if (t != best and not (s.typo_mode and s.word[t].nr > s.word[t].first_typo)
                and not (s.tok[t].len == 1 and s.q[s.tok[t].start] == 105)):
            s.need_first |= (<uint32_t>1) << _first_bit(s.q[s.tok[t].start])


cdef inline void _word_work(Search* s, const Interp* it) noexcept nogil:
    """What a posting walked and a group scored count against the work budget."""
    # PERF: what a posting walked and a group scored cost grows with the words (issue 37): the
    # bound of each posting checks every other word's whole-token bit and slips
    # (`_out_of_reach`), and scoring a group matches every word against its tokens
    # (`_group_text`), where short words with slips match some token of nearly every group.
    # Counted as one unit and WORK_PER_GROUP whatever the query, a query of 12 words of slips and
    # short starts ("v a 1 vayn vany vays vayn an vayn 1553 van va(3yn van de ...") spent its
    # budget at 190 ns a unit, where "van van van" does at 19 ns. Past FREE_WORDS words, a
    # posting counts once more per FREE_WORDS other words, and a group EXTRA_WORD_WORK times
    # WORK_PER_GROUP more per word. (No answer of the public queries, their typing prefixes and
    # the synthetic sets changes, benchmarks/compare_builds.py; with 4 free words, two did.)
    s.post_work = 1
    if s.nx + s.nslipped > FREE_WORDS:
        s.post_work += (s.nx + s.nslipped - FREE_WORDS) // FREE_WORDS
    s.group_work = WORK_PER_GROUP
    if it.nwords > FREE_WORDS:
        s.group_work += WORK_PER_GROUP * EXTRA_WORD_WORK * (it.nwords - FREE_WORDS)


# PERF: a word's typo ranges (its sound-alikes and slips) are walked in two rounds: the first
# TYPO_SHARE postings of each of their tokens (its best groups), then the rest. A token reached
# by a sound-alike may be a big place ("hengello 469 's-g": Hengelo, 1,276 groups; "heerre 209a
# heer": Heerenveen among 71 tokens that start so), whose groups, walked whole in token order,
# spent the query's work budget before the street meant (Hengelolaan, Heerenweg) was reached.
# Nothing else changes: the same groups are walked, and within a token in prior order; only
# where the budget runs out does.
DEF TYPO_SHARE = 64


cdef inline bint _walk_range(const Data* d, Search* s, int ii, int best, int r, uint64_t need,
                             int skip, int take) noexcept nogil:
    """Walk the postings of range r of word best, of each token those from its skip-th on, at
    most `take` of them (-1: all); False when the work budget is spent."""
    cdef Word* w = &s.word[best]
    cdef int t, p, pe
    # each token's postings are in prior order: stop a token once out of reach
    for t in range(w.lo[r], w.hi[r]):
        p = d.v_post_start[t] + skip
        pe = d.v_post_start[t + 1]
        if p >= pe:
            continue
        if take >= 0 and pe - p > take:
            pe = p + take
        s.tok_pen = _tok_pen(d, s, best, r, t)
        if _spent(s):
            return False
        s.work += (pe - p) * s.post_work
        _walk_postings(d, s, ii, p, pe, need)
    return True


cdef inline bint _walk_range_capped(const Data* d, Search* s, int ii, int best, int r, uint64_t need,
                                    int64_t budget) noexcept nogil:
    """PERF: a very short prefix ("a", "ka"): take the exact token in full and the best-prior
    groups of every other token, within the budget. False when the work budget is spent."""
    cdef Word* w = &s.word[best]
    cdef int t, p, pe
    cdef int cap = budget // (w.hi[r] - w.lo[r])
    if cap < TOKEN_CAP_MIN:
        cap = TOKEN_CAP_MIN
    # NOTE: a group's best token may be one whose postings the cap cut, so the bound
    # here cannot count on this token's penalty (only on the whole word's: cap_xbit)
    s.tok_pen = 0
    s.cap_xbit = _xsig_bit(s.q + s.tok[best].start, s.tok[best].len) if w.exact >= 0 else -1
    for t in range(w.lo[r], w.hi[r]):
        p = d.v_post_start[t]
        pe = d.v_post_start[t + 1]
        if t != w.exact and pe - p > cap:
            pe = p + cap
        if _spent(s):
            s.cap_xbit = -2
            return False
        s.work += (pe - p) * s.post_work
        _walk_postings(d, s, ii, p, pe, need)
    s.cap_xbit = -2
    return True


cdef inline bint _in_two_rounds(const Data* d, const Word* w, int r, int64_t budget) noexcept nogil:
    """Is range r of word w (of a scan in typo mode) walked in two rounds by `_scan_text`: a
    typo range whose postings are all walked, within the scan's budget?"""
    return w.typo[r] and d.v_post_start[w.hi[r]] - d.v_post_start[w.lo[r]] <= budget


cdef void _scan_text(const Data* d, Search* s, int ii) noexcept nogil:
    """Walk the postings of the rarest word of interpretation ii and score every group."""
    cdef Interp* it = &s.interp[ii]
    cdef int best = _rarest_word(s, it), r
    cdef int64_t total, budget
    cdef uint64_t need
    cdef Word* w
    cdef bint shared
    if best < 0:
        return
    need = _need_mask(d, s, it, best)
    s.min_pen = _min_pen(s, it, best)
    s.others = it.nwords - 1
    s.nx = 0
    s.need1 = 0
    s.need_first = 0
    s.nslipped = 0
    s.cap_xbit = -2
    _fit_part(s, it)
    _other_word_filters(d, s, it, best)
    _word_work(s, it)
    s.considered = 0  # the bound holds per interpretation: one reading cannot starve another
    s.capped = 0
    # PERF: with other words to filter on, the signatures make a long scan cheap
    budget = SCAN_BUDGET if need else SCAN_ALONE
    w = &s.word[best]
    shared = False
    for r in range(w.nr):
        if w.typo[r] and not s.typo_mode:
            continue
        total = d.v_post_start[w.hi[r]] - d.v_post_start[w.lo[r]]
        if total > budget:
            s.spent |= SPENT_SCAN
            s.capped = 1
        if total > budget and r == 0 and _scan_short_prefix(d, s, ii, best, need, s.q + s.tok[best].start, False):
            continue
        # PERF: the `...y` range of a word ending in i ("i 1": every token of "y", "ij" folded,
        # was walked capped one by one, 35-47 us where "s 1" took 11-16) has the list of its
        # best groups too; it is the prefix range after the word's own (`_word_ranges`)
        if total > budget and 0 < r < w.first_typo and _variant_list(d, s, ii, best, need):
            continue
        if _in_two_rounds(d, w, r, budget):
            # the first round of the typo tokens (TYPO_SHARE)
            shared = True
            if not _walk_range(d, s, ii, best, r, need, 0, TYPO_SHARE):
                return
            continue
        if not (_walk_range(d, s, ii, best, r, need, 0, -1) if total <= budget
                else _walk_range_capped(d, s, ii, best, r, need, budget)):
            return
    if shared:
        # ... and the rest of them
        for r in range(w.first_typo, w.nr):
            if _in_two_rounds(d, w, r, budget) and not _walk_range(d, s, ii, best, r, need, TYPO_SHARE, -1):
                return
    if s.within.on and s.capped and s.within.nwalk:
        _walk_area(d, s, ii)
