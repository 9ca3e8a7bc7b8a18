# Included at the end of _core.pyx: what the typed hits (engine/hits.py) and batch matching
# (engine/match.py) need from the compiled core. Module-level functions over an `Index`, so
# that the class itself stays as it is: the score of each hit, the fields of an address (as
# values, or as CSV text), and a batch of best matches searched in one stretch without the GIL.
# Each reads the arrays between `_enter` and `_leave` (or, holding the GIL throughout, after
# `_check_open`), as the searches of the class do, so that `close()` never unmaps them under a
# running search.

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memchr

# the status of each text of a batch (engine/match.py names them)
cdef enum:
    M_FOUND = 0
    M_NONE = 1       # searched, nothing found
    M_EMPTY = 2      # no letter or digit in it
    M_TOO_LONG = 3   # more than MAX_Q code points
    M_NOT_TEXT = 4   # not a str

# how the hits of a search were found (_scored_search)
cdef enum:
    H_NONE = 0       # nothing found
    H_TYPED = 1      # every word read as typed (whole or the start of a word)
    H_SLIP = 2       # ... with a word that sounds alike or a slip of a key in some word
    H_RETRY = 3      # only once retried: respaced, words left out, the nearest house numbers
                     # or a slip in the postcode

FOUND_HOW = {H_NONE: "none", H_TYPED: "typed", H_SLIP: "slip", H_RETRY: "retry"}
MATCH_FOUND, MATCH_NONE, MATCH_EMPTY, MATCH_TOO_LONG, MATCH_NOT_TEXT = M_FOUND, M_NONE, M_EMPTY, M_TOO_LONG, M_NOT_TEXT


cdef int _scored_search(const Data* d, Search* s, int* out, float* score, int* how) noexcept nogil:
    """`_search`, the score of each hit it writes to out, and how the hits were found (H_*).

    The stored answer of a one-word query has no scores beside it, so such a query is searched
    again without the stored answers: build.py computed them that way, so the hits are the same
    (a slower search, for the few one-word queries with stored answers only).

    How: `_search` sets max_pass to NPASS and reads the query as typed; only when that finds
    nothing does it retry (respaced, words left out, the nearest numbers, a slip in the
    postcode), setting max_pass lower, or back to NPASS after slips it deferred (`deferred`). The
    last pass run leaves typo_mode set when it needed a slip of a key."""
    cdef int n, i, k
    cdef Data bare
    s.ncand = -1                      # the stored-answer path leaves it; every search sets it
    s.deferred = 0
    n = _search(d, s, out)
    if n > 0 and s.ncand < 0:
        memcpy(&bare, d, sizeof(Data))
        bare.n_sa = 0
        n = _search(&bare, s, out)
    for i in range(n):
        score[i] = 0
        for k in range(s.ncand):
            if s.cand[k].addr == out[i]:
                score[i] = s.cand[k].score
                break
    if n == 0:
        how[0] = H_NONE
    elif s.max_pass != NPASS or s.deferred or s.left_out:
        how[0] = H_RETRY
    elif s.typo_mode:
        how[0] = H_SLIP
    else:
        how[0] = H_TYPED
    return n


cdef int _explained_search(const Data* d, Search* s, int* out, Explained* ex) noexcept nogil:
    """`_search`, each hit explained into ex (`_explain_hit`). A one-word query with a stored
    answer is searched again without it, as `_scored_search` does, for the reading that found
    its hits."""
    cdef float score[MAXLIMIT]
    cdef int n, i, how
    _typed_of(s, &ex.typed)
    n = _scored_search(d, s, out, score, &how)
    for i in range(n):
        ex.n[i] = _explain_hit(d, s, &ex.typed, out[i], ex.pieces[i])
    return n


cdef list _pieces(const Piece* pieces, int n):
    """The pieces as (start, end, kind, field, line, span) (engine.explain WordMatch)."""
    cdef int i
    cdef const Piece* pc
    out = []
    for i in range(n):
        pc = &pieces[i]
        out.append((pc.start, pc.end, KINDS[pc.kind], FIELDS[pc.field], pc.line if pc.line >= 0 else None,
                    (pc.a, pc.b) if pc.line >= 0 else None))
    return out


cdef list _highlights(const Piece* pieces, int n):
    """Per line (3) the spans `_highlight_spans` makes of the pieces, as [(a, b), ...]."""
    cdef int16_t spans[2 * PIECES_MAX]
    cdef int line, k, count
    out = []
    for line in range(3):
        _highlight_spans(pieces, n, line, spans, &count)
        out.append([(spans[2 * k], spans[2 * k + 1]) for k in range(count)])
    return out


