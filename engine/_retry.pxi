# Retries (included by _core.pyx): one query from its tokens to its answer, the work
# budget, and the readings tried when the query as typed finds nothing (respaced, without
# some words, a postcode with a slip, the nearest numbers).

# PERF: the work of one query, whatever it is, is bounded (issue 11): queries of many one-letter
# words and numbers ("d b br br 1 o b b 9288 b br") have many readings, each retried with
# slips, respaced and without some words, and every reading walks postings and scores groups;
# their product took 15 ms. Each posting walked counts 1 and each group scored WORK_PER_GROUP
# (more in a query of more than FREE_WORDS words: _scan.pxi `_scan_text`); once a query has
# spent _work_budget, no further group is scored, no scan walks on (_scan.pxi `_walk_postings`)
# and no further reading is tried: the answer is the best found so far (deterministic: the same
# query stops at the same point); but when the reading as typed spent it and found nothing,
# the retries get 1/RETRY_SHARE of it more (`_search`). No query of the public set comes near
# it (see benchmarks/fuzz.py; its `--climb` finds the slowest queries: issue 37).
cdef int64_t _work_budget = 25000
DEF GLUED_DIGITS = 7    # a number glued to words: the house number and a numeric addition
# `_segment`'s letter_first: whether the first piece may be one letter (a house letter)
DEF LETTER_FIRST_NONE = 0  # no: every piece is a word
DEF LETTER_FIRST_MAY = 1   # it may be
DEF LETTER_FIRST_ONLY = 2  # it is
DEF LETTER_TRY = 2      # `_glue_reading`'s try with a house letter glued before the words
DEF INITIALS_POSTINGS = 200  # a whole word with more postings is no initials typed glued
DEF RETRY_SHARE = 4     # the retries after a reading that spent the budget: 1/RETRY_SHARE more


def _set_work_budget(int64_t budget):
    """Set the work budget of a query (benchmarks/fuzz.py calibrates it; not for serving)."""
    global _work_budget
    _work_budget = budget


cdef inline bint _spent(const Search* s) noexcept nogil:
    return s.work >= _work_budget


cdef inline void _reset_work(Search* s) noexcept nogil:
    """Start a query's budgets and memos afresh."""
    s.work = 0
    s.walked = 0
    s.groups = 0
    s.post_work = 1
    s.group_work = WORK_PER_GROUP
    s.slip_work = 0
    s.two_slip_words = 0
    s.nmemo = 0
    s.memo_used = 0
    s.nslipmemo = 0
    s.nsoundmemo = 0
    s.left_out = 0
    s.near_glue = -1


cdef inline bint _blank_layout(Search* s, char* layout, Src* layout_src) noexcept nogil:
    """A pasted address's layout (`_prepare`): the brackets and commas become spaces, so that it
    is read as typed without the marks first; the query as it was is kept in layout (and
    layout_src) when it had any. Whether it had."""
    cdef int i
    cdef bint marked = False
    for i in range(s.qlen):
        if s.q[i] == 40 or s.q[i] == 41 or s.q[i] == 44:
            if not marked:
                memcpy(layout, s.q, s.qlen)
                memcpy(layout_src, s.qsrc, s.qlen * sizeof(Src))
                marked = True
            s.q[i] = 32
    return marked


cdef inline void _read_typed(const Data* d, Search* s, bint marked, const char* layout, int olen,
                             char* clean) noexcept nogil:
    """The reading as typed (the glued one found nothing)."""
    s.stage = ST_TYPED
    s.defer_slips = s.ntok <= DROP_MAX_TOKENS and s.ntok > 1
    if (marked and (_without_noise(layout, olen, 1, clean) >= 0 or _without_noise(layout, olen, 2, clean) >= 0)) or (
            s.ntok > 1 and s.tok[s.ntok - 1].digits == 0 and _in_list(
                _region_ptr, _region_len, _n_country, s.q + s.tok[s.ntok - 1].start, s.tok[s.ntok - 1].len)):
        # PERF: a query with a note, an addressee line or the country at its end is read as
        # typed with one slip at most in the words that match nothing; the slips of every
        # word, two in a long one, are for the query without them ("..., 's-gravenhage (niet
        # bellen)": 234 -> 9 us)
        s.max_pass = RETRY_PASSES
    _read(d, s)
    s.max_pass = NPASS
    s.defer_slips = 0
    if s.ncand == 0 and _spent(s):
        # the reading as typed spent the whole budget on groups none of which qualified ("roer
        # 4 5": every Roer... and Roermond group with a 4 and no addition 5, while "roer 4 5751"
        # is being typed): the retries get a share of it (a retry without the parts answers
        # Roer 4); the query costs at most 1/RETRY_SHARE of the budget more
        s.work = _work_budget - _work_budget // RETRY_SHARE


cdef inline void _read_without_notes(const Data* d, Search* s, bint marked, const char* layout,
                                     const Src* layout_src, int olen, char* clean) noexcept nogil:
    """Nothing found: without the notes in brackets, then also without the lines that name whom
    it is for (`_without_noise`); the retries after read what is left."""
    cdef int m, tier = 1
    while s.ncand == 0 and marked and tier <= 2 and not _spent(s):
        m = _without_noise(layout, olen, tier, clean)
        s.stage = ST_NOTES if tier == 1 else ST_ADDRESSEE
        tier += 1
        if m < 0:
            continue
        memcpy(s.q, clean, m)
        memcpy(s.qsrc, layout_src, m * sizeof(Src))  # (`_without_noise` keeps every offset)
        s.qlen = m
        _tokenise(s)
        s.left_out = 1
        s.defer_slips = s.ntok <= DROP_MAX_TOKENS and s.ntok > 1
        _read(d, s)
        s.defer_slips = 0


cdef inline bint _retry_marks(const Search* s, int* nothing, int* whole, int* loose) noexcept nogil:
    """Mark, for the retries, the words that match nothing at all, not even with a slip (a slip
    in a word still being typed is a guess too far to keep the word for), and the whole
    tokens. Whether some word is dead: of a street's form, matching nothing."""
    cdef int i
    cdef bint dead = False
    for i in range(s.ntok):
        # PERF: a word of a street's form that matches no token, looked at within every slip
        # allowed, is kept by every retry below (`_keep_street`), which therefore finds
        # nothing: only a respaced reading may ("Teststraat 999, Amsterdam": 65 -> 40 us)
        dead = dead or (s.tok[i].digits == 0 and s.word[i].nr == 0 and s.word[i].typo_done >= 2
                        and _street_form(s.q + s.tok[i].start, s.tok[i].len))
        nothing[i] = s.tok[i].digits == 0 and (s.word[i].nr == 0 or s.word[i].slips)
        whole[i] = s.word[i].exact >= 0
        # ... and, for leaving out, also the words that match only with a slip, with which
        # the query found nothing ("wirle de zwijgerlaan 5 cast": a slip in willem, whose
        # start, undone, too many words share to list)
        loose[i] = s.tok[i].digits == 0 and s.word[i].first_typo == 0
    return dead


cdef inline void _read_nearest_number(const Data* d, Search* s, const Tok* whole_toks, int ntyped) noexcept nogil:
    """The street is there, the number not (or not yet in the register: "oudegracht 98
    utrecht"): its nearest numbers, read as typed or with one slip in a word that matches
    nothing."""
    cdef int i
    for i in range(s.ntok):
        if _number_like(&s.tok[i]):
            s.near_number = 1
            s.max_pass = RETRY_PASSES
            s.stage = ST_NEAR
            _read(d, s)
            if s.ncand == 0 and s.near_glue >= 0 and not _spent(s):
                # "oude gracht 98 utrecht": the same, of the two words glued as the
                # register spells them (read as a respaced reading is: as typed)
                _near_glued(d, s, whole_toks, ntyped)
            s.near_number = 0
            break


