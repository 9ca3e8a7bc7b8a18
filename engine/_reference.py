"""The plain-Python twin of the compiled search in `_core.pyx`, for tests.

    >>> from engine._reference import ReferenceIndex
    >>> ref = ReferenceIndex(engine.AddressIndex.open("indexes/nl").arrays)
    >>> ref.search_ids("kerkstr 12 utr", limit=5)     # the same ids as Index.search_ids
    >>> ref.replay("kerkstr 12 utr").agrees           # ... and reading by reading

What a query means is decided once, by the compiled engine: the twin asks it for the readings it
tried (`Index.trace`: per reading the tokens as it saw them, after any respacing or words left
out, the interpretations, the flags, the passes and which tokens had their slips looked up) and
replays each of them with code of its own, written for a reader and different on purpose where
the engine is fast: lists and dataclasses instead of fixed C buffers, `bisect` instead of
hand-written binary searches, a brute-force scan of the vocabulary instead of the deletion hash
index for typo candidates, every group the postings name instead of the scan with its
signature filters and pruning, then the same float32 scoring, pool and selection. Each
reading must find something exactly when the engine's did, and the last one the same ids in the
same order. What the parsing and the retries do is specified by the behaviour tests
(tests/engine/test_understanding.py), not by a second copy here.

Where the C code's behaviour depends on a detail that is not obvious (a buffer cap, a
tie-break, the order things are added in), the detail is copied on purpose and commented,
because the point of the twin is that both return the same ids in the same order.

Scores are `numpy.float32`, like the C `float`: every `+ - * /` between two float32 values is
rounded to float32, exactly as C does on x86-64 (SSE, no FMA). Where the C code mixes a float
with a `double` constant (`1.0 - x`, `0.1 * prior`) the twin computes that part in Python
floats (doubles) and rounds once to float32 where C assigns the result to a float.

Not mirrored, on purpose: speed-ups that cannot change the answer, so that the comparison
tests them too. The signature filter on postings (`v_post_sig`: a group without the first two
letters of every other typed word cannot match them) is left out: the twin considers every group
the postings name, and `group_text` rejects the same ones (only whether there is a signature to
filter on is mirrored, because the C code scans further when there is). The deletion hash index (`del_hash`,
`del_bucket`) is replaced by measuring the vocabulary, and the tokens sorted by sound key (`snd_*`)
by keying every token (`sound_key`, written with a regular expression where the C code walks the
letters). The JSON rendering (`suggest_json`) is not here; only `search_ids`.

Not mirrored either, and reported instead: the work budgets that can change an answer. The bound
on groups scored per interpretation (`MAX_CONSIDER`), the query's work budget and its slip
look-up budget count work the twin does not do the same way; the trace says, per reading,
which of them ran out ("consider", "work", "slips"), and `Replay.budget` names them, so that a
comparison can tell a budget's cut from a disagreement. (The scan budget, "scan", and the caps
on a word's typo tokens, "typo", are mirrored: the twin cuts the same lists.)
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

import numpy as np

from . import params
from ._core import MIRRORED, SIZES, Index, sig_bit
from .vocab import ALIAS, KIND, LOCALITY, MUNICIPALITY, STREET
from .words import SOUND_RULES, SOUND_SPELLINGS, SOUND_VOWELS

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
HS_ADDITION_PEN = f32(params.HS_ADDITION_PEN)
SOUND_PEN = f32(params.SOUND_PEN)
ZERO = f32(0.0)

# ---- the fixed sizes of the C code, which are part of its behaviour
MAX_RANGES = SIZES["MAXR"]             # prefix + ij variant + typo tokens of one word
TWO_SLIP_LEN = SIZES["TWO_SLIP_LEN"]   # a word this long may hold two slips ...
TWO_SLIP_TYPED = SIZES["TWO_SLIP_TYPED"]  # ... and be typed this short with them
MAX_SLIP = SIZES["MAXSLIP"]            # tokens a word still being typed starts, one slip undone
POOL_SIZE = SIZES["POOL"]              # best groups kept (at most)
MAX_LIMIT = SIZES["MAXLIMIT"]
DEFAULT_LIMIT = SIZES["DEFAULT_LIMIT"]
NUMBER_MAX = SIZES["NUMBER_MAX"]       # a house number runs from 1 to this (the register)
MAX_CANDIDATES = POOL_SIZE * MAX_LIMIT + 64
SCAN_BUDGET = SIZES["SCAN_BUDGET"]     # postings scanned for the rarest word when other words filter
SCAN_ALONE = SIZES["SCAN_ALONE"]       # ... and when it is the only word (build.py SHORT_PREFIX_MIN)
EXACT_CAP = SIZES["EXACT_CAP"]         # groups of the complete word taken before a short-prefix list
TOKEN_CAP_MIN = SIZES["TOKEN_CAP_MIN"]
PC_PREFIX_CAP = SIZES["PC_PREFIX_CAP"]  # addresses scanned for a postcode prefix
PREFIX_SLIP_MAX = SIZES["PREFIX_SLIP_MAX"]  # a slip-undone word starting more tokens counts for none
PREFIX_SLIP_LEN = SIZES["PREFIX_SLIP_LEN"]  # slips in words still being typed: at most this long
SLIP_SCAN_MAX = SIZES["SLIP_SCAN_MAX"]  # ... undone by one walk over at most this many tokens
SAME_NUMBER_CAP = SIZES["SAME_NUMBER_CAP"]  # addresses with the typed number looked at in one run
SOUND_MIN = SIZES["SOUND_MIN"]            # a sound-alike is looked for in a word this long ...
SOUND_RUNS_MAX = SIZES["SOUND_RUNS_MAX"]  # ... still being typed: when its key starts keys of so
SOUND_WALK_MAX = SIZES["SOUND_WALK_MAX"]  # ... few runs of new tokens, and no more keys in all
PASS_SOUND, PASS_TWO = SIZES["PASS_SOUND"], SIZES["PASS_TWO"]   # the passes of a reading
RETRY_PASSES = SIZES["RETRY_PASSES"]      # ... in a retry (max_pass)
MAX_TYPO_WORD = 38             # typos are looked for in words of at most 38 letters
MAX_DL_LEN = 78                # the C distance (and the deletion index) stop at 78 letters
TYPO_SET = 512                 # typo tokens remembered for one word before the closest are kept

# an index's stored answers, empty: the engine that traces runs the search proper (build.py
# `_stored_answers` made them that way)
NO_STORED_ANSWERS = {"sa_blob": np.zeros(0, np.uint8), "sa_off": np.zeros(1, np.int64),
                     "sa_start": np.zeros(1, np.int32), "sa_addr": np.zeros(0, np.int32)}

# the keys beside each letter on a QWERTY keyboard (the C code's _NEAR_KEYS)
NEAR_KEYS = {
    "q": "wa", "w": "qeas", "e": "wrsd", "r": "etdf", "t": "ryfg", "y": "tugh", "u": "yihj",
    "i": "uojk", "o": "ipkl", "p": "ol", "a": "qwsz", "s": "adwezx", "d": "sferxc",
    "f": "dgrtcv", "g": "fhtyvb", "h": "gjyubn", "j": "hkuinm", "k": "jliom", "l": "kop",
    "z": "asx", "x": "zcsd", "c": "xvdf", "v": "cbfg", "b": "vngh", "n": "bmhj", "m": "njk",
}


# ---------------------------------------------------------------------------------------------
# the query: folding, tokens, words, interpretations


@dataclass
class Token:
    text: str          # a-z0-9 only
    digits: int        # number of leading digits
    value: int         # value of the leading digits, as the C code caps it


@dataclass
class Replay:
    """A query replayed from the engine's trace (`ReferenceIndex.replay`)."""

    ids: list[int]              # the twin's answer: the best of the last reading
    engine_ids: list[int]       # the engine's (the search proper: no stored answer)
    found: list[bool]           # per reading: the twin found something ...
    engine_found: list[bool]    # ... and the engine did
    budget: list[str]           # the budgets the twin does not mirror that ran out in a
                                # reading ("consider", "work", "slips"): then the two may differ
    readings: list[dict]        # the engine's trace of them

    @property
    def agrees(self) -> bool:
        return self.ids == self.engine_ids and self.found == self.engine_found