def _explain_address(Index index, q, int32_t address):
    """How each typed word of q matched address `address` (engine.explain): the search of q (at
    the largest limit, no focus point) read again for that address, as for a hit of it
    (`_explain_hit`). ([(start, end, kind, field, line, span), ...], highlights per line)."""
    cdef Search* s = NULL
    cdef Explained* ex = NULL
    cdef int hits[MAXLIMIT]
    cdef float score[MAXLIMIT]
    cdef int how
    index._enter()
    try:
        if address < 0 or address >= index.d.n_addr:
            raise IndexError(f"no address {address}: the index holds {index.d.n_addr}")
        s = index._prepare(q, MAXLIMIT, None, None, None)
        ex = <Explained*>malloc(sizeof(Explained))
        if ex == NULL:
            raise MemoryError()
        with nogil:
            _typed_of(s, &ex.typed)
            _scored_search(&index.d, s, hits, score, &how)
            ex.n[0] = _explain_hit(&index.d, s, &ex.typed, address, ex.pieces[0])
        return _pieces(ex.pieces[0], ex.n[0]), _highlights(ex.pieces[0], ex.n[0])
    finally:
        free(ex)
        free(s)
        index._leave()


def _search_scored(Index index, q, limit, lat, lon, area=None):
    """([(address id, score), ...], how) of the hits of q, best first: `search_ids` with the
    scores, and how they were found (a FOUND_HOW value)."""
    cdef Search* s = NULL
    cdef int hits[MAXLIMIT]
    cdef float score[MAXLIMIT]
    cdef int n = 0, j, how = 0
    index._enter()
    try:
        s = index._prepare(q, limit, lat, lon, area)
        with nogil:
            n = _scored_search(&index.d, s, hits, score, &how)
        return [(hits[j], score[j]) for j in range(n)], FOUND_HOW[how]
    finally:
        free(s)
        index._leave()


cdef str _string(const Data* d, int32_t sid):
    """A string of the table (stored JSON-escaped) as a str."""
    cdef Py_ssize_t n
    cdef const char* p = _name(d, sid, &n)
    if memchr(p, 92, n) == NULL:
        return PyUnicode_DecodeUTF8(p, n, NULL)
    return json.loads(b'"' + p[:n] + b'"')


def _address_fields(Index index, int32_t a):
    """(street, number, letter, addition, postcode, locality, municipality, province, latitude,
    longitude) of address row a, as the JSON of a hit writes them."""
    cdef const Data* d = &index.d
    cdef int32_t g, add
    cdef uint8_t letter
    cdef char pc_text[8]
    cdef Buf pc
    index._check_open()
    if a < 0 or a >= d.n_addr:
        raise IndexError(f"no address {a}: the index holds {d.n_addr}")
    g = d.a_group[a]
    add = d.a_addition[a]
    letter = d.a_letter[a]
    pc.n = 0
    pc.cap = 8
    pc.p = pc_text
    _put_postcode(&pc, d.a_postcode[a])
    return (_string(d, d.g_street[g]), d.a_number[a],
            PyUnicode_DecodeUTF8(<const char*>&letter, 1 if letter else 0, NULL),
            PyUnicode_DecodeUTF8(<const char*>(d.add_blob + d.add_off[add]),
                                 d.add_off[add + 1] - d.add_off[add], NULL),
            PyUnicode_DecodeUTF8(pc_text, 7, NULL),
            _string(d, d.g_locality[g]), _string(d, d.g_municipality[g]),
            _string(d, d.g_province[g]), d.a_lat[a] / 1e6, d.a_lon[a] / 1e6)


cdef bint _plain_text(str t):
    """No NUL, no lone surrogate (a byte that was not UTF-8, read with surrogateescape)."""
    cdef Py_UCS4 ch
    for ch in t:
        if ch == 0 or 0xD800 <= ch <= 0xDFFF:
            return False
    return True