cdef inline void _retry_readings(const Data* d, Search* s) noexcept nogil:
    """Nothing found as typed: respaced, without some words, once each word typed again, the
    nearest numbers, and the slips deferred, until one finds something."""
    cdef int nothing[MAXT]
    cdef int whole[MAXT]
    cdef int loose[MAXT]
    cdef Tok whole_toks[MAXT]
    cdef int ntyped
    cdef bint dead = _retry_marks(s, nothing, whole, loose)
    memcpy(whole_toks, s.tok, sizeof(Tok) * s.ntok)
    ntyped = s.ntok
    # PERF: a respaced reading is read as typed only; a retry without some words looks
    # for one slip only in words that match nothing as typed
    s.max_pass = 1
    # (in postcode mode a respaced reading must name the address with every word: "es
    # weg" for "esweg" is no reading of a postcode's Legroweg)
    s.pc_strict = 1
    s.stage = ST_RESPACED
    _respace_retry(d, s, nothing, whole)
    s.pc_strict = 0
    s.max_pass = RETRY_PASSES
    if s.ncand == 0 and s.ntok > 1 and not dead:
        s.stage = ST_DROPPED
        _drop_retry(d, s, nothing, loose, whole)
    if s.ncand == 0 and s.ntok > 1 and not dead and _without_repeats(s):
        # a word typed again ("damrak 1, amsterdam, amsterdam": a place line pasted twice,
        # "amsterdam damrak 1 amsterdam"): read once, the first time it was typed. After
        # the retries above, which leave out what a repeat may be right beside ("de pol
        # 24b de pol" is De Pol 24 in De Pol, a street of its place's name), and before
        # the nearest numbers and slips in whole words
        s.stage = ST_DROPPED
        _read(d, s)
        if s.ncand == 0:  # (what found something stays, as every reading's: engine.explain)
            memcpy(s.tok, whole_toks, sizeof(Tok) * ntyped)
            s.ntok = ntyped
    if s.ncand == 0 and s.ntok > 1 and not dead:
        _read_nearest_number(d, s, whole_toks, ntyped)
    if s.ncand == 0 and s.deferred and not dead:
        s.max_pass = NPASS
        s.stage = ST_DEFERRED
        _read(d, s)


cdef int _search(const Data* d, Search* s, int* out) noexcept nogil:
    """Run one query (already folded into s.q); write up to s.limit address ids to out."""
    cdef int n = 0, olen = s.qlen
    cdef bint marked
    cdef char layout[QBUF]
    cdef Src layout_src[QBUF]
    cdef char clean[QBUF]
    _reset_work(s)
    marked = _blank_layout(s, layout, layout_src)
    _tokenise(s)
    if s.ntok == 0:
        return 0
    if s.ntok == 1 and not s.has_focus and d.n_sa > 0 and not s.within.on:
        n = _stored_answer(d, s, out)
        if n >= 0:
            return n
    s.max_pass = NPASS
    s.near_number = 0
    s.huis = 0
    s.province = -1
    s.defer_slips = s.ntok <= DROP_MAX_TOKENS and s.ntok > 1
    s.deferred = 0
    s.stage = ST_GLUED
    if _glue_reading(d, s):
        _select(s, out, &n)
        return n
    _read_typed(d, s, marked, layout, olen, clean)
    _read_without_notes(d, s, marked, layout, layout_src, olen, clean)
    if s.ncand == 0 and s.ntok <= DROP_MAX_TOKENS:
        _retry_readings(d, s)
    _select(s, out, &n)
    return n


cdef void _near_glued(const Data* d, Search* s, const Tok* typed, int ntyped) noexcept nogil:
    """Read the nearest numbers of the query with typed tokens s.near_glue and the one after
    it glued (`_respace_retry` found that they make a registered word); the query stands as
    typed again when that finds nothing."""
    cdef Respace r
    cdef int m, olen = s.qlen, max_pass = s.max_pass
    memcpy(r.orig, s.q, olen)
    memcpy(r.src, s.qsrc, olen * sizeof(Src))
    memcpy(r.tok, typed, sizeof(Tok) * ntyped)
    r.n = ntyped
    r.olen = olen
    r.ncut = 0
    r.word = -1
    m = _respell(&r, s.near_glue, s.q, s.qsrc)
    if m < 0:
        return
    s.qlen = m
    _tokenise(s)
    s.max_pass = 1
    s.pc_strict = 1
    _read(d, s)
    s.pc_strict = 0
    s.max_pass = max_pass
    if s.ncand == 0:
        memcpy(s.q, r.orig, olen)
        memcpy(s.qsrc, r.src, olen * sizeof(Src))
        s.qlen = olen
        memcpy(s.tok, typed, sizeof(Tok) * ntyped)
        s.ntok = ntyped


cdef inline double _piece_weight(const Data* d, int32_t tid) noexcept nogil:
    """How likely a piece of a glued word is token tid: the log of its postings, plus one."""
    return log(<double>(d.v_post_start[tid + 1] - d.v_post_start[tid] + 1))


cdef int _segment(const Data* d, const char* w, int L, int letter_first, bint prefix_end,
                  bint split, int* cuts) noexcept nogil:
    """Cut the glued word w[:L] into the fewest registered words (each a whole token of 2+
    letters), walking the sorted token table from each cut (the range of tokens that start
    with w[i:j] only narrows as j grows, and ends the walk when empty). letter_first
    (LETTER_FIRST_*): whether the first piece may be, or is, one letter (a house letter glued
    between number and place: "8c" + "groningen"); prefix_end: when no such cutting exists,
    the last piece may be the start of a word (3+ letters, still being typed). Writes the end
    of each piece to cuts; returns the pieces, 0 when none. split: in two or more pieces, even
    when the word is one.

    Of the cuttings into as few pieces, the likeliest: the greatest sum of the log of each
    piece's streets and places (its postings), as a word-frequency model segments text.
    "capelleaandenyssel" is "capelle aan den yssel", not "capelle aan denys sel";
    "hamsterdam" after a number is "h amsterdam", not "hamster dam"; "ateteringen" is "a
    teteringen", not "at eteringen" (the letter counts as the word it is, when it is one)."""
    cdef int best[SEG_MAX + 1]
    cdef int prev[SEG_MAX + 1]
    cdef double score[SEG_MAX + 1]
    cdef double sc
    cdef int i, j, k, n = 0, pbest = SEG_MAX + 1, pprev = -1, end
    cdef int32_t lo, hi
    if L > SEG_MAX:
        return 0
    for i in range(L + 1):
        best[i] = SEG_MAX + 1
        score[i] = 0.0
    best[0] = 0
    if letter_first and L > 1:
        best[1] = 1
        prev[1] = 0
        _prefix_range(d, w, 1, &lo, &hi)
        if lo < hi and _tok_len(d, lo) == 1:
            score[1] = _piece_weight(d, lo)
    for i in range(L):
        if best[i] > SEG_MAX or best[i] >= MAXCUT + 2:
            continue
        if i + 2 > L or (i == 0 and letter_first == LETTER_FIRST_ONLY):
            continue
        # PERF: the tokens that start with the piece's first two letters are one known block
        # (of two: a piece may be two letters long)
        if not _block(d, w + i, 2, &lo, &hi):
            continue
        for j in range(i + 2, L + 1):
            # (from three letters on, within the smaller block of the first three)
            if j == i + 3:
                _within_block(d, w + i, 3, &lo, &hi)
            if not _may_start(d, w + i, j - i):
                break
            # (the range of a longer piece lies within [lo, hi) still)
            if not _first_within(d, lo, hi, w + i, j - i, &lo):
                break
            if _tok_len(d, lo) == j - i and best[i] + 1 <= best[j] and not (split and j - i == L):
                sc = score[i] + _piece_weight(d, lo)
                if best[i] + 1 < best[j] or sc >= score[j]:
                    best[j] = best[i] + 1
                    prev[j] = i
                    score[j] = sc
        else:
            if prefix_end and L - i >= 3 and best[i] + 1 < pbest:
                pbest = best[i] + 1
                pprev = i
    if best[L] <= SEG_MAX:
        end = L
    elif pprev >= 0:
        end = L
        best[L] = pbest
        prev[L] = pprev
    else:
        return 0
    n = best[L]
    k = n
    while k > 0:
        k -= 1
        cuts[k] = end
        end = prev[end]
    return n


