"""How a hit matched what was typed: for each typed word, exact, prefix, alias, slip or left out.

    >>> from engine.explain import aliases_from_manifest, explain, highlights, match_score
    >>> aliases = aliases_from_manifest(index.manifest)      # once per index, then reuse it
    >>> hit = index.suggest("burg de withstr 1", limit=1)["hits"][0]
    >>> explain("burg de withstr 1", hit, aliases=aliases)   # one WordMatch per typed word
    >>> highlights("burg de withstr 1", hit, aliases=aliases)  # per line, the spans to show bold

It reads the answer only (the typed text and one hit of the contract's JSON), not the search's
internals, so it explains any hit the same way, from the library or from the HTTP service. Both
sides are folded as the engine folds them (`normalize`: lower case, no diacritics, punctuation a
separator, ``ij`` = ``y``, a letter followed by a digit split, an apostrophe between a lone letter
and a word glued), each folded letter remembering the code points it came from, so a span always
points at the registered spelling (``sudwest`` marks ``Súdwest`` in ``Súdwest-Fryslân``, ``ys``
the ``IJs`` of ``IJsselmeer``).

Then each typed word is given the word of the hit that best accounts for it, one registered word
answering one typed word (as in the search): the readings of the whole query are searched
(branch and bound over the typed words) for the one with the lowest total cost, where a word
matched as typed costs nothing, an abbreviation or other name of the registered word
(`burg`/Burgemeester, `den haag`/'s-Gravenhage, `2e`/Tweede) a little, a word still being typed
(the start of a registered word) more, a slip (one edit in a word of 5+ letters, two in one of
9+ typed 7+ long, as the engine allows) more again, and a word the hit does not account for
most. Words typed glued or apart where the register spaces them otherwise are read both ways
(``vanhallstraat``: Van Hallstraat; ``kerk straat``: Kerkstraat; ``1012lg1``, ``12a``,
``129711lj``: a number, its letter, a postcode). Words the hit cannot account for (a floor,
``achterhuis``, a part of town, a stray word) are ``left_out``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ._core import COUNTRY_WORDS, REGION_PROVINCE
from ._reference import typo_distance
from .normalize import FOLD_LIMIT, fold, fold_table
from .params import ALIAS_WHOLE_LEN
from .vocab import Vocabulary

__all__ = ["MatchKind", "Field", "WordMatch", "explain", "highlights", "match_score",
           "aliases_from_manifest", "default_aliases"]

MatchKind = Literal["exact", "prefix", "alias", "slip", "left_out"]
Field = Literal["street", "number", "letter", "addition", "postcode", "locality",
                "municipality", "province", "country"]


@dataclass(frozen=True, slots=True)
class WordMatch:
    """How one typed word matched a hit.

    A word typed glued to another part of the address (``12a``, ``1012lg1``, ``129711lj``) is
    two typed words here when the hit reads it as two (``12`` the number, ``a`` the letter);
    ``q[start:end] == typed`` always holds.
    """

    typed: str                     # the typed word as it stands in q (original characters)
    start: int                     # its offsets in q (code points): q[start:end] == typed
    end: int
    kind: MatchKind                # "left_out": the hit does not account for this word
    field: Field | None            # the component it matched (None when left out)
    line: int | None               # index into hit["lines"] showing the matched text, or None
    span: tuple[int, int] | None   # code-point offsets into hit["lines"][line]: the whole
                                   # registered word (exact, alias, slip), the leading part
                                   # matched (prefix)


# ---------------------------------------------------------------------------------------------
# folding with positions

_TABLE = fold_table()
_APOSTROPHES = "'\u2019\u2018`"


@dataclass(frozen=True, slots=True)
class _Word:
    """A folded word with, per folded letter, the code points of the original text it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    typed_len: int           # letters as written: an ij (folded y) counts two, as in the engine


def _is_letter(c: str) -> bool:
    return ord(c) < FOLD_LIMIT and _TABLE[ord(c)][:1].isalpha()


