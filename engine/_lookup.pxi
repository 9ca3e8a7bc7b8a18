# Postcode and house number, and the address at a location (included by _core.pyx after the
# Python-facing class): the arguments' rules, the look-ups and their JSON.

# The rules for the arguments of a look-up; a wrong type is a TypeError, a wrong value a
# QueryError naming the parameter (as the HTTP service does):
#   postcode  a str: four digits (not starting with 0), then two letters, in any case, with
#             spaces or none between and around them ("1012LG", "1012 lg", " 1012  LG ")
#   number    an integer (numbers.Integral, not bool) from 1 to 99999
#   letter    None (any), or a str of one letter A-Z in any case
#   addition  None (any), or a str of 1 to 4 letters and digits A-Z, 0-9 in any case
#   radius    None (none), or a real number of metres above 0 (finite)
DEF NUMBER_MAX = 99999
DEF ADDITION_MAX = 4


def _name_of(Index index, int32_t sid):
    """String sid of the index's table as a str (for `_AreaNames`)."""
    index._check_open()
    return _string(&index.d, sid)


def _lookup_arguments(postcode, number, letter, addition):
    """(postcode code, number, letter (0: any), addition bytes lower case or None)."""
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
    cdef int L = 0
    if letter is not None:
        if not isinstance(letter, str):
            raise TypeError(f"letter must be a str, not {type(letter).__name__}")
        if len(<str>letter) != 1 or not ("a" <= (<str>letter).lower() <= "z"):
            raise QueryError("letter must be one letter, A to Z", parameter="letter")
        L = ord((<str>letter).lower())
    add = None
    if addition is not None:
        if not isinstance(addition, str):
            raise TypeError(f"addition must be a str, not {type(addition).__name__}")
        if not 1 <= len(<str>addition) <= ADDITION_MAX or not (<str>addition).isascii() \
                or not (<str>addition).isalnum():
            raise QueryError(f"addition must be 1 to {ADDITION_MAX} letters and digits", parameter="addition")
        add = (<str>addition).lower().encode()
    return lo, number, L, add


cdef list _lookup_rows(const Data* d, int32_t code, int number, int letter, bytes add):
    """The address rows of postcode `code` and house `number`, in the order of the register
    (pc_addr: by row, which is by street, then letter, then addition), narrowed by the letter
    and addition when given (case-insensitive)."""
    cdef int p = _pc_index(d, code), hi, i, k, alen
    cdef int32_t a, add_id
    cdef const uint8_t* A
    cdef const char* want = NULL
    cdef int wlen = 0
    cdef list out = []
    if p >= d.n_pc or d.pc_code[p] != code:
        return out
    if add is not None:
        want = <const char*>add
        wlen = len(add)
    hi = d.pc_start[p + 1]
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
        out.append(a)
    return out


def _lookup(Index index, postcode, number, letter, addition):
    """The address rows of a look-up (`Index.lookup_ids`)."""
    code, n, L, add = _lookup_arguments(postcode, number, letter, addition)
    index._check_open()
    return _lookup_rows(&index.d, code, n, L, add)


cdef bytes _hits_json(const Data* d, list rows, const double* metres, int limit):
    """The body {"hits":[...]} of these rows (with "limit" when limit > 0), each hit with its
    "distance" in metres when `metres` is given (one decimal)."""
    cdef Buf b
    cdef int i, n = len(rows)
    cdef int64_t tenths
    b.cap = 2048 + 700 * n
    b.n = 0
    b.p = <char*>malloc(b.cap)
    if b.p == NULL:
        raise MemoryError()
    try:
        _puts(&b, "{\"hits\":[")
        for i in range(n):
            if i:
                _put(&b, ",", 1)
            _put_hit(&b, d, <int32_t>rows[i], NULL, 0)
            if metres != NULL:
                b.n -= 1   # the hit's closing brace
                _puts(&b, ",\"distance\":")
                tenths = _tenths(metres[i])
                _put_int(&b, tenths // 10)
                _put(&b, ".", 1)
                _put_int(&b, tenths % 10)
                _put(&b, "}", 1)
        _put(&b, "]", 1)
        if limit > 0:
            _puts(&b, ",\"limit\":")
            _put_int(&b, limit)
        _put(&b, "}", 1)
        return PyBytes_FromStringAndSize(b.p, b.n)
    finally:
        free(b.p)


def _lookup_json(Index index, postcode, number, letter, addition):
    """The body of a look-up (`Index.lookup_json`)."""
    code, n, L, add = _lookup_arguments(postcode, number, letter, addition)
    index._enter()
    try:
        rows = _lookup_rows(&index.d, code, n, L, add)
        return _hits_json(&index.d, rows, NULL, 0)
    finally:
        index._leave()


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


def _reverse(Index index, lat, lon, limit, radius, AreaSpec area):
    """[(address row, metres), ...] nearest first (`Index.reverse_ids`)."""
    cdef Nearest r
    cdef Area none
    cdef const Area* a = &area.a if area is not None else &none
    cdef int i
    none.on = 0
    if _near_arguments(index, lat, lon, limit, radius, &r):
        return []
    index._enter()
    try:
        with nogil:
            _nearest(&index.d, a, &r)
        return [(r.addr[i], _tenths(sqrt(r.d2[i]) * METRES_PER_MICRODEGREE) / 10.0) for i in range(r.n)]
    finally:
        index._leave()


def _reverse_json(Index index, lat, lon, limit, radius, AreaSpec area):
    """The body of a reverse search (`Index.reverse_json`): {"hits":[...],"limit":N}."""
    cdef Nearest r
    cdef Area none
    cdef const Area* a = &area.a if area is not None else &none
    cdef double metres[MAXLIMIT]
    cdef int i
    none.on = 0
    metres[0] = 0
    if _near_arguments(index, lat, lon, limit, radius, &r):
        return _hits_json(&index.d, [], metres, r.k)
    index._enter()
    try:
        with nogil:
            _nearest(&index.d, a, &r)
            for i in range(r.n):
                metres[i] = sqrt(r.d2[i]) * METRES_PER_MICRODEGREE
        return _hits_json(&index.d, [r.addr[i] for i in range(r.n)], metres, r.k)
    finally:
        index._leave()
