# cython: language_level=3
"""The compiled core: memory-mapped columns, a sorted-prefix index and the scoring loop.

Layout: every array is a read-only, C-contiguous, 1-d numpy array memory-mapped from `NAME.npy`;
ARRAYS below names each with its dtype (the one list: build.py writes exactly these,
AddressIndex.open maps them, `Index.__init__` points `Data` (_core.pxd) at them).

* Addresses `a_*` (N rows: group, number, letter, addition, postcode, lat, lon in microdegrees)
  are ordered by group, then house number, letter, addition, so the addresses of one street in
  one place are one contiguous run `g_start[g] .. g_start[g+1]`, sorted by number.
* Groups `g_*` (G rows): one per (street, locality, municipality); the string ids of
  their names, a prior in [0, PRIOR_MAX], the mean point, and their tokens
  `g_tokrec[2 * g_tok_start[g] ..]` (TokRec: token id, kind = street / locality /
  municipality with the ALIAS flag, the token's length (up to TLEN_LONG), and the real street
  words the token covers as a bit mask).
* Strings `s_blob/s_off`: every name, JSON-escaped UTF-8; additions `add_blob/add_off` as
  registered, `addl_blob/addl_off` the distinct lower-case ones, sorted (a typed part that only
  starts an addition).
* Vocabulary `v_blob/v_off` (V tokens): every token text, sorted bytewise, so that a typed
  prefix is one contiguous range of token ids [lo, hi) and "word w is a prefix of token t" is
  the range test lo <= t < hi. Postings `v_post[v_post_start[t] .. v_post_start[t+1]]`: the
  groups holding token t, highest prior first; beside each posting, in the same order, what the
  scan needs without touching the group: `v_post_sig` (a bit per first two letters of each of
  the group's tokens), `v_post_prior`, `v_post_meta` (the least the group costs through this
  token: BITS META_*), `v_post_xsig` (a bit per whole token), `v_post_first` (first letters),
  `v_post_num` (the group's highest and lowest house number, BITS NUM_*), `v_post_sfx` (the
  first letters of the letters and additions of its addresses), `v_post_pcr` (the lowest and
  highest four digits of their postcodes, BITS PC_DIGIT_BITS).
* Short prefixes `sp_*`: for each prefix of at most 12 letters with more postings than
  SCAN_ALONE, its best groups in order of prior minus the prefix's penalty, each with the same
  side data as a posting and the length of the group's token it matched (`sp_toklen`).
* Stored answers `sa_*`: the answers of the one-word queries with many postings (build.py
  ANSWER_MIN) at each limit 1..10,
  `sa_addr[sa_start[k * 10 + L - 1] .. sa_start[k * 10 + L]]` (no focus point).
* Typo table `del_slot`: the hash (`_form_hash`) of every token of 4+ letters with up to one
  (two for tokens of 7+ letters) letters deleted, with the token, in one open-addressing table
  (linear probing from the start of a cache line; `deletion_table` in _text.pxi says how;
  symmetric deletion: a word within one or two edits of a token shares a hash with it).
* Stored slips `slip_*`: for each token a query can type as one whole word, the tokens within
  one slip (k = 2 t) and two (k = 2 t + 1) that the typo table finds for it, in the order found,
  `slip_tok/slip_dist[slip_start[k] .. slip_start[k+1]]`, and the work the look-up counts
  (`slip_work[k]`, -1 where nothing is stored: looked up at query time).
* Sound keys `snd_*`: the sound key of every token (words.SOUND_RULES, `_sound_key`), sorted
  bytewise, ties by token id, `snd_blob[snd_off[i] .. snd_off[i+1]]` the i-th and `snd_tok[i]`
  its token: the tokens a word sounds like are one run, and those a word still being typed may
  sound like one more.
* Postcode index: `pc_code` the sorted distinct postcodes (four digits * 676 + letters),
  `pc_addr[pc_start[p] .. pc_start[p+1]]` the addresses of postcode p in house-number order.

Invariants: ids are int32 and in range; every offset table starts at 0, rises, and ends at the
length of the table it indexes; every group has at least one address and one street token; a
group's tokens fit in 64 (cover masks); postings and short-prefix lists are in non-increasing
prior order (the scans stop at the first one out of reach). `Index.__init__` and `_check` test
the shapes; build.py guarantees the orders. The query path (`_search`) runs without the GIL over
raw pointers into these arrays and allocates only its own scratch.

The query path is split by stage into included files, in this order (one C module): _text.pxi
(folding, hashes, lookups), _parse.pxi, _typo.pxi, _scan.pxi, _score.pxi, _retry.pxi,
_json.pxi; then this file's Python-facing class, then _batch.pxi.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.conversion cimport PyOS_string_to_double
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.math cimport M_PI, cos, log, sqrt
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memchr, memcmp, memcpy, memset, strlen
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import functools
import json
import numbers
import sys
from bisect import bisect_left
from decimal import Decimal

import numpy as np

from .normalize import FOLD_LIMIT as _FOLD_LIMIT, fold as _fold_text, fold_table

cimport numpy as cnp

cnp.import_array()

# ---------------------------------------------------------------------------------------------
# tuning: penalties are in "score" units; the prior of a group lies in [0, 0.9]. The values live
# in engine/params.py, shared with the Python twin (engine/_reference.py).

from . import params as _params

cdef float PREFIX_PEN = _params.PREFIX_PEN
cdef float PREFIX_FRAC = _params.PREFIX_FRAC
cdef float TYPO_PEN = _params.TYPO_PEN
cdef float TYPO_EDIT = _params.TYPO_EDIT
cdef float MUNI_PEN = _params.MUNI_PEN
cdef float ALIAS_PEN = _params.ALIAS_PEN
cdef float STREET_ALIAS_PEN = _params.STREET_ALIAS_PEN
cdef int ALIAS_WHOLE_LEN = _params.ALIAS_WHOLE_LEN
cdef float UNMATCHED_PEN = _params.UNMATCHED_PEN
cdef float ORDER_PEN = _params.ORDER_PEN
cdef float ORDER_PLACE_PEN = _params.ORDER_PLACE_PEN
cdef float EXTRA_SUFFIX_PEN = _params.EXTRA_SUFFIX_PEN
cdef float PART_PREFIX_PEN = _params.PART_PREFIX_PEN
cdef float NUM_PREFIX_PEN = _params.NUM_PREFIX_PEN
cdef float NUM_PREFIX_DIGIT = _params.NUM_PREFIX_DIGIT
cdef float UNKNOWN_WORD_PEN = _params.UNKNOWN_WORD_PEN
cdef float NO_LOCALITY_PRIOR = _params.NO_LOCALITY_PRIOR
cdef float LOCALITY_PRIOR = _params.LOCALITY_PRIOR
cdef float IJ_VARIANT_PEN = _params.IJ_VARIANT_PEN
cdef float ROUND_BASE = _params.ROUND_BASE
cdef float ROUND_SHORT = _params.ROUND_SHORT
cdef float PC_PRIOR = _params.PC_PRIOR
cdef float PRIOR_WEIGHT_MAX = max(_params.NO_LOCALITY_PRIOR, _params.LOCALITY_PRIOR)
cdef double FOCUS_NEAR = _params.FOCUS_NEAR
cdef double FOCUS_KM = _params.FOCUS_KM
cdef double FOCUS_SHARE = _params.FOCUS_SHARE
cdef double FOCUS_EPS = _params.FOCUS_EPS
cdef double MICRODEGREE = _params.MICRODEGREE
cdef double KM_PER_DEGREE = _params.KM_PER_DEGREE
cdef double NEAR_MARGIN = _params.NEAR_MARGIN
cdef float LETTER_AS_ADDITION_PEN = _params.LETTER_AS_ADDITION_PEN
cdef float HS_ADDITION_PEN = _params.HS_ADDITION_PEN
cdef float SOUND_PEN = _params.SOUND_PEN


# the query path, stage by stage (one C module: the files are included, not imported)
include "_text.pxi"
include "_area.pxi"
include "_parse.pxi"
include "_typo.pxi"
include "_scan.pxi"
include "_score.pxi"
include "_retry.pxi"
include "_explain.pxi"
include "_json.pxi"
include "_near.pxi"


# ---------------------------------------------------------------------------------------------
# the Python-facing class


# the fixed sizes of the search, which are part of its behaviour (the Python twin reads them)
SIZES = {
    "MAX_Q": MAX_Q, "QBUF": QBUF, "FOLD_W": FOLD_W, "MAXT": MAXT, "MAXR": MAXR,
    "MAXSLIP": MAXSLIP, "POOL": POOL,
    "MAXLIMIT": MAXLIMIT, "DEFAULT_LIMIT": DEFAULT_LIMIT, "NUMBER_MAX": NUMBER_MAX, "ADDITION_MAX": ADDITION_MAX,
    "SCAN_BUDGET": SCAN_BUDGET, "SCAN_ALONE": SCAN_ALONE,
    "EXACT_CAP": EXACT_CAP, "TOKEN_CAP_MIN": TOKEN_CAP_MIN, "PC_PREFIX_CAP": PC_PREFIX_CAP,
    "MAXP": MAXP, "MAXI": MAXI, "MAX_CONSIDER": MAX_CONSIDER, "SAME_NUMBER_CAP": SAME_NUMBER_CAP,
    "DROP_MAX_TOKENS": DROP_MAX_TOKENS, "RESPACE_TRIES": RESPACE_TRIES,
    "RESPACE_PROBES": RESPACE_PROBES, "MAXCUT": MAXCUT, "SEG_MAX": SEG_MAX, "PREFIX_SLIP_MAX": PREFIX_SLIP_MAX,
    "PREFIX_SLIP_LEN": PREFIX_SLIP_LEN, "SLIP_SCAN_MAX": SLIP_SCAN_MAX, "TWO_SLIP_LEN": TWO_SLIP_LEN,
    "TWO_SLIP_TYPED": TWO_SLIP_TYPED, "TWO_SLIP_WORDS": TWO_SLIP_WORDS,
    "DEL_TOK_BITS": DEL_TOK_BITS, "DEL_TAIL": DEL_TAIL, "DEL_BUCKET": DEL_BUCKET,
    "SOUND_MIN": SOUND_MIN, "SOUND_RUNS_MAX": SOUND_RUNS_MAX, "SOUND_WALK_MAX": SOUND_WALK_MAX,
    "PASS_TYPED": PASS_TYPED, "PASS_SOUND": PASS_SOUND, "PASS_SLIP": PASS_SLIP,
    "PASS_SLIP_ALL": PASS_SLIP_ALL, "PASS_TWO": PASS_TWO, "NPASS": NPASS, "RETRY_PASSES": RETRY_PASSES,
    "WORK_PER_GROUP": WORK_PER_GROUP, "FREE_WORDS": FREE_WORDS, "EXTRA_WORD_WORK": EXTRA_WORD_WORK,
}

# the kinds of a group token and the bits of a posting's meta byte (_core.pxd), for build.py and
# engine/vocab.py
BITS = {"K_STREET": K_STREET, "K_LOCALITY": K_LOCALITY, "K_MUNICIPALITY": K_MUNICIPALITY,
        "K_ALIAS": K_ALIAS, "K_KIND": K_KIND, "META_UNCOVERED": META_UNCOVERED,
        "META_GLUED": META_GLUED, "META_LOCALITY": META_LOCALITY, "META_ALIAS": META_ALIAS,
        "META_MUNICIPALITY": META_MUNICIPALITY, "META_PLACE": META_PLACE,
        "NUM_LOW_BITS": NUM_LOW_BITS, "NUM_HIGH_MAX": NUM_HIGH_MAX, "PC_DIGIT_BITS": PC_DIGIT_BITS,
        "TLEN_LONG": TLEN_LONG}


class QueryError(ValueError):
    """A bad argument to `suggest`: `code` and `parameter` name it as the HTTP contract does."""

    def __init__(self, message, *, code="invalid_parameter", parameter="q"):
        super().__init__(message)
        self.code = code
        self.parameter = parameter


class IndexClosedError(ValueError):
    """The index was closed (`close()`, or the end of its `with` block) and cannot be used."""


ARRAYS = {
    "a_group": np.int32, "a_number": np.int32, "a_letter": np.uint8, "a_addition": np.int32,
    "a_postcode": np.int32, "a_lat": np.int32, "a_lon": np.int32,
    "g_street": np.int32, "g_locality": np.int32, "g_municipality": np.int32,
    "g_province": np.int32, "g_start": np.int32, "g_prior": np.float32, "g_lat": np.int32,
    "g_lon": np.int32, "g_tok_start": np.int32, "v_blob": np.uint8, "v_off": np.int64, "v_post_start": np.int32,
    "v_post": np.int32, "del_slot": np.uint64, "slip_start": np.int32, "slip_tok": np.int32,
    "slip_dist": np.uint8, "slip_work": np.int32, "snd_blob": np.uint8, "snd_off": np.int64,
    "snd_tok": np.int32, "pc_code": np.int32,
    "pc_start": np.int32, "pc_addr": np.int32, "add_blob": np.uint8, "add_off": np.int64,
    "s_blob": np.uint8, "s_off": np.int64,
    "sp_blob": np.uint8, "sp_off": np.int64, "sp_start": np.int32, "sp_group": np.int32,
    "v_post_sig": np.uint64, "v_post_prior": np.float32,
    "sp_sig": np.uint64, "sp_prior": np.float32, "sp_toklen": np.uint8, "g_tokrec": np.uint64,
    "v_post_meta": np.uint8, "v_post_xsig": np.uint64, "sp_meta": np.uint8, "sp_xsig": np.uint64,
    "addl_blob": np.uint8, "addl_off": np.int64, "v_post_first": np.uint32, "sp_first": np.uint32,
    "v_post_num": np.uint32, "sp_num": np.uint32, "v_post_sfx": np.uint32, "sp_sfx": np.uint32,
    "v_post_pcr": np.uint32, "sp_pcr": np.uint32,
    "sa_blob": np.uint8, "sa_off": np.int64, "sa_start": np.int32, "sa_addr": np.int32,
    "ar_group": np.int32, "rv_addr": np.int32, "rv_lat": np.int32, "rv_lon": np.int32, "rv_box": np.int32,
}

_EMPTY = {name: np.zeros(1, dtype=dt) for name, dt in ARRAYS.items()}


cdef const void* _ptr(dict arrays, str name) except NULL:
    cdef cnp.ndarray a = arrays[name]
    if a.dtype != np.dtype(ARRAYS[name]) or not a.flags.c_contiguous or a.ndim != 1:
        raise ValueError(f"array {name} must be 1-d C-contiguous {np.dtype(ARRAYS[name])}")
    if a.shape[0] == 0:
        a = _EMPTY[name]
    return cnp.PyArray_DATA(a)


cdef object _last(a):
    """The last entry of a 1-d array. NOTE: never `a[-1]`: with wraparound off, Cython hands -1
    to the array as it is, and numpy >= 2.5 reads it as out of bounds (setup.py makes the
    warning Cython gives for such an index a build error)."""
    cdef Py_ssize_t n = len(a)
    if n == 0:
        raise ValueError("an offset table is empty")
    return a[n - 1]


# the word tables (engine/words.py), as the C code reads them
from .words import (ADDRESSEE_WORDS, COUNTRY_WORDS, FLOOR_WORDS, GLUE_PARTICLES, LABEL_WORDS, LINE_BREAKS, ORDINALS,
                    NOTE_CLOSE, NOTE_OPEN, NUMBER_WORDS, REGION_PROVINCE, REGION_WORDS, SOUND_RULES,
                    SOUND_SPELLINGS, SOUND_VOWELS, STREET_SUFFIXES)

_REGION_BYTES = [w.encode() for w in REGION_WORDS]
_NUMBER_BYTES = [w.encode() for w in NUMBER_WORDS]
_FLOOR_BYTES = [w.encode() for w in FLOOR_WORDS]
_LABEL_BYTES = [w.encode() for w in LABEL_WORDS]
_SUFFIX_BYTES = [w.encode() for w in STREET_SUFFIXES]
_ADDRESSEE_BYTES = [w.encode() for w in ADDRESSEE_WORDS]
_PARTICLE_BYTES = [w.encode() for w in GLUE_PARTICLES]
# the ordinals written as words ("eerste" .. "tiende", folded), in order: a floor (`_ordinal`)
_ORDINAL_BYTES = [spellings[len(spellings) - 1].encode() for spellings in ORDINALS]
cdef const char* _floor_ptr[MAX_FLOOR_WORDS]
cdef int _floor_len[MAX_FLOOR_WORDS]
cdef int _n_floor = 0
cdef const char* _number_ptr[MAX_LIST_WORDS]
cdef int _number_len[MAX_LIST_WORDS]
cdef int _n_number = 0
cdef const char* _label_ptr[MAX_LIST_WORDS]
cdef int _label_len[MAX_LIST_WORDS]
cdef int _n_label = 0
cdef const char* _suffix_ptr[MAX_FLOOR_WORDS]
cdef int _suffix_len[MAX_FLOOR_WORDS]
cdef int _n_suffix = 0
cdef const char* _addressee_ptr[MAX_REGION_WORDS]
cdef int _addressee_len[MAX_REGION_WORDS]
cdef int _n_addressee = 0
cdef const char* _particle_ptr[MAX_LIST_WORDS]
cdef int _particle_len[MAX_LIST_WORDS]
cdef int _n_particle = 0
cdef const char* _ordinal_ptr[MAX_LIST_WORDS]
cdef int _ordinal_len[MAX_LIST_WORDS]
cdef int _n_ordinal = 0
# the punctuation of a pasted address's layout, as the query keeps it when folding (NOTE_OPEN
# -> "(", NOTE_CLOSE -> ")", LINE_BREAKS -> ","; 0: folded as any other code point)
cdef char _layout[128]
cdef const char* _region_ptr[MAX_REGION_WORDS]
cdef int _region_len[MAX_REGION_WORDS]
cdef int _n_region = 0
cdef int _n_country = len(COUNTRY_WORDS)   # the first words of _region_ptr


cdef int _point_at(list words, const char** ptr, int* lens, int cap) except -1:
    """Point ptr/lens at the bytes of each word (kept alive by the module's list); the count."""
    cdef int i
    cdef bytes b
    if len(words) > cap:
        raise ValueError("word list too long")
    for i, b in enumerate(words):
        ptr[i] = <const char*>b
        lens[i] = len(b)
    return len(words)


def _init_regions():
    global _n_region, _n_number, _n_floor, _n_label, _n_suffix, _n_addressee, _n_particle, _n_ordinal
    _n_region = _point_at(_REGION_BYTES, _region_ptr, _region_len, MAX_REGION_WORDS)
    _n_number = _point_at(_NUMBER_BYTES, _number_ptr, _number_len, MAX_LIST_WORDS)
    _n_floor = _point_at(_FLOOR_BYTES, _floor_ptr, _floor_len, MAX_FLOOR_WORDS)
    _n_label = _point_at(_LABEL_BYTES, _label_ptr, _label_len, MAX_LIST_WORDS)
    _n_suffix = _point_at(_SUFFIX_BYTES, _suffix_ptr, _suffix_len, MAX_FLOOR_WORDS)
    _n_addressee = _point_at(_ADDRESSEE_BYTES, _addressee_ptr, _addressee_len, MAX_REGION_WORDS)
    _n_particle = _point_at(_PARTICLE_BYTES, _particle_ptr, _particle_len, MAX_LIST_WORDS)
    _n_ordinal = _point_at(_ORDINAL_BYTES, _ordinal_ptr, _ordinal_len, MAX_LIST_WORDS)
    memset(_layout, 0, sizeof(_layout))
    for chars, mark in ((NOTE_OPEN, b"("), (NOTE_CLOSE, b")"), (LINE_BREAKS, b",")):
        for ch in chars:
            _layout[ord(ch)] = mark[0]


_init_regions()


# the sound rules (words.SOUND_RULES: _typo.pxi `_sound_key`) and the two spellings of a sound
# (words.SOUND_SPELLINGS: `_sound_variant`), as C arrays. The rules are kept in their order per
# first letter (only those may stand at a position): rule r of letter c is one of
# _snd_first[c] .. _snd_first[c + 1]
_SOUND_BYTES = sorted(((w.encode(), k.encode(), c.encode()) for w, k, c in SOUND_RULES), key=lambda r: r[0][0])
_SPELL_BYTES = [w.encode() for pair in SOUND_SPELLINGS for w in pair]
cdef const char* _snd_from[MAX_SOUND_RULES]
cdef int _snd_from_len[MAX_SOUND_RULES]
cdef const char* _snd_to[MAX_SOUND_RULES]
cdef int _snd_to_len[MAX_SOUND_RULES]
cdef const char* _snd_ctx[MAX_SOUND_RULES]   # the letters one of which must follow ...
cdef int _snd_ctx_len[MAX_SOUND_RULES]
cdef bint _snd_end[MAX_SOUND_RULES]          # ... or the end of the word must ("$")
cdef bint _snd_start[MAX_SOUND_RULES]        # only at the start of the word ("^")
cdef int _snd_first[257]
cdef bint _snd_consonant[256]
cdef const char* _spell_ptr[MAX_SPELLINGS]
cdef int _spell_len[MAX_SPELLINGS]
cdef int _n_spell = 0


def _init_sounds():
    global _n_spell
    cdef int r, c
    if len(_SOUND_BYTES) > MAX_SOUND_RULES:
        raise ValueError("too many sound rules")
    memset(_snd_consonant, 0, sizeof(_snd_consonant))
    for c in range(97, 123):
        _snd_consonant[c] = chr(c) not in SOUND_VOWELS
    for r, (w, k, ctx) in enumerate(_SOUND_BYTES):
        _snd_from[r] = <const char*>w
        _snd_from_len[r] = len(w)
        _snd_to[r] = <const char*>k
        _snd_to_len[r] = len(k)
        _snd_end[r] = ctx == b"$"
        _snd_start[r] = ctx == b"^"
        _snd_ctx[r] = <const char*>ctx
        _snd_ctx_len[r] = 0 if ctx in (b"$", b"^") else len(ctx)
    c = 0
    for r in range(257):
        while c < len(_SOUND_BYTES) and _SOUND_BYTES[c][0][0] < r:
            c += 1
        _snd_first[r] = c
    _n_spell = _point_at(_SPELL_BYTES, _spell_ptr, _spell_len, MAX_SPELLINGS)


_init_sounds()


cdef inline bint _is_letter(Py_UCS4 ch) noexcept:
    """Does this code point fold to a letter?"""
    cdef int cp = <int>ch
    return cp < FOLD_MAX and _fold_len[cp] > 0 and 97 <= _fold_out[cp][0] <= 122


cdef inline bint _ends_in_digit(Py_UCS4 ch) noexcept:
    """Does this code point fold to something that ends in a digit?"""
    cdef int cp = <int>ch
    return cp < FOLD_MAX and _fold_len[cp] > 0 and 48 <= _fold_out[cp][_fold_len[cp] - 1] <= 57


cdef inline bint _is_dash(int cp) noexcept:
    """A hyphen or a dash (- \u2010 \u2011 \u2012 \u2013)."""
    return cp == 45 or 0x2010 <= cp <= 0x2013


cdef bint _addition_after(str q, Py_ssize_t i) noexcept:
    """Does the text from i on begin with a letter and run for at most ADDITION_TYPED folded
    letters and digits, of them at most ADDITION_TYPED - 1 letters (an addition: "H", "BSB",
    "GA07"; not a word: "Laan"), up to a separator or the end?"""
    cdef Py_ssize_t n = len(q)
    cdef int cp, j, m = 0, letters = 0
    if i >= n or not _is_letter(q[i]):
        return False
    while i < n:
        cp = <int>q[i]
        if cp >= FOLD_MAX or _fold_len[cp] == 0 or _fold_out[cp][0] == 32:
            break
        for j in range(_fold_len[cp]):
            m += 1
            letters += _fold_out[cp][j] >= 97
        if m > ADDITION_TYPED or letters >= ADDITION_TYPED:
            return False
        i += 1
    return True


cdef class Index:
    """The compiled index over a dict of 1-d numpy arrays (usually memory-mapped)."""

    def __init__(self, arrays):
        if not isinstance(arrays, dict):
            raise TypeError(f"{type(self).__name__}() takes the dict of arrays of an index; to open "
                            f"an index directory, call {type(self).__name__}.open(path)")
        missing = sorted(set(ARRAYS) - set(arrays))
        if missing:
            raise ValueError(f"index arrays missing: {', '.join(missing)}")
        self._arrays = arrays
        d = &self.d
        d.a_group = <const int32_t*>_ptr(arrays, "a_group")
        d.a_number = <const int32_t*>_ptr(arrays, "a_number")
        d.a_letter = <const uint8_t*>_ptr(arrays, "a_letter")
        d.a_addition = <const int32_t*>_ptr(arrays, "a_addition")
        d.a_postcode = <const int32_t*>_ptr(arrays, "a_postcode")
        d.a_lat = <const int32_t*>_ptr(arrays, "a_lat")
        d.a_lon = <const int32_t*>_ptr(arrays, "a_lon")
        d.g_street = <const int32_t*>_ptr(arrays, "g_street")
        d.g_locality = <const int32_t*>_ptr(arrays, "g_locality")
        d.g_municipality = <const int32_t*>_ptr(arrays, "g_municipality")
        d.g_province = <const int32_t*>_ptr(arrays, "g_province")
        d.g_start = <const int32_t*>_ptr(arrays, "g_start")
        d.g_prior = <const float*>_ptr(arrays, "g_prior")
        d.g_lat = <const int32_t*>_ptr(arrays, "g_lat")
        d.g_lon = <const int32_t*>_ptr(arrays, "g_lon")
        d.g_tok_start = <const int32_t*>_ptr(arrays, "g_tok_start")
        d.g_rec = <const TokRec*>_ptr(arrays, "g_tokrec")
        if len(arrays["g_tokrec"]) % 2:
            raise ValueError("group token records do not match the group tokens")
        if sys.byteorder != "little":
            raise ValueError("this index layout needs a little-endian machine")
        d.v_blob = <const uint8_t*>_ptr(arrays, "v_blob")
        d.v_off = <const int64_t*>_ptr(arrays, "v_off")
        d.v_post_start = <const int32_t*>_ptr(arrays, "v_post_start")
        d.v_post = <const int32_t*>_ptr(arrays, "v_post")
        d.del_slot = <const uint64_t*>_ptr(arrays, "del_slot")
        if len(arrays["del_slot"]) <= DEL_TAIL or _last(arrays["del_slot"]) != 0:
            raise ValueError("the typo table has no room past its last home slot")
        d.n_home = len(arrays["del_slot"]) - DEL_TAIL
        d.slip_start = <const int32_t*>_ptr(arrays, "slip_start")
        d.slip_tok = <const int32_t*>_ptr(arrays, "slip_tok")
        d.slip_dist = <const uint8_t*>_ptr(arrays, "slip_dist")
        d.slip_work = <const int32_t*>_ptr(arrays, "slip_work")
        d.snd_blob = <const uint8_t*>_ptr(arrays, "snd_blob")
        d.snd_off = <const int64_t*>_ptr(arrays, "snd_off")
        d.snd_tok = <const int32_t*>_ptr(arrays, "snd_tok")
        d.pc_code = <const int32_t*>_ptr(arrays, "pc_code")
        d.pc_start = <const int32_t*>_ptr(arrays, "pc_start")
        d.pc_addr = <const int32_t*>_ptr(arrays, "pc_addr")
        d.add_blob = <const uint8_t*>_ptr(arrays, "add_blob")
        d.add_off = <const int64_t*>_ptr(arrays, "add_off")
        d.s_blob = <const uint8_t*>_ptr(arrays, "s_blob")
        d.s_off = <const int64_t*>_ptr(arrays, "s_off")
        d.sp_blob = <const uint8_t*>_ptr(arrays, "sp_blob")
        d.sp_off = <const int64_t*>_ptr(arrays, "sp_off")
        d.sp_start = <const int32_t*>_ptr(arrays, "sp_start")
        d.sp_group = <const int32_t*>_ptr(arrays, "sp_group")
        d.n_sp = len(arrays["sp_start"]) - 1
        d.v_post_sig = <const uint64_t*>_ptr(arrays, "v_post_sig")
        d.v_post_prior = <const float*>_ptr(arrays, "v_post_prior")
        d.sp_sig = <const uint64_t*>_ptr(arrays, "sp_sig")
        d.sp_prior = <const float*>_ptr(arrays, "sp_prior")
        d.sp_toklen = <const uint8_t*>_ptr(arrays, "sp_toklen")
        d.v_post_meta = <const uint8_t*>_ptr(arrays, "v_post_meta")
        d.v_post_xsig = <const uint64_t*>_ptr(arrays, "v_post_xsig")
        d.sp_meta = <const uint8_t*>_ptr(arrays, "sp_meta")
        d.sp_xsig = <const uint64_t*>_ptr(arrays, "sp_xsig")
        d.v_post_first = <const uint32_t*>_ptr(arrays, "v_post_first")
        d.sp_first = <const uint32_t*>_ptr(arrays, "sp_first")
        d.v_post_num = <const uint32_t*>_ptr(arrays, "v_post_num")
        d.sp_num = <const uint32_t*>_ptr(arrays, "sp_num")
        d.v_post_sfx = <const uint32_t*>_ptr(arrays, "v_post_sfx")
        d.sp_sfx = <const uint32_t*>_ptr(arrays, "sp_sfx")
        d.v_post_pcr = <const uint32_t*>_ptr(arrays, "v_post_pcr")
        d.sp_pcr = <const uint32_t*>_ptr(arrays, "sp_pcr")
        d.sa_blob = <const uint8_t*>_ptr(arrays, "sa_blob")
        d.sa_off = <const int64_t*>_ptr(arrays, "sa_off")
        d.sa_start = <const int32_t*>_ptr(arrays, "sa_start")
        d.sa_addr = <const int32_t*>_ptr(arrays, "sa_addr")
        d.n_sa = len(arrays["sa_off"]) - 1
        if len(arrays["sa_start"]) != d.n_sa * MAXLIMIT + 1 or _last(arrays["sa_start"]) != len(arrays["sa_addr"]):
            raise ValueError("stored answers do not match their table")
        if len(arrays["sa_addr"]) and (int(arrays["sa_addr"].min()) < 0
                                       or int(arrays["sa_addr"].max()) >= len(arrays["a_number"])):
            raise ValueError("stored answers name addresses that do not exist")
        d.ar_group = <const int32_t*>_ptr(arrays, "ar_group")
        d.rv_addr = <const int32_t*>_ptr(arrays, "rv_addr")
        d.rv_lat = <const int32_t*>_ptr(arrays, "rv_lat")
        d.rv_lon = <const int32_t*>_ptr(arrays, "rv_lon")
        d.rv_box = <const int32_t*>_ptr(arrays, "rv_box")
        d.addl_blob = <const uint8_t*>_ptr(arrays, "addl_blob")
        d.addl_off = <const int64_t*>_ptr(arrays, "addl_off")
        d.n_addl = len(arrays["addl_off"]) - 1
        for name in ("v_post_sig", "v_post_prior", "v_post_meta", "v_post_xsig", "v_post_first", "v_post_num",
                     "v_post_sfx", "v_post_pcr"):
            if len(arrays[name]) != len(arrays["v_post"]):
                raise ValueError("posting signatures, priors or bounds do not match the postings")
        for name in ("sp_sig", "sp_prior", "sp_toklen", "sp_meta", "sp_xsig", "sp_first", "sp_num", "sp_sfx", "sp_pcr"):
            if len(arrays[name]) != len(arrays["sp_group"]):
                raise ValueError("short-prefix lists do not match their tables")
        d.n_addr = len(arrays["a_number"])
        d.n_groups = len(arrays["g_start"]) - 1
        d.n_tok = len(arrays["v_off"]) - 1
        d.n_pc = len(arrays["pc_code"])
        self._check()
        self._provinces(arrays)
        self._free_tables()
        # the per-process tables of the searches over the sorted tokens (each binary search
        # reads tok_key, so it comes first)
        d.tok_key = _tok_keys(d)
        if d.tok_key == NULL:
            raise MemoryError(f"no memory for the keys of {d.n_tok:,} tokens")
        _fill_blocks(d)
        d.block3 = _block3(d)
        d.pfx_bits = _pfx_filter(d)
        d.pc_rank = _pc_ranks(d)
        if d.pc_rank == NULL:
            raise MemoryError("no memory for the postcode table")
        d.snd_first2 = _snd_firsts(d)
        if d.snd_first2 == NULL:
            raise MemoryError("no memory for the sound keys' table")
        if len(arrays["s_blob"]) >= 1 << 32:
            raise ValueError("the names table is larger than 4 GiB")
        d.g_names = _group_names(d)
        if d.g_names == NULL:
            raise MemoryError(f"no memory for the names of {d.n_groups:,} groups")

    def __dealloc__(self):
        self._free_tables()

    cdef void _free_tables(self) noexcept:
        """Free the tables this process made when it opened the index (not the arrays)."""
        free(self.d.block3)
        self.d.block3 = NULL
        free(self.d.pfx_bits)
        self.d.pfx_bits = NULL
        free(self.d.tok_key)
        self.d.tok_key = NULL
        free(self.d.pc_rank)
        self.d.pc_rank = NULL
        free(self.d.snd_first2)
        self.d.snd_first2 = NULL
        free(self.d.g_names)
        self.d.g_names = NULL

    def _provinces(self, dict arrays):
        """The string id of each province a REGION_WORDS word names, or -1: looked up in the
        sorted string table (PERF: a few pages, not the group table, so opening stays cheap)."""
        cdef Data* d = &self.d
        cdef int i
        blob, off = memoryview(arrays["s_blob"]), memoryview(arrays["s_off"])
        n = len(off) - 1

        def name(k):
            b = bytes(blob[off[k]:off[k + 1]])
            return json.loads(b'"' + b + b'"') if b"\\" in b else b.decode()

        ids = {}
        for text in sorted(set(REGION_PROVINCE.values()) | {"Noord-Holland", "Zuid-Holland"}):
            k = bisect_left(range(n), text, key=name)
            ids[text] = k if k < n and name(k) == text else -1
        for i, w in enumerate(REGION_WORDS):
            d.region_prov[i] = ids[REGION_PROVINCE[w]] if w in REGION_PROVINCE else -1
        d.prov_nh = ids["Noord-Holland"]
        d.prov_zh = ids["Zuid-Holland"]

    def _check(self):
        """Cheap structural checks, so that a corrupt index fails here, not in a query."""
        a = self._arrays
        n, g, v = self.d.n_addr, self.d.n_groups, self.d.n_tok
        for name in ("a_group", "a_letter", "a_addition", "a_postcode", "a_lat", "a_lon", "pc_addr"):
            if len(a[name]) != n:
                raise ValueError(f"array {name} has {len(a[name])} rows, expected {n}")
        for name in ("g_street", "g_locality", "g_municipality", "g_province", "g_prior", "g_lat", "g_lon"):
            if len(a[name]) != g:
                raise ValueError(f"array {name} has {len(a[name])} rows, expected {g}")
        if len(a["g_tok_start"]) != g + 1 or len(a["v_post_start"]) != v + 1:
            raise ValueError("group or token offsets do not match their tables")
        if len(a["ar_group"]) != 2 * g:
            raise ValueError(f"array ar_group has {len(a['ar_group'])} rows, expected {2 * g}")
        for name in ("rv_addr", "rv_lat", "rv_lon"):
            if len(a[name]) != n:
                raise ValueError(f"array {name} has {len(a[name])} rows, expected {n}")
        # the spatial index's depth: the least at which no leaf holds more than NEAR_LEAF (_near.pxi)
        depth = 0
        while ((n + (1 << depth) - 1) >> depth) > NEAR_LEAF:
            depth += 1
        if depth > NEAR_DEPTH_MAX or len(a["rv_box"]) != 4 * ((1 << (depth + 1)) - 1):
            raise ValueError("the spatial index's boxes do not match its addresses")
        self.d.rv_depth = depth
        if len(a["pc_start"]) != len(a["pc_code"]) + 1:
            raise ValueError("postcode offsets do not match their table")
        if len(a["pc_code"]) > 1 and not bool((np.diff(a["pc_code"]) > 0).all()):
            raise ValueError("the postcodes are not sorted and distinct")   # (_pc_ranks counts them)
        if (len(a["slip_start"]) != 2 * v + 1 or len(a["slip_work"]) != 2 * v
                or len(a["slip_dist"]) != len(a["slip_tok"]) or _last(a["slip_start"]) != len(a["slip_tok"])):
            raise ValueError("the stored slips do not match the tokens")
        if len(a["snd_tok"]) != v or len(a["snd_off"]) != v + 1 or _last(a["snd_off"]) != len(a["snd_blob"]):
            raise ValueError("the sound keys do not match the tokens")
        if v and (int(a["snd_tok"].min()) < 0 or int(a["snd_tok"].max()) >= v):
            raise ValueError("the sound keys name tokens that do not exist")
        if g and (a["g_start"][0] != 0 or _last(a["g_start"]) != n):
            raise ValueError("group address ranges do not cover the address table")
        if _last(a["g_tok_start"]) != len(a["g_tokrec"]) // 2 or _last(a["v_post_start"]) != len(a["v_post"]):
            raise ValueError("token lists do not end where their tables end")
        if len(a["sp_off"]) != self.d.n_sp + 1 or _last(a["sp_start"]) != len(a["sp_group"]):
            raise ValueError("short-prefix lists do not match their tables")
        if (_last(a["v_off"]) != len(a["v_blob"]) or _last(a["s_off"]) != len(a["s_blob"])
                or _last(a["add_off"]) != len(a["add_blob"])):
            raise ValueError("string offsets do not end where their blobs end")

    @property
    def arrays(self):
        """The arrays of the index by name (read-only numpy arrays, memory-mapped by `open`)."""
        self._check_open()
        return self._arrays

    def __len__(self):
        self._check_open()
        return self.d.n_addr

    @property
    def closed(self):
        """True once `close()` was called."""
        return self._closed

    def close(self):
        """Release the index: unmap its arrays and close their files.

        Searches running in other threads finish first (the last one to end releases the
        files); every later use raises IndexClosedError. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._busy == 0:
            self._release()

    def __enter__(self):
        self._check_open()
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _release(self):
        """Forget every array (a subclass also closes the files behind them). NOTE: called once
        the index is closed and no search runs, so no pointer into the arrays is read again."""
        self._free_tables()
        memset(&self.d, 0, sizeof(Data))
        self._arrays = None

    cdef int _check_open(self) except -1:
        if self._closed:
            raise IndexClosedError(f"this {type(self).__name__} is closed")
        return 0

    cdef int _enter(self) except -1:
        """Count a search that is about to read the arrays (under the GIL, as `close` runs)."""
        self._check_open()
        self._busy += 1
        return 0

    cdef int _leave(self) except -1:
        """The search is done; release the arrays if the index was closed meanwhile."""
        self._busy -= 1
        if self._closed and self._busy == 0:
            self._release()
        return 0

    cdef Search* _prepare(self, q, limit, lat, lon, area) except NULL:
        """Check the arguments (`_arguments`), fold the query, keep the answers inside `area`
        (an AreaSpec of this index, or None); the caller frees."""
        cdef Search* s = _new_search(q, limit, lat, lon)
        if area is not None:
            if (<AreaSpec?>area).key is None:
                free(s)
                raise ValueError("an AreaSpec comes from Index.area")
            memcpy(&s.within, &(<AreaSpec>area).a, sizeof(Area))
        return s

    def area(self, *, municipality=None, locality=None, province=None, postcode=None, bbox=None):
        """Return the restriction to an area that these arguments name, resolved against this
        index (an AreaSpec, remembered for the next call with the same arguments), or None
        when all are None.

        municipality, locality, province: a str (several separated by commas) or a list of
        str, names as the register writes them, in any case and without diacritics; postcode:
        postcode areas of 4 digits, with one letter or two (same forms); bbox: (minlon, minlat,
        maxlon, maxlat) as 4 real numbers or a str "a,b,c,d". An address is kept when it
        satisfies every argument given, and one of the names of each. A name the register
        does not hold, or a postcode area without addresses, is a QueryError naming the
        parameter and the value."""
        self._check_open()
        if municipality is None and locality is None and province is None and postcode is None and bbox is None:
            return None
        if self._names is None:
            self._names = _AreaNames(self._arrays, functools.partial(_name_of, self))
        return _make_area(self._arrays, self._names, municipality, locality, province, postcode, bbox)

    def suggest_json(self, q, *, limit=DEFAULT_LIMIT, lat=None, lon=None, highlight=False, municipality=None,
                     locality=None, province=None, postcode=None, bbox=None):
        """Return the response body of the contract for query `q` as JSON bytes; with
        `highlight` (a bool), each hit also holds ``highlights``: per line of its ``lines`` the
        spans the typed words matched (engine.explain); with any of the area arguments
        (`area`), only addresses inside that area."""
        cdef Search* s = NULL
        cdef Explained* ex = NULL
        cdef int hits[MAXLIMIT]
        cdef int n = 0
        cdef Buf b
        b.p = NULL
        if highlight is not False and highlight is not True:
            raise TypeError(f"highlight must be a bool, not {type(highlight).__name__}")
        area = None
        if municipality is not None or locality is not None or province is not None or postcode is not None \
                or bbox is not None:
            area = self.area(municipality=municipality, locality=locality, province=province,
                             postcode=postcode, bbox=bbox)
        self._enter()
        try:
            s = self._prepare(q, limit, lat, lon, area)
            b.cap = 4096
            b.n = 0
            b.p = <char*>malloc(b.cap)
            if highlight:
                ex = <Explained*>malloc(sizeof(Explained))
            if b.p == NULL or (highlight and ex == NULL):
                raise MemoryError()
            with nogil:
                if ex == NULL:
                    n = _search(&self.d, s, hits)
                else:
                    n = _explained_search(&self.d, s, hits, ex)
                _render(&self.d, hits, n, s.limit, &b, ex)
            return PyBytes_FromStringAndSize(b.p, b.n)
        finally:
            free(b.p)
            free(ex)
            free(s)
            self._leave()

    def trace(self, q, *, limit=DEFAULT_LIMIT, lat=None, lon=None, area=None):
        """What the search read for query q, reading by reading (for the twin, tests and tools).

        A dict: `ids` (as `search_ids`), `stored` (a one-word query answered from the stored
        answers: no reading), `tokens` (the query's tokens as typed), `readings` (each a dict,
        in the order read, see `_reading`) and `lost` (readings beyond TRACE_MAX, not kept)."""
        out = {}
        ids = self._run(q, limit, lat, lon, area, out)
        return {"ids": ids, **out}

    def search_ids(self, q, *, limit=DEFAULT_LIMIT, lat=None, lon=None, area=None):
        """Return the address row ids of the hits (for tests and tools); `area`: an AreaSpec
        of this index (`area`), or None."""
        return self._run(q, limit, lat, lon, area, None)

    def lookup_ids(self, postcode, number, *, letter=None, addition=None):
        """Return the address rows of a postcode and house number (`_lookup.pxi`): every one,
        in the register's order, narrowed by the letter and addition when given."""
        return _lookup(self, postcode, number, letter, addition, False)

    def lookup_json(self, postcode, number, *, letter=None, addition=None):
        """Return the body {"hits":[...]} of `lookup_ids` as JSON bytes."""
        return _lookup(self, postcode, number, letter, addition, True)

    def reverse_ids(self, lat, lon, *, limit=DEFAULT_LIMIT, radius=None, area=None):
        """Return [(address row, metres to a tenth), ...] of the `limit` addresses nearest to
        the point, nearest first (ties: by row), within `radius` metres when given, inside
        `area` (an AreaSpec of this index, or None)."""
        return _reverse(self, lat, lon, limit, radius, area, False)

    def reverse_json(self, lat, lon, *, limit=DEFAULT_LIMIT, radius=None, municipality=None, locality=None,
                     province=None, postcode=None, bbox=None):
        """Return the body {"hits":[...],"limit":N} of `reverse_ids` as JSON bytes, each hit
        with its "distance" in metres; with any of the area arguments (`area`), only
        addresses inside that area."""
        area = None
        if municipality is not None or locality is not None or province is not None or postcode is not None \
                or bbox is not None:
            area = self.area(municipality=municipality, locality=locality, province=province,
                             postcode=postcode, bbox=bbox)
        return _reverse(self, lat, lon, limit, radius, area, True)

    cdef list _run(self, q, limit, lat, lon, area, dict trace):
        """The ids of the hits; when `trace` is a dict, the readings tried go into it."""
        cdef Search* s = NULL
        cdef int hits[MAXLIMIT]
        cdef int n = 0, j
        self._enter()
        try:
            s = self._prepare(q, limit, lat, lon, area)
            if trace is not None:
                s.trace = <TraceRec*>malloc(16 * sizeof(TraceRec))
                if s.trace == NULL:
                    raise MemoryError()
                s.trace_cap = 16
                s.ntrace = 0
                s.trace_lost = 0
                s.ncand = -1  # the stored-answer path leaves it
                s.trace_t0 = _now_ns()
            with nogil:
                n = _search(&self.d, s, hits)
            if trace is not None:
                readings = [_reading(&s.trace[j]) for j in range(s.ntrace)]
                typed = query_tokens(q)
                for r in readings:
                    r["dropped"], r["added"] = _token_changes(typed, r["tokens"])
                trace.update(stored=s.ntok > 0 and s.ncand < 0, tokens=typed, readings=readings,
                             lost=s.trace_lost)
            return [hits[j] for j in range(n)]
        finally:
            if s != NULL:
                free(s.trace)
            free(s)
            self._leave()


# the trace (Index.trace): the names of a reading's stage (ST_*) and of its spent budgets (SPENT_*)
STAGES = {ST_TYPED: "typed", ST_RESPACED: "respaced", ST_DROPPED: "without words",
          ST_PROVINCE: "province", ST_STRIPPED: "without parts", ST_PC_SLIP: "postcode slip",
          ST_PC_AWAY: "without postcode", ST_NEAR: "nearest numbers", ST_DEFERRED: "deferred slips",
          ST_NOTES: "without notes", ST_ADDRESSEE: "without addressee", ST_GLUED: "glued words cut"}
SPENT = {SPENT_SCAN: "scan", SPENT_CONSIDER: "consider", SPENT_WORK: "work", SPENT_SLIPS: "slips",
         SPENT_TYPO: "typo"}
# ... those the plain-Python twin cuts the same way (engine/_reference.py): the others may make
# the twin's answer differ
MIRRORED = ("scan", "typo")


cdef inline int64_t _now_ns() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return <int64_t>t.tv_sec * 1000000000 + t.tv_nsec


cdef dict _reading(const TraceRec* r):
    """One reading of a trace as Python values. Token indices (`words`, `parts`, `slips`,
    `place_after`, `street_until`) count in `tokens`; postcodes are codes (digits * 676 +
    letters, as `pc_code`), ranges inclusive."""
    cdef int i, j, p
    cdef const Interp* it
    tokens = [r.q[r.tok[i].start:r.tok[i].start + r.tok[i].len].decode() for i in range(r.ntok)]
    interps = []
    for i in range(r.ninterp):
        it = &r.interp[i]
        interps.append({
            "number": it.number if it.number >= 0 else None,
            "parts": [(it.part_tok[j], it.part_off[j]) for j in range(it.nparts)],
            "words": [it.words[j] for j in range(it.nwords)],
            "postcode": (it.pc_lo, it.pc_hi) if it.pc_lo >= 0 else None,
            "area": (it.area_lo, it.area_hi) if it.area_lo >= 0 else None,
            "place_after": it.place_after if it.place_after < MAXT else None,
            "street_until": it.street_until if it.street_until >= 0 else None,
        })
    return {
        "stage": STAGES[r.stage], "mode": r.mode, "tokens": tokens,
        "values": [r.tok[i].value for i in range(r.ntok)],
        "interps": interps,
        "focus": (r.focus_lat, r.focus_lon) if r.has_focus else None,
        "pc_strict": r.pc_strict, "near_number": bool(r.near_number), "huis": bool(r.huis),
        "province": r.province if r.province >= 0 else None, "max_pass": r.max_pass,
        "passes": [{"pass": p, "slips": [i for i in range(r.ntok) if (r.looked[p] >> i) & 1],
                    "scored": bool((r.scored >> p) & 1)} for p in range(r.npass)],
        "deferred": bool(r.deferred), "found": r.found > 0,
        "spent": [name for bit, name in SPENT.items() if r.spent & bit],
        # where a query's time goes: since the reading before (the trace's own copying left
        # out), the budgets' counts by its end, and what the scans did by then: the postings
        # whose bounds they checked and the groups they scored
        "us": r.ns / 1e3, "work": r.work, "slip_work": r.slip_work, "walked": r.walked,
        "groups": r.groups,
    }


def _token_changes(list typed, list tokens):
    """The typed tokens a reading left out, and the tokens it has that were not typed (words
    glued or cut, a number stripped of its parts, a postcode variant), each in order."""
    left = list(typed)
    added = []
    for t in tokens:
        if t in left:
            left.remove(t)
        else:
            added.append(t)
    return left, added


cdef Search* _new_search(q, limit, lat, lon) except NULL:
    """Check the arguments (`_arguments`), fold the query; the caller frees."""
    cdef Search* s
    cdef int cp, j, k = 0, n_limit
    cdef double focus_lat, focus_lon
    cdef Py_ssize_t i, n
    cdef Py_UCS4 ch
    _arguments(q, limit, lat, lon, &n_limit, &focus_lat, &focus_lon)
    s = <Search*>malloc(sizeof(Search))
    if s == NULL:
        raise MemoryError()
    s.limit = n_limit
    s.within.on = 0
    s.has_focus = lat is not None
    s.pc_strict = 0
    s.trace = NULL
    s.focus_lat = focus_lat
    s.focus_lon = focus_lon
    s.cos_lat = cos(s.focus_lat * M_PI / 180.0)
    # fold: code points -> ASCII a-z0-9 and spaces (the table of engine/normalize.py); an
    # apostrophe between a lone letter and a word glues them: "a'dam" is "adam", as the
    # index holds "d'Arc" also as "darc"; a hyphen between a number and an addition's few
    # letters glues them: "123-H" is "123h", a letter or addition of the house (as "123H" is),
    # never the start of a place ("Keizersgracht 123-H" answered Den Helder's, not Amsterdam's,
    # Keizersgracht 123); longer words stay apart ("1-Februariweg", "1672-Laan")
    n = len(<str>q)
    for i in range(n):
        ch = (<str>q)[i]
        cp = <int>ch
        if (cp == 39 or cp == 0x2019 or cp == 0x2018 or cp == 96) and 0 < i < n - 1 \
                and _is_letter((<str>q)[i - 1]) and _is_letter((<str>q)[i + 1]) \
                and (i == 1 or not _is_letter((<str>q)[i - 2])):
            continue
        if _is_dash(cp) and 0 < i < n - 1 and _ends_in_digit((<str>q)[i - 1]) and _addition_after(<str>q, i + 1):
            continue
        if cp < 128 and _layout[cp]:
            # a note's bracket or a line break: `_search` reads the query without them
            # first, and without what they mark when that finds nothing
            s.q[k] = _layout[cp]
            s.qsrc[k].a = <int16_t>i
            s.qsrc[k].b = <int16_t>(i + 1)
            k += 1
        elif cp < FOLD_MAX:
            for j in range(_fold_len[cp]):
                s.q[k] = _fold_out[cp][j]
                s.qsrc[k].a = <int16_t>i
                s.qsrc[k].b = <int16_t>(i + 1)
                k += 1
        else:
            s.q[k] = 32
            s.qsrc[k].a = <int16_t>i
            s.qsrc[k].b = <int16_t>(i + 1)
            k += 1
    s.qlen = k
    return s


def query_tokens(q):
    """The tokens the search reads in query q (folded, ij as y, digits cut from letters before
    them), as typed: no index needed."""
    cdef Search* s = NULL
    cdef int i
    s = _new_search(q, 1, None, None)
    try:
        for i in range(s.qlen):
            if s.q[i] == 40 or s.q[i] == 41 or s.q[i] == 44:  # the layout's marks (`_search`)
                s.q[i] = 32
        _tokenise(s)
        return [s.q[s.tok[i].start:s.tok[i].start + s.tok[i].len].decode() for i in range(s.ntok)]
    finally:
        free(s)


# The rules for the arguments of a search, one per argument; a wrong type is a TypeError, a
# wrong value a QueryError (code and parameter as the HTTP contract names them):
#   q        a str (a subclass too) of at most MAX_Q (128) code points
#   limit    an integer (numbers.Integral: int, numpy integers; not bool) from 1 to MAXLIMIT
#   lat/lon  both or neither; each a real number (numbers.Real: int, float, numpy floating and
#            integers, Fraction; or Decimal; not bool) with -90 <= lat <= 90, -180 <= lon <= 180
DEF LAT_MAX = 90.0
DEF LON_MAX = 180.0
#: the bounds of a coordinate (the service's parameters read them: server.params)
COORDINATE_BOUNDS = {"lat": LAT_MAX, "lon": LON_MAX}


cdef int _arguments(q, limit, lat, lon, int* limit_out, double* lat_out, double* lon_out) except -1:
    if not isinstance(q, str):
        raise TypeError(f"q must be a str, not {type(q).__name__}")
    if type(limit) is not int:  # PERF: the usual int skips the ABC checks
        if isinstance(limit, bool) or not isinstance(limit, numbers.Integral):
            raise TypeError(f"limit must be an int (numbers.Integral), not {type(limit).__name__}")
        limit = int(limit)
    if not 1 <= limit <= MAXLIMIT:
        raise QueryError(f"limit must be an integer from 1 to {MAXLIMIT}", parameter="limit")
    if len(<str>q) > MAX_Q:
        raise QueryError(f"q must be at most {MAX_Q} characters", code="query_too_long", parameter="q")
    if (lat is None) != (lon is None):
        raise QueryError("lat and lon go together", parameter="lat" if lat is None else "lon")
    limit_out[0] = limit
    lat_out[0] = _coordinate(lat, "lat", LAT_MAX) if lat is not None else 0.0
    lon_out[0] = _coordinate(lon, "lon", LON_MAX) if lon is not None else 0.0
    return 0


def check_arguments(q, limit, lat, lon):
    """Apply the rules above; return (limit, lat, lon) as an int and floats (None, None
    without a focus point). For the reference twin and other callers of the engine."""
    cdef int n_limit
    cdef double focus_lat, focus_lon
    _arguments(q, limit, lat, lon, &n_limit, &focus_lat, &focus_lon)
    return n_limit, (focus_lat if lat is not None else None), (focus_lon if lon is not None else None)


# PERF (issue 15, item 6): the HTTP service's query string in its plain spelling, as its web
# widget and `urlencode` write it, read in C: `country=NLD&q=<q>` and then nothing, or
# `&limit=<1..10>` written canonically. Nearly every request is spelt so; in Python the same
# reading (server.params.parse_query's shortcut) took 1.2 us a request, a tenth of what the
# service's own code spends on one. q is percent-decoded as the service decodes a parameter
# ("+" is a space, %XX a byte, then strict UTF-8). Anything the reading does not accept gives
# None and the service reads that string by its general rules (server.params), which also word
# the 400s: another spelling or order of the parameters, a % not followed by two hex digits,
# bytes that are not UTF-8, a raw byte above 0x7F, more than MAX_Q code points, and a q that is
# not all printable (str.isprintable), as the Python shortcut did.
cdef enum:
    PLAIN_MAX_BYTES = 4 * MAX_Q     # MAX_Q code points of UTF-8 at most


cdef inline int _hex(unsigned char c) noexcept nogil:
    if 48 <= c <= 57:
        return c - 48
    if 65 <= c <= 70:
        return c - 55
    if 97 <= c <= 102:
        return c - 87
    return -1


cdef inline int _canonical(const unsigned char* p, Py_ssize_t i, Py_ssize_t end, int most) noexcept nogil:
    """The integer p[i:end] written canonically (ASCII digits, no sign, no leading zero, nothing
    else), from 1 to `most`; 0 if it is not one."""
    cdef int v = 0
    if i >= end or p[i] == 48:  # "0..."
        return 0
    while i < end:
        if not 48 <= p[i] <= 57:
            return 0
        v = v * 10 + p[i] - 48
        if v > most:
            return 0
        i += 1
    return v


cdef inline Py_ssize_t _after(const unsigned char* p, Py_ssize_t at, Py_ssize_t n, const char* text) noexcept nogil:
    """Where p[at:n] goes on after `text` (NUL-terminated), when it starts with it; else -1."""
    cdef Py_ssize_t k = <Py_ssize_t>strlen(text)
    if n - at < k or memcmp(p + at, text, k) != 0:
        return -1
    return at + k


cdef inline Py_ssize_t _value_end(const unsigned char* p, Py_ssize_t at, Py_ssize_t n) noexcept nogil:
    """Where the parameter value starting at p[at] ends: the next "&", or n."""
    while at < n and p[at] != 38:  # "&"
        at += 1
    return at


cdef inline int _plain_limit(const unsigned char* p, Py_ssize_t at, Py_ssize_t n) noexcept nogil:
    """The limit of a plain query string whose rest p[at:n] is `&limit=N`; 0 if it is not."""
    at = _after(p, at, n, b"&limit=")
    return _canonical(p, at, n, MAXLIMIT) if at >= 0 else 0


def read_plain_query(bytes raw not None):
    """Return (q, limit) of a query string in the plain spelling, or None (see above).

    `raw` is the query string as sent (still percent-encoded): `country=NLD&q=damrak+1` gives
    ("damrak 1", 5), `country=NLD&q=damrak%2C+1&limit=10` ("damrak, 1", 10); the string in any
    other spelling gives None: `q=damrak&country=NLD`, `country=NLD&q=damrak&limit=05`.
    """
    cdef const unsigned char* p = <const unsigned char*>raw
    cdef Py_ssize_t n = len(raw), i = _after(p, 0, n, b"country=NLD&q="), end, k = 0
    cdef int limit = DEFAULT_LIMIT, hi, lo
    cdef unsigned char c
    cdef bint ascii = True
    cdef unsigned char buf[PLAIN_MAX_BYTES]
    if i < 0:
        return None
    end = _value_end(p, i, n)
    if end < n:  # the rest is `&limit=N`, N from 1 to MAXLIMIT in canonical digits, or not plain
        limit = _plain_limit(p, end, n)
        if not limit:
            return None
    while i < end:
        c = p[i]
        if c == 43:  # "+"
            c = 32
        elif c == 37:  # "%"
            if i + 2 >= end:
                return None
            hi = _hex(p[i + 1])
            lo = _hex(p[i + 2])
            if hi < 0 or lo < 0:
                return None
            c = <unsigned char>(hi * 16 + lo)
            i += 2
        elif c >= 128:
            return None
        if c < 32 or c == 127 or k == PLAIN_MAX_BYTES:
            return None
        if c >= 128:
            ascii = False
        buf[k] = c
        k += 1
        i += 1
    if ascii:
        if k > MAX_Q:
            return None
        return PyUnicode_DecodeASCII(<char*>buf, k, NULL), limit
    try:
        text = PyUnicode_DecodeUTF8(<char*>buf, k, NULL)
    except UnicodeDecodeError:
        return None
    if len(text) > MAX_Q or not text.isprintable():
        return None
    return text, limit


cdef double _coordinate(value, str name, double bound) except? -1:
    cdef double v
    if type(value) is not float and type(value) is not int:  # PERF: the usual types go straight on
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
            raise TypeError(f"{name} must be a real number (int, float, Decimal, numpy floating), "
                            f"not {type(value).__name__}")
    try:
        v = float(value)
    except (OverflowError, ValueError):  # 10**400, Decimal("sNaN")
        v = float("nan")
    if not (-bound <= v <= bound):  # NaN too
        raise QueryError(f"{name} must be a number from {-bound:g} to {bound:g}", parameter=name)
    return v


include "_batch.pxi"
include "_lookup.pxi"


# PERF (issue 39): the other questions' query strings in their plain spelling, read in C as
# read_plain_query reads /v1/address's (the widget and `urlencode` write them so):
#   /v1/address/postcode  `country=NLD&postcode=<P>&number=<N>`: P of ASCII letters and digits,
#                         "+" a space, at most PLAIN_POSTCODE_MAX bytes (the engine checks it:
#                         `_lookup_arguments`), N a house number (`read_house_number`);
#   /v1/address/reverse   `country=NLD&lat=<Y>&lon=<X>`, then nothing or `&limit=<1..10>`: Y
#                         and X `-?digits[.digits]`, at most PLAIN_COORDINATE_MAX bytes, within
#                         COORDINATE_BOUNDS, read as float() reads them.
# Anything else gives None and the service reads the string by its general rules
# (server.params), which also word the 400s.
cdef enum:
    PLAIN_POSTCODE_MAX = 16
    PLAIN_COORDINATE_MAX = 24


def read_house_number(bytes raw not None):
    """The house number `raw` writes canonically (ASCII digits, no sign, no leading zero), from
    1 to NUMBER_MAX (engine/_register.pxd); 0 if it writes none. The service's rule for `number` (issue 39)."""
    return _canonical(<const unsigned char*>raw, 0, len(raw), NUMBER_MAX)


cdef object _plain_coordinate(const unsigned char* p, Py_ssize_t i, Py_ssize_t end, double bound):
    """The coordinate p[i:end] written `-?digits[.digits]` within +-bound, as float() reads it;
    None if it is not one."""
    cdef Py_ssize_t j = i + (i < end and p[i] == 45)  # "-"
    cdef Py_ssize_t digits = j
    cdef char buf[PLAIN_COORDINATE_MAX + 1]
    cdef double v
    if end - i > PLAIN_COORDINATE_MAX:
        return None
    while j < end and 48 <= p[j] <= 57:
        j += 1
    if j == digits:
        return None
    if j < end and p[j] == 46:  # "."
        j += 1
        digits = j
        while j < end and 48 <= p[j] <= 57:
            j += 1
        if j == digits:
            return None
    if j != end:
        return None
    memcpy(buf, p + i, end - i)
    buf[end - i] = 0
    v = PyOS_string_to_double(buf, NULL, NULL)
    if not -bound <= v <= bound:
        return None
    return v


def read_plain_lookup(bytes raw not None):
    """Return (postcode, number) of a postcode query string in the plain spelling, or None
    (see above): `country=NLD&postcode=1012+LG&number=1` gives ("1012 LG", 1)."""
    cdef const unsigned char* p = <const unsigned char*>raw
    cdef Py_ssize_t n = len(raw), at = _after(p, 0, n, b"country=NLD&postcode="), end, k
    cdef unsigned char c
    cdef char buf[PLAIN_POSTCODE_MAX]
    cdef int number
    if at < 0:
        return None
    end = _value_end(p, at, n)
    if end == n or end - at > PLAIN_POSTCODE_MAX:
        return None
    k = 0
    for at in range(at, end):
        c = p[at]
        if c == 43:  # "+"
            c = 32
        elif not (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122):
            return None
        buf[k] = c
        k += 1
    at = _after(p, end, n, b"&number=")
    number = _canonical(p, at, n, NUMBER_MAX) if at >= 0 else 0
    if not number:
        return None
    return PyUnicode_DecodeASCII(buf, k, NULL), number


def read_plain_reverse(bytes raw not None):
    """Return (lat, lon, limit) of a reverse query string in the plain spelling, or None (see
    above): `country=NLD&lat=52.37&lon=4.89&limit=3` gives (52.37, 4.89, 3)."""
    cdef const unsigned char* p = <const unsigned char*>raw
    cdef Py_ssize_t n = len(raw), at = _after(p, 0, n, b"country=NLD&lat="), end
    cdef int limit = DEFAULT_LIMIT
    if at < 0:
        return None
    end = _value_end(p, at, n)
    if end == n:
        return None
    lat = _plain_coordinate(p, at, end, LAT_MAX)
    at = _after(p, end, n, b"&lon=")
    if lat is None or at < 0:
        return None
    end = _value_end(p, at, n)
    lon = _plain_coordinate(p, at, end, LON_MAX)
    if lon is None:
        return None
    if end < n:
        limit = _plain_limit(p, end, n)
        if not limit:
            return None
    return lat, lon, limit
