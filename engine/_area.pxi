# Areas (included by _core.pyx): what a search restricted to an area keeps. The restriction is
# applied inside the search (a group out of the area is never scored, an address out of it
# never a candidate), so a restricted query gets up to `limit` addresses of the area when they
# exist, where filtering an unrestricted answer afterwards keeps only those that happened to
# be among its best. `Index._area` (below, in _core.pyx) turns the names a caller gives into
# an Area; an unrestricted search (area.on == 0) reads none of it.


cdef inline bint _among(int32_t x, const int32_t* xs, int n) noexcept nogil:
    cdef int i
    for i in range(n):
        if xs[i] == x:
            return True
    return False


cdef inline bint _group_in(const Data* d, const Area* a, int32_t g) noexcept nogil:
    """Is group g in the named municipalities, localities and provinces (those given)?"""
    return ((a.n_mun == 0 or _among(d.g_municipality[g], a.mun, a.n_mun))
            and (a.n_loc == 0 or _among(d.g_locality[g], a.loc, a.n_loc))
            and (a.n_prov == 0 or _among(d.g_province[g], a.prov, a.n_prov)))


cdef inline bint _address_in(const Data* d, const Area* a, int32_t addr) noexcept nogil:
    """Is address row addr in the area: its group (`_group_in`), its postcode and its point?"""
    cdef int i
    cdef int32_t pc, v
    if a.n_pc:
        pc = d.a_postcode[addr]
        i = 0
        while i < a.n_pc and not (a.pc_lo[i] <= pc <= a.pc_hi[i]):
            i += 1
        if i == a.n_pc:
            return False
    if a.has_box:
        v = d.a_lat[addr]
        if v < a.lat_lo or v > a.lat_hi:
            return False
        v = d.a_lon[addr]
        if v < a.lon_lo or v > a.lon_hi:
            return False
    return _group_in(d, a, d.a_group[addr])


cdef inline bint _pcr_meets(const Area* a, uint32_t pcr) noexcept nogil:
    """May a group whose postcodes' four digits lie in the range `pcr` (v_post_pcr) hold an
    address of the area's postcodes? (True without postcodes in the area.)"""
    cdef int i, lo = <int>(pcr >> PC_DIGIT_BITS), hi = <int>(pcr & ((1 << PC_DIGIT_BITS) - 1))
    if a.n_pc == 0:
        return True
    for i in range(a.n_pc):
        if a.pc_lo[i] // 676 <= hi and a.pc_hi[i] // 676 >= lo:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# the names of an area, as a caller gives them (Python-facing)

cdef class AreaSpec:
    """A restriction of the answers to an area, resolved against one index (`Index.area`)."""
    cdef Area a
    cdef readonly tuple key

    def __repr__(self):
        return f"AreaSpec{self.key!r}"


AREA_PARAMETERS = ("municipality", "locality", "province", "postcode", "bbox")
_AREA_KINDS = {"municipality": "g_municipality", "locality": "g_locality", "province": "g_province"}
_AREA_NOUNS = {"municipality": "a municipality", "locality": "a locality (woonplaats)",
               "province": "a province"}
_AREA_CACHE_MAX = 4096


def _area_key(str text):
    """The form in which two spellings of one name are equal: folded (any case, no
    diacritics, punctuation as spaces), `'s-Gravenhage` as `s gravenhage`."""
    return " ".join(_fold_text(text).split())


def _area_values(value, str parameter, dict known=None):
    """The names (or postcodes) of one area parameter: a str, several separated by commas, or
    a list or tuple of str. With `known` (the folded names of that kind), a name that holds
    commas itself ("Nuenen, Gerwen en Nederwetten") is read whole from a str: the longest run
    of comma-separated parts that is a name is taken first."""
    if isinstance(value, str):
        items = (<str>value).split(",")
        if known is not None and len(items) > 1:
            items = _join_named(items, known)
    elif isinstance(value, (list, tuple)):
        items = list(value)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"{parameter} must be a str or a list of str, not a list holding "
                                f"{type(item).__name__}")
    else:
        raise TypeError(f"{parameter} must be a str or a list of str, not {type(value).__name__}")
    out = []
    for item in items:
        item = (<str>item).strip()
        if not item:
            raise QueryError(f"{parameter} must name one or more places, separated by commas, "
                             f"none empty", parameter=parameter)
        if item not in out:
            out.append(item)
    if len(out) > AREA_NAMES:
        raise QueryError(f"{parameter} may name at most {AREA_NAMES} places", parameter=parameter)
    return out


def _join_named(list parts, dict known):
    """`parts` (a str split at its commas) with each longest run that is a known name joined."""
    out = []
    cdef int i = 0, j, n = len(parts)
    while i < n:
        j = n
        # an empty part is never joined into a name: "Groningen," stays an empty name's error
        while j > i + 1 and (not all([(<str>x).strip() for x in parts[i:j]])
                             or _area_key(",".join(parts[i:j])) not in known):
            j -= 1
        out.append(",".join(parts[i:j]))
        i = j
    return out