cdef bint _glued_words(const char* w, const int* cuts, int pieces) noexcept nogil:
    """Are the pieces of w words a glued name holds: one of 5+ letters, the others of 3+ or
    GLUE_PARTICLES? A word cut into initials and scraps ("en hg elandlaan") is more likely a
    slip than words glued ("van hallstraat", "bergen op zoom")."""
    cdef int k, p = 0, n
    cdef bint long_one = False
    for k in range(pieces):
        n = cuts[k] - p
        long_one = long_one or n >= 5
        if n < 3 and not _in_list(_particle_ptr, _particle_len, _n_particle, w + p, n):
            return False
        p = cuts[k]
    return long_one


cdef bint _weak_reading(const Search* s) noexcept nogil:
    """Did the reading just read find only groups that its words match loosely: a word by its
    start, a registered street word not typed, a word out of order (text_pen of at least
    UNMATCHED_PEN; an everyday name or an abbreviation costs less)?"""
    cdef int i
    for i in range(s.npool):
        if s.pool[i].text_pen < UNMATCHED_PEN:
            return False
    return s.npool > 0


cdef bint _slipped_word(const Data* d, Search* s, int ti) noexcept nogil:
    """Is typed word ti, which starts no token, more likely a slip than words glued? When a
    token is one slip from it ("moleenstraat" is Molenstraat, not "mole en straat";
    "hendrikaan" Hendriklaan, not "hendrik aan"), and, when it is the last word (perhaps
    still being typed), when it starts a token with one slip undone ("tongelee" starts
    Tongelaer; it is not "tonge lee")."""
    cdef const char* w = s.q + s.tok[ti].start
    cdef int n = s.tok[ti].len
    if _one_slip_token(d, w, n):
        return True
    if ti != s.ntok - 1:
        return False
    _word_slips(d, s, ti)
    return s.slip_n[ti] > 0


cdef int _glue_spell(const Data* d, const Search* s, bint words, bint broad, int split, int letter,
                     char* buf, Src* bsrc, int* cut) noexcept nogil:
    """The query with its glued words cut (`_glue_reading`) into buf (where each byte came from
    into bsrc); its length, or -1 when
    no word is glued. broad: also cut the words of 8+ letters that start a registered word
    as typed but are two or more whole ones ("oudemolenweg"), when some word is glued. split
    > 0: the digits of the first number with words glued after it are a house number of that
    many digits and a numeric addition ("nassaustraat309enschede": 30-9); -1 when there are
    not more digits than that. words: 0 to cut only the letters glued to numbers. letter: how
    the letters glued to a number may start (`_segment`'s letter_first)."""
    cdef int cuts[SEG_MAX]
    cdef int i, k, p, m = 0, pieces, at, glued = 0, last, splits = 0
    cdef int32_t lo
    cdef bint starts
    cdef const Tok* t
    cdef const char* w
    cdef const Src* ws
    for i in range(s.ntok):
        t = &s.tok[i]
        w = s.q + t.start
        ws = s.qsrc + t.start
        last = i == s.ntok - 1
        pieces = 0
        cut[i] = 0
        at = t.digits
        if t.digits == 0 and t.len >= 5 and words:
            starts = _first_start(d, w, t.len, &lo)
            if (not starts or (broad and t.len >= 8)) and not _in_list(_region_ptr, _region_len, _n_region, w, t.len):
                pieces = _segment(d, w, t.len, LETTER_FIRST_NONE, last and not starts, starts, cuts)
                if pieces < 2 or not _glued_words(w, cuts, pieces):
                    pieces = 0
                cut[i] = not starts and pieces >= 2
                glued += cut[i]
        elif 0 < t.digits <= GLUED_DIGITS and (t.len - t.digits >= 5 or (
                t.len - t.digits >= 3 and not _addition_prefix(d, w + at, t.len - at))):
            # a registered word as typed is no number with words glued to it: the ordinals
            # "1ste", "8ste", "10de" (`engine.vocab.ORDINALS`)
            if _first_start(d, w, t.len, &lo) and _tok_len(d, lo) == t.len:
                pieces = 0
            else:
                pieces = _segment(d, w + at, t.len - at, letter, last, False, cuts)
            glued += pieces > 0
        if m + t.len + pieces + 3 >= QBUF - 2:
            return -1
        if m > 0:
            m = _put_space(buf, bsrc, m)
        if pieces == 0:
            m = _put_bytes(buf, bsrc, m, w, ws, t.len)
            continue
        if at > 0 and split > 0 and splits == 0:
            if at <= split:
                return -1
            m = _put_bytes(buf, bsrc, m, w, ws, split)
            m = _put_space(buf, bsrc, m)
            m = _put_bytes(buf, bsrc, m, w + split, ws + split, at - split)
            splits = 1
        else:
            m = _put_bytes(buf, bsrc, m, w, ws, at)
        p = 0
        for k in range(pieces):
            if k > 0 or (at > 0 and cuts[0] > 1):
                m = _put_space(buf, bsrc, m)
            m = _put_bytes(buf, bsrc, m, w + at + p, ws + at + p, cuts[k] - p)
            p = cuts[k]
    return m if glued else -1


cdef bint _glue_reading(const Data* d, Search* s) noexcept nogil:
    """Words typed without the spaces between them (issue 14: "vanhallstraat 12",
    "stationsstraat5bergenopzoom", "vanspeykstraat8cgroningen"): before anything else, each
    word of 5+ letters that starts no registered word, and the letters glued after a house
    number that are more than an addition has or start none ("6curk"), are cut into
    registered words (`_segment`), and the query so respelled is read as typed; when it finds
    something, that answers (a slip in one long word, "amalia van anhaltstraat" for
    "vanhallstraat", is a guess too far beside it), unless all it found matches loosely
    (`_weak_reading`) and a word cut is one slip from a registered word (`_slipped_word`). If
    not, the long words that are whole words glued are cut too ("oudemolenweg74maastricht");
    then, when the likeliest cutting of the letters glued after a number did not start with a
    house letter, the cutting that does ("luchthavenweg4adenhelder" is 4A + "den helder",
    not 4 + "aden helder"); then the number glued to words (of up to GLUED_DIGITS digits) is
    read as a house number (of at most 5) and a numeric addition (at most 4), the addition one
    digit, then two, and so on ("nassaustraat309enschede" is Nassaustraat 30-9,
    "velperweg139312arnhem" Velperweg 139-312). Otherwise the query stands as typed. True when it answered."""
    cdef char buf[QBUF]
    cdef char orig[QBUF]
    cdef Src bsrc[QBUF]
    cdef Src osrc[QBUF]
    cdef int cut[MAXT]
    cdef bint slipped
    cdef char first[QBUF]
    cdef int m, m0 = -1, broad, olen = s.qlen, max_pass = s.max_pass, tr, split = 0, digits = 0, i, mfirst = -1
    memcpy(orig, s.q, olen)
    memcpy(osrc, s.qsrc, olen * sizeof(Src))
    for i in range(s.ntok):
        if 2 <= s.tok[i].digits <= GLUED_DIGITS and s.tok[i].len > s.tok[i].digits:
            digits = s.tok[i].digits
            break
    for tr in range(LETTER_TRY + GLUED_DIGITS):
        broad = tr == 1
        if tr > LETTER_TRY:
            # a house number of at most 5 digits, an addition of at most 4 characters (BAG)
            split = digits - (tr - LETTER_TRY)
            if split < 1 or split < digits - 4:
                break
            if split > 5:
                continue
        m = _glue_spell(d, s, True, broad, split, LETTER_FIRST_ONLY if tr == LETTER_TRY else LETTER_FIRST_MAY,
                        buf, bsrc, cut)
        if tr == LETTER_TRY and (m < 0 or (m == mfirst and memcmp(buf, first, m) == 0)):
            continue   # no letter glued before the words, or the likeliest cutting had it
        if m < 0:
            break
        if tr == 1 and m == m0:
            continue
        if tr == 0:
            memcpy(first, buf, m)
            mfirst = m
        m0 = m
        memcpy(s.q, buf, m)
        memcpy(s.qsrc, bsrc, m * sizeof(Src))
        s.qlen = m
        _tokenise(s)
        s.max_pass = 1
        _read(d, s)
        if s.ncand > 0 and _weak_reading(s):
            # what the cut words found they match loosely: when a cut word is one slip from a
            # registered word, it is that word ("moleenstraat" is Molenstraat, not "mole en" +
            # "straat" of Kinderdijk in Molenlanden; "hekelaan" Hekkelaan, not Aan de Kleine
            # Hekel); the query goes on as typed. ("nieuwedijk", Nieuwe Dijk as typed, is no
            # loose reading.)
            memcpy(s.q, orig, olen)
            memcpy(s.qsrc, osrc, olen * sizeof(Src))
            s.qlen = olen
            _tokenise(s)
            slipped = False
            for i in range(s.ntok):
                if cut[i] and _slipped_word(d, s, i):
                    slipped = True
                    break
            if slipped:
                s.max_pass = max_pass
                s.ncand = 0
                break
            memcpy(s.q, buf, m)
            memcpy(s.qsrc, bsrc, m * sizeof(Src))
            s.qlen = m
            _tokenise(s)
            _read(d, s)
        s.max_pass = max_pass
        if s.ncand > 0:
            s.left_out = 1
            return True
        memcpy(s.q, orig, olen)
        memcpy(s.qsrc, osrc, olen * sizeof(Src))
        s.qlen = olen
        _tokenise(s)
    if m0 >= 0:
        # letters glued after a number are words, whatever else the query holds: it goes on from
        # them cut (slips, the nearest numbers: "kerkstraat12alphenaandenrijn", where house 12
        # is not registered). (A word that starts nothing may hold a slip instead.)
        m = _glue_spell(d, s, False, False, 0, LETTER_FIRST_MAY, buf, bsrc, cut)
        if m >= 0:
            memcpy(s.q, buf, m)
            memcpy(s.qsrc, bsrc, m * sizeof(Src))
            s.qlen = m
            _tokenise(s)
            s.left_out = 1
    return False


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
    s.focus_lat = d.a_lat[a] * MICRODEGREE
    s.focus_lon = d.a_lon[a] * MICRODEGREE
    s.cos_lat = cos(s.focus_lat * M_PI / 180.0)


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


