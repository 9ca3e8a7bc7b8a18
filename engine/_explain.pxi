# How each typed word matched a hit (included by _core.pyx, after the retries): engine/explain.py
# makes `WordMatch`es of it, the JSON writer the `highlights` of `highlight=true`.
#
# A search ends in the reading that found its hits (every retry stops at the first reading that
# finds something), with that reading's tokens, each byte knowing the code points of the query
# it came from (Search.qsrc: kept by every step that respells the query), its interpretations
# and each word's ranges. For one hit, the interpretation that scored it (Cand.interp) names the
# token of the house number, of the letters and additions, of the postcode and the words of the
# names; `_group_text`, `_pc_word` and `_suffix_pen` say again, as they did when they scored it,
# which token of the hit's group each word took, and `_match_range` through which of the word's
# ranges: the token as typed (exact), its start (prefix), a typo range (a slip), a token flagged
# K_ALIAS (another spelling: an abbreviation, an everyday name; the two words of a name glued,
# "sgravenhage", are the name as typed). Nothing here decides whether a word matches: only which
# letters of the hit's lines show what it matched, each name folded as the index folds it
# (`_fold_words`), each folded letter with the code points of its line.

cdef enum:
    # how a typed word matched (KINDS names them) ...
    W_EXACT = 0
    W_PREFIX = 1
    W_ALIAS = 2
    W_SLIP = 3
    W_LEFT_OUT = 4
    # ... and what of the hit (FIELDS names them)
    F_STREET = 0
    F_NUMBER = 1
    F_LETTER = 2
    F_ADDITION = 3
    F_POSTCODE = 4
    F_LOCALITY = 5
    F_MUNICIPALITY = 6
    F_PROVINCE = 7
    F_COUNTRY = 8
    F_NONE = 9
    PIECES_MAX = 256     # pieces of one explanation (the typed words of 128 code points and parts)
    NAME_MAX = 255       # folded letters of a name kept
    NAME_WORDS = 64      # ... and words

KINDS = ("exact", "prefix", "alias", "slip", "left_out")
FIELDS = ("street", "number", "letter", "addition", "postcode", "locality", "municipality", "province",
          "country", None)


cdef struct Piece:
    # a typed word, or the part of one that matched one thing (the 12 and the a of 12a)
    int16_t start        # code points [start, end) of the query
    int16_t end
    int8_t kind          # W_*
    int8_t field         # F_* (F_NONE when left out)
    int8_t line          # the line of the hit that shows it, -1 when none does
    int16_t a            # ... code points [a, b) of that line
    int16_t b


cdef struct Typed:
    # the query as typed, folded as `_tokenise` folds it: its words are what is explained
    char q[QBUF]
    Src src[QBUF]
    int n


cdef struct Name:
    # a registered name (a number, a postcode) as a line shows it: each folded letter with the
    # code points [a, b) of the line it came from
    int n
    char c[NAME_MAX]
    int16_t a[NAME_MAX]
    int16_t b[NAME_MAX]
    int nw               # words: word k is letters [w[k], w[k + 1])
    int16_t w[NAME_WORDS + 1]
    int8_t line          # -1: no line shows it (the municipality, the province)
    int16_t lo           # the whole name: code points [lo, hi) of its line
    int16_t hi


cdef struct Shown:
    # the parts of one hit as its lines show them
    Name street
    Name number
    Name letter
    Name addition
    Name postcode
    Name locality
    Name municipality
    Name province
    Name country


cdef struct Seg:
    # what bytes [j0, j1) of a token of the reading matched
    int j0
    int j1
    int8_t kind
    int8_t field
    int8_t line          # the line that shows it, -1 when none does
    const Name* name     # byte j is letter `first + j - j0` of name (exact, prefix) ...
    int first
    int16_t a            # ... or every byte stands for [a, b) of the line (name NULL: an alias,
    int16_t b            # a slip, a house number)