@dataclass
class Range:
    """Token ids [lo, hi) a query word may stand for, with the penalty of the range."""

    lo: int
    hi: int
    base: np.float32
    typo: bool
    run: bool = False   # tokens whose sound the word starts: a prefix's penalty on top (TYPO_RUN)

    def holds(self, tid: int) -> bool:
        return self.lo <= tid < self.hi


@dataclass
class Word:
    """What one query token can match in the vocabulary."""

    ranges: list[Range] = field(default_factory=list)
    exact: int = -1        # id of the token equal to the word, or -1
    cost: int = 0          # postings under all ranges
    typo_done: int = 0          # the furthest look for slips so far (1, then 2: the last)
    slips: bool = False         # the typo ranges are tokens the word starts with a slip undone
    sound_done: bool = False    # its sound-alikes were looked up: they stay beside its slips

    def as_typed(self, tid: int) -> bool:
        """Does the word match token tid as typed (through a range of its own, not a typo's)?"""
        return any(not r.typo and r.lo <= tid < r.hi for r in self.ranges)

    def in_typo(self, tid: int) -> bool:
        """Does one of the word's typo ranges hold token tid?"""
        return any(r.typo and r.holds(tid) for r in self.ranges)


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
    near_number: bool = False    # the last retry: the nearest house numbers (near_numbers)
    huis: bool = False           # "hs" or "huis" was left out with the house number's parts
    province: int = -1           # a province typed at the end, left out as a word: only its
                                 # streets (string id)
    max_pass: int = SIZES["NPASS"]  # passes run: as typed, sound-alikes, then ever more slips
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
    """The word with every one of a sound written the other way, one variant per pair of
    words.SOUND_SPELLINGS and way (ei spelt ij (folded y), y spelt ei, au spelt ou, ou spelt au;
    "" where it has none), each taken for one slip. In the C order (`_sound_variant`)."""
    out = []
    for pair in SOUND_SPELLINGS:
        for a, b in (pair, pair[::-1]):
            v = word.replace(a, b)
            out.append(v if v != word and len(v) <= MAX_TYPO_WORD else "")
    return out


