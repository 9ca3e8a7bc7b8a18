# JSON (included by _core.pyx): the response body, written without the GIL.

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


# PERF (issue 39): the names of a hit (street and place twice, municipality, province, the
# addition) are short copies of a length known only at run time: each was a call of the
# library's memcpy, a tenth of the time of a long answer (a block of flats). Up to 32 bytes
# they are now two loads and two stores that may overlap (never reading or writing outside
# the n bytes), inline; longer ones still go to memcpy.
cdef extern from *:
    """
    static inline void engine_copy(char* dst, const char* src, size_t n) {
        if (n >= 16) {
            if (n > 32) { memcpy(dst, src, n); return; }
            char a[16], z[16];
            memcpy(a, src, 16); memcpy(z, src + n - 16, 16);
            memcpy(dst, a, 16); memcpy(dst + n - 16, z, 16);
        } else if (n >= 8) {
            uint64_t a, z;
            memcpy(&a, src, 8); memcpy(&z, src + n - 8, 8);
            memcpy(dst, &a, 8); memcpy(dst + n - 8, &z, 8);
        } else if (n >= 4) {
            uint32_t a, z;
            memcpy(&a, src, 4); memcpy(&z, src + n - 4, 4);
            memcpy(dst, &a, 4); memcpy(dst + n - 4, &z, 4);
        } else if (n > 0) {
            char a = src[0], m = src[n >> 1], z = src[n - 1];
            dst[0] = a; dst[n >> 1] = m; dst[n - 1] = z;
        }
    }
    """
    void _copy "engine_copy"(char* dst, const char* src, size_t n) noexcept nogil


cdef inline char* _w(char* o, const void* s, Py_ssize_t n) noexcept nogil:
    """Copy n bytes to o (room made for them); return where the next byte goes."""
    _copy(o, <const char*>s, <size_t>n)
    return o + n


cdef inline void _raw(Buf* b, const void* s, Py_ssize_t n) noexcept nogil:
    """Copy n bytes into a buffer with room made for them."""
    b.n = _w(b.p + b.n, s, n) - b.p


cdef inline void _put(Buf* b, const char* s, Py_ssize_t n) noexcept nogil:
    if _grow(b, n) == 0:
        _raw(b, s, n)


cdef inline void _puts(Buf* b, const char* s) noexcept nogil:
    cdef Py_ssize_t n = 0
    while s[n]:
        n += 1
    _put(b, s, n)


cdef inline char* _w_int(char* o, int64_t v) noexcept nogil:
    """An integer in decimal to o (room made for it: 20 bytes); return where the next byte
    goes."""
    cdef char tmp[24]
    cdef int n = 0, i
    cdef bint neg = v < 0
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
    for i in range(n):
        o[i] = tmp[n - 1 - i]
    return o + n


cdef inline void _raw_int(Buf* b, int64_t v) noexcept nogil:
    """An integer in decimal, into a buffer with room made for it (20 bytes)."""
    b.n = _w_int(b.p + b.n, v) - b.p


cdef inline void _put_int(Buf* b, int64_t v) noexcept nogil:
    if _grow(b, 20) == 0:
        _raw_int(b, v)