def _fold_words(text: str, glue: bool) -> tuple[_Word, ...]:
    """Fold `text` as `normalize.fold` does, keeping where each folded letter came from.

    `glue`: an apostrophe between a lone letter and a word joins them (``A'dam``), as the query
    parser reads it; the register's names are folded without that."""
    chars: list[tuple[str, int]] = []
    n = len(text)
    for i, c in enumerate(text):
        o = ord(c)
        if (glue and c in _APOSTROPHES and 0 < i < n - 1 and _is_letter(text[i - 1])
                and _is_letter(text[i + 1]) and (i == 1 or not _is_letter(text[i - 2]))):
            continue
        for f in (_TABLE[o] if o < FOLD_LIMIT else " "):
            chars.append((f, i))
    words: list[_Word] = []
    letters: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    extra = 0

    def flush() -> None:
        nonlocal extra
        if letters:
            words.append(_Word("".join(letters), tuple(starts), tuple(ends), len(letters) + extra))
            letters.clear()
            starts.clear()
            ends.clear()
            extra = 0

    k = 0
    prev = " "
    while k < len(chars):
        f, i = chars[k]
        e = i + 1
        if f == "i" and k + 1 < len(chars) and chars[k + 1][0] == "j":
            f = "y"
            e = chars[k + 1][1] + 1
            extra += 1
            k += 1
        if f == " " or (f.isdigit() and "a" <= prev <= "z"):
            flush()
        if f != " ":
            letters.append(f)
            starts.append(i)
            ends.append(e)
        prev = f
        k += 1
    flush()
    return tuple(words)


_query_words = lru_cache(maxsize=4096)(lambda q: _fold_words(q, True))
_name_words = lru_cache(maxsize=65536)(lambda text: _fold_words(text, False))


# ---------------------------------------------------------------------------------------------
# the other names of registered words

def _with(table: dict[str, tuple[str, ...]], key: str, alts: Iterable[str]) -> None:
    have = table.get(key, ())
    table[key] = have + tuple(a for a in alts if a != key and a not in have)


@lru_cache(maxsize=16)
def _table_of(derived: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, tuple[str, ...]]:
    vocab = Vocabulary({k: set(v) for k, v in derived})
    table: dict[str, tuple[str, ...]] = {}
    for word, alts in vocab.expansions.items():
        _with(table, word, alts)
    for name, alts in vocab.place_aliases.items():
        _with(table, fold(name), alts)
    return table


def default_aliases() -> dict[str, tuple[str, ...]]:
    """Return the engine's static alias table (no register-derived pairs): folded word or place
    name -> its other spellings, folded (``burgemeester``: ``burg``; ``s gravenhage``: ``den haag``,
    ``the hague``)."""
    return _table_of(())