cdef inline bint _is_word(const char* w, int n, const char* word) noexcept nogil:
    """Is w[:n] the NUL-terminated `word` (a literal: its length is measured, not written beside
    it)?"""
    return n == <int>strlen(word) and memcmp(w, word, n) == 0


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
        elif _is_word(s.q + t[i].start, t[i].len, b"holland") and i > 0 and drop[i - 1] == 2:
            if _is_word(s.q + t[i - 1].start, t[i - 1].len, b"noord"):
                p = d.prov_nh
            elif _is_word(s.q + t[i - 1].start, t[i - 1].len, b"zuid"):
                p = d.prov_zh
    return p


cdef struct Respace:
    # the state of `_respace_retry`: the query as typed, and the cuts of the word being split
    char orig[QBUF]
    Src src[QBUF]       # where each byte of orig came from (Search.qsrc)
    Tok tok[MAXT]
    int olen
    int n
    int cut[MAXCUT]     # offsets in token `word` where a space goes, ascending
    int ncut
    int word
    int whole_word      # r.word is a whole token itself: cut it only into two whole tokens
    int tries
    int probes          # prefix searches left for cutting words


cdef int _respell(const Respace* r, int glue, char* out, Src* osrc) noexcept nogil:
    """The typed tokens joined by single spaces, with the cuts of r.word made (r.ncut spaces
    inserted) or, for glue >= 0, token glue glued to the next, into out (where each byte came
    from into osrc). Returns the length, or -1 when it would not fit the query buffer."""
    cdef int j, c, m = 0, a, prev
    for j in range(r.n):
        if m + r.tok[j].len + r.ncut + 1 >= QBUF - 2:
            return -1
        if j > 0 and j != glue + 1:
            m = _put_space(out, osrc, m)
        a = r.tok[j].start
        prev = 0
        if j == r.word:
            for c in range(r.ncut):
                m = _put_bytes(out, osrc, m, r.orig + a + prev, r.src + a + prev, r.cut[c] - prev)
                m = _put_space(out, osrc, m)
                prev = r.cut[c]
        m = _put_bytes(out, osrc, m, r.orig + a + prev, r.src + a + prev, r.tok[j].len - prev)
    return m


cdef bint _try_respelled(const Data* d, Search* s, Respace* r, int glue) noexcept nogil:
    """Read the query respelled (`_respell`) instead; True when that finds something."""
    cdef int m = _respell(r, glue, s.q, s.qsrc)
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
    if not _may_start(d, w, n):
        return 0
    if n >= 2:
        if not _first_start(d, w, n, &lo):
            return 0
    else:
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


cdef inline int _digits_cut(const Data* d, Respace* r, int i, int n_nothing) noexcept nogil:
    """Where to cut token i between digits and what is glued to them: a number from the word
    after it ("kerkstraat 12utrecht": 5+ letters are more than an addition has, and they start
    a registered word); a registered postcode from the place ("9711ljgroningen"); the house
    number from a registered postcode, where a pasted address lost its line break ("herestraat
    129711 lj"). 0: nowhere."""
    cdef const Tok* t = &r.tok[i]
    cdef const char* w = r.orig + t.start
    cdef int c = 0, p, L, number
    if 0 < t.digits <= 5 and t.len - t.digits >= 5 and n_nothing == 0 and _probe(
            d, r, w + t.digits, t.len - t.digits) > 0:
        c = t.digits
    elif t.digits == 4 and t.len >= 9 and _pc_find(d, w, w + 4) >= 0 and _probe(d, r, w + 6, t.len - 6) > 0:
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
    return c


cdef inline bint _respace_digits(const Data* d, Search* s, Respace* r, int n_nothing) noexcept nogil:
    """Read with digits cut from what is glued to them (`_digits_cut`); True when that finds
    something."""
    cdef int i, c
    for i in range(r.n):
        if r.tries >= RESPACE_TRIES:
            break
        c = _digits_cut(d, r, i, n_nothing)
        if c > 0:
            r.word = i
            r.cut[0] = c
            r.ncut = 1
            if _try_respelled(d, s, r, -1):
                return True
            r.ncut = 0
            r.word = -1
    return False


cdef inline bint _respace_glued(const Data* d, Search* s, Respace* r, int n_nothing) noexcept nogil:
    """Read with two typed words glued where together they start a registered word ("kerk
    straat"); True when that finds something."""
    cdef int i, L, c
    cdef char both[QBUF]
    for i in range(r.n - 1):
        if r.tries >= RESPACE_TRIES or n_nothing > 0:
            break
        if r.tok[i].digits or r.tok[i + 1].digits:
            continue
        L = r.tok[i].len + r.tok[i + 1].len
        memcpy(both, r.orig + r.tok[i].start, r.tok[i].len)
        memcpy(both + r.tok[i].len, r.orig + r.tok[i + 1].start, r.tok[i + 1].len)
        c = _probe(d, r, both, L)
        if c > 0 and _try_respelled(d, s, r, i):
            return True
        if c == 2 and s.near_glue < 0:
            # glued, the two make a registered word ("oude gracht" is Oudegracht) and the
            # reading found nothing: perhaps not the house number typed
            s.near_glue = i
    return False