def _match_chunk(Index index, list texts, int32_t[::1] ids, float[::1] scores, uint8_t[::1] status,
                 uint8_t[::1] hows):
    """The best hit of each text: its address id (or -1), score, status (M_*) and how it was
    found (H_*).

    The texts are checked and folded holding the GIL (as suggest_json does), then searched one
    after another in one stretch without it, so threads that each run a chunk use every core."""
    cdef Py_ssize_t n = len(texts), i
    cdef Search* tmpl
    cdef Search* w
    cdef Search* s
    cdef char* folded
    cdef int* flen
    cdef int hit[1]
    cdef float sc[1]
    cdef int found, how
    if ids.shape[0] < n or scores.shape[0] < n or status.shape[0] < n or hows.shape[0] < n:
        raise ValueError("the output arrays are shorter than the texts")
    tmpl = w = NULL
    folded = NULL
    flen = NULL
    index._enter()
    try:
        tmpl = index._prepare("", 1, None, None, None)
        w = <Search*>malloc(sizeof(Search))
        folded = <char*>malloc(n * QBUF + 1)
        flen = <int*>malloc((n + 1) * sizeof(int))
        if w == NULL or folded == NULL or flen == NULL:
            raise MemoryError()
        for i in range(n):
            t = texts[i]
            flen[i] = -1
            ids[i] = -1
            scores[i] = 0
            hows[i] = H_NONE
            if not isinstance(t, str) or not _plain_text(<str>t):
                status[i] = M_NOT_TEXT
            elif len(<str>t) > MAX_Q:
                status[i] = M_TOO_LONG
            else:
                s = index._prepare(t, 1, None, None, None)
                memcpy(folded + i * QBUF, s.q, s.qlen)
                flen[i] = s.qlen
                free(s)
        with nogil:
            for i in range(n):
                if flen[i] < 0:
                    continue
                # a fresh search: the text and what _prepare sets besides it
                memcpy(w.q, folded + i * QBUF, flen[i])
                w.qlen = flen[i]
                w.limit = tmpl.limit
                w.has_focus = tmpl.has_focus
                w.pc_strict = tmpl.pc_strict
                w.focus_lat = tmpl.focus_lat
                w.focus_lon = tmpl.focus_lon
                w.cos_lat = tmpl.cos_lat
                w.within.on = 0
                w.ntok = 0
                w.trace = NULL
                found = _scored_search(&index.d, w, hit, sc, &how)
                hows[i] = how
                if found > 0:
                    ids[i] = hit[0]
                    scores[i] = sc[0]
                    status[i] = M_FOUND
                else:
                    status[i] = M_EMPTY if w.ntok == 0 else M_NONE
    finally:
        free(tmpl)
        free(w)
        free(folded)
        free(flen)
        index._leave()


cdef bint _put_csv(Buf* b, const char* p, Py_ssize_t n, char sep) noexcept nogil:
    """Put one CSV field, quoted when it holds the separator, a quote or a line break; False
    (nothing put) when it holds a JSON escape, which only the caller can undo."""
    cdef Py_ssize_t i
    if memchr(p, 92, n) != NULL:
        return False
    if memchr(p, sep, n) == NULL and memchr(p, 34, n) == NULL and memchr(p, 10, n) == NULL \
            and memchr(p, 13, n) == NULL:
        _put(b, p, n)
        return True
    _put(b, "\"", 1)
    for i in range(n):
        if p[i] == 34:
            _put(b, "\"", 1)
        _put(b, p + i, 1)
    _put(b, "\"", 1)
    return True


def _csv_fields(Index index, list ids, str sep):
    """For each address row id: its fields as one CSV text (street, number, letter, addition,
    postcode, locality, municipality, province, latitude, longitude, separated by `sep`, an
    ASCII character), or None when the id is -1 or a name holds a character the table stores
    escaped (the caller writes that one from `_address_fields`)."""
    cdef const Data* d = &index.d
    cdef Buf b
    cdef int32_t a, g, add, k
    cdef char c = <char>ord(sep)
    cdef char letter
    cdef bint ok
    cdef const char* name
    cdef Py_ssize_t nname
    cdef list out = []
    index._check_open()
    b.cap = 1024
    b.p = <char*>malloc(b.cap)
    if b.p == NULL:
        raise MemoryError()
    try:
        for x in ids:
            a = x
            if a == -1:
                out.append(None)
                continue
            if a < 0 or a >= d.n_addr:
                raise IndexError(f"no address {a}: the index holds {d.n_addr}")
            g = d.a_group[a]
            add = d.a_addition[a]
            letter = <char>d.a_letter[a]
            b.n = 0
            name = _name(d, d.g_street[g], &nname)
            ok = _put_csv(&b, name, nname, c)
            _put(&b, &c, 1)
            _put_int(&b, d.a_number[a])
            _put(&b, &c, 1)
            if letter:
                _put(&b, &letter, 1)
            _put(&b, &c, 1)
            ok = ok and _put_csv(&b, <const char*>(d.add_blob + d.add_off[add]),
                                 d.add_off[add + 1] - d.add_off[add], c)
            _put(&b, &c, 1)
            _put_postcode(&b, d.a_postcode[a])
            for k in (d.g_locality[g], d.g_municipality[g], d.g_province[g]):
                _put(&b, &c, 1)
                name = _name(d, k, &nname)
                ok = ok and _put_csv(&b, name, nname, c)
            _put(&b, &c, 1)
            _put_micro(&b, d.a_lat[a])
            _put(&b, &c, 1)
            _put_micro(&b, d.a_lon[a])
            out.append(PyUnicode_DecodeUTF8(b.p, b.n, NULL) if ok else None)
        return out
    finally:
        free(b.p)
