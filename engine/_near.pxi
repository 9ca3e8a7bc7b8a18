# The address at a location (included by _core.pyx): the nearest addresses of a point, by a
# k-d tree over the address points written by the build (`near_tree`, rv_* arrays), searched
# without the GIL.
#
# The tree is implicit: its 2^(depth+1) - 1 nodes are numbered as a heap (the children of node
# i are 2i+1 and 2i+2), and node j of level l holds the addresses rv_*[(j*N) >> l .. ((j+1)*N)
# >> l) (N addresses in all), so only the box of each node is stored (rv_box: the least and
# greatest latitude and longitude of its addresses, microdegrees). The build splits each node
# at its middle, across its longer side, so that the children's boxes are as small as they can
# be; the depth is the least at which no leaf holds more than NEAR_LEAF addresses.
#
# Distances are those of the focus point (_score.pxi `_prior`): on the flat earth of a small
# country, a degree of latitude KM_PER_DEGREE km and one of longitude that times the cosine of
# the point's latitude, measured in microdegrees and turned into metres at the end. Ties (the
# flats of one building share one point) are broken by the address row, so that the addresses
# of one building come in register order, and the answer is that of a brute-force search that
# sorts every address by (distance, row).

cdef double METRES_PER_MICRODEGREE = KM_PER_DEGREE * 1000.0 * MICRODEGREE


cdef inline int64_t _node_start(int64_t j, int64_t n, int level) noexcept nogil:
    """Where node j of `level` starts in rv_* of n addresses (the design comment above); it
    ends where node j + 1 starts."""
    return (j * n) >> level


cdef struct Nearest:
    int k               # addresses wanted (1..MAXLIMIT)
    int n               # found so far, nearest first
    double d2[MAXLIMIT]  # squared distance in microdegrees (longitude scaled by cos_lat)
    int32_t addr[MAXLIMIT]
    double max_d2       # the radius, squared in the same units (infinity: none)
    double y            # the point: latitude and longitude in microdegrees ...
    double x
    double cos_lat      # ... and the cosine of its latitude
    int64_t seen        # addresses measured (for the tests: that the tree prunes)


cdef inline double _box_d2(const int32_t* box, double y, double x, double c) noexcept nogil:
    """The least squared distance from (y, x) to a node's box."""
    cdef double dy = 0, dx = 0
    if y < box[0]:
        dy = box[0] - y
    elif y > box[1]:
        dy = y - box[1]
    if x < box[2]:
        dx = (box[2] - x) * c
    elif x > box[3]:
        dx = (x - box[3]) * c
    return dy * dy + dx * dx


cdef inline bint _box_meets(const int32_t* box, const Area* a) noexcept nogil:
    """May a node's box hold an address in the area's box? (True without one.)"""
    return not a.has_box or (box[0] <= a.lat_hi and box[1] >= a.lat_lo
                             and box[2] <= a.lon_hi and box[3] >= a.lon_lo)


cdef inline void _near_add(Nearest* r, double d2, int32_t a) noexcept nogil:
    """Keep address a at squared distance d2 if it is among the k nearest so far."""
    cdef int i
    if r.n == r.k and (d2 > r.d2[r.k - 1] or (d2 == r.d2[r.k - 1] and a > r.addr[r.k - 1])):
        return
    i = r.n if r.n < r.k else r.k - 1
    while i > 0 and (r.d2[i - 1] > d2 or (r.d2[i - 1] == d2 and r.addr[i - 1] > a)):
        r.d2[i] = r.d2[i - 1]
        r.addr[i] = r.addr[i - 1]
        i -= 1
    r.d2[i] = d2
    r.addr[i] = a
    if r.n < r.k:
        r.n += 1


cdef void _fetch_points(const Data* d, int64_t lo, int64_t hi) noexcept nogil:
    """Fetch the points and rows of the addresses rv_*[lo:hi]."""
    cdef int64_t i = lo
    _keep_calls()
    while i < hi:
        _prefetch(d.rv_lat + i)
        _prefetch(d.rv_lon + i)
        _prefetch(d.rv_addr + i)
        i += 16
    if hi > lo:
        _prefetch(d.rv_lat + hi - 1)
        _prefetch(d.rv_lon + hi - 1)
        _prefetch(d.rv_addr + hi - 1)


# PERF (issue 39): below the levels that stay cached, each level of the way down waits for its
# boxes (a cache miss); the boxes of the nearer child's descendants NEAR_AHEAD levels down are
# fetched a step ahead, each level of them one run of rv_box (node v's descendants s levels
# down are nodes ((v + 1) << s) - 1 onwards, side by side), so that several levels' misses
# overlap where one level's did.
DEF NEAR_AHEAD = 3