cdef inline bint _respace_initials(const Data* d, Search* s, Respace* r, const int* nothing,
                                   const bint* common, int n_nothing) noexcept nogil:
    """Initials typed glued ("jp heijestraat", "hje wenckebachweg", "aj ernststraat"): the
    register spells them apart (J.P., H.J.E.) or in full (Jan Pieter, Arent Janszoon), each
    letter the start of a word. The first word of 2 or 3 letters right before a word of a
    street's form, and not right after a number (where it is a part of the house: "damrak 1 hs
    amsterdam") nor a word of many streets (INITIALS_POSTINGS), is read so, once; True when
    that finds something."""
    cdef int i, c
    for i in range(r.n - 1):
        if r.tries >= RESPACE_TRIES:
            break
        if r.tok[i].digits or not 2 <= r.tok[i].len <= 3 or r.tok[i + 1].digits or common[i] \
                or (i > 0 and r.tok[i - 1].digits) or n_nothing > nothing[i] + nothing[i + 1] \
                or not _street_form(r.orig + r.tok[i + 1].start, r.tok[i + 1].len):
            continue
        r.word = i
        r.ncut = r.tok[i].len - 1
        for c in range(r.ncut):
            r.cut[c] = c + 1
        if _try_respelled(d, s, r, -1):
            return True
        r.ncut = 0
        r.word = -1
        break
    return False


cdef inline bint _respace_cut(const Data* d, Search* s, Respace* r, const int* nothing,
                              const int* whole, int n_nothing) noexcept nogil:
    """Read with one typed word cut into words that are (`_cut_word`), the fewest pieces first;
    True when that finds something."""
    cdef int i, pieces
    for i in range(r.n):
        if r.tok[i].digits or r.tok[i].len < 4 or n_nothing > nothing[i]:
            continue
        r.word = i
        r.whole_word = whole[i]
        # the fewest pieces first: "burgemeestercreutzlaan" is two words, not "bu rg ..."
        for pieces in range(2, 3 if whole[i] else MAXCUT + 2):
            r.ncut = 0
            if _cut_word(d, s, r, 0, pieces):
                return True
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
    cdef int i, n_nothing = 0
    cdef int32_t e
    cdef bint common[MAXT]
    r.n = s.ntok
    r.olen = s.qlen
    r.ncut = 0
    r.word = -1
    r.whole_word = 0
    r.tries = 0
    r.probes = RESPACE_PROBES
    memcpy(r.orig, s.q, s.qlen)
    memcpy(r.src, s.qsrc, s.qlen * sizeof(Src))
    memcpy(r.tok, s.tok, sizeof(Tok) * r.n)
    for i in range(r.n):
        n_nothing += nothing[i]
        # a whole word of many streets ("van", "jan", "dr", "de"), never initials glued
        e = s.word[i].exact
        common[i] = e >= 0 and d.v_post_start[e + 1] - d.v_post_start[e] > INITIALS_POSTINGS
    if (_respace_digits(d, s, &r, n_nothing) or _respace_glued(d, s, &r, n_nothing)
            or _respace_initials(d, s, &r, nothing, common, n_nothing)
            or _respace_cut(d, s, &r, nothing, whole, n_nothing)):
        return
    memcpy(s.q, r.orig, r.olen)
    memcpy(s.qsrc, r.src, r.olen * sizeof(Src))
    s.qlen = r.olen
    memcpy(s.tok, r.tok, sizeof(Tok) * r.n)
    s.ntok = r.n


cdef bint _without_repeats(Search* s) noexcept nogil:
    """Leave out of s.tok each word (no digits) typed again after its first time; whether one
    was."""
    cdef int i, j, k = 0
    cdef bint again
    for i in range(s.ntok):
        again = False
        if s.tok[i].digits == 0:
            for j in range(k):
                if (s.tok[j].digits == 0 and s.tok[j].len == s.tok[i].len
                        and memcmp(s.q + s.tok[j].start, s.q + s.tok[i].start, s.tok[i].len) == 0):
                    again = True
                    break
        if not again:
            s.tok[k] = s.tok[i]
            k += 1
    if k == s.ntok:
        return False
    s.ntok = k
    return True


cdef bint _street_form(const char* w, int n) noexcept nogil:
    """Does the word end as a street name does (STREET_SUFFIXES), with 3+ letters before it?"""
    cdef int i, m
    for i in range(_n_suffix):
        m = _suffix_len[i]
        if n >= m + 3 and memcmp(w + n - m, _suffix_ptr[i], m) == 0:
            return True
    return False


cdef void _keep_street(const Search* s, const Tok* t, int n, int* drop, int* slipped) noexcept nogil:
    """Never leave out the street the person typed (issue 14: a wrong street is worse than no
    answer; "Teststraat 999, Amsterdam" is no Prinsengracht 999, "Mozdrubstraat 1, De Wilgen"
    no street De Wilgen): a word of a street's form (`_street_form`), and the words right
    before the house number when all of them would be left out ("zorplim 12 utrecht"), stay,
    so that the retry finds the street within a slip or nothing."""
    cdef int i, k = -1, j
    cdef bint all_gone = True
    for i in range(1, n):
        if _number_like(&t[i]) and t[i - 1].digits == 0 and not (t[i].digits == 4 and t[i].len == 6):
            k = i
            break
    j = k - 1
    while k > 0 and j >= 0 and t[j].digits == 0:
        if not drop[j] and not slipped[j]:
            all_gone = False
        j -= 1
    for i in range(n):
        if t[i].digits == 0 and ((k > 0 and all_gone and j < i < k) or _street_form(s.q + t[i].start, t[i].len)):
            drop[i] = 0
            slipped[i] = 0


cdef inline bint _postcode_at(const Tok* t, const int* drop, int n, int k) noexcept nogil:
    """Do the kept tokens from k on start with a postcode: 1234ab, or 1234 and ab?"""
    return t[k].digits == 4 and (t[k].len == 6 or (t[k].len == 4 and k + 1 < n and drop[k + 1] == 0
                                                   and t[k + 1].digits == 0 and t[k + 1].len == 2))


cdef inline bint _huis(const char* w, int n) noexcept nogil:
    """Is w[:n] "hs" or "huis" (folded), which people type for the register's addition H, the
    whole house or its ground floor ("damrak 11 hs", "11-huis"; `_drop_retry`, `Search.huis`)?"""
    return _is_word(w, n, b"hs") or _is_word(w, n, b"huis")


cdef inline bint _floor_word(const char* q, const Tok* t) noexcept nogil:
    """Is token t of query q a word for a floor or part of a house (FLOOR_WORDS: "hoog", "etage")?"""
    return t.digits == 0 and _in_list(_floor_ptr, _floor_len, _n_floor, q + t.start, t.len)


cdef int _ordinal(const char* w, int n) noexcept nogil:
    """The floor an ordinal says ("tweede", "2e", "2de", "1ste": ORDINALS; "3rd", "4th"; the
    Roman "ii" .. "iv"; 1..10 written as a word, 1..99 in digits), or 0."""
    cdef int i = _list_index(_ordinal_ptr, _ordinal_len, _n_ordinal, w, n), v = 0, k = 0
    if i >= 0:
        return i + 1
    if _is_word(w, n, b"ii"):
        return 2
    if _is_word(w, n, b"iii"):
        return 3
    if _is_word(w, n, b"iv"):
        return 4
    while k < n and k < 3 and 48 <= w[k] <= 57:
        v = v * 10 + w[k] - 48
        k += 1
    if k == 0 or k > 2 or v == 0:
        return 0
    # the ordinal's ending: 1e, 1ste, 2de; 1st, 2nd, 3rd, 4th
    w += k
    n -= k
    if (_is_word(w, n, b"e") or _is_word(w, n, b"ste") or _is_word(w, n, b"de") or _is_word(w, n, b"st")
            or _is_word(w, n, b"nd") or _is_word(w, n, b"rd") or _is_word(w, n, b"th")):
        return v
    return 0