SOUND_EACH = 4   # a sound written 2+ times: each of its first this many respelt alone too


def sound_respellings(word: str) -> list[str]:
    """Every other spelling of the word's sounds that a person may have meant: per sound (in
    `sound_variants`' order) every one respelt, then, when the word has it twice or more, each
    alone ("vreiheid" is Vrijheid..., "heindeik" Heindijk). In the C order
    (`_sound_respellings`)."""
    out = []
    for pair in SOUND_SPELLINGS:
        for a, b in (pair, pair[::-1]):
            spots = [m.start() for m in re.finditer(a, word)]
            if not spots:
                continue
            out.append(word.replace(a, b))
            if len(spots) >= 2:
                out += [word[:i] + b + word[i + len(a):] for i in spots[:SOUND_EACH]]
    return out


def _sound_pattern(whole: bool) -> re.Pattern:
    """words.SOUND_RULES as one regular expression, an alternative per rule in their order (the
    first that matches at a position wins, as in `_sound_key`); a rule for the end of a word
    only when `whole`."""
    alts = []
    for i, (written, _key, after) in enumerate(SOUND_RULES):
        if after == "$" and not whole:
            continue
        start = "^" if after == "^" else ""
        look = "$" if after == "$" else f"(?=[{after}])" if after and not start else ""
        alts.append(f"(?P<r{i}>{start}{re.escape(written)}{look})")
    return re.compile("|".join(alts))