cdef int _postcode_range(str text, int32_t* lo, int32_t* hi) except -2:
    """The range of postcode codes (digits * 676 + letters, as pc_code) that a postcode area
    of 4 digits, 4 digits and a letter, or a whole postcode (any case, a space or none before
    the letters) covers; -1 (no exception) when the text is none of these."""
    cdef char a[7]
    cdef int n = 0, digits, i, k
    cdef Py_UCS4 c
    cdef str t
    # PERF (issue 39): ASCII text is read in C (the str methods were a third of a postcode
    # look-up); text with any other character (a space, or a letter whose upper case is
    # ASCII: "ſ") by str's own rules of spaces and upper case
    for c in text:
        k = <int>c
        if k > 127:
            n = -1
            break
        if k == 32 or 9 <= k <= 13 or 28 <= k <= 31:  # the ASCII spaces of str.split()
            continue
        if n == 7:
            return -1
        a[n] = <char>(k - 32 if 97 <= k <= 122 else k)
        n += 1
    if n < 0:
        t = "".join(text.split()).upper()
        n = len(t)
        if n > 6 or not t.isascii():
            return -1
        for i in range(n):
            a[i] = <char>ord(t[i])
    if n < 4 or n > 6 or a[0] == 48:
        return -1
    digits = 0
    for i in range(4):
        if not 48 <= a[i] <= 57:
            return -1
        digits = digits * 10 + a[i] - 48
    for i in range(4, n):
        if not 65 <= a[i] <= 90:
            return -1
    lo[0] = digits * 676
    hi[0] = digits * 676 + 675
    if n >= 5:
        lo[0] += (a[4] - 65) * 26
        hi[0] = lo[0] + 25
    if n == 6:
        lo[0] += a[5] - 65
        hi[0] = lo[0]
    return 0


def _bbox_values(value):
    """(minlon, minlat, maxlon, maxlat) as floats from a str "a,b,c,d" or 4 real numbers."""
    if isinstance(value, str):
        parts = (<str>value).split(",")
        if len(parts) != 4:
            raise QueryError("bbox must be four numbers minlon,minlat,maxlon,maxlat", parameter="bbox")
        try:
            nums = [float(p) for p in parts]
        except ValueError:
            raise QueryError("bbox must be four numbers minlon,minlat,maxlon,maxlat", parameter="bbox") from None
    elif isinstance(value, (list, tuple)):
        if len(value) != 4:
            raise QueryError("bbox must be four numbers minlon,minlat,maxlon,maxlat", parameter="bbox")
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (numbers.Real, Decimal)):
                raise TypeError(f"bbox must hold real numbers, not {type(v).__name__}")
        try:
            nums = [float(v) for v in value]
        except (OverflowError, ValueError):
            nums = [float("nan")]
    else:
        raise TypeError(f"bbox must be a str or 4 real numbers, not {type(value).__name__}")
    minlon, minlat, maxlon, maxlat = (nums + [float("nan")] * 4)[:4]
    if not (-180 <= minlon <= maxlon <= 180 and -90 <= minlat <= maxlat <= 90):
        raise QueryError("bbox must be minlon,minlat,maxlon,maxlat with -180 <= minlon <= maxlon "
                         "<= 180 and -90 <= minlat <= maxlat <= 90", parameter="bbox")
    return minlon, minlat, maxlon, maxlat


class _AreaNames:
    """The names of an index's municipalities, localities and provinces by their folded form,
    and the runs of ar_group (`_walk_area`) of each municipality and locality; made from the
    arrays once, when a search is first restricted (PERF: opening the index stays cheap)."""

    def __init__(self, dict arrays, name_of):
        n_groups = len(arrays["g_start"]) - 1
        ar = arrays["ar_group"]
        self.ids = {}
        for parameter, column in _AREA_KINDS.items():
            table = {}
            for sid in np.unique(arrays[column]).tolist():
                table.setdefault(_area_key(name_of(sid)), []).append(sid)
            self.ids[parameter] = table
        mun = np.asarray(arrays["g_municipality"])[ar[:n_groups]]
        loc = np.asarray(arrays["g_locality"])[ar[n_groups:]]
        self.runs = {}
        for parameter, keys, offset in (("municipality", mun, 0), ("locality", loc, n_groups)):
            sids, first = np.unique(keys, return_index=True)
            ends = np.append(first[1:], len(keys))
            self.runs[parameter] = {int(s): (int(a) + offset, int(b) + offset)
                                    for s, a, b in zip(sids, first, ends)}
        # the municipalities of each province, and the municipality of each group
        g_mun = np.asarray(arrays["g_municipality"])
        pairs = np.unique(np.stack([np.asarray(arrays["g_province"]), g_mun]), axis=1)
        self.province_municipalities = {}
        for p, m in zip(pairs[0].tolist(), pairs[1].tolist()):
            self.province_municipalities.setdefault(p, []).append(m)
        self.g_municipality = g_mun
        self.cache = {}