cdef void _fetch_below(const Data* d, int64_t node, int first_leaf) noexcept nogil:
    """Fetch the boxes of node's descendants 1 to NEAR_AHEAD levels down, those that exist;
    when its children are leaves, their addresses too (two leaves side by side in rv_*)."""
    cdef int64_t lo = node, hi = node, i, n = d.n_addr
    cdef int _level
    _keep_calls()
    if 2 * node + 1 >= first_leaf:
        i = 2 * node + 1 - first_leaf
        _fetch_points(d, _node_start(i, n, d.rv_depth), _node_start(i + 2, n, d.rv_depth))
    for _level in range(NEAR_AHEAD):
        lo = 2 * lo + 1
        hi = 2 * hi + 2
        if lo > 2 * <int64_t>first_leaf:
            return
        i = lo
        while i <= hi:
            _prefetch(d.rv_box + 4 * i)
            i += 4
        _prefetch(d.rv_box + 4 * hi + 3)


cdef inline int _push_near(const Data* d, const Area* area, int* stack, double* stack_d2, int top,
                           int node, double d2) noexcept nogil:
    """Push `node`, its box d2 away, on the stack of `_nearest`, unless its box lies outside the
    area (when on); return the new top."""
    if area.on and not _box_meets(d.rv_box + 4 * node, area):
        return top
    stack[top] = node
    stack_d2[top] = d2
    return top + 1


cdef int _nearest(const Data* d, const Area* area, Nearest* r) noexcept nogil:
    """Find the r.k nearest addresses of the point (r.y, r.x) within r.max_d2, in the area
    (when on): depth first, the nearer child first, leaving every node whose box is farther
    than the k-th nearest found (or the radius). Return how many were found."""
    cdef int stack[NEAR_DEPTH_MAX * 2 + 4]
    cdef double stack_d2[NEAR_DEPTH_MAX * 2 + 4]   # each node's box distance, from its push
    cdef int top = 0, node, first_leaf, left, right
    cdef int64_t lo, hi, i, j, n = d.n_addr
    cdef double dy, dx, d2, dl, dr, c = r.cos_lat
    r.n = 0
    r.seen = 0
    if n == 0:
        return 0
    first_leaf = (1 << d.rv_depth) - 1
    top = _push_near(d, area, stack, stack_d2, 0, 0, _box_d2(d.rv_box, r.y, r.x, c))
    while top > 0:
        top -= 1
        node = stack[top]
        d2 = stack_d2[top]
        if d2 > r.max_d2 or (r.n == r.k and d2 > r.d2[r.k - 1]):
            continue
        if node >= first_leaf:
            j = node - first_leaf
            lo = _node_start(j, n, d.rv_depth)
            hi = _node_start(j + 1, n, d.rv_depth)
            r.seen += hi - lo
            for i in range(lo, hi):
                dy = d.rv_lat[i] - r.y
                dx = (d.rv_lon[i] - r.x) * c
                d2 = dy * dy + dx * dx
                if d2 > r.max_d2 or (r.n == r.k and d2 > r.d2[r.k - 1]):
                    continue
                if area.on and not _address_in(d, area, d.rv_addr[i]):
                    continue
                _near_add(r, d2, d.rv_addr[i])
            continue
        left = 2 * node + 1
        right = left + 1
        dl = _box_d2(d.rv_box + 4 * left, r.y, r.x, c)
        dr = _box_d2(d.rv_box + 4 * right, r.y, r.x, c)
        # the farther child waits below the nearer one; a child outside the area is left
        if dl <= dr:
            top = _push_near(d, area, stack, stack_d2, top, right, dr)
            top = _push_near(d, area, stack, stack_d2, top, left, dl)
        else:
            top = _push_near(d, area, stack, stack_d2, top, left, dl)
            top = _push_near(d, area, stack, stack_d2, top, right, dr)
        # PERF (issue 39): what the node on top reads next (`_fetch_below`), while this step
        # ends; when this node's children are leaves, both leaves' addresses (fetched a step
        # before, unless this was a farther child)
        if left < first_leaf:
            if top > 0:
                _fetch_below(d, stack[top - 1], first_leaf)
        else:
            j = left - first_leaf
            _fetch_points(d, _node_start(j, n, d.rv_depth), _node_start(j + 2, n, d.rv_depth))
    return r.n