_SOUND = _sound_pattern(True)
_CONSONANTS = "".join(c for c in "abcdefghijklmnopqrstuvwxyz" if c not in SOUND_VOWELS)
_SOUND_RUNS = re.compile(f"([{_CONSONANTS}])\\1+")     # a consonant after itself, written once


def sound_key(word: str, whole: bool = True) -> str:
    """What a folded word sounds like (words.SOUND_RULES): the rules written over it, then each
    run of one consonant once. Not `whole`: the key of a word perhaps still being typed
    (`sound_start`). (`_sound_key`.)"""
    if not whole:
        return sound_start(word)[0]
    keyed = _SOUND.sub(lambda m: SOUND_RULES[int(m.lastgroup[1:])][1], word)
    return _SOUND_RUNS.sub(r"\1", keyed)


def sound_start(word: str) -> tuple[str, str]:
    """The key of a word perhaps still being typed, and the letters the key of a word it starts
    may have next ("" for any): the rules apply left to right as for a whole word, but for the
    end of a word; at the first position where a rule may yet apply that the letters typed do
    not decide (they run out inside it, or the letter it looks at is not typed), the key stops,
    and the letters next are the first of each rule that may apply there, up to one that
    surely does, else also the letter itself ("voorse": "voors", then y or e), and y after an i
    (the start of ij); any letter when one of them is the consonant the key ends with, which is
    written once ("marnikss": "marniks"). (`_sound_key`.)"""
    out = ""
    i = 0
    while i < len(word):
        maybe: list[str] = []
        sure = None
        for written, key, after in SOUND_RULES:
            if after == "^":
                if i > 0:
                    continue            # only at the start of the word
                after = ""
            end = i + len(written)
            if not written.startswith(word[i:end]):
                continue
            if end > len(word) or (after and end == len(word)):
                maybe.append(key)           # the letters typed run out, or what follows is not typed
                continue
            if after == "$" or (after and word[end] not in after):
                continue                    # it does not apply
            sure = (written, key)
            break
        if maybe:
            ahead = maybe + ([sure[1]] if sure else [word[i]])
            key = _SOUND_RUNS.sub(r"\1", out)
            nxt = {k[0] for k in ahead if k[:1].isalpha()} | ({"y"} if word[i] == "i" else set())
            if "" in ahead or (key and key[-1] in nxt and key[-1] in _CONSONANTS):
                # a letter not heard, or the consonant the key ends with, which is written
                # once: what the key has next is not known
                return key, ""
            return key, "".join(sorted(nxt))
        if sure:
            out += sure[1]
            i += len(sure[0])
        else:
            out += word[i]
            i += 1
    return _SOUND_RUNS.sub(r"\1", out), ""