cdef inline char* _w_micro(char* o, int32_t v) noexcept nogil:
    """Micro-degrees as a decimal with 6 places (52376053 -> 52.376053) to o (room made for
    it: 20 bytes); return where the next byte goes."""
    cdef int64_t x = v
    cdef int i
    if x < 0:
        o[0] = 45
        o += 1
        x = -x
    o = _w_int(o, x // 1000000)
    x = x % 1000000
    o[0] = 46
    for i in range(6, 0, -1):
        o[i] = <char>(48 + x % 10)
        x //= 10
    return o + 7


cdef inline void _raw_micro(Buf* b, int32_t v) noexcept nogil:
    """Micro-degrees as a decimal with 6 places, into a buffer with room made for it (20
    bytes): `_w_micro`."""
    b.n = _w_micro(b.p + b.n, v) - b.p


cdef inline void _put_micro(Buf* b, int32_t v) noexcept nogil:
    if _grow(b, 20) == 0:
        _raw_micro(b, v)


cdef inline const char* _name(const Data* d, int32_t sid, Py_ssize_t* n) noexcept nogil:
    """Name sid of the names table; its length into n."""
    n[0] = d.s_off[sid + 1] - d.s_off[sid]
    return <const char*>(d.s_blob + d.s_off[sid])


cdef inline void _put_str(Buf* b, const Data* d, int32_t sid) noexcept nogil:
    cdef Py_ssize_t n
    cdef const char* p = _name(d, sid, &n)
    _put(b, p, n)


cdef inline char* _w_postcode(char* pc, int32_t code) noexcept nogil:
    """A postcode ("1234 AB") to pc (room made for it: 7 bytes); return where the next byte
    goes."""
    cdef int digits = code // 676, r = code % 676
    pc[0] = <char>(48 + digits // 1000)
    pc[1] = <char>(48 + digits // 100 % 10)
    pc[2] = <char>(48 + digits // 10 % 10)
    pc[3] = <char>(48 + digits % 10)
    pc[4] = 32
    pc[5] = <char>(65 + r // 26)
    pc[6] = <char>(65 + r % 26)
    return pc + 7


cdef inline void _raw_postcode(Buf* b, int32_t code) noexcept nogil:
    """A postcode ("1234 AB"), into a buffer with room made for it (7 bytes)."""
    b.n = _w_postcode(b.p + b.n, code) - b.p


cdef inline void _put_postcode(Buf* b, int32_t code) noexcept nogil:
    if _grow(b, 7) == 0:
        _raw_postcode(b, code)


# PERF: a hit's JSON was some 45 small copies, each of a literal whose length was counted byte
# by byte, through a library call, with a check of the buffer's room: 1,260 cycles a hit warm,
# more than the search of a clean query with five. The fixed parts between the fields are now
# a dozen C literals of known length, copied inline, and the room is made once per hit.
cdef extern from *:
    """
    #define J_STREET "{\\"components\\":[{\\"type\\":\\"NLD_PUBLIC_SPACE\\",\\"value\\":\\""
    #define J_NUMBER "\\"},{\\"type\\":\\"NLD_HOUSE_NUMBER\\",\\"value\\":"
    #define J_NUMBER_END "},"
    #define J_LETTER "{\\"type\\":\\"NLD_HOUSE_LETTER\\",\\"value\\":\\""
    #define J_ADDITION "{\\"type\\":\\"NLD_HOUSE_NUMBER_ADDITION\\",\\"value\\":\\""
    #define J_VALUE_END "\\"},"
    #define J_POSTCODE "{\\"type\\":\\"NLD_POSTAL_CODE\\",\\"value\\":\\""
    #define J_LOCALITY "\\"},{\\"type\\":\\"NLD_LOCALITY\\",\\"value\\":\\""
    #define J_MUNICIPALITY "\\"},{\\"type\\":\\"NLD_MUNICIPALITY\\",\\"value\\":\\""
    #define J_PROVINCE "\\"},{\\"type\\":\\"NLD_PROVINCE\\",\\"value\\":\\""
    #define J_LINES "\\"},{\\"type\\":\\"NLD_COUNTRY\\",\\"value\\":\\"Nederland\\"}]," \\
        "\\"country\\":\\"NLD\\",\\"lines\\":[\\""
    #define J_LINE2 "\\",\\""
    #define J_LOCATION "\\",\\"Nederland\\"],\\"location\\":{\\"latitude\\":"
    #define J_LONGITUDE ",\\"longitude\\":"
    #define J_HIT_END "}}"
    #define J_HIGHLIGHTS ",\\"highlights\\":["
    /* the fixed parts' bytes, at most (a hit with a letter and an addition) */
    #define J_FIXED (sizeof(J_STREET J_NUMBER J_NUMBER_END J_LETTER J_VALUE_END J_ADDITION J_VALUE_END \\
        J_POSTCODE J_LOCALITY J_MUNICIPALITY J_PROVINCE J_LINES J_LINE2 J_LOCATION J_LONGITUDE J_HIT_END))
    /* a literal's bytes to o, with room made for them: where the next byte goes */
    #define J_AT(o, s) (memcpy((o), (s), sizeof(s) - 1), (o) + sizeof(s) - 1)
    /* ... and into a buffer with room made for them */
    #define J_LIT(b, s) ((b)->n = J_AT((b)->p + (b)->n, (s)) - (b)->p)
    """
    const char* J_STREET
    const char* J_NUMBER
    const char* J_NUMBER_END
    const char* J_LETTER
    const char* J_ADDITION
    const char* J_VALUE_END
    const char* J_POSTCODE
    const char* J_LOCALITY
    const char* J_MUNICIPALITY
    const char* J_PROVINCE
    const char* J_LINES
    const char* J_LINE2
    const char* J_LOCATION
    const char* J_LONGITUDE
    const char* J_HIT_END
    const char* J_HIGHLIGHTS
    Py_ssize_t J_FIXED
    char* _lit_at "J_AT"(char* o, const char* s) noexcept nogil
    void _lit "J_LIT"(Buf* b, const char* s) noexcept nogil


cdef void _put_highlights(Buf* b, const Piece* pieces, int n) noexcept nogil:
    """`,"highlights":[[[a,b],...],[...],[...]]`: per line, the spans the typed words matched
    (`_highlight_spans`)."""
    cdef int16_t spans[2 * PIECES_MAX]
    cdef int line, k, count
    if _grow(b, 24 + 44 * n) != 0:
        return
    _lit(b, J_HIGHLIGHTS)
    for line in range(3):
        if line:
            b.p[b.n] = 44
            b.n += 1
        b.p[b.n] = 91
        b.n += 1
        _highlight_spans(pieces, n, line, spans, &count)
        for k in range(count):
            if k:
                b.p[b.n] = 44
                b.n += 1
            b.p[b.n] = 91
            b.n += 1
            _raw_int(b, spans[2 * k])
            b.p[b.n] = 44
            b.n += 1
            _raw_int(b, spans[2 * k + 1])
            b.p[b.n] = 93
            b.n += 1
        b.p[b.n] = 93
        b.n += 1
    b.p[b.n] = 93
    b.n += 1


# PERF (issue 39): a hit's names were three reads deep (the group's four string ids, their
# offsets, their text: a cache miss each, the first two in eight places); the record of each
# group's names, made when the index opens (32 bytes a group: 7.6 MB for the country), leaves
# two (the record, the text)
cdef GroupNames* _group_names(const Data* d) noexcept nogil:
    """d.g_names: the GroupNames of every group; NULL when out of memory (the caller raises)."""
    cdef GroupNames* t = <GroupNames*>malloc(max(d.n_groups, 1) * sizeof(GroupNames))
    cdef int32_t g, k, sid
    cdef const int32_t* ids[4]
    if t == NULL:
        return NULL
    ids[0], ids[1], ids[2], ids[3] = d.g_street, d.g_locality, d.g_municipality, d.g_province
    for g in range(d.n_groups):
        for k in range(4):
            sid = ids[k][g]
            t[g].off[k] = <uint32_t>d.s_off[sid]
            t[g].len[k] = <uint32_t>(d.s_off[sid + 1] - d.s_off[sid])
    return t


cdef inline Py_ssize_t _hit_room(const Data* d, int32_t a) noexcept nogil:
    """The bytes that the JSON of address a (`_put_hit`, without highlights) takes at most: the
    fixed parts, the names (street and place twice), the addition twice, at most 20 bytes for
    each of the 6 numbers written (number and postcode twice, lat, lon) and 8 for the single
    ones (the letter twice, the spaces, the hyphen)."""
    cdef const GroupNames* gn = &d.g_names[d.a_group[a]]
    cdef int32_t add = d.a_addition[a]
    return (J_FIXED + 2 * <Py_ssize_t>gn.len[0] + 2 * <Py_ssize_t>gn.len[1] + gn.len[2] + gn.len[3]
            + 2 * (d.add_off[add + 1] - d.add_off[add]) + 6 * 20 + 8)


# PERF (issue 39): a hit's JSON is written through a pointer of its own (`o`), kept in a
# register, and b.n is set once at the end: written through b.p + b.n, every byte stored (a
# char may alias anything) made the compiler load b.p and b.n again, and the hit's fields
# with them (a block of flats: 100-160 hits of some 700 bytes each).
cdef void _put_hit(Buf* b, const Data* d, int32_t a, const Piece* pieces, int npieces) noexcept nogil:
    cdef int32_t g = d.a_group[a]
    cdef const GroupNames* gn = &d.g_names[g]
    cdef char letter = <char>d.a_letter[a]
    cdef int32_t add = d.a_addition[a]
    cdef int64_t ao = d.add_off[add]
    cdef Py_ssize_t alen = d.add_off[add + 1] - ao
    cdef const char* addition = <const char*>d.add_blob + ao
    cdef int32_t number = d.a_number[a], postcode = d.a_postcode[a], lat = d.a_lat[a], lon = d.a_lon[a]
    cdef Py_ssize_t nstreet = gn.len[0], nplace = gn.len[1], nmuni = gn.len[2], nprov = gn.len[3]
    cdef const char* street = <const char*>d.s_blob + gn.off[0]
    cdef const char* place = <const char*>d.s_blob + gn.off[1]
    cdef const char* muni = <const char*>d.s_blob + gn.off[2]
    cdef const char* prov = <const char*>d.s_blob + gn.off[3]
    cdef char* o
    if _grow(b, _hit_room(d, a)) != 0:
        return
    o = b.p + b.n
    o = _lit_at(o, J_STREET)
    o = _w(o, street, nstreet)
    o = _lit_at(o, J_NUMBER)
    o = _w_int(o, number)
    o = _lit_at(o, J_NUMBER_END)
    if letter:
        o = _lit_at(o, J_LETTER)
        o[0] = letter
        o = _lit_at(o + 1, J_VALUE_END)
    if alen:
        o = _lit_at(o, J_ADDITION)
        o = _w(o, addition, alen)
        o = _lit_at(o, J_VALUE_END)
    o = _lit_at(o, J_POSTCODE)
    o = _w_postcode(o, postcode)
    o = _lit_at(o, J_LOCALITY)
    o = _w(o, place, nplace)
    o = _lit_at(o, J_MUNICIPALITY)
    o = _w(o, muni, nmuni)
    o = _lit_at(o, J_PROVINCE)
    o = _w(o, prov, nprov)
    o = _lit_at(o, J_LINES)
    o = _w(o, street, nstreet)
    o[0] = 32
    o = _w_int(o + 1, number)
    if letter:
        o[0] = letter
        o += 1
    if alen:
        o[0] = 45
        o = _w(o + 1, addition, alen)
    o = _lit_at(o, J_LINE2)
    o = _w_postcode(o, postcode)
    o[0] = 32
    o = _w(o + 1, place, nplace)
    o = _lit_at(o, J_LOCATION)
    o = _w_micro(o, lat)
    o = _lit_at(o, J_LONGITUDE)
    o = _w_micro(o, lon)
    if pieces == NULL:
        b.n = _lit_at(o, J_HIT_END) - b.p
        return
    o[0] = 125
    b.n = o + 1 - b.p
    _put_highlights(b, pieces, npieces)
    _put(b, "}", 1)


cdef void _fetch_hits(const Data* d, const int* hits, int n) noexcept nogil:
    """PERF: fetch what the hits' JSON reads, level by level for all of them at once (the
    address row, its group's names (`_group_names`), their text), so that the cache misses of a
    cold query overlap instead of following one another field by field (a fifth of the time
    of a query with two slips was its rendering)."""
    cdef int i
    cdef int32_t a
    _keep_calls()
    for i in range(n):
        a = hits[i]
        _prefetch(&d.a_group[a])
        _prefetch(&d.a_number[a])
        _prefetch(&d.a_letter[a])
        _prefetch(&d.a_addition[a])
        _prefetch(&d.a_postcode[a])
        _prefetch(&d.a_lat[a])
        _prefetch(&d.a_lon[a])
    for i in range(n):
        _prefetch(&d.g_names[d.a_group[hits[i]]])
        _prefetch(&d.add_off[d.a_addition[hits[i]]])
    for i in range(n):
        _fetch_names(d, d.a_group[hits[i]])


cdef inline void _fetch_names(const Data* d, int32_t g) noexcept nogil:
    """Fetch the text of group g's names (`_group_names`: what a hit's JSON copies)."""
    _prefetch(d.s_blob + d.g_names[g].off[0])
    _prefetch(d.s_blob + d.g_names[g].off[1])
    _prefetch(d.s_blob + d.g_names[g].off[2])
    _prefetch(d.s_blob + d.g_names[g].off[3])


cdef int _render(const Data* d, const int* hits, int n, int limit, Buf* b, const Explained* ex) noexcept nogil:
    """The response body of the hits; with each one's highlights, when explained (ex not NULL)."""
    cdef int i
    _fetch_hits(d, hits, n)
    _puts(b, "{\"hits\":[")
    for i in range(n):
        if i:
            _put(b, ",", 1)
        if ex == NULL:
            _put_hit(b, d, hits[i], NULL, 0)
        else:
            _put_hit(b, d, hits[i], ex.pieces[i], ex.n[i])
    _puts(b, "],\"limit\":")
    _put_int(b, limit)
    _put(b, "}", 1)
    return 0
