# Postcode and house number, and the address at a location (included by _core.pyx after the
# Python-facing class): the arguments' rules, the look-ups and their JSON.

# The rules for the arguments of a look-up; a wrong type is a TypeError, a wrong value a
# QueryError naming the parameter (as the HTTP service does):
#   postcode  a str: four digits (not starting with 0), then two letters, in any case, with
#             spaces or none between and around them ("1012LG", "1012 lg", " 1012  LG ")
#   number    an integer (numbers.Integral, not bool) from 1 to NUMBER_MAX (engine/_register.pxd)
#   letter    None (any), or a str of one letter A-Z in any case
#   addition  None (any), or a str of 1 to ADDITION_MAX letters and digits A-Z, 0-9 in any case
#   radius    None (none), or a real number of metres above 0 (finite)


def _name_of(Index index, int32_t sid):
    """String sid of the index's table as a str (for `_AreaNames`)."""
    index._check_open()
    return _string(&index.d, sid)


cdef object _lookup_arguments(postcode, number, letter, addition, int32_t* code, int* number_out,
                              int* letter_out):
    """Check a look-up's arguments: the postcode's code, the number and the letter (0: any)
    into the outputs; return the addition as lower-case bytes, or None (any)."""
    cdef int32_t lo, hi
    if not isinstance(postcode, str):
        raise TypeError(f"postcode must be a str, not {type(postcode).__name__}")
    if type(number) is not int:
        if isinstance(number, bool) or not isinstance(number, numbers.Integral):
            raise TypeError(f"number must be an int (numbers.Integral), not {type(number).__name__}")
        number = int(number)
    if _postcode_range(<str>postcode, &lo, &hi) < 0 or lo != hi:
        raise QueryError("postcode must be four digits and two letters, as 1012 LG or 1012lg",
                         parameter="postcode")
    if not 1 <= number <= NUMBER_MAX:
        raise QueryError(f"number must be an integer from 1 to {NUMBER_MAX}", parameter="number")
    code[0] = lo
    number_out[0] = number
    letter_out[0] = 0
    if letter is not None:
        if not isinstance(letter, str):
            raise TypeError(f"letter must be a str, not {type(letter).__name__}")
        if len(<str>letter) != 1 or not ("a" <= (<str>letter).lower() <= "z"):
            raise QueryError("letter must be one letter, A to Z", parameter="letter")
        letter_out[0] = ord((<str>letter).lower())
    add = None
    if addition is not None:
        if not isinstance(addition, str):
            raise TypeError(f"addition must be a str, not {type(addition).__name__}")
        if not 1 <= len(<str>addition) <= ADDITION_MAX or not (<str>addition).isascii() \
                or not (<str>addition).isalnum():
            raise QueryError(f"addition must be 1 to {ADDITION_MAX} letters and digits", parameter="addition")
        add = (<str>addition).lower().encode()
    return add


# PERF (issue 39): a postcode's addresses are mostly one run of one street's rows, every other
# number (median 23 addresses over 34 rows; 96 % of the addresses in postcodes of at most 256
# rows). Their number search read a_number row after row, each read waiting for the one
# before, then the hit's fields another wait; the rows between the postcode's first and last
# address are now fetched at once, numbers (and fields, for the JSON), when they are at most
# this many.
DEF POSTCODE_SPAN = 64


cdef void _fetch_postcode(const Data* d, int lo, int hi, bint fields) noexcept nogil:
    """Fetch the numbers the search reads (and with `fields` those the JSON reads) of the rows
    between the first and last address of pc_addr[lo:hi], when there are at most
    POSTCODE_SPAN."""
    cdef int32_t a, first, last
    _keep_calls()
    if hi <= lo:
        return
    first = d.pc_addr[lo]
    last = d.pc_addr[hi - 1]
    if fields:
        # the names of the first address's street (the postcode's, mostly), two reads further
        # on (the group, its names' offsets), while the number is searched for
        _fetch_names(d, d.a_group[first])
    if first > last or last - first >= POSTCODE_SPAN:
        return
    # a cache line holds 16 rows of an int32 column: one fetch each 16 rows and the last
    a = first
    while True:
        _prefetch(&d.a_number[a])
        if fields:
            _prefetch(&d.a_group[a])
            _prefetch(&d.a_addition[a])
            _prefetch(&d.a_postcode[a])
            _prefetch(&d.a_lat[a])
            _prefetch(&d.a_lon[a])
            _prefetch(&d.a_letter[a])
        if a == last:
            break
        a = a + 16 if a + 16 < last else last


