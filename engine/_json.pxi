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


cdef void _fetch_hits(const Data* d, const int* hits, int n) noexcept nogil:
    """PERF: fetch what the hits' JSON reads, level by level for all of them at once (the
    address row, its group's names, their offsets, their text), so that the cache misses of a
    cold query overlap instead of following one another field by field (a fifth of the time
    of a query with two slips was its rendering)."""
    cdef int i
    cdef int32_t a, g
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
        g = d.a_group[hits[i]]
        _prefetch(&d.g_street[g])
        _prefetch(&d.g_locality[g])
        _prefetch(&d.g_municipality[g])
        _prefetch(&d.g_province[g])
        _prefetch(&d.add_off[d.a_addition[hits[i]]])
    for i in range(n):
        g = d.a_group[hits[i]]
        _prefetch(&d.s_off[d.g_street[g]])
        _prefetch(&d.s_off[d.g_locality[g]])
        _prefetch(&d.s_off[d.g_municipality[g]])
    for i in range(n):
        g = d.a_group[hits[i]]
        _prefetch(d.s_blob + d.s_off[d.g_street[g]])
        _prefetch(d.s_blob + d.s_off[d.g_locality[g]])
        _prefetch(d.s_blob + d.s_off[d.g_municipality[g]])


cdef int _render(const Data* d, const int* hits, int n, int limit, Buf* b) noexcept nogil:
    cdef int i
    _fetch_hits(d, hits, n)
    _puts(b, "{\"hits\":[")
    for i in range(n):
        if i:
            _put(b, ",", 1)
        _put_hit(b, d, hits[i])
    _puts(b, "],\"limit\":")
    _put_int(b, limit)
    _put(b, "}", 1)
    return 0