def _make_area(dict arrays, names, municipality, locality, province, postcode, bbox):
    """An AreaSpec of the given names (see `Index.area`), or None when none is given."""
    cdef AreaSpec spec
    cdef Area* a
    cdef int32_t lo, hi
    cdef int k
    if municipality is None and locality is None and province is None and postcode is None and bbox is None:
        return None
    key = (municipality if not isinstance(municipality, list) else tuple(municipality),
           locality if not isinstance(locality, list) else tuple(locality),
           province if not isinstance(province, list) else tuple(province),
           postcode if not isinstance(postcode, list) else tuple(postcode),
           bbox if not isinstance(bbox, list) else tuple(bbox))
    try:
        return names.cache[key]
    except (KeyError, TypeError):   # TypeError: an unhashable value, checked below
        pass
    spec = AreaSpec()
    a = &spec.a
    memset(a, 0, sizeof(Area))
    a.on = 1
    walk = None
    for parameter, value in (("municipality", municipality), ("locality", locality), ("province", province)):
        if value is None:
            continue
        sids = []
        for name in _area_values(value, parameter, names.ids[parameter]):
            found = names.ids[parameter].get(_area_key(name))
            if not found:
                raise QueryError(f"{parameter} {name!r} is not {_AREA_NOUNS[parameter]} of the register",
                                 parameter=parameter)
            sids += [s for s in found if s not in sids]
        if len(sids) > AREA_NAMES:
            raise QueryError(f"{parameter} may name at most {AREA_NAMES} places", parameter=parameter)
        for k, sid in enumerate(sids):
            if parameter == "municipality":
                a.mun[k] = sid
            elif parameter == "locality":
                a.loc[k] = sid
            else:
                a.prov[k] = sid
        if parameter == "municipality":
            a.n_mun = len(sids)
            walk = [names.runs["municipality"][s] for s in sids]
        elif parameter == "locality":
            a.n_loc = len(sids)
            walk = [names.runs["locality"][s] for s in sids]   # the smaller runs
        else:
            a.n_prov = len(sids)
            if walk is None:
                walk = [names.runs["municipality"][m] for s in sids for m in names.province_municipalities[s]]
    if postcode is not None:
        values = _area_values(postcode, "postcode")
        for k, text in enumerate(values):
            if _postcode_range(text, &lo, &hi) < 0:
                raise QueryError(f"postcode {text!r} is no postcode area: four digits (1012), with "
                                 f"one letter (1012 L) or two (1012 LG)", parameter="postcode")
            codes = arrays["pc_code"]
            p = int(np.searchsorted(codes, lo))
            if p == len(codes) or codes[p] > hi:
                raise QueryError(f"postcode {text!r} holds no address of the register", parameter="postcode")
            a.pc_lo[k] = lo
            a.pc_hi[k] = hi
        a.n_pc = len(values)
        if walk is None:
            # the municipalities with addresses there (a walk needs groups of a name)
            codes, starts = arrays["pc_code"], arrays["pc_start"]
            sel = [np.asarray(arrays["pc_addr"])[starts[int(np.searchsorted(codes, a.pc_lo[k]))]:
                                                 starts[int(np.searchsorted(codes, a.pc_hi[k], side="right"))]]
                   for k in range(a.n_pc)]
            rows = np.concatenate(sel)
            muns = np.unique(names.g_municipality[np.asarray(arrays["a_group"])[rows]]).tolist()
            walk = [names.runs["municipality"][m] for m in muns]
    if bbox is not None:
        minlon, minlat, maxlon, maxlat = _bbox_values(bbox)
        a.has_box = 1
        a.lat_lo = <int32_t>round(minlat * 1e6)
        a.lat_hi = <int32_t>round(maxlat * 1e6)
        a.lon_lo = <int32_t>round(minlon * 1e6)
        a.lon_hi = <int32_t>round(maxlon * 1e6)
        if walk is None:
            # the municipalities of the streets whose middle lies in the box (or in a margin
            # around it of a street's length: the walk needs only to reach its groups)
            glat, glon = np.asarray(arrays["g_lat"]), np.asarray(arrays["g_lon"])
            m = 5000
            inside = ((glat >= a.lat_lo - m) & (glat <= a.lat_hi + m)
                      & (glon >= a.lon_lo - m) & (glon <= a.lon_hi + m))
            walk = [names.runs["municipality"][x] for x in np.unique(names.g_municipality[inside]).tolist()]
    if len(walk) <= AREA_WALKS:
        for k, (lo, hi) in enumerate(walk):
            a.walk_lo[k] = lo
            a.walk_hi[k] = hi
        a.nwalk = len(walk)
    spec.key = key
    try:
        if len(names.cache) >= _AREA_CACHE_MAX:
            names.cache.clear()
        names.cache[key] = spec
    except TypeError:
        pass
    return spec