cdef int _lookup_rows(const Data* d, int32_t code, int number, int letter, const char* want, int wlen,
                      int32_t* out, int cap, bint fields) noexcept nogil:
    """The address rows of postcode `code` and house `number`, in the order of the register
    (pc_addr: by row, which is by street, then letter, then addition), narrowed by the letter
    (0: any) and the lower-case addition `want` (NULL: any) when given (case-insensitive): the
    first `cap` of them into `out`; return how many there are (more than cap: call again with
    room for all). With `fields`, what their JSON reads is fetched too (`_fetch_postcode`)."""
    cdef int p = _pc_index(d, code), hi, i, k, alen, n = 0
    cdef int32_t a, add_id
    cdef const uint8_t* A
    if p >= d.n_pc or d.pc_code[p] != code:
        return 0
    hi = d.pc_start[p + 1]
    _fetch_postcode(d, d.pc_start[p], hi, fields)
    i = _lower_bound_number(d, d.pc_start[p], hi, number, True)
    while i < hi:
        a = d.pc_addr[i]
        if d.a_number[a] != number:
            break
        i += 1
        if letter and _lower(d.a_letter[a]) != letter:
            continue
        if want != NULL:
            add_id = d.a_addition[a]
            A = d.add_blob + d.add_off[add_id]
            alen = <int>(d.add_off[add_id + 1] - d.add_off[add_id])
            if alen != wlen:
                continue
            k = 0
            while k < alen and _lower(A[k]) == want[k]:
                k += 1
            if k < alen:
                continue
        if n < cap:
            out[n] = a
        n += 1
    return n


# PERF (issue 39): the rows of a look-up go into this many on the stack; a postcode and number
# with more addresses (a block of flats can have hundreds) is looked up again with room for all
DEF LOOKUP_ROWS = 64


# PERF (issue 39): a body that fits in this many bytes (a hit takes about 700, a reverse's
# five about 3,500) is written on the stack, in the same section without the GIL as the search,
# then copied into a bytes object of its size: the body of a look-up or a reverse was written
# in a section of its own (the GIL taken and given back once more) into a bytes object made as
# large as it could be and cut to size after (a realloc).
DEF SMALL_BODY = 16384


cdef object _lookup(Index index, postcode, number, letter, addition, bint as_json):
    """The address rows of a look-up (`Index.lookup_ids`), or their body {"hits":[...]} as
    JSON bytes (`Index.lookup_json`)."""
    cdef int32_t code
    cdef int n_number, L, n, i, wlen = 0
    cdef int32_t rows[LOOKUP_ROWS]
    cdef int32_t* many = NULL
    cdef const int32_t* got = rows
    cdef const char* want = NULL
    cdef char small[SMALL_BODY]
    cdef Buf b
    b.n = -1
    add = _lookup_arguments(postcode, number, letter, addition, &code, &n_number, &L)
    if add is not None:
        want = <const char*>(<bytes>add)
        wlen = len(<bytes>add)
    index._enter()
    try:
        with nogil:
            n = _lookup_rows(&index.d, code, n_number, L, want, wlen, rows, LOOKUP_ROWS, as_json)
            if as_json and n <= LOOKUP_ROWS:
                _small_json(&b, small, &index.d, rows, n, NULL, 0)
        if b.n >= 0:
            return PyBytes_FromStringAndSize(small, b.n)
        if n > LOOKUP_ROWS:
            many = <int32_t*>malloc(n * sizeof(int32_t))
            if many == NULL:
                raise MemoryError()
            _lookup_rows(&index.d, code, n_number, L, want, wlen, many, n, as_json)
            got = many
        if as_json:
            return _hits_json(&index.d, got, n, NULL, 0)
        return [got[i] for i in range(n)]
    finally:
        free(many)
        index._leave()