cdef bint _floor_reading(const Data* d, Search* s, const Tok* saved, const int* drop, int n) noexcept nogil:
    """The query with the first ordinal typed right after a house number read as that number,
    and the floor words after it left out (`_drop_retry`); the words left out as matching
    nothing stay left out, a province or country at the end stays. True when it found
    something."""
    cdef int i, j, at = s.qlen + 1, floor = 0, floor_at = -1
    for i in range(1, n):
        if drop[i - 1] == 0 and _number_like(&saved[i - 1]) and not _postcode_at(saved, drop, n, i - 1):
            floor = _ordinal(s.q + saved[i].start, saved[i].len)
            if floor:
                floor_at = i
                break
    if floor_at < 0 or at + 2 >= QBUF:
        return False
    if floor >= 10:
        s.q[at] = <char>(48 + floor // 10)
        s.q[at + 1] = <char>(48 + floor % 10)
    else:
        s.q[at] = <char>(48 + floor)
    # ... each digit from the whole ordinal typed
    s.qsrc[at].a = s.qsrc[at + 1].a = s.qsrc[saved[floor_at].start].a
    s.qsrc[at].b = s.qsrc[at + 1].b = s.qsrc[saved[floor_at].start + saved[floor_at].len - 1].b
    j = 0
    i = 0
    while i < n:
        if i == floor_at:
            s.tok[j] = saved[i]
            s.tok[j].start = at
            s.tok[j].len = s.tok[j].digits = 2 if floor >= 10 else 1
            s.tok[j].value = floor
            j += 1
            i += 1
            while i < n and _floor_word(s.q, &saved[i]):
                i += 1
            continue
        if drop[i] != 1:
            s.tok[j] = saved[i]
            j += 1
        i += 1
    s.ntok = j
    s.stage = ST_STRIPPED
    _read(d, s)
    return s.ncand > 0


cdef inline int _drop_marks(const Search* s, const Tok* saved, int n, const int* nothing, const int* loose,
                            int* drop, int* slipped) noexcept nogil:
    """Mark in drop the words to leave out first: those that match nothing at all, that only
    say a number follows, that label a form's field, and a floor typed after the postcode;
    slipped the words that match only with a slip; but not the words of the street
    (`_keep_street`). How many are left out."""
    cdef int i, j = 0, housed = 0, nn = 0
    for i in range(n):
        drop[i] = nothing[i] or (i + 1 < n and saved[i].digits == 0 and saved[i + 1].digits > 0
                                 and _in_list(_number_ptr, _number_len, _n_number,
                                              s.q + saved[i].start, saved[i].len)) or (
            saved[i].digits == 0 and _in_list(_label_ptr, _label_len, _n_label,
                                              s.q + saved[i].start, saved[i].len))
        slipped[i] = loose[i]
    # a floor typed after the postcode ("herestraat 12 9711 lj 3 hoog"): a number with a
    # floor word after it, after a postcode and a house number, says no house number ("zoom 15
    # 34 hs": Zoom 15 is a street of Lelystad); with no number before the postcode it is the
    # house number ("1012lg 11 hs")
    for i in range(n - 1):
        if j and housed and _number_like(&saved[i]) and _floor_word(s.q, &saved[i + 1]):
            drop[i] = drop[i + 1] = 1
        if _postcode_at(saved, drop, n, i):
            j += 1
        elif not j and _number_like(&saved[i]):
            housed += 1
    _keep_street(s, saved, n, drop, slipped)
    for i in range(n):
        nn += drop[i]
    return nn


cdef inline int _drop_regions(const Search* s, const Tok* saved, int n, int* drop) noexcept nogil:
    """Mark in drop (as 2) the country or province words that end the query and the country
    words that open it, at most 3 in all; how many."""
    cdef int i = n - 1, nr = 0
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
    return nr


cdef inline bint _read_dropped(const Data* d, Search* s, const Tok* saved, int n, const int* drop,
                               const int* slipped, int nn, int nr, int nl) noexcept nogil:
    """Read without the words left out (nn of them), then also without the regions (nr), then
    also without the words that match only with a slip (nl). Whether one found something."""
    cdef int i, j, tr, huis = 0
    # "hs" or "huis" after the number, left out as a word that matches nothing, still says the
    # house's addition H (`Search.huis`), as when left out with its parts below
    for i in range(1, n):
        if drop[i] == 1 and _number_like(&saved[i - 1]) and _huis(s.q + saved[i].start, saved[i].len):
            huis = 1
    for tr in range(3):
        if ((tr == 0 and nn == 0) or (tr == 1 and nr == 0) or (tr == 2 and nl == 0)
                or nn + (nr if tr > 0 else 0) + (nl if tr > 1 else 0) >= n):
            continue
        j = 0
        for i in range(n):
            if (drop[i] == 0 or (drop[i] == 2 and tr == 0)) and not (tr == 2 and drop[i] == 0 and slipped[i] != 0):
                s.tok[j] = saved[i]
                j += 1
        s.ntok = j
        if tr == 1:
            # a province left out still says where: its streets first ("kerkstraat 1 bergen
            # limburg" is Bergen L, not Bergen op Zoom)
            s.province = _typed_province(d, s, saved, drop, n)
            if s.province >= 0:
                s.stage = ST_PROVINCE
                s.huis = huis
                _read(d, s)
                s.stage = ST_DROPPED
                s.province = -1
                if s.ncand > 0:
                    return True  # (s.huis stays with the reading that found it: engine.explain)
                s.huis = 0
        s.huis = huis
        _read(d, s)
        if s.ncand > 0:
            return True  # (s.huis stays with the reading that found it: engine.explain)
        s.huis = 0
    return False


cdef inline bint _read_number_bare(const Data* d, Search* s, const Tok* saved, int n, const int* drop,
                                   const int* whole, int k) noexcept nogil:
    """Read house number k without the letters and additions typed with it, which this house
    may not have: first without "hs" or "huis" only, then without every part. Whether one found
    something."""
    cdef const Tok* t = &saved[k]
    cdef int i, j, last = k, huis_apart = 0, parts_apart = 0
    # the parts that follow it: digits, one or two letters, or a short word no token is
    cdef bint stripped = t.len > t.digits
    cdef bint huis = stripped and _huis(s.q + t.start + t.digits, t.len - t.digits)
    i = k + 1
    while i < n and i <= k + MAXP:
        if not drop[i]:
            if _postcode_at(saved, drop, n, i):
                break
            # (a floor word, or an ordinal right after the number, is a part too: "damrak 11
            # tiende etage" is 11's)
            if (saved[i].len > 4 or not (saved[i].digits == saved[i].len or saved[i].len <= 2
                                         or not whole[i])) and not _floor_word(s.q, &saved[i]) and not (
                    i == k + 1 and _ordinal(s.q + saved[i].start, saved[i].len)):
                break
            stripped = 1
            parts_apart += 1
            if _huis(s.q + saved[i].start, saved[i].len):
                huis = 1
                huis_apart += 1
            last = i
        i += 1
    if huis_apart and (t.len > t.digits or parts_apart > huis_apart):
        # first without "hs" or "huis" only: the letter and the other parts typed still
        # count ("van ostadestraat 107a hs": 107A-H, not 107-1)
        j = 0
        for i in range(n):
            if drop[i] == 0 and not (k < i <= last and _huis(s.q + saved[i].start, saved[i].len)):
                s.tok[j] = saved[i]
                j += 1
        s.ntok = j
        s.stage = ST_STRIPPED
        s.huis = 1
        _read(d, s)
        if s.ncand > 0:
            return True  # (s.huis stays with the reading that found it: engine.explain)
        s.huis = 0
    if stripped:
        j = 0
        for i in range(n):
            if drop[i] == 0 and not (k < i <= last):
                s.tok[j] = saved[i]
                if i == k:
                    s.tok[j].len = saved[i].digits
                j += 1
        s.ntok = j
        s.stage = ST_STRIPPED
        s.huis = huis   # an addition H is what "hs" or "huis" said (`_suffix_pen`)
        _read(d, s)
        if s.ncand > 0:
            return True  # (s.huis stays with the reading that found it: engine.explain)
        s.huis = 0
    return False


cdef inline bint _read_numbers_bare(const Data* d, Search* s, const Tok* saved, int n, const int* drop,
                                    const int* whole) noexcept nogil:
    """`_read_number_bare` for the last two numbers typed. Whether it found something."""
    cdef int i, k = n - 1, numbers = 0, numbers_typed = 0
    for i in range(n):
        numbers_typed += drop[i] == 0 and _number_like(&saved[i])
    while k >= 0 and numbers < 2:
        if drop[k] or not _number_like(&saved[k]) or (_postcode_at(saved, drop, n, k) and numbers_typed > 1):
            # (a postcode beside the house number is no number with an addition: the postcode
            # retry reads it; "tolhuis 1233hs" alone is house 1233 with HS)
            k -= 1
            continue
        numbers += 1
        if _read_number_bare(d, s, saved, n, drop, whole, k):
            return True
        k -= 1
    return False


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
    cdef int drop[MAXT]
    cdef int slipped[MAXT]
    cdef int n = s.ntok, i, nn, nr, nl = 0
    memcpy(saved, s.tok, sizeof(Tok) * n)
    nn = _drop_marks(s, saved, n, nothing, loose, drop, slipped)
    nr = _drop_regions(s, saved, n, drop)
    for i in range(n):
        if drop[i] == 0 and slipped[i] != 0:
            nl += 1
    # an ordinal after the house number is the floor: read as its number first, the floor words
    # after it left out ("damrak 11 tweede etage", "1ste verdieping": as "damrak 11 2" reads)
    if _floor_reading(d, s, saved, drop, n):
        return
    if _read_dropped(d, s, saved, n, drop, slipped, nn, nr, nl):
        return
    if _read_numbers_bare(d, s, saved, n, drop, whole):
        return
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
                and saved[i].digits <= 5 and 1 <= saved[i].value <= NUMBER_MAX):
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
    # each byte of a variant from the byte of the typed postcode it stands in for
    memcpy(s.qsrc + at, s.qsrc + saved[k].start, 4 * sizeof(Src))
    memcpy(s.qsrc + at + 4, s.qsrc + (saved[k].start + 4 if last == k else saved[last].start), 2 * sizeof(Src))
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
        s.stage = ST_PC_SLIP
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
    s.stage = ST_PC_AWAY
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