cdef void _select_kth(int32_t* key, int32_t* other, int32_t* ids, int64_t lo, int64_t hi,
                      int64_t k) noexcept nogil:
    """Reorder the rows [lo, hi) of (key, other, ids) so that row k holds the row of the k-th
    least key, none after it less and none before it greater (Wirth's selection)."""
    cdef int64_t i, j, left = lo, right = hi - 1
    cdef int32_t x, t
    while left < right:
        x = key[k]
        i = left
        j = right
        while True:
            while key[i] < x:
                i += 1
            while x < key[j]:
                j -= 1
            if i <= j:
                t = key[i]
                key[i] = key[j]
                key[j] = t
                t = other[i]
                other[i] = other[j]
                other[j] = t
                t = ids[i]
                ids[i] = ids[j]
                ids[j] = t
                i += 1
                j -= 1
            if i > j:
                break
        if j < k:
            left = i
        if k < i:
            right = j


def near_tree(lat, lon):
    """Build the spatial index of address points (int32 microdegrees, in row order): return
    (rv_addr, rv_lat, rv_lon, rv_box) as the design comment above says (for engine/build.py)."""
    cdef cnp.ndarray[int32_t, ndim=1] ids_a, la_a, lo_a, box_a
    cdef int32_t* ids
    cdef int32_t* la
    cdef int32_t* lo
    cdef int32_t* box
    cdef int64_t n = len(lat), a, b, m, i, j
    cdef int depth = 0, level, first, node
    cdef int32_t ymin, ymax, xmin, xmax
    cdef double mid_lat
    la_a = np.ascontiguousarray(lat, dtype=np.int32).copy()
    lo_a = np.ascontiguousarray(lon, dtype=np.int32).copy()
    if len(lo_a) != n:
        raise ValueError("latitudes and longitudes differ in length")
    ids_a = np.arange(n, dtype=np.int32)
    while ((n + (1 << depth) - 1) >> depth) > NEAR_LEAF:
        depth += 1
    if depth > NEAR_DEPTH_MAX:
        raise ValueError(f"too many addresses for the spatial index: {n:,}")
    box_a = np.zeros(4 * ((1 << (depth + 1)) - 1), dtype=np.int32)
    ids = &ids_a[0] if n else NULL
    la = &la_a[0] if n else NULL
    lo = &lo_a[0] if n else NULL
    box = &box_a[0]
    with nogil:
        for level in range(depth):
            for j in range(1 << level):
                a = _node_start(j, n, level)
                b = _node_start(j + 1, n, level)
                m = _node_start(2 * j + 1, n, level + 1)   # where its second child starts
                if b - a < 2:
                    continue
                ymin = ymax = la[a]
                xmin = xmax = lo[a]
                for i in range(a, b):
                    if la[i] < ymin:
                        ymin = la[i]
                    if la[i] > ymax:
                        ymax = la[i]
                    if lo[i] < xmin:
                        xmin = lo[i]
                    if lo[i] > xmax:
                        xmax = lo[i]
                # across the longer side, a degree of longitude counted at the box's latitude
                mid_lat = (ymin * 0.5 + ymax * 0.5) * MICRODEGREE
                if <double>(ymax - ymin) >= (xmax - xmin) * cos(mid_lat * M_PI / 180.0):
                    _select_kth(la, lo, ids, a, b, m)
                else:
                    _select_kth(lo, la, ids, a, b, m)
        # the boxes: the leaves' from their addresses, then each node's from its children's
        first = (1 << depth) - 1
        for j in range(1 << depth):
            a = _node_start(j, n, depth)
            b = _node_start(j + 1, n, depth)
            node = first + <int>j
            if b > a:
                box[4 * node] = box[4 * node + 1] = la[a]
                box[4 * node + 2] = box[4 * node + 3] = lo[a]
            for i in range(a, b):
                if la[i] < box[4 * node]:
                    box[4 * node] = la[i]
                if la[i] > box[4 * node + 1]:
                    box[4 * node + 1] = la[i]
                if lo[i] < box[4 * node + 2]:
                    box[4 * node + 2] = lo[i]
                if lo[i] > box[4 * node + 3]:
                    box[4 * node + 3] = lo[i]
        for node in range(first - 1, -1, -1):
            a = 2 * node + 1
            b = a + 1
            box[4 * node] = box[4 * a] if box[4 * a] < box[4 * b] else box[4 * b]
            box[4 * node + 1] = box[4 * a + 1] if box[4 * a + 1] > box[4 * b + 1] else box[4 * b + 1]
            box[4 * node + 2] = box[4 * a + 2] if box[4 * a + 2] < box[4 * b + 2] else box[4 * b + 2]
            box[4 * node + 3] = box[4 * a + 3] if box[4 * a + 3] > box[4 * b + 3] else box[4 * b + 3]
    return ids_a, la_a, lo_a, box_a