# PERF (issue 39): the body was written into a buffer of its own, then copied into the bytes
# object (a block of flats: 60 kB, a tenth of its time; one hit: a malloc and a free). It is
# now written into the bytes object itself, made as large as the body can be (`_hit_room`
# a hit, HIT_EXTRA_ROOM for its comma and distance, HITS_ROOM for the rest) and cut to
# size after: no `_grow` below ever asks for more room than that, so the bytes never move.
DEF HIT_EXTRA_ROOM = 64   # ',' and ',"distance":' with two numbers of at most 20 bytes, '.', '}'
DEF HITS_ROOM = 64        # '{"hits":[', ']', ',"limit":' with a number of at most 20 bytes, '}'


cdef extern from "Python.h":
    # a bytes object not shared yet, written in place, then cut to size (`_hits_json`)
    PyObject* _new_bytes "PyBytes_FromStringAndSize"(const char* v, Py_ssize_t n)
    char* _bytes_data "PyBytes_AS_STRING"(PyObject* o) noexcept nogil
    int _cut_bytes "_PyBytes_Resize"(PyObject** o, Py_ssize_t n)


cdef Py_ssize_t _hits_room(const Data* d, const int32_t* rows, int n) noexcept nogil:
    """The bytes the body of these rows (`_write_hits`) takes at most; what the hits read is
    fetched first, for all of them at once (as `_render` does)."""
    cdef Py_ssize_t room = HITS_ROOM
    cdef int i
    _fetch_hits(d, <const int*>rows, n if n <= MAXLIMIT else MAXLIMIT)
    for i in range(n):
        room += _hit_room(d, rows[i]) + HIT_EXTRA_ROOM
    return room