DEF HELD_WALK = 4096    # postings walked to tell whether some group holds the words as typed

cdef bint _held_as_typed(const Data* d, const Search* s) noexcept nogil:
    """Does some group hold every word of an interpretation as the whole token it is typed as
    (the words all are: `_whole_words_and_number`), and each part after the number that is a
    whole token too, but a first one of one letter (the house letter: "101-h")? ("westerbaan
    37 's-g": read as house 37 with the parts s and g, Westerbaan would hold the words; but no
    Westerbaan is in a place of a word g, where Westerbaenstraat 37, 's-Gravenhage sounds like
    it.) Walks the postings of each one's rarest word, skipping by the whole-token signature
    beside them; True, as if held, past HELD_WALK postings."""
    cdef int ii, wi, j, best, n, ti
    cdef int held[MAXT]
    cdef int64_t p, pe
    cdef int32_t g, x
    cdef uint64_t need
    cdef const Interp* it
    cdef bint all_in
    for ii in range(s.ninterp):
        it = &s.interp[ii]
        if it.pc_lo >= 0 or it.nwords == 0:
            continue
        n = 0
        for wi in range(it.nwords):
            held[n] = it.words[wi]
            n += 1
        for wi in range(it.nparts):
            ti = it.part_tok[wi]
            if it.part_off[wi] == 0 and (s.tok[ti].len >= 2 or wi > 0) and s.tok[ti].digits == 0 \
                    and s.word[ti].exact >= 0:
                held[n] = ti
                n += 1
        best = -1
        need = 0
        for wi in range(n):
            x = s.word[held[wi]].exact
            if x < 0:      # (a number among the words that is no token)
                best = -1
                break
            need |= (<uint64_t>1) << _xsig_bit(s.q + s.tok[held[wi]].start, s.tok[held[wi]].len)
            if best < 0 or d.v_post_start[x + 1] - d.v_post_start[x] < \
                    d.v_post_start[s.word[best].exact + 1] - d.v_post_start[s.word[best].exact]:
                best = held[wi]
        if best < 0:
            continue
        p = d.v_post_start[s.word[best].exact]
        pe = d.v_post_start[s.word[best].exact + 1]
        if pe - p > HELD_WALK:
            return True
        while p < pe:
            if d.v_post_xsig[p] & need == need:
                g = d.v_post[p]
                all_in = True
                for wi in range(n):
                    x = s.word[held[wi]].exact
                    for j in range(d.g_tok_start[g], d.g_tok_start[g + 1]):
                        if d.g_rec[j].tok == x:
                            break
                    else:
                        all_in = False
                        break
                if all_in:
                    return True
            p += 1
    return False


cdef bint _weak_sounds(const Search* s) noexcept nogil:
    """Did the sound-alikes found cost more than a slip of a key in one word ("hreestraat 12":
    Van Reesstraat, its Van not typed, sounds like it; Herestraat is a slip from it)? Then
    the slips are looked for too, beside them (the pass after keeps them), and the two kinds
    compete on what they cost; else the sound-alikes answer ("agterweg": Achterweg, not
    Asterweg, a slip from it)."""
    cdef int i
    for i in range(s.npool):
        if s.pool[i].text_pen <= TYPO_PEN:
            return False
    return True


cdef bint _needed_by_all(const Search* s, int ti) noexcept nogil:
    """Is token ti a word of every interpretation (none of them a postcode's)?"""
    cdef int ii, wi
    cdef bint has
    if s.ninterp == 0:
        return False
    for ii in range(s.ninterp):
        if s.interp[ii].pc_lo >= 0:
            return False
        has = False
        for wi in range(s.interp[ii].nwords):
            if s.interp[ii].words[wi] == ti:
                has = True
                break
        if not has:
            return False
    return True


cdef inline bint _looks_at(const Search* s, int ti, int pass_, bint unmatched) noexcept nogil:
    """Does pass pass_ look up word ti (beside the words every interpretation needs that match
    nothing)? One slip: only in a word that matches nothing as typed. A sound-alike: of a word
    that matches nothing as typed; when none does (`unmatched` false), of every word ("ugo de
    grootstraat 2 den haag": Hugo), but in a retry not of a whole token as typed (a street
    typed whole is not replaced by one that sounds like it while the retries may still find
    it: "kerkstraat 14-h haarlem, nederland" is Kerkstraat 14), nor of the last word, still
    being typed, after another word ("maastr 19 leid": the sound-alikes of the start "leid",
    which the sound of many words starts with, spent the scan before Maasstraat 19, Leiden,
    a sound-alike of "maastr", was reached). PERF: not of the words that match as typed
    beside one that matches nothing ("moleweg 62 zeist"): their sound-alikes, which may start
    otherwise (`_need_mask`), would take from the scan the filter of their first letters and
    add little."""
    cdef int i
    if pass_ == PASS_SLIP:
        return s.word[ti].first_typo == 0
    if pass_ == PASS_SOUND:
        if s.word[ti].first_typo == 0:
            return True
        if unmatched or not (s.max_pass > RETRY_PASSES or s.word[ti].exact < 0):
            return False
        if ti == s.ntok - 1 and s.word[ti].exact < 0:
            for i in range(ti):
                if s.tok[i].digits == 0:
                    return False
        return True
    return True


cdef bint _unmatched(const Search* s) noexcept nogil:
    """Does a word of letters of some interpretation match nothing as typed?"""
    cdef int ii, wi, ti
    for ii in range(s.ninterp):
        for wi in range(s.interp[ii].nwords):
            ti = s.interp[ii].words[wi]
            if s.tok[ti].digits == 0 and s.word[ti].first_typo == 0:
                return True
    return False


cdef inline int _look(const Data* d, Search* s, int ti, int pass_) noexcept nogil:
    """What pass pass_ looks up for word ti: its sound-alikes (once), or its slips (one, or two
    in the last pass); how many ranges that added (the slips: 1 when it looked further)."""
    if pass_ == PASS_SOUND:
        if s.word[ti].sound_done:
            return 0
        s.word[ti].sound_done = 1
        return _add_sounds(d, s, ti)
    return _typo_ranges(d, s, ti, 2 if pass_ == PASS_TWO else 1)