def aliases_from_manifest(manifest: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Return the alias table an index was built with: the static one plus the abbreviations the
    register itself shows (the manifest's ``derived_abbreviations``).

    The same manifest content gives the same (cached) dict, so pass ``index.manifest`` freely."""
    derived = manifest.get("derived_abbreviations") or {}
    if not isinstance(derived, Mapping) or not all(
            isinstance(k, str) and isinstance(v, (list, tuple)) and all(isinstance(w, str) for w in v)
            for k, v in derived.items()):
        raise ValueError("the manifest's derived_abbreviations must map words to lists of words")
    return _table_of(tuple(sorted((k, tuple(v)) for k, v in derived.items())))


# province and country: the engine's own words for them (REGION_PROVINCE, COUNTRY_WORDS); they
# answer only for the province and country of a hit, never for a place of the same name
_REGION_ALIASES: dict[str, tuple[str, ...]] = {}
for _word, _province in REGION_PROVINCE.items():
    if _word not in fold(_province).split():
        _with(_REGION_ALIASES, fold(_province), (_word,))
_with(_REGION_ALIASES, "nederland", [w for w in COUNTRY_WORDS if w != "the"] + ["the netherlands"])

# the alias tables passed in, each with a serial number, so targets are cached per table (the
# table is held here, so its id is not reused while the serial stands for it)
_TABLES: dict[int, tuple[Mapping[str, Iterable[str]], int]] = {}
_SERIALS: dict[int, Mapping[str, Iterable[str]]] = {}
_NEXT_SERIAL = itertools.count(1)


def _serial(aliases: Mapping[str, Iterable[str]] | None) -> int:
    if aliases is None:
        aliases = default_aliases()
    got = _TABLES.get(id(aliases))
    if got is not None and got[0] is aliases:
        return got[1]
    if len(_TABLES) >= 32:      # callers that build a table per call: forget the old ones
        _TABLES.clear()
        _SERIALS.clear()
        _targets.cache_clear()
    serial = next(_NEXT_SERIAL)
    _TABLES[id(aliases)] = (aliases, serial)
    _SERIALS[serial] = aliases
    return serial


# ---------------------------------------------------------------------------------------------
# what a hit offers to match: its words, each with where it is shown

@dataclass(frozen=True, slots=True)
class _Target:
    text: str                          # folded
    field: str
    line: int | None
    starts: tuple[int, ...] | None     # per folded letter, offsets in the line (real words only)
    ends: tuple[int, ...] | None
    span: tuple[int, int] | None       # the whole registered word (or name, for a place's alias)
    mask: int                          # the registered word(s) it stands for
    alias: bool
    whole_only: bool                   # an alias of up to ALIAS_WHOLE_LEN letters: typed whole only
    run: int                           # real words of one name: the run and the position in it,
    pos: int                           # for glued and respaced readings (-1: none)


_TYPES = {
    "NLD_PUBLIC_SPACE": "street", "NLD_HOUSE_NUMBER": "number", "NLD_HOUSE_LETTER": "letter",
    "NLD_HOUSE_NUMBER_ADDITION": "addition", "NLD_POSTAL_CODE": "postcode",
    "NLD_LOCALITY": "locality", "NLD_MUNICIPALITY": "municipality", "NLD_PROVINCE": "province",
    "NLD_COUNTRY": "country",
}
_NAMES = ("street", "locality", "municipality", "province", "country")
_ORDER = {"street": 0, "locality": 1, "municipality": 2, "province": 3, "country": 4}


def _hit_fields(hit: Mapping[str, Any]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    if not isinstance(hit, Mapping):
        raise TypeError(f"hit must be one element of a response's 'hits' (a dict), not {type(hit).__name__}")
    comps = hit.get("components")
    lines = hit.get("lines")
    if not isinstance(comps, list) or not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise ValueError("hit must hold 'components' (a list) and 'lines' (a list of strings)")
    fields = []
    for c in comps:
        if not isinstance(c, Mapping) or c.get("type") not in _TYPES:
            raise ValueError(f"hit holds an unknown component: {c!r}")
        v = c.get("value")
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise ValueError(f"hit holds a component whose value is no text or number: {c!r}")
        fields.append((_TYPES[c["type"]], str(v)))
    return tuple(fields), tuple(lines)


def _place_in(line: str | None, text: str, at_end: bool) -> int:
    """Where `text` stands in `line` (its end for the locality, its start otherwise), or -1."""
    if line is None or not text:
        return -1
    if at_end:
        return len(line) - len(text) if line.endswith(text) else line.rfind(text)
    return 0 if line.startswith(text) else line.find(text)


@lru_cache(maxsize=8192)
def _targets(fields: tuple[tuple[str, str], ...], lines: tuple[str, ...], serial: int) -> tuple[_Target, ...]:
    table = _SERIALS[serial]
    f = dict(fields)
    line0 = lines[0] if lines else None
    line1 = lines[1] if len(lines) > 1 else None
    line2 = lines[2] if len(lines) > 2 else None
    out: list[_Target] = []
    bit = 1

    def plain(text: str, field: str, line: int | None, at: int) -> None:
        """A part of the house number or the postcode: its letters and digits, lower case."""
        nonlocal bit
        idx = [i for i, c in enumerate(text) if c.isalnum()]
        folded = "".join(text[i] for i in idx).lower()
        if not folded:
            return
        if at < 0:
            out.append(_Target(folded, field, None, None, None, None, bit, False, False, -1, -1))
        else:
            starts = tuple(at + i for i in idx)
            ends = tuple(s + 1 for s in starts)
            out.append(_Target(folded, field, line, starts, ends, (starts[0], ends[-1]), bit, False, False, -1, -1))
        bit <<= 1

    # the house number and its letter and addition, in the street line: "{number}{letter}-{addition}"
    number, letter, addition = f.get("number", ""), f.get("letter", ""), f.get("addition", "")
    numtext = number + letter + (f"-{addition}" if addition else "")
    at = len(line0) - len(numtext) if line0 is not None and number and line0.endswith(numtext) else -1
    if number:
        plain(number, "number", 0, at)
    if letter:
        plain(letter, "letter", 0, at + len(number) if at >= 0 else -1)
    if addition:
        plain(addition, "addition", 0, at + len(number) + len(letter) + 1 if at >= 0 else -1)
    if f.get("postcode"):
        plain(f["postcode"], "postcode", 1, _place_in(line1, f["postcode"], False))

    run = 0
    for field in _NAMES:
        name = f.get(field)
        if not name or (field == "municipality" and name == f.get("locality")):
            continue        # a municipality of the locality's name: the locality (shown) answers
        line, text_line = {"street": (0, line0), "locality": (1, line1), "country": (2, line2)}.get(
            field, (None, None))
        at = _place_in(text_line, name, field == "locality")
        if at < 0:
            line = None
        words = _name_words(name)
        whole = (at, at + len(name)) if line is not None else None   # for its other names
        first_bit = bit
        for pos, w in enumerate(words):
            if line is None:
                starts = ends = span = None
            else:
                starts = tuple(at + s for s in w.starts)
                ends = tuple(at + e for e in w.ends)
                span = (starts[0], ends[-1])
            out.append(_Target(w.text, field, line, starts, ends, span, bit, False, False, run, pos))
            if field in ("street", "locality", "municipality"):
                alts = list(table.get(w.text, ()))
                if field == "street" and w.text.endswith("str") and len(w.text) > 4:
                    alts.append(w.text + "aat")
                for alt in alts:
                    if " " not in alt:
                        out.append(_Target(alt, field, line, None, None, span, bit, True,
                                           len(alt) <= ALIAS_WHOLE_LEN, -1, -1))
            bit <<= 1
        if field == "street":
            # "van der" written vd (as v.d. and v/d are)
            for i in range(len(words) - 1):
                if words[i].text == "van" and words[i + 1].text in ("de", "der", "den"):
                    span = (None if line is None else
                            (at + words[i].starts[0], at + words[i + 1].ends[-1]))
                    out.append(_Target("vd", field, line, None, None, span,
                                       (first_bit << i) | (first_bit << (i + 1)), True, True, -1, -1))
        # a place's other names (den haag, the hague), a province's or the country's: each word
        # of them answers for the whole name
        key = " ".join(w.text for w in words)
        if field in ("locality", "municipality"):
            others = [a for a in table.get(key, ()) if len(words) > 1 or " " in a]
        elif field in ("province", "country"):
            others = list(_REGION_ALIASES.get(key, ()))
        else:
            others = []
        for alt in others:
            for word in alt.split():
                out.append(_Target(word, field, line, None, None, whole, bit, True,
                                   len(word) <= ALIAS_WHOLE_LEN, -1, -1))
                bit <<= 1
        run += 1
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# the readings of each typed word, and the best reading of the query

# costs: what the search would think of the reading; a reading that accounts for a word always
# beats one that leaves it out
EXACT, ALIAS_WHOLE, PREFIX, ALIAS_PREFIX, SLIP, SLIP_EDIT, PREFIX_SLIP = 0.0, 0.6, 1.0, 1.5, 3.0, 0.5, 3.5
RESPACE = 0.2            # per extra word of a glued or respaced reading
LEFT_OUT = 10.0          # per word left out, plus a little per letter (a longer piece matched wins)
_FIELD_PEN = 0.01        # breaks ties: the street before the number, the place after it
_MAX_NODES = 20000       # the search of readings stops there (keeping the best found)

_PC_SHAPE = re.compile(r"[0-9]{4}[a-z]{2}")


@dataclass(frozen=True, slots=True)
class _Piece:
    """A typed word, or the part of one the hit reads apart (the 12 and the a of 12a)."""

    text: str
    start: int           # offsets in q
    end: int
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    typed_len: int
    role: int            # _WORD, _DIGITS (cut from letters after it), _PART (letters cut from a number)


_WORD, _DIGITS, _PART = 0, 1, 2


def _piece(w: _Word, a: int, b: int, role: int) -> _Piece:
    return _Piece(w.text[a:b], w.starts[a], w.ends[b - 1], w.starts[a:b], w.ends[a:b],
                  b - a + (w.typed_len - len(w.text) if (a, b) == (0, len(w.text)) else 0), role)


def _cuts(w: _Word) -> list[tuple[_Piece, ...]]:
    """The ways a typed word may hold several parts of the address: itself; a number and what is
    glued after it (12a, 12bis, 12groningen); a number glued to a postcode (129711lj); a postcode
    glued to a place (9711ljgroningen)."""
    out = [(_piece(w, 0, len(w.text), _WORD),)]
    t = w.text
    d = len(t) - len(t.lstrip("0123456789"))
    if 0 < d < len(t):
        out.append((_piece(w, 0, d, _DIGITS), _piece(w, d, len(t), _WORD if len(t) - d >= 5 else _PART)))
        if d > 4 and len(t) == d + 2:
            out.append((_piece(w, 0, d - 4, _DIGITS), _piece(w, d - 4, len(t), _WORD)))
        if d == 4 and len(t) > 6:
            out.append((_piece(w, 0, 6, _WORD), _piece(w, 6, len(t), _WORD)))
    return out


def _slip_edits(typed: _Piece, word: str) -> int:
    """The slips between a typed word and a registered one, as the engine allows them, or 0."""
    if typed.typed_len < 5 or not typed.text.isalpha() or len(typed.text) > 38:
        return 0
    maxd = 2 if typed.typed_len >= 7 and (typed.typed_len >= 9 or len(word) >= 9) else 1
    if abs(len(word) - len(typed.text)) > maxd + 1:      # an ij spelling may differ by one more
        return 0
    d = _distance(typed.text, word, maxd)
    return d if 0 < d <= maxd else 0


@lru_cache(maxsize=65536)
def _distance(a: str, b: str, maxd: int) -> int:
    return typo_distance(a, b, maxd)


def _prefix_slip(typed: _Piece, word: str) -> int:
    """A word still being typed with one slip in it (``jerestr``, ``dropstra``): the length of
    the registered word's start it stands for, or 0."""
    n = len(typed.text)
    if n < 4 or not typed.text.isalpha() or n >= len(word):
        return 0
    for m in (n, n + 1, n - 1):
        if m < len(word) and _distance(typed.text, word[:m], 1) == 1:
            return m
    return 0


def _pen(field: str, after_number: bool) -> float:
    """A hair more for the less likely field of a word: before the house number the street,
    after it (with words before it) the place, then the municipality, province and country."""
    order = _ORDER.get(field)
    if order is None:
        return 0.0
    return _FIELD_PEN * (order if not after_number else (2 if order == 0 else order - 1))


_Reading = tuple[float, _Target, str, "tuple[int, int] | None"]   # (cost, target, kind, span)


def _singles(p: _Piece, targets: tuple[_Target, ...], after: bool) -> list[_Reading]:
    """Each registered word the piece alone may stand for: (cost, target, kind, span)."""
    found = []
    t = p.text
    for g in targets:
        f = g.field
        if p.role == _PART and f not in ("letter", "addition"):
            continue
        if p.role == _DIGITS and f not in ("number", "postcode", "addition"):
            continue
        if f == "number" and p.role == _PART:
            continue
        pen = _pen(f, after)
        if t == g.text:
            found.append((ALIAS_WHOLE + pen if g.alias else EXACT + pen, g, "alias" if g.alias else "exact", g.span))
        elif g.text.startswith(t) and f != "letter":
            if g.alias:
                if not g.whole_only:
                    found.append((ALIAS_PREFIX + pen, g, "alias", g.span))
            else:
                span = None if g.starts is None else (g.starts[0], g.ends[len(t) - 1])
                found.append((PREFIX + pen, g, "prefix", span))
        elif t[-1] == "i" and not g.alias and g.text.startswith(t[:-1] + "y"):
            # the i of an ij being typed: the start of the y it folds to (the I of IJssel)
            span = None if g.starts is None else (g.starts[0], g.starts[len(t) - 1] + 1)
            found.append((PREFIX + pen, g, "prefix", span))
        elif f == "postcode":
            if _PC_SHAPE.fullmatch(t) and _distance(t, g.text, 1) == 1:
                found.append((SLIP + SLIP_EDIT + pen, g, "slip", g.span))
        elif f in _ORDER and (not g.alias or not g.whole_only):
            edits = _slip_edits(p, g.text)
            if edits:
                found.append((SLIP + SLIP_EDIT * edits + pen, g, "slip", g.span))
            elif not g.alias:
                m = _prefix_slip(p, g.text)
                if m:
                    span = None if g.starts is None else (g.starts[0], g.ends[m - 1])
                    found.append((PREFIX_SLIP + pen, g, "slip", span))
    found.sort(key=lambda x: x[0])
    return found[:6]


@dataclass(frozen=True, slots=True)
class _Option:
    cost: float
    ntok: int
    mask: int
    matches: tuple[WordMatch, ...]


def _match(p: _Piece, q: str, kind: str, g: _Target | None, span: tuple[int, int] | None) -> WordMatch:
    if g is None:
        return WordMatch(q[p.start:p.end], p.start, p.end, "left_out", None, None, None)
    return WordMatch(q[p.start:p.end], p.start, p.end, kind, g.field, g.line if span is not None else None, span)


def _left_out_cost(p: _Piece) -> float:
    return LEFT_OUT + 0.1 * len(p.text)


def _options(q: str, words: tuple[_Word, ...], i: int, targets: tuple[_Target, ...],
             runs: dict[int, list[_Target]], after: bool) -> list[_Option]:
    w = words[i]
    opts: list[_Option] = []
    for pieces in _cuts(w):
        # every piece: one of its best readings or left out (a handful of pieces and readings)
        partial: list[tuple[float, int, tuple[WordMatch, ...]]] = [(0.0, 0, ())]
        for p in pieces:
            nxt = []
            readings = _singles(p, targets, after)
            for cost, mask, ms in partial:
                nxt.append((cost + _left_out_cost(p), mask, ms + (_match(p, q, "left_out", None, None),)))
                for c, g, kind, span in readings:
                    if not g.mask & mask:
                        nxt.append((cost + c, mask | g.mask, ms + (_match(p, q, kind, g, span),)))
            nxt.sort(key=lambda x: x[0])
            partial = nxt[:8]
        opts.extend(_Option(c, 1, m, ms) for c, m, ms in partial)
    whole = _piece(w, 0, len(w.text), _WORD)
    # one typed word for several registered ones: vanhallstraat, sgravenhage, hc
    for run in runs.values():
        for a in range(len(run) - 1):
            rest = w.text
            b = a
            while b < len(run) and rest:
                g = run[b]
                if rest.startswith(g.text) and len(rest) > len(g.text):
                    rest = rest[len(g.text):]
                    b += 1
                    continue
                if b > a and g.text.startswith(rest):
                    mask = 0
                    for x in run[a:b + 1]:
                        mask |= x.mask
                    complete = rest == g.text
                    line = g.line if g.starts is not None else None
                    span = None if line is None else (run[a].starts[0], g.ends[len(rest) - 1])
                    kind = "exact" if complete else "prefix"
                    cost = (EXACT if complete else PREFIX) + RESPACE * (b - a) + _pen(g.field, after)
                    opts.append(_Option(cost, 1, mask, (WordMatch(q[whole.start:whole.end], whole.start,
                                                                   whole.end, kind, g.field, line, span),)))
                break
    # several typed words for one registered word: kerk straat, 1012 lg, d 37
    for g in targets:
        if g.alias or g.field in ("number", "letter") or not g.text.startswith(w.text) or w.text == g.text:
            continue
        got = w.text
        pieces_ = [_piece(w, 0, len(w.text), _WORD)]
        j = i + 1
        while j < len(words) and len(got) < len(g.text):
            nw = words[j]
            if not g.text.startswith(got + nw.text):
                break
            got += nw.text
            pieces_.append(_piece(nw, 0, len(nw.text), _WORD))
            j += 1
        if len(pieces_) < 2:
            continue
        ms = []
        done = 0
        for k, p in enumerate(pieces_):
            last = k == len(pieces_) - 1
            kind = "prefix" if last and len(got) < len(g.text) else "exact"
            span = None
            if g.starts is not None:
                span = (g.starts[done], g.ends[done + len(p.text) - 1])
            done += len(p.text)
            ms.append(_match(p, q, kind, g, span))
        cost = (EXACT if len(got) == len(g.text) else PREFIX) + RESPACE * (len(pieces_) - 1) + _pen(g.field, after)
        opts.append(_Option(cost, len(pieces_), g.mask, tuple(ms)))
    opts.sort(key=lambda o: o.cost / o.ntok)
    return opts


def _number_at(words: tuple[_Word, ...], number: str) -> int:
    """Where the house number was typed (the word that is it, else the first that starts with
    it), or -1."""
    for i, w in enumerate(words):
        if w.text == number:
            return i
    for i, w in enumerate(words):
        t = w.text
        d = len(t) - len(t.lstrip("0123456789"))
        if d and t[:d] == number:
            return i
    return -1


def explain(q: str, hit: Mapping[str, Any], *, aliases: Mapping[str, Iterable[str]] | None = None
            ) -> tuple[WordMatch, ...]:
    """Say how each typed word of `q` matched `hit`, in the order typed.

    Parameters
    ----------
    q : the query as typed.
    hit : one element of the contract's ``"hits"`` list (``components``, ``lines``, ...).
    aliases : the alias table of the index that answered (`aliases_from_manifest`); the engine's
        static table when None.

    Returns
    -------
    One `WordMatch` per typed word (a word the hit reads as two parts, ``12a``, gives two),
    sorted by position in `q`.
    """
    if not isinstance(q, str):
        raise TypeError(f"q must be a str, not {type(q).__name__}")
    fields, lines = _hit_fields(hit)
    targets = _targets(fields, lines, _serial(aliases))
    words = _query_words(q)
    if not words:
        return ()
    runs: dict[int, list[_Target]] = {}
    for g in targets:
        if g.run >= 0:
            runs.setdefault(g.run, []).append(g)
    number = dict(fields).get("number", "")
    num_at = _number_at(words, number) if number else -1
    words_before = num_at > 0 and any(not w.text[:1].isdigit() for w in words[:num_at])
    opts = [_options(q, words, i, targets, runs, words_before and i > num_at) for i in range(len(words))]
    return _best(opts, len(words))


def _best(opts: list[list[_Option]], n: int) -> tuple[WordMatch, ...]:
    """The reading of the query with the lowest cost whose registered words are all distinct."""
    low = [min((o.cost / o.ntok for o in opts[i]), default=0.0) for i in range(n)]
    for i in range(n):
        for o in opts[i]:
            for k in range(i + 1, min(n, i + o.ntok)):
                low[k] = min(low[k], o.cost / o.ntok)
    bound = [0.0] * (n + 1)
    for i in range(n - 1, -1, -1):
        bound[i] = bound[i + 1] + low[i]
    best_cost = float("inf")
    best: list[_Option] = []
    chosen: list[_Option] = []
    nodes = 0

    def go(i: int, mask: int, cost: float) -> None:
        nonlocal best_cost, best, nodes
        nodes += 1
        if cost + bound[i] >= best_cost - 1e-9 or nodes > _MAX_NODES:
            return
        if i == n:
            best_cost, best = cost, list(chosen)
            return
        for o in opts[i]:
            if o.mask & mask or i + o.ntok > n:
                continue
            chosen.append(o)
            go(i + o.ntok, mask | o.mask, cost + o.cost)
            chosen.pop()

    go(0, 0, 0.0)
    return tuple(sorted((m for o in best for m in o.matches), key=lambda m: (m.start, m.end)))


def highlights(q: str, hit: Mapping[str, Any], *, aliases: Mapping[str, Iterable[str]] | None = None
               ) -> list[list[tuple[int, int]]]:
    """Return, per line of ``hit["lines"]``, the sorted and merged (start, end) code-point spans
    of the text the typed words matched: what a suggestion list shows in bold."""
    fields, lines = _hit_fields(hit)
    out: list[list[tuple[int, int]]] = [[] for _ in lines]
    for m in explain(q, hit, aliases=aliases):
        if m.line is not None and m.span is not None:
            out[m.line].append(m.span)
    for i, spans in enumerate(out):
        spans.sort()
        merged: list[tuple[int, int]] = []
        for s, e in spans:
            if merged and s <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((s, e))
        out[i] = merged
    return out


# the quality of one word's match, for match_score
_QUALITY = {"exact": 1.0, "alias": 0.9, "prefix": 0.8, "slip": 0.6, "left_out": 0.0}


def match_score(matches: Iterable[WordMatch]) -> float:
    """Return a 0..1 quality of a match: 1.0 when every typed word matched as typed, less for
    each abbreviation, word still being typed, slip or word left out, weighted by the letters
    typed. An empty query scores 0.0."""
    total = weight = 0.0
    for m in matches:
        n = max(1, m.end - m.start)
        total += _QUALITY[m.kind] * n
        weight += n
    return total / weight if weight else 0.0
