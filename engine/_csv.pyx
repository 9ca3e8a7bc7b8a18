# cython: language_level=3
"""Streaming parser and validator for the `;`-separated address CSV.

Design
------
* The caller (engine/ingest/source.py) decompresses the file and hands us chunks of
  bytes of any size through `Parser.feed`, then calls `Parser.finish`.
* Records never span lines (a quoted field that does not close on its own
  line is a bad row), so we split on physical `\\n` with memchr.  The only
  state kept between chunks is the unfinished last line (`carry`), which is
  completed by the next chunk.  Nothing else depends on chunk boundaries.
* Each line goes through C-level passes that need no Python objects:
    1. a UTF-8 validity check (8 bytes at a time while the text is ASCII),
    2. a field splitter with RFC-4180 quoting (`""` -> `"`; unescaped copies
       go to a scratch buffer, only for the columns we keep),
    3. per-column checks and number parsing (house number, postcode,
       micro-degree coordinates parsed from the decimal digits, no floats).
* Text columns are interned: the field is first compared with the previous
  row's value for that column (memcmp; consecutive rows nearly always share
  street, locality, municipality and province); only on a change do we make
  a `bytes` key and look it up in a dict, decoding to `str` only when the
  value is new.  So the common row touches no Python objects at all.
* Output columns are C buffers grown by doubling with realloc (large blocks
  are moved with mremap, not copied); at the end each one is shrunk to size
  and handed to numpy without a copy, the buffer owner becoming the array's
  base object.
* Bad rows are counted and their (line, reason) kept up to MAX_ERRORS; the
  reason text is only built for bad rows.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy

cimport numpy as cnp

from engine._register cimport ADDITION_MAX, NUMBER_MAX

cnp.import_array()

# Required header columns, in the order of the slots below.
REQUIRED_COLUMNS = (
    "straat", "huisnummer", "huisletter", "huisnummertoevoeging", "postcode",
    "woonplaats", "gemeente", "provincie", "lat", "lon",
)
# Optional header columns, read when the header has them (slots after the required ones): the
# municipality as the source extract had it (a former one, before a merger; build.py makes it an
# alias of the current one). An empty value, or no such column: none.
OPTIONAL_COLUMNS = ("gemeente_bron",)
# At most this many (line, reason) pairs are kept; all bad rows are counted.
MAX_ERRORS = 10_000

# Netherlands bounding box, in micro-degrees (inclusive).
cdef int64_t LAT_MIN = 50_700_000, LAT_MAX = 53_700_000
cdef int64_t LON_MIN = 3_200_000, LON_MAX = 7_300_000

# Slots: positions of the required columns in `Parser.fld`.
cdef enum:
    S_STREET, S_NUMBER, S_LETTER, S_ADDITION, S_POSTCODE,
    S_LOCALITY, S_MUNICIPALITY, S_PROVINCE, S_LAT, S_LON,
    N_REQUIRED,
    S_FORMER = N_REQUIRED,
    N_SLOTS

# Interning caches (one "previous value" per interned column).
cdef enum:
    K_STREET, K_LOCALITY, K_MUNICIPALITY, K_PROVINCE, K_ADDITION, K_FORMER, N_KEYS

# Outcome of checking one line; R_OK or the reason it is rejected.
cdef enum Reason:
    R_OK, R_UTF8, R_UNTERMINATED, R_AFTER_QUOTE, R_EMPTY_LINE, R_COLUMNS,
    R_STREET, R_NUMBER, R_LETTER, R_ADDITION, R_POSTCODE,
    R_LOCALITY, R_MUNICIPALITY, R_PROVINCE, R_COORD_MALFORMED, R_COORD_OUTSIDE


class HeaderError(ValueError):
    """The header line is missing, unreadable or lacks a required column."""


cdef struct Field:
    const unsigned char* p   # start of the (unquoted, unescaped) value
    Py_ssize_t n             # its length in bytes


# --------------------------------------------------------------------------
# C helpers: no Python objects, callable without the GIL.
# --------------------------------------------------------------------------

cdef inline bint is_alpha(unsigned char c) noexcept nogil:
    return (c | 0x20) >= c'a' and (c | 0x20) <= c'z'


cdef inline bint is_digit(unsigned char c) noexcept nogil:
    return c >= c'0' and c <= c'9'


cdef inline Field strip(Field f) noexcept nogil:
    """Drop surrounding spaces and tabs."""
    while f.n > 0 and (f.p[0] == c' ' or f.p[0] == c'\t'):
        f.p += 1
        f.n -= 1
    while f.n > 0 and (f.p[f.n - 1] == c' ' or f.p[f.n - 1] == c'\t'):
        f.n -= 1
    return f


cdef bint valid_utf8(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 check: no overlongs, surrogates or code points > U+10FFFF."""
    cdef Py_ssize_t i = 0, need
    cdef unsigned char c, c1
    cdef uint64_t word
    while i < n:
        # Fast path: skip 8 ASCII bytes at a time.
        while i + 8 <= n:
            memcpy(&word, p + i, 8)
            if word & <uint64_t>0x8080808080808080ULL:
                break
            i += 8
        if i >= n:
            break
        c = p[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2:            # stray continuation byte or overlong 2-byte form
            return False
        elif c < 0xE0:
            need = 1
        elif c < 0xF0:
            need = 2
        elif c < 0xF5:
            need = 3
        else:
            return False
        if i + need >= n:       # sequence cut off by the end of the line
            return False
        c1 = p[i + 1]
        if (c1 & 0xC0) != 0x80:
            return False
        # Second-byte ranges that rule out overlongs, surrogates and > U+10FFFF.
        if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0) \
                or (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
            return False
        if need >= 2 and (p[i + 2] & 0xC0) != 0x80:
            return False
        if need == 3 and (p[i + 3] & 0xC0) != 0x80:
            return False
        i += need + 1
    return True


cdef int house_number(Field f) noexcept nogil:
    """1..NUMBER_MAX from digits only (leading zeros allowed), else -1."""
    cdef Py_ssize_t i
    cdef int v = 0
    if f.n == 0:
        return -1
    for i in range(f.n):
        if not is_digit(f.p[i]):
            return -1
        v = v * 10 + (f.p[i] - c'0')
        if v > NUMBER_MAX:
            return -1
    return v if v >= 1 else -1


cdef int32_t postcode_code(Field f) noexcept nogil:
    """`1234AB` (letters in either case) -> int(digits) * 676 + letters, else -1."""
    cdef Py_ssize_t i
    cdef int32_t digits = 0
    if f.n != 6 or f.p[0] == c'0':
        return -1
    for i in range(4):
        if not is_digit(f.p[i]):
            return -1
        digits = digits * 10 + (f.p[i] - c'0')
    if not is_alpha(f.p[4]) or not is_alpha(f.p[5]):
        return -1
    return digits * 676 + ((f.p[4] | 0x20) - c'a') * 26 + ((f.p[5] | 0x20) - c'a')


cdef bint valid_addition(Field f) noexcept nogil:
    """Empty is handled by the caller; here 1..ADDITION_MAX ASCII letters/digits."""
    cdef Py_ssize_t i
    if f.n < 1 or f.n > ADDITION_MAX:
        return False
    for i in range(f.n):
        if not (is_alpha(f.p[i]) or is_digit(f.p[i])):
            return False
    return True


cdef struct Coord:
    int64_t micro     # |value| in micro-degrees, truncated (saturates when huge)
    bint extra        # a non-zero digit beyond the 6th decimal
    bint round_up     # 7th decimal >= 5: round half away from zero
    bint negative


cdef bint parse_coord(Field f, Coord* out) noexcept nogil:
    """Parse `[+-]digits[.digits]` exactly (no floating point); False if malformed."""
    cdef Py_ssize_t i = 0, ndec = 0
    cdef int64_t ipart = 0, frac = 0
    cdef int d
    out.extra = False
    out.round_up = False
    out.negative = False
    if f.n > 0 and (f.p[0] == c'-' or f.p[0] == c'+'):
        out.negative = f.p[0] == c'-'
        i = 1
    if i >= f.n or not is_digit(f.p[i]):
        return False
    while i < f.n and is_digit(f.p[i]):
        if ipart < 1_000_000:       # beyond this it is far outside any box anyway
            ipart = ipart * 10 + (f.p[i] - c'0')
        i += 1
    if i < f.n:
        if f.p[i] != c'.':
            return False
        i += 1
        if i >= f.n:
            return False            # "52." is not accepted
        while i < f.n:
            if not is_digit(f.p[i]):
                return False
            d = f.p[i] - c'0'
            if ndec < 6:
                frac = frac * 10 + d
            elif ndec == 6:
                out.round_up = d >= 5
                out.extra = out.extra or d != 0
            else:
                out.extra = out.extra or d != 0
            ndec += 1
            i += 1
    while ndec < 6:
        frac *= 10
        ndec += 1
    out.micro = ipart * 1_000_000 + frac
    return True


cdef inline bint in_range(Coord c, int64_t lo, int64_t hi) noexcept nogil:
    """Exact test lo <= value <= hi on the unrounded decimal value."""
    if c.negative and (c.micro > 0 or c.extra):
        return False                # the box is all positive
    if c.micro < lo:
        return False
    return c.micro < hi or (c.micro == hi and not c.extra)


cdef int reserve(unsigned char** buf, Py_ssize_t* cap, Py_ssize_t need) except -1:
    """Make the malloc'ed `*buf` hold at least `need` bytes (doubling)."""
    cdef Py_ssize_t new_cap
    cdef unsigned char* p
    if need <= cap[0]:
        return 0
    new_cap = max(need, 2 * cap[0], 256)
    p = <unsigned char*>realloc(buf[0], new_cap)
    if p == NULL:
        raise MemoryError()
    buf[0] = p
    cap[0] = new_cap
    return 0


# --------------------------------------------------------------------------
# Output buffers
# --------------------------------------------------------------------------

cdef class _Column:
    """A growable C array; once finished it owns the memory of a numpy array."""
    cdef char* data
    cdef Py_ssize_t itemsize
    cdef int typenum

    def __cinit__(self, Py_ssize_t itemsize, int typenum):
        self.data = NULL
        self.itemsize = itemsize
        self.typenum = typenum

    def __dealloc__(self):
        free(self.data)

    cdef int resize(self, Py_ssize_t n) except -1:
        cdef char* p = <char*>realloc(self.data, max(n, 1) * self.itemsize)
        if p == NULL:
            raise MemoryError()
        self.data = p
        return 0

    cdef object to_array(self, Py_ssize_t n):
        """Shrink to `n` items and wrap as a numpy array that keeps us alive."""
        cdef cnp.npy_intp dims[1]
        self.resize(n)
        dims[0] = n
        arr = cnp.PyArray_SimpleNewFromData(1, dims, self.typenum, self.data)
        cnp.set_array_base(arr, self)   # the array keeps this owner alive
        return arr


# --------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------

cdef class Parser:
    """Feed the bytes of a CSV file with `feed`, then call `finish` once.

    `finish()` returns a dict with the ParsedTable fields that come from the
    content (counts, errors, numpy columns and string tables).
    """

    # --- position and header
    cdef readonly Py_ssize_t lines       # physical lines completed so far
    cdef readonly list columns           # header names (stripped), once seen
    cdef Py_ssize_t ncols
    cdef int* slot_of                    # header position -> slot, or -1
    cdef bint has_former                 # the header has the optional gemeente_bron
    cdef bint finished

    # --- the unfinished last line of the previous chunk
    cdef unsigned char* carry
    cdef Py_ssize_t carry_len, carry_cap

    # --- per-line state
    cdef Field fld[N_SLOTS]              # raw (unstripped) required fields
    cdef Py_ssize_t nfields
    cdef unsigned char* scratch          # unescaped copies of quoted fields
    cdef Py_ssize_t scratch_cap
    cdef Py_ssize_t blank_pending        # blank lines not yet known to be trailing
    cdef Py_ssize_t blank_first          # line number of the first of them

    # --- counts and errors
    cdef readonly Py_ssize_t rows_in, rejected
    cdef list errors

    # --- string tables and the previous-value caches
    cdef list tables                     # per key: dict bytes -> id
    cdef list strings                    # per key: list of str (id = position)
    cdef unsigned char* prev_buf[N_KEYS]
    cdef Py_ssize_t prev_len[N_KEYS]
    cdef Py_ssize_t prev_cap[N_KEYS]
    cdef int32_t prev_id[N_KEYS]

    # --- output columns (accepted rows)
    cdef Py_ssize_t n, cap
    cdef list cols                       # the _Column objects, in the order below
    cdef int32_t* o_street
    cdef int32_t* o_locality
    cdef int32_t* o_municipality
    cdef int32_t* o_province
    cdef int32_t* o_number
    cdef uint8_t* o_letter
    cdef int32_t* o_addition
    cdef int32_t* o_postcode
    cdef int32_t* o_lat
    cdef int32_t* o_lon
    cdef int32_t* o_line
    cdef int32_t* o_former

    def __cinit__(self):
        cdef int k
        self.slot_of = NULL
        self.carry = NULL
        self.scratch = NULL
        for k in range(N_KEYS):
            self.prev_buf[k] = NULL
            self.prev_len[k] = -1       # matches no field
            self.prev_cap[k] = 0
            self.prev_id[k] = 0

    def __init__(self):
        self.lines = 0
        self.columns = None
        self.ncols = 0
        self.has_former = False
        self.finished = False
        self.carry_len = self.carry_cap = 0
        self.scratch_cap = 0
        self.blank_pending = 0
        self.blank_first = 0
        self.rows_in = self.rejected = 0
        self.errors = []
        self.tables = [{} for _ in range(N_KEYS)]
        self.strings = [[] for _ in range(N_KEYS)]
        # Addition id 0 means "none".
        self.tables[K_ADDITION][b""] = 0
        self.strings[K_ADDITION].append("")
        # Former municipality id 0 means "none" (or no such column).
        self.tables[K_FORMER][b""] = 0
        self.strings[K_FORMER].append("")
        self.n = 0
        self.cap = 0
        self.cols = [
            _Column(4, cnp.NPY_INT32),   # street
            _Column(4, cnp.NPY_INT32),   # locality
            _Column(4, cnp.NPY_INT32),   # municipality
            _Column(4, cnp.NPY_INT32),   # province
            _Column(4, cnp.NPY_INT32),   # number
            _Column(1, cnp.NPY_UINT8),   # letter
            _Column(4, cnp.NPY_INT32),   # addition
            _Column(4, cnp.NPY_INT32),   # postcode
            _Column(4, cnp.NPY_INT32),   # lat
            _Column(4, cnp.NPY_INT32),   # lon
            _Column(4, cnp.NPY_INT32),   # line
            _Column(4, cnp.NPY_INT32),   # former municipality
        ]
        self._grow(1 << 16)

    def __dealloc__(self):
        cdef int k
        free(self.slot_of)
        free(self.carry)
        free(self.scratch)
        for k in range(N_KEYS):
            free(self.prev_buf[k])

    # ------------------------------------------------------------ buffers

    cdef int _grow(self, Py_ssize_t cap) except -1:
        """Resize every output column to `cap` rows and refresh the pointers."""
        cdef _Column c
        for c in self.cols:
            c.resize(cap)
        self.cap = cap
        self.o_street = <int32_t*>(<_Column>self.cols[0]).data
        self.o_locality = <int32_t*>(<_Column>self.cols[1]).data
        self.o_municipality = <int32_t*>(<_Column>self.cols[2]).data
        self.o_province = <int32_t*>(<_Column>self.cols[3]).data
        self.o_number = <int32_t*>(<_Column>self.cols[4]).data
        self.o_letter = <uint8_t*>(<_Column>self.cols[5]).data
        self.o_addition = <int32_t*>(<_Column>self.cols[6]).data
        self.o_postcode = <int32_t*>(<_Column>self.cols[7]).data
        self.o_lat = <int32_t*>(<_Column>self.cols[8]).data
        self.o_lon = <int32_t*>(<_Column>self.cols[9]).data
        self.o_line = <int32_t*>(<_Column>self.cols[10]).data
        self.o_former = <int32_t*>(<_Column>self.cols[11]).data
        return 0

    # ------------------------------------------------------------ feeding

    def feed(self, const unsigned char[::1] data not None):
        """Parse every line completed by `data`; keep the unfinished tail."""
        cdef const unsigned char* p
        cdef const unsigned char* end
        cdef const unsigned char* nl
        cdef Py_ssize_t n = data.shape[0]
        if self.finished:
            raise RuntimeError("feed() after finish()")
        if n == 0:
            return
        p = &data[0]
        end = p + n
        if self.carry_len > 0:
            # Complete the line left over from the previous chunk.
            nl = <const unsigned char*>memchr(p, c'\n', n)
            if nl == NULL:
                self._append_carry(p, n)
                return
            self._append_carry(p, nl - p)
            self._line(self.carry, self.carry_len)
            self.carry_len = 0
            p = nl + 1
        while p < end:
            nl = <const unsigned char*>memchr(p, c'\n', end - p)
            if nl == NULL:
                self._append_carry(p, end - p)
                break
            self._line(p, nl - p)
            p = nl + 1

    def finish(self):
        """Parse a last line without newline; return the parsed content."""
        cdef _Column c
        if self.finished:
            raise RuntimeError("finish() called twice")
        if self.carry_len > 0:
            self._line(self.carry, self.carry_len)
            self.carry_len = 0
        self.finished = True
        if self.columns is None:
            raise HeaderError("empty file: no header line")
        # Blank lines still pending are trailing ones: not rows.
        self.blank_pending = 0
        n = self.n
        arrays = [c.to_array(n) for c in self.cols]
        self.cols = []
        result = {
            "rows_in": self.rows_in,
            "rejected": self.rejected,
            "errors": self.errors,
            "street": arrays[0],
            "locality": arrays[1],
            "municipality": arrays[2],
            "province": arrays[3],
            "number": arrays[4],
            "letter": arrays[5],
            "addition": arrays[6],
            "postcode": arrays[7],
            "lat": arrays[8],
            "lon": arrays[9],
            "line": arrays[10],
            "former_municipality": arrays[11],
            "streets": self.strings[K_STREET],
            "localities": self.strings[K_LOCALITY],
            "municipalities": self.strings[K_MUNICIPALITY],
            "provinces": self.strings[K_PROVINCE],
            "additions": self.strings[K_ADDITION],
            "former_municipalities": self.strings[K_FORMER],
        }
        # Drop the lookup dicts now; the lists are owned by the result.
        self.tables = None
        return result

    cdef int _append_carry(self, const unsigned char* p, Py_ssize_t n) except -1:
        reserve(&self.carry, &self.carry_cap, self.carry_len + n)
        memcpy(self.carry + self.carry_len, p, n)
        self.carry_len += n
        return 0

    # ------------------------------------------------------------ one line

    cdef int _line(self, const unsigned char* p, Py_ssize_t n) except -1:
        """Handle one physical line (without its `\\n`)."""
        cdef int r
        self.lines += 1
        if n > 0 and p[n - 1] == c'\r':
            n -= 1
        if self.columns is None:
            self._header(p, n)
            return 0
        if n == 0:
            # Blank: a row only if something other than blank lines follows.
            if self.blank_pending == 0:
                self.blank_first = self.lines
            self.blank_pending += 1
            return 0
        while self.blank_pending > 0:
            self.rows_in += 1
            self._reject(self.blank_first, R_EMPTY_LINE)
            self.blank_first += 1
            self.blank_pending -= 1
        self.rows_in += 1
        r = self._check_and_store(p, n)
        if r != R_OK:
            self._reject(self.lines, r)
        return 0

    cdef int _split(self, const unsigned char* p, Py_ssize_t n) noexcept:
        """Split a line into fields; fill `fld` for the required columns.

        Sets `nfields`.  A field is quoted when its first byte is `"`; inside
        it `""` stands for one quote and `;` is literal.  Spaces may follow
        the closing quote; anything else there is malformed.  A `"` inside an
        unquoted field is taken literally.
        """
        cdef Py_ssize_t i = 0, start, end, j, o = 0, nf = 0
        cdef bint escaped
        cdef int s
        while True:
            escaped = False
            if i < n and p[i] == c'"':
                i += 1
                start = i
                while True:
                    if i >= n:
                        self.nfields = nf + 1
                        return R_UNTERMINATED
                    if p[i] == c'"':
                        if i + 1 < n and p[i + 1] == c'"':
                            escaped = True
                            i += 2
                            continue
                        break
                    i += 1
                end = i
                i += 1                              # past the closing quote
                while i < n and p[i] == c' ':
                    i += 1
                if i < n and p[i] != c';':
                    self.nfields = nf + 1
                    return R_AFTER_QUOTE
            else:
                start = i
                while i < n and p[i] != c';':
                    i += 1
                end = i
            s = self.slot_of[nf] if nf < self.ncols else -1
            if s >= 0:
                if escaped:
                    # Copy with `""` -> `"` into the scratch buffer (sized to
                    # the line by the caller, and unescaping only shrinks).
                    self.fld[s].p = self.scratch + o
                    j = start
                    while j < end:
                        self.scratch[o] = p[j]
                        o += 1
                        j += 2 if p[j] == c'"' else 1
                    self.fld[s].n = (self.scratch + o) - self.fld[s].p
                else:
                    self.fld[s].p = p + start
                    self.fld[s].n = end - start
            nf += 1
            if i >= n:
                break
            i += 1                                  # past the `;`
        self.nfields = nf
        return R_OK

    cdef int _check_and_store(self, const unsigned char* p, Py_ssize_t n) except -1:
        """Validate one data line; append it to the output when it is good."""
        cdef int r
        cdef Field street, locality, municipality, province, letter, addition, former
        cdef int number
        cdef int32_t postcode
        cdef Coord lat, lon
        cdef Py_ssize_t row

        if not valid_utf8(p, n):
            return R_UTF8
        reserve(&self.scratch, &self.scratch_cap, n)
        r = self._split(p, n)
        if r != R_OK:
            return r
        if self.nfields != self.ncols:
            return R_COLUMNS

        # Checks in column order; the first failure is the reason reported.
        street = strip(self.fld[S_STREET])
        if street.n == 0:
            return R_STREET
        number = house_number(self.fld[S_NUMBER])
        if number < 0:
            return R_NUMBER
        letter = strip(self.fld[S_LETTER])
        if letter.n > 1 or (letter.n == 1 and not is_alpha(letter.p[0])):
            return R_LETTER
        addition = strip(self.fld[S_ADDITION])
        if addition.n > 0 and not valid_addition(addition):
            return R_ADDITION
        postcode = postcode_code(strip(self.fld[S_POSTCODE]))
        if postcode < 0:
            return R_POSTCODE
        locality = strip(self.fld[S_LOCALITY])
        if locality.n == 0:
            return R_LOCALITY
        municipality = strip(self.fld[S_MUNICIPALITY])
        if municipality.n == 0:
            return R_MUNICIPALITY
        province = strip(self.fld[S_PROVINCE])
        if province.n == 0:
            return R_PROVINCE
        if not parse_coord(self.fld[S_LAT], &lat) or not parse_coord(self.fld[S_LON], &lon):
            return R_COORD_MALFORMED
        if not in_range(lat, LAT_MIN, LAT_MAX) or not in_range(lon, LON_MIN, LON_MAX):
            return R_COORD_OUTSIDE

        # Good row: store it.
        if self.n == self.cap:
            self._grow(2 * self.cap)
        row = self.n
        self.o_street[row] = self._intern(K_STREET, street)
        self.o_locality[row] = self._intern(K_LOCALITY, locality)
        self.o_municipality[row] = self._intern(K_MUNICIPALITY, municipality)
        self.o_province[row] = self._intern(K_PROVINCE, province)
        self.o_number[row] = number
        self.o_letter[row] = letter.p[0] if letter.n == 1 else 0
        self.o_addition[row] = self._intern(K_ADDITION, addition) if addition.n > 0 else 0
        self.o_postcode[row] = postcode
        self.o_lat[row] = <int32_t>(lat.micro + lat.round_up)
        self.o_lon[row] = <int32_t>(lon.micro + lon.round_up)
        self.o_line[row] = <int32_t>self.lines
        self.o_former[row] = 0
        if self.has_former:
            former = strip(self.fld[S_FORMER])
            if former.n > 0:
                self.o_former[row] = self._intern(K_FORMER, former)
        self.n = row + 1
        return R_OK

    cdef int32_t _intern(self, int k, Field f) except -1:
        """Id of the string `f` in table `k`, adding it when new."""
        cdef int32_t ident
        if f.n == self.prev_len[k] and memcmp(f.p, self.prev_buf[k], f.n) == 0:
            return self.prev_id[k]                  # same as the previous row
        key = PyBytes_FromStringAndSize(<const char*>f.p, f.n)
        table = self.tables[k]
        found = table.get(key)
        if found is None:
            strings = self.strings[k]
            ident = len(strings)
            strings.append(key.decode("utf-8"))    # validated: cannot fail
            table[key] = ident
        else:
            ident = found
        reserve(&self.prev_buf[k], &self.prev_cap[k], f.n)
        memcpy(self.prev_buf[k], f.p, f.n)
        self.prev_len[k] = f.n
        self.prev_id[k] = ident
        return ident

    # ------------------------------------------------------------ slow paths

    cdef int _reject(self, Py_ssize_t line, int r) except -1:
        self.rejected += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append((line, self._reason_text(r)))
        return 0

    cdef str _text(self, int slot):
        """A field for an error message: decoded, cut to 20 characters."""
        cdef Field f = self.fld[slot]
        text = (<bytes>PyBytes_FromStringAndSize(<const char*>f.p, f.n)).decode(
            "utf-8", "replace")
        return text[:20] + "..." if len(text) > 20 else text

    cdef str _raw(self, int slot):
        """A field for an error message, quoted: `'0'`."""
        cdef Field f = self.fld[slot]
        text = (<bytes>PyBytes_FromStringAndSize(<const char*>f.p, f.n)).decode(
            "utf-8", "replace")
        return repr(text[:20]) + "..." if len(text) > 20 else repr(text)

    cdef str _reason_text(self, int r):
        if r == R_UTF8:
            return "invalid UTF-8"
        if r == R_UNTERMINATED:
            return "unterminated quote"
        if r == R_AFTER_QUOTE:
            return "malformed quoting: text after closing quote"
        if r == R_EMPTY_LINE:
            return f"wrong column count: empty line, expected {self.ncols}"
        if r == R_COLUMNS:
            return f"wrong column count: {self.nfields} fields, expected {self.ncols}"
        if r == R_STREET:
            return "missing street"
        if r == R_LOCALITY:
            return "missing locality"
        if r == R_MUNICIPALITY:
            return "missing municipality"
        if r == R_PROVINCE:
            return "missing province"
        if r == R_NUMBER:
            return f"house number out of range 1..{NUMBER_MAX}: {self._raw(S_NUMBER)}"
        if r == R_LETTER:
            return f"malformed house letter: {self._raw(S_LETTER)}"
        if r == R_ADDITION:
            return f"malformed addition: {self._raw(S_ADDITION)}"
        if r == R_POSTCODE:
            return f"malformed postcode: {self._raw(S_POSTCODE)}"
        if r == R_COORD_MALFORMED:
            return f"malformed coordinates: {self._raw(S_LAT)}, {self._raw(S_LON)}"
        if r == R_COORD_OUTSIDE:
            # The raw numbers, unquoted: "coordinates outside ...: 48.1, 11.5"
            return "coordinates outside the Netherlands: {}, {}".format(
                self._text(S_LAT), self._text(S_LON))
        return f"rejected (reason {r})"

    cdef int _header(self, const unsigned char* p, Py_ssize_t n) except -1:
        """Read the header line: find the required columns by name."""
        cdef Py_ssize_t i
        if n >= 3 and p[0] == 0xEF and p[1] == 0xBB and p[2] == 0xBF:
            p += 3                                  # UTF-8 byte order mark
            n -= 3
        try:
            text = (<bytes>PyBytes_FromStringAndSize(<const char*>p, n)).decode("utf-8")
        except UnicodeDecodeError:
            raise HeaderError("header line is not valid UTF-8") from None
        names = _split_header(text)
        wanted = {name: s for s, name in enumerate(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}
        self.ncols = len(names)
        self.slot_of = <int*>malloc(self.ncols * sizeof(int))
        if self.slot_of == NULL:
            raise MemoryError()
        found = {}
        for i, name in enumerate(names):
            s = wanted.get(name.lower(), -1)
            if s >= 0 and s in found:
                raise HeaderError(f"header has column {name!r} twice")
            if s >= 0:
                found[s] = i
            self.slot_of[i] = s
        missing = [name for s, name in enumerate(REQUIRED_COLUMNS) if s not in found]
        if missing:
            raise HeaderError(
                "header lacks required column(s) " + ", ".join(missing)
                + f"; found: {';'.join(names)}")
        self.has_former = S_FORMER in found
        self.columns = names
        return 0


def _split_header(str line):
    """Split the header with the same quoting rules; names are stripped."""
    names = []
    i, n = 0, len(line)
    while True:
        if i < n and line[i] == '"':
            j = i + 1
            buf = []
            while True:
                k = line.find('"', j)
                if k < 0:
                    raise HeaderError("header line has an unterminated quote")
                buf.append(line[j:k])
                if line.startswith('""', k):
                    buf.append('"')
                    j = k + 2
                    continue
                break
            name = "".join(buf)
            i = k + 1
            k = line.find(";", i)
            rest = line[i:] if k < 0 else line[i:k]
            if rest.strip(" "):
                raise HeaderError("header line has text after a closing quote")
        else:
            k = line.find(";", i)
            name = line[i:] if k < 0 else line[i:k]
        names.append(name.strip(" \t"))
        if k < 0:
            return names
        i = k + 1