cdef void _passes(const Data* d, Search* s) noexcept nogil:
    """Score the interpretations; when nothing is found, again with slips of a key allowed."""
    cdef int ii, wi, pass_, added, ti, max_pass = s.max_pass, npass = 0, scored = 0, deferred = 0
    cdef int i, nkept = 0
    cdef bint hopeless, defer, unmatched
    cdef uint64_t looked[NPASS]  # the trace's: per pass, the tokens whose slips were looked up
    cdef Cand* kept = NULL  # what weak sound-alikes found (`_weak_sounds`; PERF: rare, off the stack)
    s.spent = 0
    if _spent(s):
        # the query's work budget is spent: this reading is not scored (the readings before
        # it found nothing, or it would not be read), so it finds nothing either
        s.npool = 0
        s.ncand = 0
        if s.trace != NULL:
            looked[0] = 0
            _trace_reading(s, looked, 0, 0, 0)
        return
    if s.area and s.max_pass > RETRY_PASSES:
        # within a postcode being typed, slips only in words that match nothing as typed
        # ("kerkstraat 12 2011" is no Parkstraat in 2011, but Kerkstraat near it)
        s.max_pass = RETRY_PASSES
    defer = s.max_pass > RETRY_PASSES and s.defer_slips and _whole_words_and_number(s)
    for pass_ in range(s.max_pass):
        if defer and (pass_ == PASS_SLIP or (pass_ == PASS_SOUND and _held_as_typed(d, s))):
            # "kerkstraat 101-h amsterdam", "herestraat 200 groningen": every word is a whole
            # token as typed, and the house may not have the letter or addition typed
            # (_drop_retry), or the street not the number (near_number), more likely than a
            # slip in one of those words (Van der Pekstraat 101-H, Grote Beerstraat 200), or,
            # where some street holds every word so, than a word that sounds like it
            # ("kouwenhoven 3038 zeist": no Kouwenhoven in Zeist; Couwenhoven 3038 is)
            s.deferred = 1
            deferred = 1
            break
        npass += 1
        looked[pass_] = 0
        s.typo_mode = pass_ > 0
        if pass_ > 0:
            # nothing found: look for the words that sound like the ones typed, then slips of a
            # key, the closest first: one edit in the words that match nothing at all, then one
            # edit in every word, then two in long words
            added = 0
            # PERF: first the words that match nothing yet and that every interpretation needs:
            # when one of them still matches nothing, no interpretation can find anything in
            # this pass; it is not scored, and the slips of the words that match something
            # already are not looked up ("Drubzoryteplein 24, Westerhaar-Vriezenveensewijk":
            # two slips in the place's words are no use). The words that match nothing, or only
            # as the start of a word with a slip, still are: what the retries leave out
            # depends on whether they match with a slip.
            hopeless = False
            for ti in range(s.ntok):
                if s.word[ti].nr == 0 and (pass_ != PASS_SLIP or s.word[ti].first_typo == 0) \
                        and _needed_by_all(s, ti):
                    looked[pass_] |= (<uint64_t>1) << ti
                    added += _look(d, s, ti, pass_)
                    if s.word[ti].nr == 0:
                        hopeless = True
                        break
            unmatched = pass_ == PASS_SOUND and _unmatched(s)
            for ii in range(s.ninterp):
                for wi in range(s.interp[ii].nwords):
                    ti = s.interp[ii].words[wi]
                    if _looks_at(s, ti, pass_, unmatched):
                        if hopeless and s.word[ti].nr > 0 and not s.word[ti].slips:
                            continue
                        looked[pass_] |= (<uint64_t>1) << ti
                        added += _look(d, s, ti, pass_)
            if added == 0 or hopeless:
                if s.ncand > 0:
                    break   # what the sound-alikes found (`_weak_sounds`): nothing more here
                continue
        scored |= 1 << pass_
        s.floor = -1e30
        s.min_pen = 0
        s.tok_pen = 0
        s.considered = 0
        s.pool_cap = s.limit + 1 if s.limit + 1 < POOL else POOL
        s.npool = 0
        s.ncand = 0
        for ii in range(s.ninterp):
            if s.interp[ii].pc_lo >= 0:
                _collect_pc(d, s, ii)
            else:
                _scan_text(d, s, ii)
                if s.considered >= MAX_CONSIDER:
                    s.spent |= SPENT_CONSIDER
        _collect_text(d, s)
        if nkept and _spent(s):
            # a pass after weak sound-alikes that spent the work budget before it walked every
            # group it was to keeps what they found beside its own (their groups are among its
            # own, at the same score or better: "heerre 209a heer" found Heerenweg 209A as a
            # sound-alike, then the slips' pass spent the budget on the groups of Heerenveen and
            # Heerde and answered nothing)
            for i in range(nkept):
                _cand_add(s, kept[i].score, kept[i].addr, kept[i].key, kept[i].interp)
        # weak sound-alikes leave the slips to compete with them, unless the work budget is
        # spent: a pass after would find nothing and lose them ("hamsterdam 41 vels": the scan of
        # the groups of Amsterdam, a sound-alike of the word, spends it)
        if s.ncand > 0 and not (pass_ == PASS_SOUND and pass_ + 1 < s.max_pass and _weak_sounds(s)
                                and not _spent(s)):
            break
        if pass_ == PASS_SOUND and s.ncand > 0:
            kept = <Cand*>malloc(s.ncand * sizeof(Cand))
            if kept != NULL:
                nkept = s.ncand
                memcpy(kept, s.cand, nkept * sizeof(Cand))
    free(kept)
    if s.trace != NULL:
        _trace_reading(s, looked, npass, scored, deferred)
    s.max_pass = max_pass


cdef void _trace_reading(Search* s, const uint64_t* looked, int npass, int scored,
                         int deferred) noexcept nogil:
    """Keep the reading just scored in the trace (Index.trace): its tokens, interpretations,
    flags, the passes run and what they found, and the budgets spent by its end. PERF: called
    once a reading, and only when tracing."""
    cdef TraceRec* grown
    cdef TraceRec* r
    cdef int cap
    cdef int64_t now = _now_ns()
    if s.ntrace == s.trace_cap:
        cap = s.trace_cap * 2 if s.trace_cap * 2 < TRACE_MAX else TRACE_MAX
        grown = NULL
        if cap > s.trace_cap:
            grown = <TraceRec*>realloc(s.trace, cap * sizeof(TraceRec))
        if grown == NULL:
            s.trace_lost += 1
            return
        s.trace = grown
        s.trace_cap = cap
    r = &s.trace[s.ntrace]
    s.ntrace += 1
    memcpy(r.q, s.q, QBUF)
    r.ntok = s.ntok
    memcpy(r.tok, s.tok, sizeof(Tok) * s.ntok)
    r.ninterp = s.ninterp
    memcpy(r.interp, s.interp, sizeof(Interp) * s.ninterp)
    r.stage = s.stage
    r.mode = s.parse_mode
    r.has_focus = s.has_focus
    r.focus_lat = s.focus_lat
    r.focus_lon = s.focus_lon
    r.pc_strict = s.pc_strict
    r.near_number = s.near_number
    r.huis = s.huis
    r.province = s.province
    r.max_pass = s.max_pass
    r.npass = npass
    memcpy(r.looked, looked, sizeof(uint64_t) * npass)
    r.scored = scored
    r.found = s.ncand
    r.deferred = deferred
    r.spent = s.spent | (SPENT_WORK if _spent(s) else 0) | (SPENT_SLIPS if _slips_spent(s) else 0)
    r.ns = now - s.trace_t0
    r.work = s.work
    r.slip_work = s.slip_work
    r.walked = s.walked
    r.groups = s.groups
    s.trace_t0 = _now_ns()  # (the copy above is not the next reading's time)
