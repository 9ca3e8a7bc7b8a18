"""The plain-Python twin of the compiled search in `_core.pyx`, for tests.

    >>> from engine._reference import ReferenceIndex
    >>> ref = ReferenceIndex(engine.AddressIndex.open("indexes/nl").arrays)
    >>> ref.search_ids("kerkstr 12 utr", limit=5)     # the same ids as Index.search_ids

It reads the very same arrays as the compiled `Index` and follows `_search` step by step, but
written for a reader: lists and dataclasses instead of fixed C buffers, `bisect` instead of
hand-written binary searches, and a brute-force scan of the vocabulary instead of the deletion
hash index for typo candidates. Where the C code's behaviour depends on a detail that is not
obvious (a buffer cap, a tie-break, the order things are added in), the detail is copied on
purpose and commented, because the point of the twin is that both return the same ids in the
same order.

Scores are `numpy.float32`, like the C `float`: every `+ - * /` between two float32 values is
rounded to float32, exactly as C does on x86-64 (SSE, no FMA). Where the C code mixes a float
with a `double` constant (`1.0 - x`, `0.1 * prior`) the twin computes that part in Python
floats (doubles) and rounds once to float32 where C assigns the result to a float.

Not mirrored, on purpose: speed-ups that cannot change the answer, so that the comparison
tests them too. The signature filter on postings (`v_post_sig`: a group without the first two
letters of every other typed word cannot match them) is left out: the twin considers every group
the postings name, and `group_text` rejects the same ones (only whether there is a signature to
filter on is mirrored, because the C code scans further when there is). The deletion hash index (`del_hash`,
`del_bucket`) is replaced by measuring the vocabulary. The JSON rendering (`suggest_json`) is not
here; only `search_ids`.

Not mirrored either: the pruning of groups out of reach of the pool (`_beyond_reach`, which
cannot change the answer) and the bound on groups scored per pass (`MAX_CONSIDER`, per interpretation), which
can: it counts the groups that pass the signature filter and the pruning, which the twin does
not model. The two agree on every query that stays under that bound; the agreement tests on
the sample pass with it in place.
"""

from __future__ import annotations

import itertools
import json
import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

import numpy as np

from . import params
from ._core import SIZES, check_arguments
from .normalize import FOLD_LIMIT, fold_table
from .vocab import ALIAS, KIND, LOCALITY, MUNICIPALITY, STREET
from .words import (
    ADDRESSEE_WORDS,
    COUNTRY_WORDS,
    FLOOR_WORDS,
    GLUE_PARTICLES,
    LABEL_WORDS,
    LINE_BREAKS,
    NOTE_CLOSE,
    NOTE_OPEN,
    NUMBER_WORDS,
    REGION_PROVINCE,
    REGION_WORDS,
    STREET_SUFFIXES,
)

f32 = np.float32

# ---- the weights, as the C code holds them (`cdef float X = _params.X`)
PREFIX_PEN = f32(params.PREFIX_PEN)
PREFIX_FRAC = f32(params.PREFIX_FRAC)
TYPO_PEN = f32(params.TYPO_PEN)
TYPO_EDIT = f32(params.TYPO_EDIT)
MUNI_PEN = f32(params.MUNI_PEN)
ALIAS_PEN = f32(params.ALIAS_PEN)
STREET_ALIAS_PEN = f32(params.STREET_ALIAS_PEN)
ALIAS_WHOLE_LEN = params.ALIAS_WHOLE_LEN
UNMATCHED_PEN = f32(params.UNMATCHED_PEN)
ORDER_PEN = f32(params.ORDER_PEN)
ORDER_PLACE_PEN = f32(params.ORDER_PLACE_PEN)
EXTRA_SUFFIX_PEN = f32(params.EXTRA_SUFFIX_PEN)
PART_PREFIX_PEN = f32(params.PART_PREFIX_PEN)
NUM_PREFIX_PEN = f32(params.NUM_PREFIX_PEN)
NUM_PREFIX_DIGIT = f32(params.NUM_PREFIX_DIGIT)
UNKNOWN_WORD_PEN = f32(params.UNKNOWN_WORD_PEN)
NO_LOCALITY_PRIOR = f32(params.NO_LOCALITY_PRIOR)
LOCALITY_PRIOR = f32(params.LOCALITY_PRIOR)
IJ_VARIANT_PEN = f32(params.IJ_VARIANT_PEN)
ROUND_BASE = f32(params.ROUND_BASE)
ROUND_SHORT = f32(params.ROUND_SHORT)
PC_PRIOR = f32(params.PC_PRIOR)
LETTER_AS_ADDITION_PEN = f32(params.LETTER_AS_ADDITION_PEN)
ZERO = f32(0.0)

# ---- the fixed sizes of the C code, which are part of its behaviour
QUERY_BUFFER = SIZES["QBUF"]           # folded bytes; tokenising stops near its end
FOLD_WIDTH = SIZES["FOLD_W"]           # a folded code point keeps at most this many bytes
MAX_TOKENS = SIZES["MAXT"]             # further tokens are ignored
MAX_RANGES = SIZES["MAXR"]             # prefix + ij variant + typo tokens of one word
TWO_SLIP_LEN = SIZES["TWO_SLIP_LEN"]   # a word this long may hold two slips ...
TWO_SLIP_TYPED = SIZES["TWO_SLIP_TYPED"]  # ... and be typed this short with them
MAX_SLIP = SIZES["MAXSLIP"]            # tokens a word still being typed starts, one slip undone
POOL_SIZE = SIZES["POOL"]              # best groups kept (at most)
MAX_LIMIT = SIZES["MAXLIMIT"]
MAX_CANDIDATES = POOL_SIZE * MAX_LIMIT + 64
SCAN_BUDGET = SIZES["SCAN_BUDGET"]     # postings scanned for the rarest word when other words filter
SCAN_ALONE = SIZES["SCAN_ALONE"]       # ... and when it is the only word (build.py SHORT_PREFIX_MIN)
EXACT_CAP = SIZES["EXACT_CAP"]         # groups of the complete word taken before a short-prefix list
TOKEN_CAP_MIN = SIZES["TOKEN_CAP_MIN"]
PC_PREFIX_CAP = SIZES["PC_PREFIX_CAP"]  # addresses scanned for a postcode prefix
DROP_MAX_TOKENS = SIZES["DROP_MAX_TOKENS"]  # ... when it has at most this many tokens
RESPACE_TRIES = SIZES["RESPACE_TRIES"]      # respaced readings of such a query tried at most
RESPACE_PROBES = SIZES["RESPACE_PROBES"]    # ... and prefix searches made to find them
MAX_CUTS = SIZES["MAXCUT"]                  # spaces put into one typed word
SEG_MAX = SIZES["SEG_MAX"]                  # glued words cut into tokens at most this long
PREFIX_SLIP_MAX = SIZES["PREFIX_SLIP_MAX"]  # a slip-undone word starting more tokens counts for none
PREFIX_SLIP_LEN = SIZES["PREFIX_SLIP_LEN"]  # slips in words still being typed: at most this long
SAME_NUMBER_CAP = SIZES["SAME_NUMBER_CAP"]  # addresses with the typed number looked at in one run
MAX_NUMBER_CANDIDATES = 3      # house-number readings of a query
MAX_PARTS = SIZES["MAXP"]      # letter/addition parts of one reading
MAX_INTERPS = SIZES["MAXI"]    # readings of one query; parsing stops there
MAX_TYPO_WORD = 38             # typos are looked for in words of at most 38 letters
MAX_DL_LEN = 78                # the C distance (and the deletion index) stop at 78 letters
TYPO_SET = 512                 # typo tokens remembered for one word before the closest are kept

_FOLD = [s[:FOLD_WIDTH] for s in fold_table()]

# the keys beside each letter on a QWERTY keyboard (the C code's _NEAR_KEYS)
NEAR_KEYS = {
    "q": "wa", "w": "qeas", "e": "wrsd", "r": "etdf", "t": "ryfg", "y": "tugh", "u": "yihj",
    "i": "uojk", "o": "ipkl", "p": "ol", "a": "qwsz", "s": "adwezx", "d": "sferxc",
    "f": "dgrtcv", "g": "fhtyvb", "h": "gjyubn", "j": "hkuinm", "k": "jliom", "l": "kop",
    "z": "asx", "x": "zcsd", "c": "xvdf", "v": "cbfg", "b": "vngh", "n": "bmhj", "m": "njk",
}


# ---------------------------------------------------------------------------------------------
# the query: folding, tokens, words, interpretations


def _is_letter(c: str) -> bool:
    return ord(c) < FOLD_LIMIT and _FOLD[ord(c)][:1].isalpha()


def fold_query(q: str, *, layout: bool = False) -> str:
    """Map each code point through the shared fold table (>= FOLD_LIMIT: a separator). An
    apostrophe between a lone letter and a word glues them ("a'dam" is "adam"). With `layout`,
    brackets and line breaks fold to "(", ")" and "," (the engine's `_prepare`)."""
    layout_marks = _LAYOUT if layout else {}
    out = []
    for i, c in enumerate(q):
        if (c in "'\u2019\u2018`" and 0 < i < len(q) - 1 and _is_letter(q[i - 1]) and _is_letter(q[i + 1])
                and (i == 1 or not _is_letter(q[i - 2]))):
            continue
        out.append(layout_marks.get(c) or (_FOLD[ord(c)] if ord(c) < FOLD_LIMIT else " "))
    return "".join(out)


_UNMARK = str.maketrans("(),", "   ")
_LAYOUT = {c: mark for chars, mark in ((NOTE_OPEN, "("), (NOTE_CLOSE, ")"), (LINE_BREAKS, ",")) for c in chars}
_ADDRESSEE = [tuple(w.split()) for w in ADDRESSEE_WORDS]