cdef void _typed_of(const Search* s, Typed* t) noexcept nogil:
    """The query as typed, from a search not yet run: the layout's marks as spaces (`_search`)."""
    cdef int i
    memcpy(t.q, s.q, s.qlen)
    memcpy(t.src, s.qsrc, s.qlen * sizeof(Src))
    for i in range(s.qlen):
        if t.q[i] == 40 or t.q[i] == 41 or t.q[i] == 44:
            t.q[i] = 32
    t.n = _fold_words(t.q, t.src, s.qlen)


# ---------------------------------------------------------------------------------------------
# the hit's lines


cdef inline int _hex4(const uint8_t* p) noexcept nogil:
    cdef int v = 0, k, c
    for k in range(4):
        c = p[k]
        v = v * 16 + (c - 48 if c <= 57 else (c | 32) - 87)
    return v


cdef int _next_point(const uint8_t* p, int n, int* at) noexcept nogil:
    """The code point at p[at[0]:] of a text as the index stores it (UTF-8, JSON-escaped as
    build.py `_json_str` writes it), and at[0] moved past it."""
    cdef int i = at[0], c = p[i], cp, low
    if c == 92 and i + 1 < n:
        c = p[i + 1]
        if c == 117 and i + 6 <= n:
            cp = _hex4(p + i + 2)
            at[0] = i + 6
            if 0xD800 <= cp < 0xDC00 and i + 12 <= n and p[i + 6] == 92 and p[i + 7] == 117:
                low = _hex4(p + i + 8)
                if 0xDC00 <= low < 0xE000:
                    at[0] = i + 12
                    return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            return cp
        at[0] = i + 2
        return (8 if c == 98 else 12 if c == 102 else 10 if c == 110 else 13 if c == 114
                else 9 if c == 116 else c)
    if c < 0x80 or i + 1 >= n:
        at[0] = i + 1
        return c
    if c < 0xE0:
        at[0] = i + 2
        return ((c & 0x1F) << 6) | (p[i + 1] & 0x3F)
    if c < 0xF0 or i + 3 >= n:
        at[0] = i + 3 if i + 2 < n else n
        return ((c & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F if i + 2 < n else 0)
    at[0] = i + 4
    return ((c & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) | ((p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F)


cdef int _fold_name(const uint8_t* p, int n, bint fold, int8_t line, int at, Name* out) noexcept nogil:
    """Name p[:n] (UTF-8, JSON-escaped) into out, starting at code point `at` of `line`: folded
    and cut into words as the index folds its names (`fold`; engine/normalize.py `fold`), or
    else each code point a letter, lower case (a house number, letter, addition). The code
    points it holds."""
    cdef char q[QBUF]
    cdef Src src[QBUF]
    cdef int i = 0, k = 0, cp, j, pos = at, m
    while i < n and k < QBUF - 8:
        cp = _next_point(p, n, &i)
        if not fold:
            q[k] = <char>(cp + 32 if 65 <= cp <= 90 else cp if cp < 128 else 63)
            src[k].a = <int16_t>pos
            src[k].b = <int16_t>(pos + 1)
            k += 1
        elif cp < FOLD_MAX:
            for j in range(_fold_len[cp]):
                q[k] = _fold_out[cp][j]
                src[k].a = <int16_t>pos
                src[k].b = <int16_t>(pos + 1)
                k += 1
        else:
            q[k] = 32
            src[k].a = src[k].b = -1
            k += 1
        pos += 1
    m = _fold_words(q, src, k) if fold else k
    out.line = line
    out.lo = <int16_t>at
    out.hi = <int16_t>pos
    out.n = out.nw = 0
    i = 0
    while i < m and out.nw < NAME_WORDS:
        while i < m and q[i] == 32:
            i += 1
        if i >= m:
            break
        out.w[out.nw] = <int16_t>out.n
        out.nw += 1
        while i < m and q[i] != 32 and out.n < NAME_MAX:
            out.c[out.n] = q[i]
            out.a[out.n] = src[i].a
            out.b[out.n] = src[i].b
            out.n += 1
            i += 1
        while i < m and q[i] != 32:
            i += 1
    out.w[out.nw] = <int16_t>out.n
    return pos - at


cdef void _shown(const Data* d, int32_t addr, Shown* sh) noexcept nogil:
    """The parts of address addr as its lines show them (`_put_hit`): "{street} {number}{letter}
    -{addition}", "{postcode} {locality}", "Nederland"."""
    cdef int32_t g = d.a_group[addr], add = d.a_addition[addr]
    cdef Py_ssize_t n
    cdef const char* p
    cdef uint8_t letter = d.a_letter[addr]
    cdef char digits[24]
    cdef char pc[8]
    cdef int at
    cdef Buf b
    p = _name(d, d.g_street[g], &n)
    at = _fold_name(<const uint8_t*>p, <int>n, True, 0, 0, &sh.street) + 1
    b.p = digits
    b.n = 0
    _raw_int(&b, d.a_number[addr])
    at += _fold_name(<const uint8_t*>digits, <int>b.n, False, 0, at, &sh.number)
    at += _fold_name(&letter, 1 if letter else 0, False, 0, at, &sh.letter)
    _fold_name(d.add_blob + d.add_off[add], <int>(d.add_off[add + 1] - d.add_off[add]), False, 0,
               at + 1, &sh.addition)
    b.p = pc
    b.n = 0
    _raw_postcode(&b, d.a_postcode[addr])
    _fold_name(<const uint8_t*>pc, 7, True, 1, 0, &sh.postcode)
    # (folded, "1234 AB" is the words "1234" and "ab": one postcode of six letters)
    sh.postcode.nw = 1
    sh.postcode.w[1] = <int16_t>sh.postcode.n
    p = _name(d, d.g_locality[g], &n)
    _fold_name(<const uint8_t*>p, <int>n, True, 1, 8, &sh.locality)
    p = _name(d, d.g_municipality[g], &n)
    _fold_name(<const uint8_t*>p, <int>n, True, -1, 0, &sh.municipality)
    p = _name(d, d.g_province[g], &n)
    _fold_name(<const uint8_t*>p, <int>n, True, -1, 0, &sh.province)
    _fold_name(<const uint8_t*>b"Nederland", 9, True, 2, 0, &sh.country)


cdef bint _words_are(const Name* name, int lo, int hi, const char* text, int n) noexcept nogil:
    """Are words lo..hi of name, glued, the text?"""
    cdef int a = name.w[lo], b = name.w[hi + 1]
    return b - a == n and memcmp(name.c + a, text, n) == 0


cdef inline void _whole(Seg* seg, const Name* name, int lo, int hi) noexcept nogil:
    """Every byte of seg stands for words lo..hi of name (the whole name when lo < 0)."""
    seg.name = NULL
    seg.line = name.line
    if name.line < 0:
        seg.a = seg.b = -1
    elif lo < 0 or hi >= name.nw or name.w[lo] >= name.w[hi + 1]:
        seg.a = name.lo
        seg.b = name.hi
    else:
        seg.a = name.a[name.w[lo]]
        seg.b = name.b[name.w[hi + 1] - 1]


# ---------------------------------------------------------------------------------------------
# what each token of the reading matched


cdef inline bint _typing_start(const Search* s, int ti, const Name* name, int lo) noexcept nogil:
    """Is token ti, which matched another spelling of words lo.. of name (a place's: its first),
    the start of the name's word instead, typed last and so still being typed? "v" the V of Van,
    "v " its abbreviation; "dord" the start of Dordrecht."""
    cdef int n = s.tok[ti].len
    if lo < 0:
        lo = 0
    return (s.tok[ti].start + n == s.qlen and lo < name.nw and name.line >= 0
            and name.w[lo + 1] - name.w[lo] > n and memcmp(name.c + name.w[lo], s.q + s.tok[ti].start, n) == 0)


cdef void _word_seg(const Data* d, Search* s, int ti, int32_t g, int j, const Shown* sh, Seg* seg) noexcept nogil:
    """What typed word ti of the reading matched in taking token j (an index into g_rec) of
    group g: its kind and the letters of the registered spelling it stands for."""
    cdef const TokRec* rec = &d.g_rec[j]
    cdef const Word* w = &s.word[ti]
    cdef int kind = rec.kind & K_KIND, k = -1, lo = -1, hi = -1, i, occ = 0, m, n = s.tok[ti].len
    cdef bint alias = (rec.kind & K_ALIAS) != 0, glued = False
    cdef const char* text = <const char*>(d.v_blob + d.v_off[rec.tok])
    cdef int tlen = _tok_len(d, rec.tok)
    cdef uint64_t cover = rec.cover
    cdef const Name* name
    _match_range(d, s, ti, rec, &k)
    if kind == K_STREET:
        name = &sh.street
        seg.field = F_STREET
    elif kind == K_LOCALITY:
        name = &sh.locality
        seg.field = F_LOCALITY
    else:
        name = &sh.municipality
        seg.field = F_MUNICIPALITY
    # which words of the name the token is, or stands for: a street's say so (cover: bit i for
    # word i); a place's token is its word of that text (the k-th, when the name holds the word
    # k times, as the group holds it), or two of them glued ('s-Gravenhage: "sgravenhage")
    if kind == K_STREET and cover != 0:
        lo = 0
        while not (cover >> lo) & 1:
            lo += 1
        hi = lo
        while hi + 1 < 64 and (cover >> (hi + 1)) & 1:
            hi += 1
    else:
        for i in range(d.g_tok_start[g], j):
            occ += d.g_rec[i].tok == rec.tok and d.g_rec[i].kind == rec.kind
        for i in range(name.nw):
            if _words_are(name, i, i, text, tlen):
                if occ == 0:
                    lo = hi = i
                    break
                occ -= 1
        if lo < 0:
            for i in range(name.nw - 1):
                if _words_are(name, i, i + 1, text, tlen):
                    lo = i
                    hi = i + 1
                    break
    if hi >= name.nw:
        lo = hi = -1
    glued = lo >= 0 and hi > lo and _words_are(name, lo, hi, text, tlen)
    if k >= 0 and w.typo[k]:
        seg.kind = W_SLIP
        _whole(seg, name, lo, hi)
        if (w.typo[k] == TYPO_START or w.typo[k] == TYPO_RUN) and lo >= 0 and seg.a >= 0:
            # the start of the word, as long as the word typed with its slip undone
            m = n if n < tlen else tlen
            if _dl_distance(s.q + s.tok[ti].start, n, text, m, 1) > 1:
                if n + 1 <= tlen and _dl_distance(s.q + s.tok[ti].start, n, text, n + 1, 1) <= 1:
                    m = n + 1
                elif n > 1:
                    m = n - 1
            if 0 < m < name.w[hi + 1] - name.w[lo]:
                seg.b = name.b[name.w[lo] + m - 1]
    elif alias and not glued and not _typing_start(s, ti, name, lo):
        seg.kind = W_ALIAS
        _whole(seg, name, lo, hi)
    else:
        seg.kind = W_EXACT if rec.tok == w.exact and not (alias and not glued) else W_PREFIX
        if alias and not glued and lo < 0:
            lo = 0  # (the start of a place's name, `_typing_start`)
        if lo < 0 or name.line < 0:
            _whole(seg, name, lo, hi)
        else:
            seg.name = name
            seg.line = name.line
            seg.first = name.w[lo]


cdef void _postcode_seg(const Search* s, int ti, int first, bint whole, const Name* pc, Seg* seg) noexcept nogil:
    """Token ti as the postcode's letters from `first` on (its digits: 0; its letters typed apart:
    4): all of them typed (`whole`), or their start; a variant of the typed one (a token beyond
    the query, `_postcode_slips`) a slip. (seg NULL: token ti has its two matches already.)"""
    if seg == NULL:
        return
    seg.field = F_POSTCODE
    if s.tok[ti].start > s.qlen:
        seg.kind = W_SLIP
        _whole(seg, pc, -1, -1)
        return
    seg.kind = W_EXACT if whole else W_PREFIX
    seg.name = pc
    seg.line = pc.line
    seg.first = first


cdef int _best_interp(const Data* d, Search* s, int32_t addr) noexcept nogil:
    """The interpretation of the reading under which address addr, which the search did not
    find, matches best (the least penalty of its words; its postcode within a postcode's), or -1
    when it matches under none."""
    cdef int ii, wi, j, loc, best = -1
    cdef int32_t g = d.a_group[addr]
    cdef float pen, p, least = 0
    cdef const Interp* it
    for ii in range(s.ninterp):
        it = &s.interp[ii]
        if it.pc_lo >= 0:
            if not it.pc_lo <= d.a_postcode[addr] <= it.pc_hi:
                continue
            pen = 0
            for wi in range(it.nwords):
                p = _pc_word(d, s, it.words[wi], g, &j)
                pen += p if p >= 0 else UNKNOWN_WORD_PEN
        elif not _group_text(d, s, it, g, &pen, &loc, NULL):
            continue
        if best < 0 or pen < least:
            best = ii
            least = pen
    return best


cdef inline Seg* _seg_of(const Search* s, int ti, Seg* seg, int* nseg, int j0) noexcept nogil:
    """A new match of token ti's bytes from j0 on (to its end), or NULL when it has two."""
    cdef Seg* x
    if nseg[ti] >= 2:
        return NULL
    x = &seg[2 * ti + nseg[ti]]
    nseg[ti] += 1
    x.j0 = j0
    x.j1 = s.tok[ti].len
    x.name = NULL
    x.line = -1
    x.a = x.b = -1
    return x


cdef void _reading_segs(const Data* d, Search* s, int32_t addr, int ii, const Shown* sh, Seg* seg,
                        int* nseg) noexcept nogil:
    """Per token ti of the reading, what its bytes matched of address addr under interpretation
    ii (-1: none): seg[2 * ti], seg[2 * ti + 1] (a number and the letter glued to it), nseg[ti]
    of them."""
    cdef int ti, wi, i, j, tok, vlen, loc
    cdef int32_t g = d.a_group[addr]
    cdef int chosen[MAXT]
    cdef PartMatch parts[MAXP]
    cdef const Interp* it
    cdef Seg* x
    cdef float pen
    cdef bint exact_number = False
    cdef char digits[24]
    cdef Buf b
    for ti in range(s.ntok):
        nseg[ti] = 0
    if ii < 0:
        return
    it = &s.interp[ii]
    # the words of the names: the token each took, as when the hit was scored
    if it.pc_lo < 0:
        _group_text(d, s, it, g, &pen, &loc, chosen)
    else:
        for wi in range(it.nwords):
            chosen[wi] = j if _pc_word(d, s, it.words[wi], g, &j) >= 0 else -1
    for wi in range(it.nwords):
        if chosen[wi] >= 0:
            ti = it.words[wi]
            x = _seg_of(s, ti, seg, nseg, 0)
            if x != NULL:
                _word_seg(d, s, ti, g, chosen[wi], sh, x)
    # the house number, as typed or its start (not the nearest numbers: the typed one is none)
    if it.num_tok >= 0 and not s.near_number:
        b.p = digits
        b.n = 0
        _raw_int(&b, it.number)
        vlen = <int>b.n
        exact_number = d.a_number[addr] == it.number
        x = NULL
        if exact_number or (vlen < sh.number.n and memcmp(sh.number.c, digits, vlen) == 0):
            x = _seg_of(s, it.num_tok, seg, nseg, 0)
        if x != NULL:
            x.j1 = s.tok[it.num_tok].digits
            x.field = F_NUMBER
            x.kind = W_EXACT if exact_number else W_PREFIX
            _whole(x, &sh.number, -1, -1)
            if not exact_number:
                x.b = sh.number.b[vlen - 1]
    # the letters and additions typed with it (read only with the number as typed)
    if it.nparts > 0 and exact_number:
        _suffix_pen(d, s, it, addr, g, parts)
        for i in range(it.nparts):
            if parts[i].what == PART_NONE:
                continue
            tok = it.part_tok[i]
            x = _seg_of(s, tok, seg, nseg, it.part_off[i])
            if x == NULL:
                continue
            if parts[i].what == PART_WORD:
                _word_seg(d, s, tok, g, parts[i].at, sh, x)
            elif parts[i].what == PART_LETTER:
                x.field = F_LETTER
                x.kind = W_EXACT
                _whole(x, &sh.letter, -1, -1)
            elif s.tok[tok].start > s.qlen:
                # an ordinal read as the floor's number ("tweede": 2): another spelling of it
                x.field = F_ADDITION
                x.kind = W_ALIAS
                _whole(x, &sh.addition, -1, -1)
            else:
                x.field = F_ADDITION
                x.name = &sh.addition
                x.line = sh.addition.line
                x.first = parts[i].at
                # the addition's start: what its last part matched ends before it does
                x.kind = W_PREFIX if (parts[i].at + x.j1 - x.j0 < sh.addition.n and not (
                    i + 1 < it.nparts and parts[i + 1].what == PART_ADDITION)) else W_EXACT
    # the postcode, or the one being typed after the number
    if it.pc_lo >= 0 and s.pc_tok >= 0:
        ti = s.pc_tok
        _postcode_seg(s, ti, 0, s.tok[ti].len == 6 or s.pc_tok2 >= 0, &sh.postcode, _seg_of(s, ti, seg, nseg, 0))
        if s.pc_tok2 >= 0:
            ti = s.pc_tok2
            _postcode_seg(s, ti, 4, s.tok[ti].len == 2, &sh.postcode, _seg_of(s, ti, seg, nseg, 0))
    elif it.area_lo >= 0 and s.area_tok >= 0:
        ti = s.area_tok
        _postcode_seg(s, ti, 0, s.area_tok2 >= 0, &sh.postcode, _seg_of(s, ti, seg, nseg, 0))
        if s.area_tok2 >= 0:
            _postcode_seg(s, s.area_tok2, 4, False, &sh.postcode, _seg_of(s, s.area_tok2, seg, nseg, 0))


# ---------------------------------------------------------------------------------------------
# the typed words, piece by piece


cdef bint _left_out_word(const Data* d, const Search* s, int32_t addr, const Shown* sh, const char* w,
                         int n, Piece* pc) noexcept nogil:
    """A typed word the reading left out that still says something of the hit: "hs" or "huis"
    after the number, which said its addition H (Search.huis); a word of its province's name,
    or a region word that names it (`_typed_province`); the country (COUNTRY_WORDS)."""
    cdef int i = _list_index(_region_ptr, _region_len, _n_region, w, n), k
    cdef const Name* name = NULL
    if s.huis and _huis(w, n) and sh.addition.n == 1 and sh.addition.c[0] == 104:
        pc.field = F_ADDITION
        pc.kind = W_ALIAS
        name = &sh.addition
    else:
        for k in range(sh.province.nw):
            if _words_are(&sh.province, k, k, w, n):
                pc.field = F_PROVINCE
                pc.kind = W_EXACT
                name = &sh.province
        if name == NULL and i >= 0 and d.region_prov[i] >= 0 and d.region_prov[i] == d.g_province[d.a_group[addr]]:
            pc.field = F_PROVINCE
            pc.kind = W_ALIAS
            name = &sh.province
        if name == NULL and 0 <= i < _n_country:
            pc.field = F_COUNTRY
            pc.kind = W_EXACT if _words_are(&sh.country, 0, 0, w, n) else W_ALIAS
            name = &sh.country
    if name == NULL:
        return False
    pc.line = name.line
    pc.a = name.lo if name.line >= 0 else -1
    pc.b = name.hi if name.line >= 0 else -1
    return True


cdef int _explain_hit(const Data* d, Search* s, const Typed* ty, int32_t addr, Piece* out) noexcept nogil:
    """How each typed word of the query matched address addr, a hit of the search just run on s
    (or any address: then under the interpretation that matches it best): one Piece per word,
    or per part of one that matched apart (12a: the number and the letter), in the order typed.
    Returns their count."""
    cdef Shown sh
    cdef Seg seg[2 * MAXT]
    cdef int nseg[MAXT]
    cdef int16_t own_tok[MAX_Q]     # per code point of the query: the token of the reading whose
    cdef int16_t own_byte[MAX_Q]    # byte it made (-1: none), and that byte
    cdef int ii = -1, i, j, k, ti = 0, sj = 0, p, n = 0, word0, cp
    cdef Seg* x
    cdef Seg* cur
    cdef Piece* pc = out
    if s.ncand >= 0:  # (-1: no reading ran: no word typed, or a stored answer of none)
        for i in range(s.ncand):
            if s.cand[i].addr == addr:
                ii = s.cand[i].interp
                break
        if ii < 0:
            ii = _best_interp(d, s, addr)
    _shown(d, addr, &sh)
    _reading_segs(d, s, addr, ii, &sh, seg, nseg)
    for i in range(MAX_Q):
        own_tok[i] = -1
    for ti in range(s.ntok):
        if nseg[ti] == 0:
            continue
        for j in range(s.tok[ti].len):
            for cp in range(s.qsrc[s.tok[ti].start + j].a, s.qsrc[s.tok[ti].start + j].b):
                if 0 <= cp < MAX_Q:
                    own_tok[cp] = <int16_t>ti
                    own_byte[cp] = <int16_t>j
    # each typed word, byte by byte: a run of bytes that one match of one token made is a piece
    p = 0
    while p < ty.n:
        while p < ty.n and ty.q[p] == 32:
            p += 1
        if p >= ty.n:
            break
        word0 = n
        cur = NULL
        while p < ty.n and ty.q[p] != 32:
            x = NULL
            cp = ty.src[p].a
            if 0 <= cp < MAX_Q and own_tok[cp] >= 0:
                ti = own_tok[cp]
                sj = own_byte[cp]
                for k in range(nseg[ti]):
                    if seg[2 * ti + k].j0 <= sj < seg[2 * ti + k].j1:
                        x = &seg[2 * ti + k]
            if n == word0 or x != cur:
                if n == PIECES_MAX:
                    break
                cur = x
                pc = &out[n]
                n += 1
                pc.start = ty.src[p].a
                pc.kind = W_LEFT_OUT if x == NULL else x.kind
                pc.field = F_NONE if x == NULL else x.field
                pc.line = -1 if x == NULL else x.line
                pc.a = -1 if x == NULL else x.a
                pc.b = -1 if x == NULL else x.b
                if x != NULL and x.name != NULL and x.line >= 0:
                    k = x.first + sj - x.j0
                    pc.a = x.name.a[k] if k < x.name.n else x.name.hi
            pc.end = ty.src[p].b
            if x != NULL and x.name != NULL and x.line >= 0:
                k = x.first + sj - x.j0
                if k >= x.name.n:
                    pc.b = x.name.hi
                elif s.q[s.tok[ti].start + sj] == 105 and x.name.c[k] == 121:
                    pc.b = x.name.a[k] + 1  # the i of an ij being typed: the I of the IJ
                else:
                    pc.b = x.name.b[k]
                if x.kind == W_PREFIX:
                    # a word's start typed in pieces ("kerk str"): whole words but the last
                    pc.kind = W_PREFIX if sj == x.j1 - 1 else W_EXACT
            p += 1
        while p < ty.n and ty.q[p] != 32:
            p += 1  # (PIECES_MAX reached)
        _word_pieces(d, s, ty, addr, &sh, out, word0, &n)
    return n


cdef void _word_pieces(const Data* d, const Search* s, const Typed* ty, int32_t addr, const Shown* sh,
                       Piece* out, int word0, int* n) noexcept nogil:
    """The pieces out[word0:n[0]] of one typed word: the left-out ones perhaps saying something
    of the hit (`_left_out_piece`), and the pieces that matched one name (or nothing) one piece:
    "vanaerssenstraat" is Van Aerssenstraat."""
    cdef int i, k
    for k in range(word0, n[0]):
        if out[k].kind == W_LEFT_OUT:
            _left_out_piece(d, s, ty, addr, sh, &out[k])
    k = word0
    for i in range(word0 + 1, n[0]):
        if out[i].field == out[k].field and out[i].line == out[k].line and (
                out[i].kind == W_LEFT_OUT) == (out[k].kind == W_LEFT_OUT):
            out[k].end = out[i].end
            if out[k].kind == W_EXACT:
                out[k].kind = out[i].kind
            if out[i].a >= 0 and (out[k].a < 0 or out[i].a < out[k].a):
                out[k].a = out[i].a
            if out[i].b > out[k].b:
                out[k].b = out[i].b
        else:
            k += 1
            out[k] = out[i]
    if n[0] > word0:
        n[0] = k + 1


cdef void _left_out_piece(const Data* d, const Search* s, const Typed* ty, int32_t addr, const Shown* sh,
                          Piece* pc) noexcept nogil:
    """A piece of a typed word that no token of the reading matched: left out, unless
    `_left_out_word` finds that it says something of the hit."""
    cdef char w[QBUF]
    cdef int n = 0, p
    for p in range(ty.n):
        if ty.src[p].a >= pc.start and ty.src[p].b <= pc.end and ty.q[p] != 32:
            w[n] = ty.q[p]
            n += 1
    if not _left_out_word(d, s, addr, sh, w, n, pc):
        pc.kind = W_LEFT_OUT
        pc.field = F_NONE
        pc.line = -1
        pc.a = pc.b = -1


cdef void _highlight_spans(const Piece* pieces, int n, int line, int16_t* spans, int* count) noexcept nogil:
    """The spans [a, b) of `line` that the pieces matched, sorted and merged where they touch or
    overlap (what a suggestion list shows in bold): spans[2 k], spans[2 k + 1], count[0] of
    them."""
    cdef int i, k, m = 0, j = 0
    cdef int16_t a, b
    for i in range(n):
        if pieces[i].line != line or pieces[i].a < 0:
            continue
        a = pieces[i].a
        b = pieces[i].b
        k = m
        while k > 0 and (spans[2 * k - 2] > a or (spans[2 * k - 2] == a and spans[2 * k - 1] > b)):
            spans[2 * k] = spans[2 * k - 2]
            spans[2 * k + 1] = spans[2 * k - 1]
            k -= 1
        spans[2 * k] = a
        spans[2 * k + 1] = b
        m += 1
    for k in range(m):
        if j > 0 and spans[2 * k] <= spans[2 * j - 1]:
            if spans[2 * k + 1] > spans[2 * j - 1]:
                spans[2 * j - 1] = spans[2 * k + 1]
        else:
            spans[2 * j] = spans[2 * k]
            spans[2 * j + 1] = spans[2 * k + 1]
            j += 1
    count[0] = j


cdef struct Explained:
    # a search's hits explained (`highlight=true`; engine.explain)
    Typed typed
    int n[MAXLIMIT]
    Piece pieces[MAXLIMIT][PIECES_MAX]