def prefix_cost(base: np.float32, typed: int, tlen: int) -> np.float32:
    """A word of `typed` letters that is only the start of a token of `tlen`: `base` and a
    prefix's penalty, more the less of the token it typed (C `_prefix_cost`: float + float +
    float * (double 1.0 - float share), stored into a float)."""
    share = f32(typed) / f32(tlen)
    return f32(float(base + PREFIX_PEN) + float(PREFIX_FRAC) * (1.0 - float(share)))


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
    kind in the next byte, its length in the next; the cover in the second word). The index
    stores only the records."""
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
        # the engine that reads the queries (its trace), without the stored answers of
        # one-word queries: build.py made them with the search proper, which is what is replayed
        self.engine = Index({**arrays, **NO_STORED_ANSWERS})
        # short prefixes ("s", "ke") with many postings: their best groups, precomputed
        self.short_prefix: dict[str, list[int]] = {}
        if "sp_off" in a:
            sp_blob, sp_off = bytes(a["sp_blob"]), a["sp_off"].tolist()
            sp_start, sp_group = a["sp_start"].tolist(), a["sp_group"]
            for k in range(len(sp_start) - 1):
                text = sp_blob[sp_off[k]:sp_off[k + 1]].decode("ascii")
                self.short_prefix[text] = sp_group[sp_start[k]:sp_start[k + 1]].tolist()
        self._letter_hist = None   # built on the first typo search
        self._slip_cache: dict[str, list[int]] = {}   # `prefix_slips` of each word asked
        self._sound_keys: list[str] | None = None     # `sound_keys`, made on the first look-up
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

    # ---- the entry point: the engine's readings, replayed

    def search_ids(self, q: str, *, limit: int = DEFAULT_LIMIT, lat: float | None = None,
                   lon: float | None = None) -> list[int]:
        """The address row ids of the twin's own search of the engine's readings of q (which
        `Index.search_ids` must equal; the engine checks the arguments)."""
        return self.replay(q, limit=limit, lat=lat, lon=lon).ids

    def replay(self, q: str, *, limit: int = DEFAULT_LIMIT, lat: float | None = None,
               lon: float | None = None) -> Replay:
        """Score every reading the engine tried for q, in its order, with the twin's code."""
        trace = self.engine.trace(q, limit=limit, lat=lat, lon=lon)
        s = Search(limit=int(limit), focus=None)
        found = []
        budget: set[str] = set()
        for r in trace["readings"]:
            self.read(s, r)
            found.append(bool(s.cands))
            budget.update(x for x in r["spent"] if x not in MIRRORED)
        if trace["lost"]:
            budget.add("trace")
        # the `limit` best candidates; ties go to the lower address id
        best = sorted(s.cands, key=lambda c: (-c.score, c.addr))
        return Replay([c.addr for c in best[:s.limit]], trace["ids"], found,
                      [r["found"] for r in trace["readings"]], sorted(budget), trace["readings"])

    def read(self, s: Search, r: dict) -> None:
        """One reading of the trace (`Index.trace`): its tokens, interpretations and flags as the
        engine had them, then its passes: pass 0 as typed, each later one with the slips of
        the tokens the engine looked them up for, scored when the engine scored it."""
        s.tokens = [Token(t, len(t) - len(t.lstrip("0123456789")), v)
                    for t, v in zip(r["tokens"], r["values"], strict=True)]
        s.words = [self.word_ranges(t) for t in s.tokens]
        s.interps = [Interp(number=-1 if it["number"] is None else it["number"], parts=list(it["parts"]),
                            words=list(it["words"]), pc_lo=(it["postcode"] or (-1, -1))[0],
                            pc_hi=(it["postcode"] or (-1, -1))[1], area=it["area"],
                            place_after=1 << 30 if it["place_after"] is None else it["place_after"],
                            street_until=-1 if it["street_until"] is None else it["street_until"])
                     for it in r["interps"]]
        if r["focus"] is None:
            s.focus = None
        else:
            flat, flon = r["focus"]
            s.focus = (flat, flon, math.cos(flat * math.pi / 180.0))
        s.pc_strict, s.near_number, s.max_pass = r["pc_strict"], r["near_number"], r["max_pass"]
        s.huis = r["huis"]
        s.province = -1 if r["province"] is None else r["province"]
        s.pool, s.cands = [], []
        for p in r["passes"]:
            s.typo_mode = p["pass"] > 0
            for ti in p["slips"]:
                if p["pass"] == PASS_SOUND:
                    if not s.words[ti].sound_done:
                        s.words[ti].sound_done = True
                        self.add_sounds(s.words[ti], s.tokens[ti])
                else:
                    self.typo_ranges(s, ti, 2 if p["pass"] == PASS_TWO else 1)
            if not p["scored"]:
                continue        # no slip to look for that was not looked for before (what a
                                # pass before found, if anything, stands)
            s.pool, s.cands = [], []
            for ii, it in enumerate(s.interps):
                if it.pc_lo >= 0:
                    self.collect_postcode(s, ii)
                else:
                    self.scan_text(s, ii)
            self.collect_text(s)

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
        if tok.digits > 0 or len(text) > MAX_TYPO_WORD:
            return 0
        if typed_len < 5:
            if typed_len >= 3 and word.typo_done == 0 and s.max_pass > RETRY_PASSES:
                return self.sound_ranges(word, text)
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
                    and len(text) <= PREFIX_SLIP_LEN and s.max_pass > RETRY_PASSES):
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
        # the sound-alikes stay, first and at their own penalty
        n0 = len(word.ranges)
        if word.sound_done:
            self.add_sounds(word, tok)
        sounds = word.ranges[n0:]
        for _k, tid, dist in sorted(remembered, key=lambda x: x[2]):   # stable: closest first
            if len(word.ranges) >= MAX_RANGES:
                break
            if any(r.holds(tid) for r in sounds):
                continue
            base = TYPO_PEN + TYPO_EDIT * f32(dist - 1)
            word.ranges.append(Range(tid, tid + 1, base, True))
            word.cost += self.range_cost(tid, tid + 1)
        as_typed = any(not r.typo for r in word.ranges)
        if (((not remembered and not as_typed) or (look == 2 and (not as_typed or word.exact < 0)))
                and len(text) <= PREFIX_SLIP_LEN and s.max_pass > RETRY_PASSES):
            # no token starts with the word, and none is one slip away (or the last look has
            # come): a slip in a word still being typed (not in the retries)
            self.add_slips(word, text)
            word.slips = not remembered and not as_typed and bool(self.prefix_slips(text))
        return 1

    def sound_ranges(self, word: Word, text: str) -> int:
        """The typo ranges of a word of 3 or 4 letters as typed, too short for a slip of a key
        ("rein", "mij"): the other spelling of a sound in it (`sound_respellings`: Rijn, Mei), the
        token so spelt and, when at most PREFIX_SLIP_MAX, the tokens that start so (as a word's
        start). Looked at once; 1 when it added a range."""
        word.typo_done = 2
        added = 0
        for v in sound_respellings(text):
            lo, hi = self.prefix_range(v)
            if hi - lo > PREFIX_SLIP_MAX:
                hi = lo + 1 if self.vocab[lo] == v else lo      # too many: only the token itself
            for tid in range(lo, hi):
                if len(word.ranges) >= MAX_RANGES:
                    break
                if word.in_typo(tid):
                    continue
                tlen = len(self.vocab[tid])
                base = TYPO_PEN if tlen == len(v) else prefix_cost(TYPO_PEN, len(v), tlen)
                word.ranges.append(Range(tid, tid + 1, base, True))
                word.cost += self.range_cost(tid, tid + 1)
                added += 1
        return int(added > 0)

    def sound_keys(self) -> list[str]:
        """The sound key of every token of the vocabulary (made once)."""
        if self._sound_keys is None:
            self._sound_keys = [sound_key(v) for v in self.vocab]
        return self._sound_keys

    def add_sounds(self, word: Word, tok: Token) -> int:
        """Add the tokens the word sounds like (`sound_key`) as typo ranges: those of its key
        (SOUND_PEN), when at most MAX_RANGES of them are tokens the word does not match as typed
        and at most SOUND_WALK_MAX in all; then those whose key starts with the key of the word
        still being typed (a prefix's penalty more, at the match), as runs of neighbouring
        tokens, when at most SOUND_WALK_MAX keys start so and go on with a letter of its
        `sound_start` follow, and the tokens the word neither matches as typed nor has make at
        most SOUND_RUNS_MAX runs. Here every token's key is compared;
        the C code walks the index's tokens sorted by key (`_add_sounds`), in the order (key,
        token) kept here. Return how many ranges it added."""
        text = tok.text
        if tok.digits > 0 or len(unfold_ij(text)) < SOUND_MIN:
            return 0
        keys = self.sound_keys()
        added = 0
        key = sound_key(text)
        if key:
            found = sorted((k, t) for t, k in enumerate(keys) if k == key)
            new = [t for _k, t in found if not word.as_typed(t)]
            if len(new) <= MAX_RANGES and len(found) <= SOUND_WALK_MAX:
                for _k, tid in found:
                    added += self._push_sound(word, tid, SOUND_PEN)
        key, follow = sound_start(text)
        if key:
            found = [t for t, k in enumerate(keys) if k.startswith(key)
                     and (not follow or k[len(key):len(key) + 1] in tuple(follow))]
            if len(found) > SOUND_WALK_MAX:
                return added
            ids = [t for t in found if not word.as_typed(t) and not word.in_typo(t)]
            runs: list[list[int]] = []
            for t in ids:               # (in token order)
                if runs and runs[-1][1] == t:
                    runs[-1][1] = t + 1
                else:
                    runs.append([t, t + 1])
            if len(runs) > SOUND_RUNS_MAX:
                return added
            for lo, hi in runs:
                if len(word.ranges) >= MAX_RANGES:
                    break
                word.ranges.append(Range(lo, hi, SOUND_PEN, True, run=True))
                word.cost += self.range_cost(lo, hi)
                added += 1
        return added

    def _push_sound(self, word: Word, tid: int, base: np.float32) -> int:
        if len(word.ranges) >= MAX_RANGES or word.as_typed(tid) or word.in_typo(tid):
            return 0
        word.ranges.append(Range(tid, tid + 1, base, True))
        word.cost += self.range_cost(tid, tid + 1)
        return 1

    def add_slips(self, word: Word, text: str) -> int:
        """Add the tokens `text` starts with one slip undone that are not typo tokens of the
        word yet, while ranges are left; return how many were added."""
        typos = [r for r in word.ranges if r.typo]
        added = 0
        for tid in self.prefix_slips(text):
            if len(word.ranges) >= MAX_RANGES:
                break
            if any(r.holds(tid) for r in typos):
                continue
            base = prefix_cost(TYPO_PEN, len(text), len(self.vocab[tid]))
            word.ranges.append(Range(tid, tid + 1, base, True))
            word.cost += self.range_cost(tid, tid + 1)
            added += 1
        return added

    def prefix_slips(self, text: str) -> list[int]:
        """The tokens that `text` starts with one edit undone, when it starts none as typed:
        edits at the last three positions up to k, the length of its longest start that some
        token has, then earlier a letter too many, two swapped or the key beside (NEAR_KEYS),
        an ij an edit makes spelt y (except where the C code walks the few tokens that start
        as the word, _slip_scan: no j typed near the edit, where no ij is made of one);
        an undone word that starts more than PREFIX_SLIP_MAX tokens counts for none;
        the first MAX_SLIP tokens in the order found. First of all, the tokens that the other
        spelling of a sound in it starts (ei, ij, au, ou: `sound_respellings`). No edit found,
        letter k an i that, as y, continues a token's start, and a j after it: the same of the
        word with that i spelt y."""
        hit = self._slip_cache.get(text)
        if hit is not None:
            return hit
        out: list[int] = []
        # first the tokens that the other spelling of a sound in it starts ("kijzerst")
        for v in sound_respellings(text):
            if len(v) <= PREFIX_SLIP_LEN:
                self._slip_add(out, v, True)
        sound = len(out)
        k = self._prefix_slips_of(text, out)
        if len(out) == sound and k < len(text) - 1 and text[k] == "i" and "j" in text[k + 1:]:
            ij = text[:k] + "y" + text[k + 1:]
            lo, hi = self.prefix_range(ij[:k + 1])
            if lo < hi:
                self._prefix_slips_of(ij, out)
        self._slip_cache[text] = out
        return out

    def _slip_add(self, out: list[int], v: str, fold: bool) -> None:
        """Add to `out` the tokens v starts (an ij in it spelt y when `fold`), unless more than
        PREFIX_SLIP_MAX; at most MAX_SLIP in all, each once."""
        lo, hi = self.prefix_range(v.replace("ij", "y") if fold else v)
        if hi - lo > PREFIX_SLIP_MAX:
            return
        for tid in range(lo, hi):
            if len(out) >= MAX_SLIP:
                return
            if tid not in out:
                out.append(tid)

    def _prefix_slips_of(self, text: str, out: list[int]) -> int:
        """`prefix_slips` of text as it is, added to `out`; returns k."""
        n = len(text)
        k = 0
        while k < n - 1:
            lo, hi = self.prefix_range(text[:k + 1])
            if lo >= hi:
                break
            k += 1

        def add(v: str, fold: bool) -> None:
            self._slip_add(out, v, fold)

        def fold_at(i: int) -> bool:
            # an ij an edit at i makes is spelt y, as the tokens are ("virjheidsh" is
            # "vryheidsh", "rikswe" with a j left out "rykswe"), except where the C code walks
            # the few tokens that start with text[:i] (_slip_scan: no j typed near i)
            lo, hi = self.prefix_range(text[:i])
            return not (i >= 2 and hi - lo <= SLIP_SCAN_MAX and "j" not in text[max(i - 1, 0):i + 3])

        letters = "abcdefghijklmnopqrstuvwxyz"
        for i in range(k - 2 if k > 2 else 0, k + 1):
            f = fold_at(i)
            add(text[:i] + text[i + 1:], f)                                  # a letter too many
            if i + 1 < n:
                add(text[:i] + text[i + 1] + text[i] + text[i + 2:], f)      # two swapped
            for c in letters:
                if c != text[i]:
                    add(text[:i] + c + text[i + 1:], f)                      # a wrong letter
            for c in letters:
                add(text[:i] + c + text[i:], f)                              # one left out
        for i in range(k - 2 if k > 2 else 0):                               # earlier: fewer
            f = fold_at(i)
            add(text[:i] + text[i + 1:], f)
            add(text[:i] + text[i + 1] + text[i] + text[i + 2:], f)
            for c in NEAR_KEYS.get(text[i], ""):
                add(text[:i] + c + text[i + 1:], f)
        return k

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
                p = r.base if not r.run else prefix_cost(r.base, min(len(s.tokens[ti].text), len(self.vocab[t])),
                                                          len(self.vocab[t]))
            elif t == s.words[ti].exact:
                p = ZERO
            elif kind & ALIAS and len(self.vocab[t]) <= ALIAS_WHOLE_LEN:
                continue    # a short alias answers only when typed whole
            else:
                p = prefix_cost(r.base, len(s.tokens[ti].text), len(self.vocab[t]))
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
        if s.huis and (used_letter or not letter) and a_pos == 0 and (
                not add or (len(add) == 1 and _lower(add[0]) == 104)):
            # "hs" or "huis" left out said the addition H; a house without any addition next
            if not add:
                pen = pen + HS_ADDITION_PEN
        elif (letter and not used_letter) or (add and a_pos == 0):
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
        while number * scale <= NUMBER_MAX and len(out) < want:
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
            # word's own prefix range when it has one) and for the `...y` range of a word that
            # ends in i (its list, without the complete word's groups)
            variant = s.tokens[best].text[:-1] + "y"
            if total > budget and k == 0 and self.short_prefix_groups(s, best) is not None:
                consider(self.short_prefix_groups(s, best))
            elif total > budget and k > 0 and not r.typo and variant in self.short_prefix:
                consider(self.short_prefix[variant])
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
        its way to "ry...", and in the typo passes not a word with a typo token whose first
        two letters have another signature bit, `_need_mask`.)"""
        for ti in it.words:
            text = s.tokens[ti].text
            if ti == driver or len(text) < 2 or (len(text) == 2 and text[1] == "i"):
                continue
            if s.typo_mode and any(r.typo and sig_bit(self.vocab[t]) != sig_bit(text)
                                   for r in s.words[ti].ranges for t in range(r.lo, r.hi)):
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


def _lower(c: int) -> int:
    return c + 32 if 65 <= c <= 90 else c