def without_noise(folded: str, tier: int) -> str | None:
    """The folded query without its notes in brackets (tier 1), and also without the lines that
    name whom it is for (tier 2), as spaces; None when the tier leaves out nothing more than the
    one before, or leaves nothing (the engine's `_without_noise`)."""
    out = []
    depth = 0
    dropped = False
    for c in folded:
        if c == "(":
            depth += 1
            out.append(" ")
        elif c == ")":
            depth = max(0, depth - 1)
            out.append(" ")
        elif depth:
            dropped = dropped or c.isalnum()
            out.append(" ")
        else:
            out.append(c)
    text = "".join(out)
    if tier == 2:
        dropped = False
        parts = text.split(",", MAX_TOKENS)
        first_num = next((g for g, p in enumerate(parts) if any(c.isdigit() for c in p)), -1)
        last_words = max((g for g, p in enumerate(parts) if any(c.isalnum() for c in p)), default=-1)
        for g, p in enumerate(parts):
            if not any(c.isalnum() for c in p) or any(c.isdigit() for c in p):
                continue
            if any(tuple(p.split()[:len(w)]) == w for w in _ADDRESSEE) or 0 <= first_num < last_words and g < first_num:
                parts[g] = " " * len(p)
                dropped = True
        text = ",".join(parts)
    text = text.replace(",", " ")
    return text if dropped and any(c.isalnum() for c in text) else None


@dataclass
class Token:
    text: str          # a-z0-9 only
    digits: int        # number of leading digits
    value: int         # value of the leading digits, as the C code caps it


def tokenise(folded: str) -> list[Token]:
    """ij -> y, a space between a letter and a following digit, split on spaces."""
    chars: list[str] = []
    prev = " "
    i = 0
    # NOTE: the C buffer holds QUERY_BUFFER bytes; it stops copying two short of the end.
    while i < len(folded) and len(chars) < QUERY_BUFFER - 2:
        c = folded[i]
        if c == "i" and folded[i + 1:i + 2] == "j":
            c = "y"
            i += 1
        if c.isdigit() and "a" <= prev <= "z":
            chars.append(" ")
        chars.append(c)
        prev = c
        i += 1
    out = []
    for text in "".join(chars).split(" "):
        if not text:
            continue
        if len(out) == MAX_TOKENS:
            break
        digits = len(text) - len(text.lstrip("0123456789"))
        value = 0
        for ch in text[:digits]:
            if value < 1_000_000:      # the C cap: the value stops growing past a million
                value = value * 10 + int(ch)
        out.append(Token(text, digits, value))
    return out


@dataclass
class Range:
    """Token ids [lo, hi) a query word may stand for, with the penalty of the range."""

    lo: int
    hi: int
    base: np.float32
    typo: bool


@dataclass
class Word:
    """What one query token can match in the vocabulary."""

    ranges: list[Range] = field(default_factory=list)
    exact: int = -1        # id of the token equal to the word, or -1
    cost: int = 0          # postings under all ranges
    typo_done: int = 0          # the furthest look for slips so far (1, then 2: the last)
    slips: bool = False         # the typo ranges are tokens the word starts with a slip undone


@dataclass
class Interp:
    """One reading of the query."""

    number: int = -1                                   # house number, -1: none typed
    parts: list[tuple[int, int]] = field(default_factory=list)  # (token, offset) letter/addition
    words: list[int] = field(default_factory=list)     # tokens that must name street/place
    pc_lo: int = -1                                    # postcode code range, -1: none
    pc_hi: int = -1
    area: tuple[int, int] | None = None                # text mode: the postcode range the
                                                       # addresses must lie in ("kerkstraat 12 1017")
    place_after: int = 1 << 30                         # words after this token: the place
    street_until: int = -1                             # words before this token: the street


@dataclass
class PoolItem:
    group: int
    score: np.float32
    text_pen: np.float32
    interp: int


@dataclass
class Cand:
    score: np.float32
    addr: int
    key: int
    interp: int


@dataclass
class Search:
    """The state of one query."""

    limit: int
    focus: tuple[float, float, float] | None    # (lat, lon, cos lat)
    tokens: list[Token] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    interps: list[Interp] = field(default_factory=list)
    typo_mode: bool = False
    pool: list[PoolItem] = field(default_factory=list)
    cands: list[Cand] = field(default_factory=list)
    split_pc: bool = False       # the postcode was read from two tokens ("5202 de"), or the
                                 # words within a postcode being typed (area)
    area: int = 0                # ... the latter: its four digits, 0 when not
    defer_slips: bool = False    # with every word whole as typed and a number typed, slips in
                                 # them wait until the retries and the nearest numbers found
                                 # nothing ...
    deferred: bool = False       # ... and they did wait
    near_number: bool = False    # the last retry: the nearest house numbers (near_numbers)
    province: int = -1           # a province typed at the end, left out as a word: only its
                                 # streets (string id)
    max_pass: int = 4            # passes run: as typed, then ever more slips (2 in a retry)
    pc_strict: int = 0           # postcode mode: every word must name the address (1), and the
                                 # house number is the one typed, not one it starts (2)