cdef void _write_hits(Buf* b, const Data* d, const int32_t* rows, int n, const double* metres,
                      int limit) noexcept nogil:
    """The body {"hits":[...]} of these rows (with "limit" when limit > 0), each hit with its
    "distance" in metres when `metres` is given (one decimal), into b (room made for it:
    `_hits_room`)."""
    cdef int i
    cdef int64_t tenths
    _puts(b, "{\"hits\":[")
    for i in range(n):
        if i:
            _put(b, ",", 1)
        _put_hit(b, d, rows[i], NULL, 0)
        if metres != NULL:
            b.n -= 1   # the hit's closing brace
            _puts(b, ",\"distance\":")
            tenths = _tenths(metres[i])
            _put_int(b, tenths // 10)
            _put(b, ".", 1)
            _put_int(b, tenths % 10)
            _put(b, "}", 1)
    _put(b, "]", 1)
    if limit > 0:
        _puts(b, ",\"limit\":")
        _put_int(b, limit)
    _put(b, "}", 1)


cdef void _small_json(Buf* b, char* small, const Data* d, const int32_t* rows, int n,
                      const double* metres, int limit) noexcept nogil:
    """The body (`_write_hits`) into `small` (SMALL_BODY bytes), b.n its length; b.n = -1
    when it may not fit."""
    b.n = -1
    if _hits_room(d, rows, n) > SMALL_BODY:
        return
    b.p = small
    b.n = 0
    b.cap = SMALL_BODY
    _write_hits(b, d, rows, n, metres, limit)


cdef bytes _hits_json(const Data* d, const int32_t* rows, int n, const double* metres, int limit):
    """The body (`_write_hits`) as a bytes object, written into it in place (a body of any
    length: a block of flats)."""
    cdef Buf b
    cdef PyObject* raw
    b.cap = _hits_room(d, rows, n)
    raw = _new_bytes(NULL, b.cap)
    if raw == NULL:
        raise MemoryError()
    b.p = _bytes_data(raw)
    b.n = 0
    with nogil:
        _write_hits(&b, d, rows, n, metres, limit)
    if _cut_bytes(&raw, b.n) < 0:   # raw is released then
        raise MemoryError()
    out = <bytes>raw
    Py_DECREF(out)   # the reference `raw` held is now out's
    return out


cdef inline int64_t _tenths(double metres) noexcept nogil:
    """A distance in metres to the tenth, as the answers write it (12.25 -> 123: 12.3)."""
    return <int64_t>(metres * 10.0 + 0.5)


def distance_metres(double d2):
    """Metres of a squared distance in the spatial index's units (`_nearest`), for the tests'
    brute-force twin: sqrt(d2) * KM_PER_DEGREE * 1000 * MICRODEGREE."""
    return sqrt(d2) * METRES_PER_MICRODEGREE


cdef int _near_arguments(Index index, lat, lon, limit, radius, Nearest* r) except -1:
    """Check the arguments of a reverse search and set up r; 0, or 1 when the point lies
    outside the box of the index's addresses widened by NEAR_MARGIN degrees (no answer)."""
    cdef int n_limit
    cdef double la, lo, rad
    if lat is None or lon is None:
        raise QueryError("lat and lon are both needed", parameter="lat" if lat is None else "lon")
    _arguments("", limit, lat, lon, &n_limit, &la, &lo)
    if radius is not None:
        if isinstance(radius, bool) or not isinstance(radius, (numbers.Real, Decimal)):
            raise TypeError(f"radius must be a real number, not {type(radius).__name__}")
        try:
            rad = float(radius)
        except (OverflowError, ValueError):
            rad = float("nan")
        if not (0 < rad < float("inf")):
            raise QueryError("radius must be a number of metres above 0", parameter="radius")
        r.max_d2 = (rad / METRES_PER_MICRODEGREE) * (rad / METRES_PER_MICRODEGREE)
    else:
        r.max_d2 = float("inf")
    r.k = n_limit
    r.n = 0
    r.y = la * 1e6
    r.x = lo * 1e6
    r.cos_lat = cos(la * M_PI / 180.0)
    index._check_open()
    if index.d.n_addr == 0:
        return 1
    cdef const int32_t* box = index.d.rv_box
    cdef double m = NEAR_MARGIN * 1e6
    if r.y < box[0] - m or r.y > box[1] + m or r.x < box[2] - m or r.x > box[3] + m:
        return 1
    return 0


cdef object _reverse(Index index, lat, lon, limit, radius, AreaSpec area, bint as_json):
    """[(address row, metres), ...] nearest first (`Index.reverse_ids`), or their body
    {"hits":[...],"limit":N} as JSON bytes (`Index.reverse_json`)."""
    cdef Nearest r
    cdef Area none
    cdef const Area* a = &area.a if area is not None else &none
    cdef double metres[MAXLIMIT]
    cdef int i
    cdef char small[SMALL_BODY]
    cdef Buf b
    none.on = 0
    metres[0] = 0
    if _near_arguments(index, lat, lon, limit, radius, &r):
        return _hits_json(&index.d, r.addr, 0, metres, r.k) if as_json else []
    index._enter()
    try:
        with nogil:
            _nearest(&index.d, a, &r)
            for i in range(r.n):
                metres[i] = sqrt(r.d2[i]) * METRES_PER_MICRODEGREE
            b.n = -1
            if as_json:
                _small_json(&b, small, &index.d, r.addr, r.n, metres, r.k)
        if b.n >= 0:
            return PyBytes_FromStringAndSize(small, b.n)
        if as_json:
            return _hits_json(&index.d, r.addr, r.n, metres, r.k)
        return [(r.addr[i], _tenths(metres[i]) / 10.0) for i in range(r.n)]
    finally:
        index._leave()