def dl_distance(a: str, b: str) -> int:
    """Restricted Damerau-Levenshtein (optimal string alignment) distance."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j - 1] + cost, prev[j] + 1, cur[j - 1] + 1)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        prev2, prev = prev, cur
    return prev[len(b)]


def _without(word: str, *positions: int) -> str:
    return "".join(c for i, c in enumerate(word) if i not in positions)


def unfold_ij(word: str) -> str:
    """The word with every y spelt ij (the register's own spelling, where slips happen)."""
    return word.replace("y", "ij")


def sound_variants(word: str) -> list[str]:
    """The word with every ei spelt ij (folded y), every y spelt ei, every au spelt ou, every
    ou spelt au ("" where it has none): the sounds Dutch spelling writes two ways, each taken
    for one slip. In the C order (`_sound_variant`)."""
    out = []
    for a, b in (("ei", "y"), ("y", "ei"), ("au", "ou"), ("ou", "au")):
        v = word.replace(a, b)
        out.append(v if v != word and len(v) <= MAX_TYPO_WORD else "")
    return out


def query_deletions(word: str, maxd: int) -> list[str]:
    """The query word with 0, 1 (.. 2) letters deleted, in the order the C code looks them up."""
    out = [word]
    if maxd == 0:
        return out
    for i in range(len(word)):
        out.append(_without(word, i))
        if maxd == 2:
            for j in range(i + 1, len(word)):
                out.append(_without(word, i, j))
    return out


def typo_lookups(word: str, maxd: int) -> list[str]:
    """Every form the C code looks up in the deletion index for a query word, in order: the
    word's own deletion forms, then (if it has a y) those of its ij spelling."""
    forms = query_deletions(word, maxd)
    if "y" in word and len(unfold_ij(word)) <= MAX_TYPO_WORD:
        forms += query_deletions(unfold_ij(word), maxd)
    for v in sound_variants(word):         # one slip already: the rest within one less
        if v:
            forms += query_deletions(v, maxd - 1)
    return forms


def token_deletions(token: str) -> set[str]:
    """The forms of a vocabulary token in the deletion index (`_core.deletion_index`): the token
    and its ij spelling, each with 0, 1 (2 when 7+ letters long) letters deleted."""
    out = set()
    for form in (token, unfold_ij(token)):
        if len(form) < 4 or len(form) > MAX_DL_LEN:
            continue
        out.add(form)
        for i in range(len(form)):
            out.add(_without(form, i))
            if len(form) >= 7:
                for j in range(i + 1, len(form)):
                    out.add(_without(form, i, j))
    return out


def typo_distance(word: str, token: str, maxd: int) -> int:
    """Edits from word to token, or maxd + 1 when more than maxd: the closer of the folded
    spellings and the ij spellings ("zeedikj" is one slip from "zeedijk", two from "zeedyk")."""
    def within(a: str, b: str, cap: int = maxd) -> int:
        if len(a) > MAX_DL_LEN or len(b) > MAX_DL_LEN or abs(len(a) - len(b)) > cap:
            return cap + 1
        return min(dl_distance(a, b), cap + 1)
    dist = within(word, token)
    if dist > 1:
        dist = min(dist, within(unfold_ij(word), unfold_ij(token)))
    for v in sound_variants(word):          # "reinlaan" for rijnlaan: the other spelling is one slip
        if dist > 1 and v:
            dist = min(dist, 1 + within(v, token, maxd - 1))
    return dist


# ---------------------------------------------------------------------------------------------
# the index


def group_token_arrays(g_tokrec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(token id int32, kind uint8, cover uint64) of every group token, from the index's
    interleaved records (TokRec in _core.pxd: token id in the low 32 bits of the first word, its
    kind in the next byte; the cover in the second word). The index stores only the records."""
    first = g_tokrec[0::2]
    tok = (first & np.uint64(0xFFFFFFFF)).astype(np.int32)
    kind = ((first >> np.uint64(32)) & np.uint64(0xFF)).astype(np.uint8)
    return tok, kind, g_tokrec[1::2].copy()


class ReferenceIndex:
    """Plain-Python search over the arrays of a compiled index (`AddressIndex.arrays`)."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.a = arrays
        a = arrays
        blob = bytes(a["v_blob"])
        off = a["v_off"].tolist()
        self.vocab: list[str] = [blob[off[t]:off[t + 1]].decode("ascii") for t in range(len(off) - 1)]
        self.v_post_start: list[int] = a["v_post_start"].tolist()
        self.pc_code: list[int] = a["pc_code"].tolist()
        self.pc_start: list[int] = a["pc_start"].tolist()
        self.g_tok_start: list[int] = a["g_tok_start"].tolist()
        self.g_start: list[int] = a["g_start"].tolist()
        self.add_blob = bytes(a["add_blob"])
        self.add_off: list[int] = a["add_off"].tolist()
        # the string id of each name, provinces among them (a province typed at the end:
        # drop_retry); the C code looks them up in the sorted table
        s_blob, s_off = bytes(a["s_blob"]), a["s_off"].tolist()
        self.province_id = {json.loads(b'"' + s_blob[s_off[k]:s_off[k + 1]] + b'"'): k
                            for k in range(len(s_off) - 1)}
        # short prefixes ("s", "ke") with many postings: their best groups, precomputed
        self.short_prefix: dict[str, list[int]] = {}
        if "sp_off" in a:
            sp_blob, sp_off = bytes(a["sp_blob"]), a["sp_off"].tolist()
            sp_start, sp_group = a["sp_start"].tolist(), a["sp_group"]
            for k in range(len(sp_start) - 1):
                text = sp_blob[sp_off[k]:sp_off[k + 1]].decode("ascii")
                self.short_prefix[text] = sp_group[sp_start[k]:sp_start[k + 1]].tolist()
        self._letter_hist = None   # built on the first typo search
        self._additions = None     # lower-case registered additions, on first use
        self._slip_cache: dict[str, list[int]] = {}   # `prefix_slips` of each word asked
        self.g_tok, self.g_tok_kind, self.g_tok_cover = group_token_arrays(a["g_tokrec"])
        # the group of every entry of g_tok (for `groups_matching_words`)
        self.tok_group = np.repeat(np.arange(len(self.g_tok_start) - 1, dtype=np.int32),
                                   np.diff(a["g_tok_start"]))

    # ---- small accessors

    def group_tokens(self, g: int) -> list[tuple[int, int, int]]:
        """(token id, kind, cover) of every token of group g, in stored order."""
        a, b = self.g_tok_start[g], self.g_tok_start[g + 1]
        return list(zip(self.g_tok[a:b].tolist(), self.g_tok_kind[a:b].tolist(),
                        self.g_tok_cover[a:b].tolist(), strict=True))

    def postings(self, lo: int, hi: int) -> list[int]:
        """The groups listed under tokens lo..hi-1, token after token."""
        return self.a["v_post"][self.v_post_start[lo]:self.v_post_start[hi]].tolist()

    def segment(self, w: str, letter_first: bool, prefix_end: bool, split: bool) -> list[int] | None:
        """The ends of the fewest whole tokens w is glued from, or None (the engine's `_segment`:
        a first piece of one letter with letter_first, a last piece that starts a token with
        prefix_end when no cutting into whole ones exists; split: two pieces at least)."""
        n = len(w)
        if n > SEG_MAX:
            return None
        none = SEG_MAX + 1
        best = [none] * (n + 1)
        prev = [0] * (n + 1)
        best[0] = 0
        if letter_first and n > 1:
            best[1], prev[1] = 1, 0
        pbest, pprev = none, -1
        for i in range(n):
            if best[i] > SEG_MAX or best[i] >= MAX_CUTS + 2:
                continue
            if i + 2 > n:
                continue
            for j in range(i + 2, n + 1):
                lo, hi = self.prefix_range(w[i:j])
                if lo >= hi:
                    break
                if len(self.vocab[lo]) == j - i and best[i] + 1 <= best[j] and not (split and j - i == n):
                    best[j], prev[j] = best[i] + 1, i
            else:
                if prefix_end and n - i >= 3 and best[i] + 1 < pbest:
                    pbest, pprev = best[i] + 1, i
        if best[n] > SEG_MAX:
            if pprev < 0:
                return None
            best[n], prev[n] = pbest, pprev
        cuts, end = [], n
        for _ in range(best[n]):
            cuts.append(end)
            end = prev[end]
        return cuts[::-1]

    def glue_spell(self, tokens: list[Token], broad: bool, split: int = 0, words: bool = True) -> str | None:
        """The query with its glued words cut (the engine's `_glue_spell`), or None."""
        out: list[str] = []
        glued = m = splits = 0
        for i, t in enumerate(tokens):
            text, at, last = t.text, t.digits, i == len(tokens) - 1
            cuts = None
            if not at and len(text) >= 5 and words and text not in REGION_WORDS:
                lo, hi = self.prefix_range(text)
                if lo >= hi or (broad and len(text) >= 8):
                    cuts = self.segment(text, False, last and lo >= hi, lo < hi)
                    if cuts is None or len(cuts) < 2 or not glued_words(text, cuts):
                        cuts = None
                    elif lo >= hi:
                        glued += 1
            elif 0 < at <= 5 and (len(text) - at >= 5 or (len(text) - at >= 3
                                                       and not self.addition_prefix(text[at:]))):
                cuts = self.segment(text[at:], True, last, False)
                glued += cuts is not None
            if m + len(text) + len(cuts or ()) + 3 >= QUERY_BUFFER - 2:
                return None
            word = text
            if cuts:
                tail = text[at:]
                pieces = [tail[a:b] for a, b in zip([0] + cuts[:-1], cuts, strict=True)]
                number = text[:at]
                if at and split > 0 and not splits:
                    if at <= split:
                        return None
                    number = number[:split] + " " + number[split:]
                    splits = 1
                word = number + ("" if at and cuts[0] <= 1 else " " if at else "") + " ".join(pieces)
            out.append(word)
            m = len(" ".join(out))
        return " ".join(out) if glued else None

    def glue_reading(self, s: Search) -> list[int] | None:
        """Words typed glued, cut into registered words and read as typed (the engine's
        `_glue_reading`): the answer when that finds something, else None."""
        tokens, length = s.tokens, None
        digits = next((t.digits for t in tokens if 2 <= t.digits <= 5 and len(t.text) > t.digits), 0)
        for tr in range(4):
            split = digits - (tr - 1) if tr >= 2 else 0
            if tr >= 2 and split < 1:
                break
            spelled = self.glue_spell(tokens, tr == 1, split)
            if spelled is None:
                break
            if tr == 1 and len(spelled) == length:
                continue
            length = len(spelled)
            s.tokens = tokenise(spelled)
            s.max_pass = 1
            self.read(s)
            s.max_pass = 4
            if s.cands:
                best = sorted(s.cands, key=lambda c: (-c.score, c.addr))
                return [c.addr for c in best[:s.limit]]
            s.tokens = tokens
        if length is not None:
            # the letters glued after a number are words: the query goes on from them cut
            spelled = self.glue_spell(tokens, False, 0, words=False)
            if spelled is not None:
                s.tokens = tokenise(spelled)
        return None

    def addition_prefix(self, word: str) -> bool:
        """Does some registered addition (lower case) start with `word`?"""
        if self._additions is None:
            blob, off = bytes(self.a["addl_blob"]), self.a["addl_off"].tolist()
            self._additions = [blob[off[k]:off[k + 1]].decode("ascii") for k in range(len(off) - 1)]
        return any(a.startswith(word) for a in self._additions)

    def addition(self, addr: int) -> bytes:
        k = int(self.a["a_addition"][addr])
        return self.add_blob[self.add_off[k]:self.add_off[k + 1]]

    def prefix_range(self, w: str) -> tuple[int, int]:
        """Token ids [lo, hi) whose text starts with w (the vocabulary is sorted)."""
        n = len(w)
        lo = bisect_left(self.vocab, w, key=lambda t: t[:n])
        hi = bisect_right(self.vocab, w, lo, key=lambda t: t[:n])
        return lo, hi

    def range_cost(self, lo: int, hi: int) -> int:
        return self.v_post_start[hi] - self.v_post_start[lo]

    # ---- the entry point

    def search_ids(self, q: str, *, limit: int = 5, lat: float | None = None,
                   lon: float | None = None) -> list[int]:
        """The address row ids the compiled `Index.search_ids` returns, in the same order."""
        limit, flat, flon = check_arguments(q, limit, lat, lon)  # the engine's rules, one place
        focus = None
        if flat is not None:
            focus = (flat, flon, math.cos(flat * math.pi / 180.0))
        s = Search(limit=limit, focus=focus)
        folded = fold_query(q, layout=True)
        plain = folded.translate(_UNMARK)
        s.tokens = tokenise(plain)
        if not s.tokens:
            return []
        s.defer_slips = 1 < len(s.tokens) <= DROP_MAX_TOKENS
        glued = self.glue_reading(s)
        if glued is not None:
            return glued
        s.defer_slips = 1 < len(s.tokens) <= DROP_MAX_TOKENS
        if (folded != plain and (without_noise(folded, 1) or without_noise(folded, 2)) is not None) or (
                len(s.tokens) > 1 and not s.tokens[-1].digits and s.tokens[-1].text in COUNTRY_WORDS):
            s.max_pass = 2      # PERF: all slips only for the query without its notes or country
        self.read(s)
        s.max_pass = 4
        s.defer_slips = False
        for tier in (1, 2):
            # nothing found: without the notes, then also without the addressee lines
            clean = None if s.cands or folded == plain else without_noise(folded, tier)
            if clean is not None:
                s.tokens = tokenise(clean)
                s.defer_slips = 1 < len(s.tokens) <= DROP_MAX_TOKENS
                self.read(s)
                s.defer_slips = False
        if not s.cands and len(s.tokens) <= DROP_MAX_TOKENS:
            s.max_pass = 2          # a retry looks for one slip only in words matching nothing
            tokens = s.tokens
            words = s.words
            nothing = [not t.digits and (not w.ranges or w.slips) for t, w in zip(tokens, words, strict=True)]
            whole = [w.exact >= 0 for w in s.words]
            s.pc_strict = 1         # a respaced reading of a postcode names it with every word
            s.max_pass = 1          # PERF: a respaced reading is read as typed only
            self.respace_retry(s, tokens, nothing, whole)
            s.max_pass = 2
            s.pc_strict = 0
            if not s.cands and len(tokens) > 1:
                # for leaving out, also the words that match only with a slip
                loose = [not t.digits and not any(not r.typo for r in w.ranges)
                         for t, w in zip(tokens, words, strict=True)]
                self.drop_retry(s, tokens, nothing, loose, whole)
            if not s.cands and len(tokens) > 1 and any(number_like(t) for t in tokens):
                # "oudegracht 98 utrecht": the street is there, the number not
                s.tokens = tokens
                s.near_number = True
                s.max_pass = 2
                self.read(s)
                s.near_number = False
            if not s.cands and s.deferred:
                s.tokens = tokens
                s.max_pass = 4
                self.read(s)
        # the `limit` best candidates; ties go to the lower address id
        best = sorted(s.cands, key=lambda c: (-c.score, c.addr))
        return [c.addr for c in best[:limit]]

    def respace_retry(self, s: Search, tokens: list[Token], nothing: list[bool], whole: list[bool]) -> None:
        """Nothing found: read the query again with its words spaced as the register spaces
        them: digits cut from what is glued to them ("12utrecht", "9711ljgroningen", "129711lj");
        two typed words glued where together they start a token ("kerk straat"), then one
        typed word cut into whole tokens of 2+ letters and a last piece that starts one
        ("dehoven", "ankvandermoerstraat"), the fewest pieces first, leftmost cuts first; a
        whole token only in two whole tokens. With a word that matches nothing, only it is cut."""
        texts = [t.text for t in tokens]
        n_nothing = sum(nothing)
        state = {"tries": 0, "probes": RESPACE_PROBES}

        def probe(w: str) -> int:
            state["probes"] -= 1
            lo, hi = self.prefix_range(w)
            if lo >= hi:
                return 0
            return 2 if self.vocab[lo] == w else 1

        def attempt(words: list[str], glue: int = -1, word: int = -1, ncut: int = 0) -> bool:
            if not self._fits(tokens, glue, word, ncut):
                return False
            state["tries"] += 1
            s.tokens = tokenise(" ".join(words))
            self.read(s)
            return bool(s.cands)

        for i, t in enumerate(tokens):
            # digits glued to what follows them: a number to the word after it ("kerkstraat
            # 12utrecht"), a registered postcode to the place ("9711ljgroningen"), the house
            # number to a registered postcode ("herestraat 129711 lj")
            if state["tries"] >= RESPACE_TRIES:
                break
            text, dg = t.text, t.digits
            c = 0
            if 0 < dg <= 5 and len(text) - dg >= 5 and n_nothing == 0 and probe(text[dg:]) > 0:
                c = dg
            elif dg == 4 and len(text) >= 9 and self.pc_find(text[:4], text[4:6]) >= 0 and probe(text[6:]) > 0:
                c = 6
            elif 5 <= dg <= 9:
                # the postcode must hold that house number: then the break is what was lost
                p = -1
                if len(text) == dg + 2:
                    p = self.pc_find(text[dg - 4:dg], text[dg:])
                elif (len(text) == dg and i + 1 < len(tokens) and len(tokens[i + 1].text) == 2
                      and tokens[i + 1].digits == 0):
                    p = self.pc_find(text[dg - 4:dg], tokens[i + 1].text)
                if p >= 0 and self.pc_holds(p, int(text[:dg - 4])):
                    c = dg - 4
            if c and attempt(texts[:i] + [text[:c], text[c:]] + texts[i + 1:], word=i, ncut=1):
                return

        for i in range(len(texts) - 1):
            if state["tries"] >= RESPACE_TRIES or n_nothing > 0:
                break
            if tokens[i].digits or tokens[i + 1].digits:
                continue
            if probe(texts[i] + texts[i + 1]) > 0 and attempt(
                    texts[:i] + [texts[i] + texts[i + 1]] + texts[i + 2:], glue=i):
                return

        def cut(i: int, word: str, pos: int, pieces: int, cuts: list[int], whole_word: bool) -> bool:
            for c in range(pos + 2, len(word) - 1):
                if state["tries"] >= RESPACE_TRIES or state["probes"] <= 0:
                    return False
                if probe(word[pos:c]) != 2:
                    continue
                if pieces == 2:
                    if probe(word[c:]) > whole_word:
                        bounds = [0, *cuts, c, len(word)]
                        parts = [word[a:b] for a, b in itertools.pairwise(bounds)]
                        if attempt(texts[:i] + parts + texts[i + 1:], word=i, ncut=len(parts) - 1):
                            return True
                elif cut(i, word, c, pieces - 1, cuts + [c], whole_word):
                    return True
            return False

        for i, t in enumerate(tokens):
            if t.digits or len(t.text) < 4 or n_nothing > nothing[i]:
                continue
            # a word that is a whole token itself is cut only in two whole tokens
            for pieces in range(2, 3 if whole[i] else MAX_CUTS + 2):
                if cut(i, t.text, 0, pieces, [], whole[i]):
                    return
        s.tokens = tokens

    @staticmethod
    def _fits(tokens: list[Token], glue: int, word: int, ncut: int) -> bool:
        """Does the respelled query fit the C query buffer? (`_respell`, which checks before
        each token, counting the cuts of the word being cut)"""
        m = 0
        for j, t in enumerate(tokens):
            if m + len(t.text) + ncut + 1 >= QUERY_BUFFER - 2:
                return False
            m += (j > 0 and j != glue + 1) + len(t.text) + (ncut if j == word else 0)
        return True

    def drop_retry(self, s: Search, tokens: list[Token], nothing: list[bool], loose: list[bool],
                   whole: list[bool]) -> None:
        """Nothing found: again without the words that match nothing, not even with a slip, the
        words that only say a number follows ("nr") and the words that label a form's field
        ("gemeente"); then also without the country or
        province words that end it ("..., nederland"); then also without the words that match
        only with a slip (loose); then also without the letters and
        additions typed with one of the last two house numbers ("damrak 1 hs", "damrak 1 3 hoog"); then without
        a postcode the address does not have (`postcode_retry`)."""
        n = len(tokens)
        drop = [nothing[i] or (i + 1 < n and not tokens[i].digits and tokens[i + 1].digits > 0
                               and tokens[i].text in NUMBER_WORDS)
                or (not tokens[i].digits and tokens[i].text in LABEL_WORDS) for i in range(n)]
        loose = list(loose)
        keep_street(tokens, drop, loose)
        region = [False] * n
        i = n - 1
        while i >= 0 and sum(region) < 3:
            if drop[i]:
                i -= 1
            elif not tokens[i].digits and tokens[i].text in REGION_WORDS:
                region[i] = True
                i -= 1
            else:
                break
        i = 0                   # ... and the country that opens it
        while i < n and sum(region) < 3:
            if drop[i] or region[i]:
                i += 1
            elif not tokens[i].digits and tokens[i].text in COUNTRY_WORDS:
                region[i] = True
                i += 1
            else:
                break
        slipped = [loose[i] and not drop[i] and not region[i] for i in range(n)]
        for tr in range(3):
            if (tr == 0 and not any(drop)) or (tr == 1 and not any(region)) or (tr == 2 and not any(slipped)):
                continue
            if sum(drop) + sum(region) * (tr > 0) + sum(slipped) * (tr > 1) >= n:
                continue
            s.tokens = [t for t, d, r, sl in zip(tokens, drop, region, slipped, strict=True)
                        if not d and not (r and tr) and not (sl and tr == 2)]
            if tr == 1:
                # a province left out still says where: its streets first
                s.province = self.typed_province(tokens, region)
                if s.province >= 0:
                    self.read(s)
                    s.province = -1
                    if s.cands:
                        return
            self.read(s)
            if s.cands:
                return
        gone = [a or b for a, b in zip(drop, region, strict=True)]
        numbers = 0
        numbers_typed = sum(1 for i, t in enumerate(tokens) if not gone[i] and number_like(t))
        for k in range(n - 1, -1, -1):
            if numbers >= 2:
                break
            t = tokens[k]
            if gone[k] or not number_like(t):
                continue
            if postcode_at(tokens, gone, k) and numbers_typed > 1:
                continue    # a postcode beside the house number: the postcode retry reads it
            numbers += 1
            stripped = len(t.text) > t.digits
            last = k
            for i in range(k + 1, min(n, k + MAX_PARTS + 1)):
                if gone[i]:
                    continue
                u = tokens[i]
                if postcode_at(tokens, gone, i):
                    break
                if ((len(u.text) > 4 or not (u.digits == len(u.text) or len(u.text) <= 2 or not whole[i]))
                        and not (not u.digits and u.text in FLOOR_WORDS)):
                    break
                stripped = True
                last = i
            if not stripped:
                continue
            kept = []
            for i, u in enumerate(tokens):
                if gone[i] or k < i <= last:
                    continue
                kept.append(Token(u.text[:u.digits], u.digits, u.value) if i == k else u)
            s.tokens = kept
            self.read(s)
            if s.cands:
                return
        if self.postcode_retry(s, tokens, gone):
            return
        s.tokens = tokens

    def typed_province(self, tokens: list[Token], region: list[bool]) -> int:
        """The province the region words left out name (the last that names one), or -1."""
        p = -1
        for i, t in enumerate(tokens):
            if not region[i]:
                continue
            if self.province_id.get(REGION_PROVINCE.get(t.text, ""), -1) >= 0:
                p = self.province_id[REGION_PROVINCE[t.text]]
            elif t.text == "holland" and i > 0 and region[i - 1] and tokens[i - 1].text in ("noord", "zuid"):
                p = self.province_id.get(tokens[i - 1].text.capitalize() + "-Holland", -1)
        return p

    def pc_find(self, digits: str, letters: str) -> int:
        """The index of the registered postcode of four digits and two lower-case letters, or -1."""
        if digits[0] == "0" or not (letters.isalpha() and letters.islower()):
            return -1
        code = int(digits) * 676 + _letters(letters)
        p = bisect_left(self.pc_code, code)
        return p if p < len(self.pc_code) and self.pc_code[p] == code else -1

    def pc_holds(self, p: int, number: int) -> bool:
        """Does postcode p (an index into pc_code) hold a house with this number?"""
        return number in {int(self.a["a_number"][a]) for a in self.a["pc_addr"][self.pc_start[p]:self.pc_start[p + 1]]}

    def postcode_slips(self, s: Search, tokens: list[Token], gone: list[bool], k: int, last: int) -> bool:
        """The postcodes one slip from the typed one (tokens k..last) that exist, each read with
        the other words, every one of which must then name the address, and the house number
        as typed: the first that finds something answers (when numbers were typed, only a
        postcode holding one of them as a house number is read). The C code's order: a wrong letter
        (last but one, then last; a-z), two neighbouring digits or the letters swapped, a wrong
        digit (0-9)."""
        pc = tokens[k].text[:4] + (tokens[k].text[4:6] if last == k else tokens[last].text[:2])
        if not all("a" <= c <= "z" for c in pc[4:]):
            return False
        variants = []
        for pos in (4, 5):
            variants += [pc[:pos] + c + pc[pos + 1:] for c in "abcdefghijklmnopqrstuvwxyz" if c != pc[pos]]
        for a in (0, 1, 2, 4):
            if pc[a] != pc[a + 1]:
                variants.append(pc[:a] + pc[a + 1] + pc[a] + pc[a + 2:])
        for pos in range(4):
            variants += [pc[:pos] + c + pc[pos + 1:] for c in "0123456789" if c != pc[pos]]
        nums = {t.value for i, t in enumerate(tokens) if not gone[i] and not k <= i <= last
                and 0 < t.digits <= 5 and 1 <= t.value <= 99999}
        saved_pass = s.max_pass
        s.max_pass, s.pc_strict = 1, 2
        found = False
        for v in variants:
            p = self.pc_find(v[:4], v[4:])
            if p < 0:
                continue
            if nums and not any(self.pc_holds(p, n) for n in nums):
                continue          # PERF (C): it holds none of the typed numbers
            s.tokens = [Token(v, 4, int(v[:4])) if i == k else t for i, t in enumerate(tokens)
                        if not gone[i] and not k < i <= last]
            self.read(s)
            if s.cands:
                found = True
                break
        s.max_pass, s.pc_strict = saved_pass, 0
        return found

    def postcode_retry(self, s: Search, tokens: list[Token], gone: list[bool]) -> bool:
        """A postcode the address does not have ("herestraat 12 9711lk"): the words again
        without it, near where its four digits lie (the first address of the first postcode
        from them), unless the caller gave a focus point. Whether it found something."""
        n = len(tokens)
        k = next((i for i in range(n) if not gone[i] and postcode_at(tokens, gone, i)), -1)
        if k < 0:
            return False
        last = k + 1 if len(tokens[k].text) == 4 else k
        kept = [t for i, t in enumerate(tokens) if not gone[i] and not k <= i <= last]
        if not any(not t.digits for t in kept):
            return False
        if self.postcode_slips(s, tokens, gone, k, last):
            return True
        s.tokens = kept
        focus = s.focus
        if focus is None:
            s.focus = self.area_focus(tokens[k].value)
        self.read(s)
        s.focus = focus
        return bool(s.cands)

    def area_focus(self, digits: int) -> tuple[float, float, float]:
        """The focus point of four postcode digits: the first address of the first postcode from them."""
        p = min(bisect_left(self.pc_code, max(digits, 1000) * 676), len(self.pc_code) - 1)
        addr = int(self.a["pc_addr"][self.pc_start[p]])
        flat = int(self.a["a_lat"][addr]) * params.MICRODEGREE
        return (flat, int(self.a["a_lon"][addr]) * params.MICRODEGREE, math.cos(flat * math.pi / 180.0))

    def read(self, s: Search) -> None:
        """Parse the tokens and score every reading of them."""
        focus = s.focus
        self.parse(s, mode=1)
        self.passes(s)
        if not s.cands and s.split_pc:
            # "5202 de run veldhoven": 5202 DE was no postcode here, so 5202 is a house number;
            # "kastanjestraat 1 9000": no 9000 postcode here, but the addition 9000
            area = s.area
            self.parse(s, mode=0)
            self.passes(s)
            if not s.cands and area:
                # "kerkstraat 12 2011": the words without it, near it
                self.parse(s, mode=3)
                if focus is None:
                    s.focus = self.area_focus(area)
                self.passes(s)
                s.focus = focus
        if not s.cands and area_token(s.tokens, lone=True) >= 0:
            # "kerkstraat 1017": no such house number, so a postcode being typed
            self.parse(s, mode=2)
            self.passes(s)

    def passes(self, s: Search) -> None:
        """Score the interpretations; when nothing is found, again with slips of a key allowed."""
        # pass 0: as typed; when nothing is found, look for slips of a key, the closest first:
        # pass 1 one edit in the words that match nothing at all, pass 2 one edit in every word,
        # pass 3 two edits in words of 9+ letters; within a postcode being typed, slips only in
        # words that match nothing as typed
        max_pass = s.max_pass
        if s.area:
            s.max_pass = min(max_pass, 2)
        for pass_ in range(s.max_pass):
            if pass_ == 2 and s.defer_slips and any(it.number >= 0 for it in s.interps) and all(
                    s.words[ti].exact >= 0 or s.tokens[ti].digits for it in s.interps for ti in it.words):
                # "kerkstraat 101-h amsterdam", "herestraat 200 groningen": every word is a
                # whole token as typed, and the house may not have the letter or addition
                # typed (drop_retry), or the street not the number (near_number), more likely
                # than a slip in one of those words
                s.deferred = True
                break
            s.typo_mode = pass_ > 0
            s.pool = []
            s.cands = []
            if pass_ > 0:
                added = 0
                for it in s.interps:
                    for ti in it.words:
                        if pass_ >= 2 or not any(not r.typo for r in s.words[ti].ranges):
                            added += self.typo_ranges(s, ti, 2 if pass_ == 3 else 1)
                if added == 0:
                    continue          # nothing new to look for
            for ii, it in enumerate(s.interps):
                if it.pc_lo >= 0:
                    self.collect_postcode(s, ii)
                else:
                    self.scan_text(s, ii)
            self.collect_text(s)
            if s.cands:
                break
        s.max_pass = max_pass

    # ---- words and their ranges

    def word_ranges(self, tok: Token) -> Word:
        """The prefix range of the word, and of `...y` for a word ending in `i` (on its way to ij)."""
        w = Word()
        lo, hi = self.prefix_range(tok.text)
        if lo < hi:
            if self.vocab[lo] == tok.text:
                w.exact = lo
            w.ranges.append(Range(lo, hi, ZERO, False))
            w.cost += self.range_cost(lo, hi)
        if tok.text.endswith("i"):
            lo, hi = self.prefix_range(tok.text[:-1] + "y")
            if lo < hi:
                w.ranges.append(Range(lo, hi, IJ_VARIANT_PEN, False))
                w.cost += self.range_cost(lo, hi)
        return w

    def typo_ranges(self, s: Search, ti: int, max_edits: int) -> int:
        """Set the typo ranges of query token ti: the tokens within 1 edit, or 2 when max_edits
        allows and the word or the token has 9+ letters and the word 7+ (two left-out letters
        make a 9-letter word 7 long), one range each, the closer ones first. Return 1 when
        this looked further than before.

        The C code finds them through the deletion hash index; here every vocabulary token that
        could be close enough is measured. The C code remembers them in the order of its hash
        look-ups (see `typo_lookups`; within one look-up by token id), at most TYPO_SET of them,
        then keeps those at distance 1 before those at distance 2 until MAX_RANGES: that order
        is rebuilt from the deletion forms, so that the same tokens survive the caps.
        """
        word, tok = s.words[ti], s.tokens[ti]
        text = tok.text
        typed_len = len(unfold_ij(text))  # "zuije" (folded "zuye") is a 5-letter word
        if typed_len < 5 or tok.digits > 0 or len(text) > MAX_TYPO_WORD:
            return 0
        maxd = 2 if typed_len >= TWO_SLIP_TYPED and max_edits >= 2 else 1
        look = 2 if max_edits >= 2 else 1
        if word.typo_done >= look:
            return 0
        if word.typo_done == 1 and maxd == 1:
            # the last look at a word too short for two slips: only the start of the tokens it
            # begins with one slip undone may be new, where it is a slip from another word
            word.typo_done = 2
            if (word.ranges and (all(r.typo for r in word.ranges) or word.exact < 0)
                    and len(text) <= PREFIX_SLIP_LEN and s.max_pass > 2):
                return int(self.add_slips(word, text) > 0)
            return 0
        word.typo_done = look
        # forget the typo ranges of a narrower look (the prefix ranges stay)
        for r in word.ranges:
            if r.typo:
                word.cost -= self.range_cost(r.lo, r.hi)
        word.ranges = [r for r in word.ranges if not r.typo]
        word.slips = False
        lookups = typo_lookups(text, maxd)
        first_lookup = {form: k for k, form in reversed(list(enumerate(lookups)))}
        found = []          # (first look-up that finds it, token id, distance)
        for tid in self._typo_candidates(text, maxd):
            if any(r.lo <= tid < r.hi for r in word.ranges):
                continue          # already matched as a prefix
            dist = typo_distance(text, self.vocab[tid], maxd)
            if not 1 <= dist <= maxd:
                continue
            if dist == 2 and max(typed_len, len(unfold_ij(self.vocab[tid]))) < TWO_SLIP_LEN:
                continue
            hits = [first_lookup[f] for f in token_deletions(self.vocab[tid]) if f in first_lookup]
            if hits:          # (always, unless a y-spelling is too long to be looked up)
                found.append((min(hits), tid, dist))
        remembered = sorted(found)[:TYPO_SET]
        for _k, tid, dist in sorted(remembered, key=lambda x: x[2]):   # stable: closest first
            if len(word.ranges) >= MAX_RANGES:
                break
            base = TYPO_PEN + TYPO_EDIT * f32(dist - 1)
            word.ranges.append(Range(tid, tid + 1, base, True))
            word.cost += self.range_cost(tid, tid + 1)
        as_typed = any(not r.typo for r in word.ranges)
        if (((not remembered and not as_typed) or (look == 2 and (not as_typed or word.exact < 0)))
                and len(text) <= PREFIX_SLIP_LEN and s.max_pass > 2):
            # no token starts with the word, and none is one slip away (or the last look has
            # come): a slip in a word still being typed (not in the retries)
            self.add_slips(word, text)
            word.slips = not remembered and not as_typed and bool(self.prefix_slips(text))
        return 1

    def add_slips(self, word: Word, text: str) -> int:
        """Add the tokens `text` starts with one slip undone that are not typo tokens of the
        word yet, while ranges are left; return how many were added."""
        typos = {r.lo for r in word.ranges if r.typo}
        added = 0
        for tid in self.prefix_slips(text):
            if len(word.ranges) >= MAX_RANGES:
                break
            if tid in typos:
                continue
            # C: float + float + float * (double 1.0 - float share), stored into a float
            share = f32(len(text)) / f32(len(self.vocab[tid]))
            base = f32(float(TYPO_PEN + PREFIX_PEN) + float(PREFIX_FRAC) * (1.0 - float(share)))
            word.ranges.append(Range(tid, tid + 1, base, True))
            word.cost += self.range_cost(tid, tid + 1)
            added += 1
        return added

    def prefix_slips(self, text: str) -> list[int]:
        """The tokens that `text` starts with one edit undone, when it starts none as typed:
        edits at the last three positions up to k, the length of its longest start that some
        token has, then earlier a letter too many, two swapped or the key beside (NEAR_KEYS);
        an undone word that starts more than PREFIX_SLIP_MAX tokens counts for none;
        the first MAX_SLIP tokens in the order found."""
        hit = self._slip_cache.get(text)
        if hit is not None:
            return hit
        n = len(text)
        k = 0
        while k < n - 1:
            lo, hi = self.prefix_range(text[:k + 1])
            if lo >= hi:
                break
            k += 1
        out: list[int] = []

        def add(v: str) -> None:
            lo, hi = self.prefix_range(v)
            if hi - lo > PREFIX_SLIP_MAX:
                return
            for tid in range(lo, hi):
                if len(out) >= MAX_SLIP:
                    return
                if tid not in out:
                    out.append(tid)

        letters = "abcdefghijklmnopqrstuvwxyz"
        for i in range(k - 2 if k > 2 else 0, k + 1):
            add(text[:i] + text[i + 1:])                                  # a letter too many
            if i + 1 < n:
                add(text[:i] + text[i + 1] + text[i] + text[i + 2:])      # two swapped
            for c in letters:
                if c != text[i]:
                    add(text[:i] + c + text[i + 1:])                      # a wrong letter
            for c in letters:
                add(text[:i] + c + text[i:])                              # one left out
        for i in range(k - 2 if k > 2 else 0):                            # earlier: fewer
            add(text[:i] + text[i + 1:])
            add(text[:i] + text[i + 1] + text[i] + text[i + 2:])
            for c in NEAR_KEYS.get(text[i], ""):
                add(text[:i] + c + text[i + 1:])
        self._slip_cache[text] = out
        return out

    def _typo_candidates(self, text: str, maxd: int) -> list[int]:
        """Token ids that may lie within maxd edits of text, in its own or its ij spelling:
        the length within maxd, and letter counts that differ by at most 2 * maxd (one edit
        changes them by at most 2)."""
        if self._letter_hist is None:
            self._letter_hist = (_letter_counts(self.vocab),
                                 _letter_counts([unfold_ij(v) for v in self.vocab]))
        ok = np.zeros(len(self.vocab), dtype=bool)
        for (hist, lengths), form in zip(self._letter_hist, (text, unfold_ij(text)), strict=True):
            mine, _ = _letter_counts([form])
            ok |= ((np.abs(lengths - len(form)) <= maxd)
                   & (np.abs(hist - mine).sum(axis=1) <= 2 * maxd))
        hist, lengths = self._letter_hist[0]
        for form in sound_variants(text):   # the other spelling of a sound, then one slip less
            if form:
                mine, _ = _letter_counts([form])
                ok |= ((np.abs(lengths - len(form)) <= maxd)
                       & (np.abs(hist - mine).sum(axis=1) <= 2 * maxd))
        return np.flatnonzero(ok).tolist()

    # ---- interpretations

    def parse(self, s: Search, mode: int = 1) -> None:
        """Postcode, house-number candidates and letter/addition parts: the readings of a query.
        Mode 1 also reads a postcode split in two ("5202 de") or being typed after the number
        ("kerkstraat 12 1017"); mode 2 a lone four digits as a postcode being typed
        ("kerkstraat 1017"); mode 3 leaves out the postcode being typed of mode 1."""
        split_pc = mode == 1
        toks = s.tokens
        s.words = [self.word_ranges(t) for t in toks]
        n_alpha = sum(1 for t in toks if t.digits == 0)
        consumed = [False] * len(toks)

        # postcode: 1234AB | 1234 AB | 1234A (last, no words) | 1234 A (last, no other words)
        # | 1234 (first, a query of numbers only)
        s.split_pc = False
        pc_lo = pc_hi = -1
        for i, t in enumerate(toks):
            if t.digits != 4 or t.value < 1000:
                continue
            code = t.value * 676
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            last = i == len(toks) - 1
            if len(t.text) == 6:
                pc_lo = pc_hi = code + _letters(t.text[4:6])
            elif len(t.text) == 5 and last and n_alpha == 0:
                pc_lo = code + _letters(t.text[4:5])
                pc_hi = pc_lo + 25
            elif split_pc and len(t.text) == 4 and nxt and nxt.digits == 0 and len(nxt.text) == 2:
                pc_lo = pc_hi = code + _letters(nxt.text)
                consumed[i + 1] = True
                s.split_pc = True
            elif (split_pc and len(t.text) == 4 and nxt and i + 1 == len(toks) - 1 and nxt.digits == 0
                  and len(nxt.text) == 1 and n_alpha == 1):
                pc_lo = code + _letters(nxt.text)
                pc_hi = pc_lo + 25
                consumed[i + 1] = True
                s.split_pc = True
            elif len(t.text) == 4 and n_alpha == 0 and i == 0:
                pc_lo, pc_hi = code, code + 675
            else:
                continue
            consumed[i] = True
            break
        s.area = 0
        area = None
        if pc_lo < 0 and mode > 0 and n_alpha > 0:
            # a postcode being typed: the words are read within it (after that, without it)
            i = area_token(toks, lone=mode == 2)
            if i >= 0:
                t = toks[i]
                consumed[i] = True
                lo = t.value * 676
                if len(t.text) == 5:
                    area = (lo + _letters(t.text[4]), lo + _letters(t.text[4]) + 25)
                elif i + 1 == len(toks) - 1 and toks[i + 1].digits == 0 and len(toks[i + 1].text) == 1:
                    consumed[i + 1] = True
                    area = (lo + _letters(toks[i + 1].text), lo + _letters(toks[i + 1].text) + 25)
                else:
                    area = (lo, lo + 675)
                if mode == 3:
                    area = None
                else:
                    s.area = t.value
                    s.split_pc = True

        # a word that only says a number follows, after another word and before the number
        # ("kerkstraat no 5"), is no word of a name ("no" starts Noordwijk)
        for i in range(1, len(toks) - 1):
            if (not consumed[i] and not consumed[i + 1] and toks[i].digits == 0 and number_like(toks[i + 1])
                    and toks[i].text in NUMBER_WORDS):
                consumed[i] = True

        # house-number candidates: 1..5 digits, value 1..99999, at most 4 letters glued on
        numbers = []
        all_known = True       # every numeric token could also be the word of some name
        for i, t in enumerate(toks):
            if consumed[i] or t.digits == 0:
                continue
            if number_like(t) and len(numbers) < MAX_NUMBER_CANDIDATES:
                numbers.append(i)
            if not s.words[i].ranges:
                all_known = False

        s.interps = []
        for k in range(len(numbers) + 1):
            if k == len(numbers) and numbers and not all_known:
                continue    # no house number typed: every numeric token must then name something
            number_tok = numbers[k] if k < len(numbers) else -1
            # each reading twice: loosely (every short token after the number is a letter or
            # addition part), and strictly (a known word of 3+ letters there, as in "12 poor",
            # starts a place instead); the strict one only when it differs
            for strict in (False, True):
                it = Interp(pc_lo=pc_lo, pc_hi=pc_hi, area=area)
                loose_words = 0
                no_addition = 0
                if number_tok >= 0:
                    t = toks[number_tok]
                    it.number = t.value
                    if len(t.text) > t.digits:
                        it.parts.append((number_tok, t.digits))     # the glued `a` of `12a`
                    # short tokens right after the number ("3a d37" is the parts a, d, 37)
                    i = number_tok + 1
                    while (i < len(toks) and len(it.parts) < MAX_PARTS and not consumed[i]
                           and len(toks[i].text) <= 4):
                        u = toks[i]
                        if u.digits == 0 and len(u.text) >= 3 and s.words[i].ranges:
                            loose_words += 1
                            if strict:
                                break
                            if not self.addition_prefix(u.text):
                                no_addition += 1
                        it.parts.append((i, 0))
                        i += 1
                if strict and loose_words == 0:
                    continue
                if not strict and no_addition:
                    continue    # "dijk 21 sero": no addition starts with sero; the strict reading has it
                part_toks = {p for p, _ in it.parts}
                it.words = [i for i in range(len(toks))
                            if not consumed[i] and i != number_tok and i not in part_toks]
                if not it.words and it.pc_lo < 0:
                    continue
                if number_tok >= 0 and it.words and it.words[0] < number_tok:
                    it.place_after = number_tok     # "street 12 place": words after 12 name the place
                    if it.words[-1] > number_tok:
                        it.street_until = number_tok    # ... and the words before it the street
                s.interps.append(it)
                if len(s.interps) >= MAX_INTERPS:
                    return

    # ---- matching

    def match_word(self, s: Search, ti: int, t: int, kind: int) -> np.float32 | None:
        """Penalty for query token ti standing for vocabulary token t (of this kind), or None."""
        best = None
        for r in s.words[ti].ranges:
            if not r.lo <= t < r.hi:
                continue
            if r.typo:
                if not s.typo_mode:
                    continue
                p = r.base
            elif t == s.words[ti].exact:
                p = ZERO
            elif kind & ALIAS and len(self.vocab[t]) <= ALIAS_WHOLE_LEN:
                continue    # a short alias answers only when typed whole
            else:
                # C: float + float + float * (double 1.0 - float share), stored into a float
                share = f32(len(s.tokens[ti].text)) / f32(len(self.vocab[t]))
                p = f32(float(r.base + PREFIX_PEN) + float(PREFIX_FRAC) * (1.0 - float(share)))
            if kind & ALIAS:
                p = p + (STREET_ALIAS_PEN if kind & KIND == STREET else ALIAS_PEN)
            if kind & KIND == MUNICIPALITY:
                p = p + MUNI_PEN
            if best is None or p < best:
                best = p
        return best

    def best_match(self, s: Search, ti: int, toks: list[tuple[int, int, int]], used=frozenset(),
                   after_number: bool = False, before_number: bool = False):
        """The lowest penalty of query token ti over a group's tokens not in `used`, and the
        first token that reaches it (as (penalty, index into toks)); None when nothing matches.
        `after_number`: ti comes after the house number, with words before it, so it is read
        as the place and a street token costs ORDER_PEN more; `before_number`: ti comes before
        it, with words after it, so it is read as the street and a place costs ORDER_PLACE_PEN."""
        best = None
        for j, (t, kind, _cover) in enumerate(toks):
            if j in used:
                continue
            p = self.match_word(s, ti, t, kind)
            if p is not None and after_number and kind & KIND == STREET:
                p = p + ORDER_PEN
            elif p is not None and before_number and kind & KIND != STREET:
                p = p + ORDER_PLACE_PEN
            if p is not None and (best is None or p < best[0]):
                best = (p, j)
        return best

    def group_text(self, s: Search, it: Interp, g: int) -> tuple[np.float32, bool] | None:
        """Do all words of `it` match tokens of group g? (penalty sum, a place was matched)."""
        toks = self.group_tokens(g)
        pen = ZERO
        covered = 0
        loc = False
        used = set()            # one token answers one word (the C code tracks the first 64)
        for ti in it.words:
            best = self.best_match(s, ti, toks, used, after_number=ti > it.place_after,
                                   before_number=ti < it.street_until)
            if best is None:
                return None
            p, j = best
            if j < 64:
                used.add(j)
            pen = pen + p
            covered |= toks[j][2]
            if toks[j][1] & KIND in (LOCALITY, MUNICIPALITY):
                loc = True
        all_street = 0
        for _t, kind, cover in toks:
            if kind == STREET:              # real street words, not aliases
                all_street |= cover
        unmatched = bin(all_street & ~covered).count("1")
        pen = pen + UNMATCHED_PEN * f32(unmatched)
        return pen, loc

    def suffix_pen(self, s: Search, it: Interp, addr: int, g: int) -> np.float32 | None:
        """Penalty for the typed letter/addition parts against address addr, or None."""
        letter = _lower(int(self.a["a_letter"][addr]))
        add = self.addition(addr)
        used_letter = False
        a_pos = 0            # how much of the addition the parts have spelt out
        pen = ZERO
        for ti, off in it.parts:
            part = s.tokens[ti].text[off:]
            if not used_letter and a_pos == 0 and letter and len(part) == 1 and ord(part) == letter:
                used_letter = True
                continue
            # the addition may come in pieces: "12 l1" arrives as the parts "l" and "1"
            piece = add[a_pos:a_pos + len(part)]
            if len(piece) == len(part) and bytes(_lower(b) for b in piece) == part.encode():
                if len(part) == 1 and not letter and off != 0:
                    pen = pen + LETTER_AS_ADDITION_PEN   # "93h": letter H read as addition H
                a_pos += len(part)
                continue
            # not a letter or addition of this address: perhaps a word of the street ("10 op het
            # rooth") or, after "street 12", the start of the place ("kerkstraat 12 ut")
            if off != 0 or g < 0:
                return None
            toks = self.group_tokens(g)
            if it.place_after < len(s.tokens):
                toks = [x if x[1] & KIND != STREET else (-1, x[1], x[2]) for x in toks]
            best = self.best_match(s, ti, toks)
            if best is None:
                return None
            pen = pen + best[0]
        if (letter and not used_letter) or (add and a_pos == 0):
            pen = pen + EXTRA_SUFFIX_PEN
        if 0 < a_pos < len(add):
            pen = pen + PART_PREFIX_PEN
        return pen

    # ---- addresses of a run

    def addresses(self, s: Search, it: Interp, lo: int, hi: int, is_pc: bool, g: int,
                  want: int) -> list[tuple[int, np.float32]]:
        """The best `want` positions of the run [lo, hi) for the typed number, with penalties.

        Positions are address ids, or in postcode mode positions in `pc_addr`. Exact house
        numbers first (by suffix penalty, then position), then numbers that start with the typed
        digits (10..19 before 100..199). With no number typed: the first addresses of the run.
        """
        a_number, pc_addr = self.a["a_number"], self.a["pc_addr"]

        def addr_at(pos):
            return int(pc_addr[pos]) if is_pc else pos

        def number_at(pos):
            return int(a_number[addr_at(pos)])

        def in_area(pos):
            return is_pc or it.area is None or it.area[0] <= int(self.a["a_postcode"][pos]) <= it.area[1]

        if s.near_number and it.number >= 0:
            return self.near_numbers(it, lo, hi, want, number_at, in_area)
        if it.number < 0:
            return [(pos, ZERO) for pos in range(lo, hi) if in_area(pos)][:want]
        number = it.number
        # NOTE: the same probes as the C binary search, so the same answer even if a run were
        # not sorted by number.
        e = bisect_left(range(hi), number, lo, hi, key=number_at)
        exact = []
        pos = e
        while pos < hi and number_at(pos) == number and pos - e < SAME_NUMBER_CAP:
            addr = addr_at(pos)
            pen = self.suffix_pen(s, it, addr, int(self.a["a_group"][addr]) if is_pc else g) if in_area(pos) else None
            if pen is not None:
                exact.append((pos, pen))
            pos += 1
        out = sorted(exact, key=lambda x: x[1])[:want]      # stable: ties keep run order
        if it.parts or len(out) >= want or s.pc_strict == 2:
            return out
        # numbers that start with the typed digits, one more digit at a time, in run order
        scale, digits = 10, 1
        while number * scale <= 99999 and len(out) < want:
            pos = bisect_left(range(hi), number * scale, lo, hi, key=number_at)
            while pos < hi and len(out) < want and number_at(pos) < number * scale + scale:
                addr = addr_at(pos)
                if not in_area(pos):
                    pos += 1
                    continue
                pen = NUM_PREFIX_PEN + NUM_PREFIX_DIGIT * f32(digits - 1)
                if self.a["a_letter"][addr] or self.a["a_addition"][addr]:
                    pen = pen + EXTRA_SUFFIX_PEN
                out.append((pos, pen))
                pos += 1
            scale *= 10
            digits += 1
        return out

    @staticmethod
    def near_numbers(it: Interp, lo: int, hi: int, want: int, number_at, in_area) -> list[tuple[int, np.float32]]:
        """The positions of the run nearest to the typed number, which none has: number by
        number, the nearer first (the lower of two as near), each number's in run order."""
        numbers = sorted({number_at(p) for p in range(lo, hi)}, key=lambda x: (abs(x - it.number), x))
        out = []
        for x in numbers:
            out += [(p, NUM_PREFIX_PEN) for p in range(lo, hi) if number_at(p) == x and in_area(p)]
            if len(out) >= want:
                break
        return out[:want]

    def prior(self, s: Search, g: int, loc_typed: bool) -> np.float32:
        prior = self.a["g_prior"][g]          # float32
        if s.focus is not None:
            flat, flon, cos_lat = s.focus
            dy = (int(self.a["g_lat"][g]) * params.MICRODEGREE - flat) * params.KM_PER_DEGREE
            dx = (int(self.a["g_lon"][g]) * params.MICRODEGREE - flon) * params.KM_PER_DEGREE * cos_lat
            km = math.sqrt(dx * dx + dy * dy)
            # C: <float>(FOCUS_NEAR / (1 + km / FOCUS_KM)) + FOCUS_SHARE * prior, in double,
            # returned as float
            near = f32(params.FOCUS_NEAR / (1.0 + km / params.FOCUS_KM))
            return f32(float(near) + params.FOCUS_SHARE * float(prior))
        return prior * (LOCALITY_PRIOR if loc_typed else NO_LOCALITY_PRIOR)

    # ---- the pool of best groups

    def pool_add(self, s: Search, g: int, score, text_pen, interp: int) -> None:
        """Keep the best `limit + 1` groups (at most POOL_SIZE): only those can reach the answer.
        A full pool drops its worst (lowest score, then highest group id), and a newcomer must
        beat that one to enter."""
        for item in s.pool:
            if item.group == g:
                if score > item.score:
                    item.score, item.text_pen, item.interp = score, text_pen, interp
                return
        new = PoolItem(g, score, text_pen, interp)
        if len(s.pool) < min(s.limit + 1, POOL_SIZE):
            s.pool.append(new)
            return
        worst = 0
        for i in range(1, len(s.pool)):
            if (s.pool[i].score < s.pool[worst].score
                    or (s.pool[i].score == s.pool[worst].score and s.pool[i].group > s.pool[worst].group)):
                worst = i
        w = s.pool[worst]
        if score < w.score or (score == w.score and g > w.group):
            return
        s.pool[worst] = new       # the newcomer takes the slot (pool order matters later)

    def consider_group(self, s: Search, ii: int, g: int) -> None:
        it = s.interps[ii]
        if s.province >= 0 and int(self.a["g_province"][g]) != s.province:
            return
        text = self.group_text(s, it, g)
        if text is None:
            return
        text_pen, loc = text
        first = self.addresses(s, it, self.g_start[g], self.g_start[g + 1], False, g, 1)
        if not first:
            return
        score = -(text_pen + first[0][1]) + self.prior(s, g, loc)
        self.pool_add(s, g, score, text_pen, ii)

    def groups_matching_words(self, s: Search, it: Interp) -> np.ndarray:
        """For every group: does each word of `it` match at least one of its tokens?

        Only a quicker way to skip groups that `group_text` would reject anyway (it rejects a
        group as soon as one word matches none of its tokens), so that the twin can afford to
        look at every group the postings name.
        """
        ok = np.ones(len(self.g_tok_start) - 1, dtype=bool)
        for ti in it.words:
            token_ok = np.zeros(len(self.vocab), dtype=bool)
            for r in s.words[ti].ranges:
                if s.typo_mode or not r.typo:
                    token_ok[r.lo:r.hi] = True
            has = np.zeros(len(ok), dtype=bool)
            has[self.tok_group[token_ok[self.g_tok]]] = True
            ok &= has
        return ok

    def scan_text(self, s: Search, ii: int) -> None:
        """Walk the postings of the rarest word of interpretation ii and score every group."""
        it = s.interps[ii]
        best = -1
        for ti in it.words:
            if not s.words[ti].ranges:
                return        # a word that names nothing: no group can match
            if best < 0 or s.words[ti].cost < s.words[best].cost:
                best = ti
        if best < 0:
            return
        matching = self.groups_matching_words(s, it)
        # the C code affords a longer scan when other words can reject groups by signature
        budget = SCAN_BUDGET if self.other_words_filter(s, it, best) else SCAN_ALONE

        def consider(groups):
            for g in groups:
                if matching[g]:
                    self.consider_group(s, ii, g)

        w = s.words[best]
        for k, r in enumerate(w.ranges):
            if r.typo and not s.typo_mode:
                continue
            total = self.range_cost(r.lo, r.hi)
            # a short prefix with a precomputed list; NOTE: only for the first range (the
            # word's own prefix range when it has one)
            if total > budget and k == 0 and self.short_prefix_groups(s, best) is not None:
                consider(self.short_prefix_groups(s, best))
            elif total <= budget:
                consider(self.postings(r.lo, r.hi))
            else:
                # a very short prefix ("a", "ka"): the exact token in full, and the best-prior
                # groups of every other token, within the budget
                cap = max(budget // (r.hi - r.lo), TOKEN_CAP_MIN)
                for t in range(r.lo, r.hi):
                    groups = self.postings(t, t + 1)
                    consider(groups if t == w.exact else groups[:cap])

    def other_words_filter(self, s: Search, it: Interp, driver: int) -> bool:
        """Does a word besides the driver give the C code a signature bit to filter on? (One of
        2+ letters whose first two letters every match must share: not "ri", which may be on
        its way to "ry...", and in the typo pass not a word that has typo tokens.)"""
        for ti in it.words:
            text = s.tokens[ti].text
            if ti == driver or len(text) < 2 or (len(text) == 2 and text[1] == "i"):
                continue
            if s.typo_mode and any(r.typo for r in s.words[ti].ranges):
                continue
            return True
        return False

    def short_prefix_groups(self, s: Search, ti: int) -> list[int] | None:
        """The groups to scan for a word with a precomputed list (None when it has none): the
        complete word's own groups first (within the budget; a person who typed "s" may mean
        the token "s" itself), then the precomputed best groups of the prefix."""
        text = s.tokens[ti].text
        if text not in self.short_prefix:
            return None
        exact = s.words[ti].exact
        own = self.postings(exact, exact + 1)[:EXACT_CAP] if exact >= 0 else []
        return own + self.short_prefix[text]

    # ---- candidates

    def cand_add(self, s: Search, score, addr: int, key: int, interp: int) -> None:
        for c in s.cands:
            if c.addr == addr:
                if score > c.score:
                    c.score = score
                return
        if len(s.cands) >= MAX_CANDIDATES:
            # full: the new one replaces the worst if better (ties: the lower address wins)
            worst = min(s.cands, key=lambda c: (c.score, -c.addr))
            if (score, -addr) > (worst.score, -worst.addr):
                worst.score, worst.addr, worst.key, worst.interp = score, addr, key, interp
            return
        s.cands.append(Cand(score, addr, key, interp))

    def round_pen(self, limit: int) -> np.float32:
        """Spreading: each further address of the same street/postcode costs this much."""
        return ROUND_BASE + ROUND_SHORT / f32(limit)

    @staticmethod
    def names_elsewhere(s: Search, ti: int) -> bool:
        """Postcode mode: does typed word ti, which names nothing of an address, rule it out?
        A number does, and a whole registered word of 4+ letters as typed; with pc_strict
        every word does."""
        t = s.tokens[ti]
        return bool(s.pc_strict or t.digits == len(t.text)
                    or (not t.digits and s.words[ti].exact >= 0 and len(unfold_ij(t.text)) >= 4))

    def collect_postcode(self, s: Search, ii: int) -> None:
        """Postcode mode: score the addresses of the typed postcode (or postcode prefix)."""
        it = s.interps[ii]
        rp = self.round_pen(s.limit)
        p = bisect_left(self.pc_code, it.pc_lo)
        # a postcode prefix spreads over postcodes: with enough of them one address each will do
        n_pc = bisect_left(self.pc_code, it.pc_hi + 1) - p
        want = s.limit if n_pc <= 1 else (s.limit + n_pc - 1) // n_pc
        scanned = 0
        while p < len(self.pc_code) and self.pc_code[p] <= it.pc_hi and scanned < PC_PREFIX_CAP:
            lo, hi = self.pc_start[p], self.pc_start[p + 1]
            scanned += hi - lo
            for j, (pos, apen) in enumerate(self.addresses(s, it, lo, hi, True, -1, want)):
                addr = int(self.a["pc_addr"][pos])
                g = int(self.a["a_group"][addr])
                # typed words should name this street or place; unknown ones cost, never hide
                word_pen = ZERO
                toks = self.group_tokens(g)
                # ... except a number, which must be the house number or in the name
                ok = True
                for ti in it.words:
                    best = self.best_match(s, ti, toks)
                    if best is None and self.names_elsewhere(s, ti):
                        ok = False
                    word_pen = word_pen + (best[0] if best is not None else UNKNOWN_WORD_PEN)
                if not ok:
                    continue
                score = -(apen + word_pen) + PC_PRIOR * self.a["g_prior"][g] - rp * f32(j)
                self.cand_add(s, score, addr, p, ii)
            p += 1

    def collect_text(self, s: Search) -> None:
        """Turn the pool of best groups into candidate addresses, spread over each group."""
        rp = self.round_pen(s.limit)
        for item in s.pool:
            g = item.group
            it = s.interps[item.interp]
            text_pen, loc = self.group_text(s, it, g)
            base = -text_pen + self.prior(s, g, loc)
            found = self.addresses(s, it, self.g_start[g], self.g_start[g + 1], False, g, s.limit)
            for j, (pos, apen) in enumerate(found):
                self.cand_add(s, base - apen - rp * f32(j), pos, g, item.interp)


def _letter_counts(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """How often each of a-z0-9 occurs in each word, and the word lengths."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    hist = np.zeros((len(words), len(alphabet)), dtype=np.int16)
    for t, w in enumerate(words):
        for c in w:
            hist[t, alphabet.index(c)] += 1
    return hist, np.array([len(w) for w in words], dtype=np.int64)


def glued_words(word: str, cuts: list[int]) -> bool:
    """Are the pieces words a glued name holds (the engine's `_glued_words`)?"""
    pieces = [word[a:b] for a, b in zip([0] + cuts[:-1], cuts, strict=True)]
    return (any(len(p) >= 5 for p in pieces)
            and all(len(p) >= 3 or p in GLUE_PARTICLES for p in pieces))


def street_form(word: str) -> bool:
    """Does the word end as a street name does, with 3+ letters before it?"""
    return any(len(word) >= len(x) + 3 and word.endswith(x) for x in STREET_SUFFIXES)


def keep_street(tokens: list[Token], drop: list[bool], loose: list[bool]) -> None:
    """Never leave out the street typed: a word of a street's form, and the words right before
    the house number when all of them would be left out (the engine's `_keep_street`)."""
    k = next((i for i in range(1, len(tokens)) if number_like(tokens[i]) and not tokens[i - 1].digits
              and not (tokens[i].digits == 4 and len(tokens[i].text) == 6)), -1)
    j = k - 1
    all_gone = True
    while k > 0 and j >= 0 and not tokens[j].digits:
        all_gone = all_gone and (drop[j] or loose[j])
        j -= 1
    for i, t in enumerate(tokens):
        if not t.digits and ((k > 0 and all_gone and j < i < k) or street_form(t.text)):
            drop[i] = False
            loose[i] = False


def postcode_at(tokens: list[Token], gone: list[bool], k: int) -> bool:
    """Do the kept tokens from k on start with a postcode: 1234ab, or 1234 and ab?"""
    t = tokens[k]
    return t.digits == 4 and (len(t.text) == 6 or (
        len(t.text) == 4 and k + 1 < len(tokens) and not gone[k + 1] and not tokens[k + 1].digits
        and len(tokens[k + 1].text) == 2))


def number_like(t: Token) -> bool:
    """Could this token be a house number (with letters glued on)?"""
    return 0 < t.digits <= 5 and 1 <= t.value <= 99999 and len(t.text) - t.digits <= 4


def area_token(toks: list[Token], lone: bool) -> int:
    """The token of a postcode being typed, or -1: four digits (from 1000), alone or with one
    letter glued on or apart at the end; after a number-like token, or (lone) the only one."""
    k = -1
    numbers = 0
    for i, t in enumerate(toks):
        if (k < 0 and (numbers or lone) and t.digits == 4 and t.value >= 1000
                and (len(t.text) == 4 or (len(t.text) == 5 and "a" <= t.text[4] <= "z"))):
            k = i
        numbers += number_like(t)
    return k if not lone or numbers == 1 else -1


def _letters(two: str) -> int:
    """The letter part of a postcode code: 'ab' -> 0 * 26 + 1; 'b' -> 1 * 26 (first letter)."""
    code = (ord(two[0]) - 97) * 26
    if len(two) > 1:
        code += ord(two[1]) - 97
    return code


def _lower(c: int) -> int:
    return c + 32 if 65 <= c <= 90 else c


