"""How a hit matched what was typed: for each typed word, exact, prefix, alias, slip or left out.

    >>> from engine.explain import aliases_from_manifest, explain, highlights, match_score
    >>> aliases = aliases_from_manifest(index.manifest)      # once per index, then reuse it
    >>> hit = index.suggest("burg de withstr 1", limit=1)[0].to_dict()   # engine.Hit.how_matched
    >>> explain("burg de withstr 1", hit, aliases=aliases)   # one WordMatch per typed word
    >>> highlights("burg de withstr 1", hit, aliases=aliases)  # per line, the spans to show bold

It reads the answer only (the typed text and one hit of the contract's JSON), not the search's
internals, so it explains any hit the same way, from the library or from the HTTP service. Both
sides are folded as the engine folds them (`normalize`: lower case, no diacritics, punctuation a
separator, ``ij`` = ``y``, a letter followed by a digit split, an apostrophe between a lone letter
and a word glued), each folded letter remembering the code points it came from, so a span always
points at the registered spelling (``afkelansdijk`` marks ``Afkelânsdyk``, ``ys`` the ``IJs``
of ``IJsselstraat``).

Then each typed word is given the word of the hit that best accounts for it, one registered word
answering one typed word (as in the search): of the readings of the whole query (dynamic
programming over the typed words, `_best`) the one with the lowest total cost is taken, where a
word matched as typed costs nothing, an abbreviation or other name of the registered word
(`burg`/Burgemeester, `den haag`/'s-Gravenhage, `2e`/Tweede) a little, a word still being typed
(the start of a registered word) more, a slip (one edit in a word of 5+ letters, two in one of
9+ typed 7+ long, as the engine allows; looked for only in a word that matches nothing of the hit
as typed) more again, and a word the hit does not account for most. The last word, when it may
still be being typed, is the start of a word before it is an abbreviation of it (`v`: the V of
Van). Words typed glued or apart where the register spaces them otherwise are read both ways
(``vanaerssenstraat``: Van Aerssenstraat; ``kerk straat``: Kerkstraat; ``1012lg1``, ``12a``,
``129711lj``: a number, its letter, a postcode). Words the hit cannot account for (a floor,
``achterhuis``, a part of town, a stray word) are ``left_out``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ._core import SIZES, sound_key, sound_start
from ._reference import sound_variants, unfold_ij
from .normalize import FOLD_LIMIT, fold, fold_table
from .params import ALIAS_WHOLE_LEN
from .vocab import Vocabulary
from .words import COUNTRY_WORDS, REGION_PROVINCE

SOUND_MIN = SIZES["SOUND_MIN"]   # a sound-alike is a word of this many letters at least

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
_DASHES = "-\u2010\u2011\u2012\u2013"


@dataclass(frozen=True, slots=True)
class _Word:
    """A folded word with, per folded letter, the code points of the original text it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    typed_len: int           # letters as written: an ij (folded y) counts two, as in the engine


def _is_letter(c: str) -> bool:
    return ord(c) < FOLD_LIMIT and _TABLE[ord(c)][:1].isalpha()


def _ends_in_digit(c: str) -> bool:
    return ord(c) < FOLD_LIMIT and _TABLE[ord(c)][-1:].isdigit()


#: folded letters and digits after a hyphen that the query parser glues to a number (_core.pxd)
ADDITION_TYPED = 4


def _addition_after(text: str, i: int) -> bool:
    """Does text from i on begin with a letter and run for at most ADDITION_TYPED folded
    letters and digits, of them fewer than ADDITION_TYPED letters, up to a separator or the end
    (``_core.pyx _addition_after``)?"""
    if i >= len(text) or not _is_letter(text[i]):
        return False
    m = letters = 0
    for c in text[i:]:
        f = _TABLE[ord(c)] if ord(c) < FOLD_LIMIT else " "
        if f[0] == " ":
            break
        m += len(f)
        letters += sum(ch.isalpha() for ch in f)
        if m > ADDITION_TYPED or letters >= ADDITION_TYPED:
            return False
    return True


# PERF: most text is ASCII, where each character folds to one (a-z, 0-9 or a separator): one
# `translate` and a regular expression find the words; `_fold_any` is the general path
_ASCII_FOLD = str.maketrans({chr(i): _TABLE[i] for i in range(128)})
_ASCII_WORD = re.compile(r"[0-9]+[a-z]*|[a-z]+")   # a letter followed by a digit: two words


def _fold_words(text: str, glue: bool) -> tuple[_Word, ...]:
    """Fold `text` as `normalize.fold` does, keeping where each folded letter came from.

    `glue`: an apostrophe between a lone letter and a word joins them (``A'dam``), and a hyphen
    between a number and letters (``123-H``), as the query parser reads it; the register's
    names are folded without that."""
    if not text.isascii() or (glue and ("'" in text or "`" in text or "-" in text)):
        return _fold_any(text, glue)
    words = []
    for m in _ASCII_WORD.finditer(text.translate(_ASCII_FOLD)):
        a, b = m.span()
        t = m.group()
        if "ij" not in t:
            words.append(_Word(t, tuple(range(a, b)), tuple(range(a + 1, b + 1)), b - a))
            continue
        letters, starts, ends = [], [], []
        k = a
        while k < b:
            starts.append(k)
            if t[k - a] == "i" and k + 1 < b and t[k + 1 - a] == "j":
                letters.append("y")
                k += 2
            else:
                letters.append(t[k - a])
                k += 1
            ends.append(k)
        words.append(_Word("".join(letters), tuple(starts), tuple(ends), b - a))
    return tuple(words)


def _fold_any(text: str, glue: bool) -> tuple[_Word, ...]:
    """`_fold_words` for any text, one code point at a time."""
    chars: list[tuple[str, int]] = []
    n = len(text)
    for i, c in enumerate(text):
        o = ord(c)
        if (glue and c in _APOSTROPHES and 0 < i < n - 1 and _is_letter(text[i - 1])
                and _is_letter(text[i + 1]) and (i == 1 or not _is_letter(text[i - 2]))):
            continue
        if (glue and c in _DASHES and 0 < i < n - 1 and _ends_in_digit(text[i - 1])
                and _addition_after(text, i + 1)):
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


_name_words = lru_cache(maxsize=65536)(lambda text: _fold_words(text, False))


# ---------------------------------------------------------------------------------------------
# the other names of registered words

def _with(table: dict[str, tuple[str, ...]], key: str, alts: Iterable[str]) -> None:
    have = table.get(key, ())
    table[key] = have + tuple(a for a in alts if a != key and a not in have)


@lru_cache(maxsize=16)
def _table_of(derived: tuple[tuple[str, tuple[str, ...]], ...],
              formers: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> dict[str, tuple[str, ...]]:
    vocab = Vocabulary({k: set(v) for k, v in derived})
    table: dict[str, tuple[str, ...]] = {}
    for word, alts in vocab.expansions.items():
        _with(table, word, alts)
    for name, alts in vocab.place_aliases.items():
        _with(table, fold(name), alts)
    for name, alts in formers:      # a former municipality's name: one of the one it became
        _with(table, fold(name), [fold(a) for a in alts])
    return table


def default_aliases() -> dict[str, tuple[str, ...]]:
    """Return the engine's static alias table (no register-derived pairs): folded word or place
    name -> its other spellings, folded (``burgemeester``: ``burg``; ``s gravenhage``: ``den haag``,
    ``the hague``)."""
    return _table_of(())


def aliases_from_manifest(manifest: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Return the alias table an index was built with: the static one plus the abbreviations the
    register itself shows (the manifest's ``derived_abbreviations``) and the former names of
    its municipalities (``former_municipalities``: ``west betuwe``: ``geldermalsen``, ...).

    The same manifest content gives the same (cached) dict, so pass ``index.manifest`` freely."""
    tables = []
    for key in ("derived_abbreviations", "former_municipalities"):
        given = manifest.get(key) or {}
        if not isinstance(given, Mapping) or not all(
                isinstance(k, str) and isinstance(v, (list, tuple)) and all(isinstance(w, str) for w in v)
                for k, v in given.items()):
            raise ValueError(f"the manifest's {key} must map words to lists of words")
        tables.append(tuple(sorted((k, tuple(v)) for k, v in given.items())))
    return _table_of(*tables)


# province and country: the engine's own words for them (REGION_PROVINCE, COUNTRY_WORDS); they
# answer only for the province and country of a hit, never for a place of the same name
_REGION_ALIASES: dict[str, tuple[str, ...]] = {}
for _word, _province in REGION_PROVINCE.items():
    if _word not in fold(_province).split():
        _with(_REGION_ALIASES, fold(_province), (_word,))
_with(_REGION_ALIASES, "nederland", [w for w in COUNTRY_WORDS if w != "the"] + ["the netherlands"])

class _Table:
    """An alias table read once into folded words; hashed by identity, so the targets of a hit
    are cached per table (and a table in use is never looked up where it may have gone)."""

    __slots__ = ("words",)

    def __init__(self, words: dict[str, tuple[str, ...]]) -> None:
        self.words = words


# the tables passed in, by id (each held here, so its id is not reused while it is in use)
_TABLES: dict[int, tuple[Mapping[str, Iterable[str]], _Table]] = {}


def _table(aliases: Mapping[str, Iterable[str]] | None) -> _Table:
    if aliases is None:
        aliases = default_aliases()
    got = _TABLES.get(id(aliases))
    if got is not None and got[0] is aliases:
        return got[1]
    if not isinstance(aliases, Mapping):
        raise TypeError(f"aliases must map words to their other spellings, not {type(aliases).__name__}")
    words: dict[str, tuple[str, ...]] = {}
    for key, alts in aliases.items():
        spellings = list(alts) if isinstance(alts, Iterable) and not isinstance(alts, str) else None
        if not isinstance(key, str) or spellings is None or not all(isinstance(a, str) for a in spellings):
            raise TypeError(f"aliases must map words to lists of words: {key!r}: {alts!r}")
        _with(words, fold(key), [fold(a) for a in spellings])
    if len(_TABLES) >= 32:      # callers that build a table per call: forget the old ones
        _TABLES.clear()
        _hit_targets.cache_clear()
        _name_targets.cache_clear()
    table = _Table(words)
    _TABLES[id(aliases)] = (aliases, table)
    return table


# ---------------------------------------------------------------------------------------------
# what a hit offers to match: its words, each with where it is shown

# what kind of typed piece may stand for a target (bits): a whole typed word, the digits cut
# from the letters after them (the 12 of 12a), the letters cut from a number (the a of 12a)
_WORD, _DIGITS, _PART = 1, 2, 4


@dataclass(frozen=True, slots=True)
class _Target:
    text: str                          # folded
    field: str
    line: int | None
    starts: tuple[int, ...]            # per folded letter, its offsets in the line (real words
    ends: tuple[int, ...]              # shown in a line; else empty)
    span: tuple[int, int] | None       # the whole registered word (or name, for its other names)
    mask: int                          # the registered word(s) it stands for
    alias: bool
    whole_only: bool                   # an alias of up to ALIAS_WHOLE_LEN letters: typed whole only
    name: bool                         # a word of a name (street, place, province, country)
    roles: int                         # the pieces that may stand for it (_WORD, _DIGITS, _PART)
    pens: tuple[float, float]          # the tie-break cost before / after the house number


@dataclass(frozen=True, slots=True)
class _Hit:
    targets: tuple[_Target, ...]
    runs: tuple[tuple[_Target, ...], ...]     # the real words of each name, in order
    number: str


_TYPES = {
    "NLD_PUBLIC_SPACE": "street", "NLD_HOUSE_NUMBER": "number", "NLD_HOUSE_LETTER": "letter",
    "NLD_HOUSE_NUMBER_ADDITION": "addition", "NLD_POSTAL_CODE": "postcode",
    "NLD_LOCALITY": "locality", "NLD_MUNICIPALITY": "municipality", "NLD_PROVINCE": "province",
    "NLD_COUNTRY": "country",
}
_NAMES = ("street", "locality", "municipality", "province", "country")
_ROLES = {"number": _WORD | _DIGITS, "postcode": _WORD | _DIGITS, "letter": _WORD | _PART,
          "addition": _WORD | _DIGITS | _PART}
_FIELD_PEN = 0.01        # breaks ties: the street before the number, the place after it


def _pens(field: str) -> tuple[float, float]:
    """A hair more for the less likely field of a word: before the house number (or with none)
    the street first, after it (with words before it) the place; then the municipality, the
    province, the country."""
    if field not in _NAMES:
        return (0.0, 0.0)
    order = _NAMES.index(field)
    return (_FIELD_PEN * order, _FIELD_PEN * (2 if order == 0 else order - 1))


def _hit_key(hit: Mapping[str, Any]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    if not isinstance(hit, Mapping):
        raise TypeError(f"hit must be one element of a response's 'hits' (a dict), not {type(hit).__name__}")
    comps = hit.get("components")
    lines = hit.get("lines")
    if not isinstance(comps, (list, tuple)) or not isinstance(lines, (list, tuple)):
        raise ValueError("hit must hold 'components' (a list) and 'lines' (a list of strings)")
    try:
        fields = tuple([(_TYPES[c["type"]], str(c["value"])) for c in comps])
    except (KeyError, TypeError, IndexError):
        raise ValueError(f"hit holds a component that is not {{'type': NLD_..., 'value': ...}}: {comps!r}") from None
    for line in lines:
        if type(line) is not str:
            raise ValueError(f"hit's lines must be strings, not {line!r}")
    return fields, tuple(lines)


def _place_in(line: str | None, text: str, at_end: bool) -> int:
    """Where `text` stands in `line` (its end for the locality, its start otherwise), or -1."""
    if line is None or not text:
        return -1
    if at_end:
        return len(line) - len(text) if line.endswith(text) else line.rfind(text)
    return 0 if line.startswith(text) else line.find(text)


@lru_cache(maxsize=8192)
def _hit_targets(fields: tuple[tuple[str, str], ...], lines: tuple[str, ...], table: _Table) -> _Hit:
    """Every word of a hit a typed word may stand for, with where it is shown. Each field has
    bits of its own in the masks (16 apiece), so a name's words are built once for every hit
    that holds the name."""
    f = dict(fields)
    line0, line1, line2 = (tuple(lines) + (None, None, None))[:3]
    out: list[_Target] = []
    runs: list[tuple[_Target, ...]] = []
    # the house number and its letter and addition, in the street line: "{number}{letter}-{addition}"
    number, letter, addition = f.get("number", ""), f.get("letter", ""), f.get("addition", "")
    numtext = number + letter + (f"-{addition}" if addition else "")
    at = len(line0) - len(numtext) if line0 is not None and number and line0.endswith(numtext) else -1
    if number:
        out.append(_plain(number, "number", 0, at, 1))
    if letter:
        out.append(_plain(letter, "letter", 0, at + len(number) if at >= 0 else -1, 2))
    if addition:
        part = _plain(addition, "addition", 0, at + len(number) + len(letter) + 1 if at >= 0 else -1, 4)
        out.append(part)
        if part.text == "h":
            # "hs" and "huis" are how people write the addition H ("damrak 11 hs"; the
            # engine's HS_ADDITION_PEN): typed whole, each stands for the H
            out.extend(_Target(alias, "addition", part.line, (), (), part.span, 4, True, True, False,
                               _ROLES["addition"], (0.0, 0.0)) for alias in ("hs", "huis"))
    if f.get("postcode"):
        out.append(_plain(f["postcode"], "postcode", 1, _place_in(line1, f["postcode"], False), 8))
    for slot, field in enumerate(_NAMES, 1):
        name = f.get(field)
        if not name or (field == "municipality" and name == f.get("locality")):
            continue        # a municipality of the locality's name: the locality (shown) answers
        line, text_line = {"street": (0, line0), "locality": (1, line1), "country": (2, line2)}.get(
            field, (None, None))
        at = _place_in(text_line, name, field == "locality")
        targets, run = _name_targets(field, name, line if at >= 0 else None, at, slot, table)
        out.extend(targets)
        runs.append(run)
    return _Hit(tuple(out), tuple(runs), number)


def _plain(text: str, field: str, line: int, at: int, mask: int) -> _Target:
    """A part of the house number or the postcode: its letters and digits, lower case."""
    idx = [i for i, c in enumerate(text) if c.isalnum()]
    folded = "".join(text[i] for i in idx).lower()
    starts: tuple[int, ...] = ()
    ends: tuple[int, ...] = ()
    span = None
    if at >= 0 and idx:
        starts = tuple(at + i for i in idx)
        ends = tuple(s + 1 for s in starts)
        span = (starts[0], ends[-1])
    return _Target(folded, field, line if span else None, starts, ends, span, mask, False, False, False,
                   _ROLES[field], (0.0, 0.0))


@lru_cache(maxsize=16384)
def _name_targets(field: str, name: str, line: int | None, at: int, slot: int, aliases: _Table
                  ) -> tuple[tuple[_Target, ...], tuple[_Target, ...]]:
    """The words of one name at offset `at` of its line, with their other spellings; and the
    name's own words in order. Their mask bits are those of slot `slot`."""
    table = aliases.words
    out: list[_Target] = []
    pens = _pens(field)
    words = _name_words(name)
    bit = first_bit = 1 << (16 * slot)
    run = []
    for w in words:
        starts: tuple[int, ...] = ()
        ends: tuple[int, ...] = ()
        span = None
        if line is not None:
            starts = tuple(at + s for s in w.starts)
            ends = tuple(at + e for e in w.ends)
            span = (starts[0], ends[-1])
        run.append(_Target(w.text, field, line, starts, ends, span, bit, False, False, True, _WORD, pens))
        if field in ("street", "locality", "municipality"):
            alts = list(table.get(w.text, ()))
            if field == "street" and w.text.endswith("str") and len(w.text) > 4:
                alts.append(w.text + "aat")
            out.extend(_Target(alt, field, line, (), (), span, bit, True, len(alt) <= ALIAS_WHOLE_LEN,
                               True, _WORD, pens) for alt in alts if " " not in alt)
        bit <<= 1
    out.extend(run)
    if field == "street":
        # "van der" written vd (as v.d. and v/d are)
        for i in range(len(words) - 1):
            if words[i].text == "van" and words[i + 1].text in ("de", "der", "den"):
                span = None if line is None else (run[i].starts[0], run[i + 1].ends[-1])
                out.append(_Target("vd", field, line, (), (), span, (first_bit << i) | (first_bit << (i + 1)),
                                   True, True, True, _WORD, pens))
    # a place's other names (den haag, the hague), a province's or the country's: each word of
    # them answers for the whole name
    key = " ".join(w.text for w in words)
    if field in ("locality", "municipality"):
        others = [a for a in table.get(key, ()) if len(words) > 1 or " " in a]
    else:
        others = list(_REGION_ALIASES.get(key, ())) if field in ("province", "country") else []
    whole = (at, at + len(name)) if line is not None else None
    seen = set()
    for word in (word for alt in others for word in alt.split()):
        if word not in seen:
            seen.add(word)
            out.append(_Target(word, field, line, (), (), whole, bit, True, len(word) <= ALIAS_WHOLE_LEN,
                               True, _WORD, pens))
            bit <<= 1
    return tuple(out), tuple(run)


# ---------------------------------------------------------------------------------------------
# the typed words, and the pieces the hit may read them as

@dataclass(frozen=True, slots=True)
class _Piece:
    """A typed word, or the part of one the hit reads apart (the 12 and the a of 12a)."""

    text: str
    start: int           # offsets in q
    end: int
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    typed_len: int
    role: int            # _WORD, _DIGITS or _PART


def _piece(w: _Word, a: int, b: int, role: int) -> _Piece:
    return _Piece(w.text[a:b], w.starts[a], w.ends[b - 1], w.starts[a:b], w.ends[a:b],
                  b - a + (w.typed_len - len(w.text) if (a, b) == (0, len(w.text)) else 0), role)


def _cuts(w: _Word) -> tuple[tuple[_Piece, ...], ...]:
    """The ways a typed word may hold several parts of the address: itself; a number and what is
    glued after it (12a, 12bis, 12groningen); a number glued to a postcode (129711lj, or 129711
    with the letters apart); a postcode glued to a place (9711ljgroningen)."""
    out: list[tuple[_Piece, ...]] = [(_piece(w, 0, len(w.text), _WORD),)]
    t = w.text
    n = len(t)
    d = n - len(t.lstrip("0123456789"))
    if 0 < d < n:
        out.append((_piece(w, 0, d, _DIGITS), _piece(w, d, n, _WORD if n - d >= 5 else _PART)))
        if d > 4 and n == d + 2:
            out.append((_piece(w, 0, d - 4, _DIGITS), _piece(w, d - 4, n, _WORD)))
        if d == 4 and n > 6:
            out.append((_piece(w, 0, 6, _WORD), _piece(w, 6, n, _WORD)))
    elif d == n > 4:
        out.append((_piece(w, 0, d - 4, _DIGITS), _piece(w, d - 4, n, _DIGITS)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Query:
    words: tuple[_Word, ...]
    cuts: tuple[tuple[tuple[_Piece, ...], ...], ...]
    typing: bool         # the last word runs to the end of q: it may still be being typed


def _query(q: str) -> _Query:
    """The typed words of `q` and their pieces (kept for the next hit of the same query; a text
    longer than any query is not kept)."""
    return _query_kept(q) if len(q) <= 256 else _read_query(q)


def _read_query(q: str) -> _Query:
    words = _fold_words(q, True)
    return _Query(words, tuple(_cuts(w) for w in words), bool(words) and words[-1].ends[-1] == len(q))


_query_kept = lru_cache(maxsize=4096)(_read_query)


# ---------------------------------------------------------------------------------------------
# the readings of each typed word, and the best reading of the query

# costs: what the search would think of a reading; one that accounts for a word always beats one
# that leaves it out
EXACT, ALIAS_WHOLE, PREFIX, ALIAS_PREFIX, SLIP, SLIP_EDIT, PREFIX_SLIP = 0.0, 0.6, 1.0, 1.5, 3.0, 0.5, 3.5
RESPACE = 0.2            # per extra word of a glued or respaced reading
LEFT_OUT = 10.0          # per word left out, plus a little per letter (a longer piece matched wins)
_BEAM = 64               # sets of registered words kept after each typed word (the cheapest)
# PERF: the work of explaining one hit is bounded (issue 37): a query of 50 one-letter words
# ("kerkstraat 1 amst(rdam (a b  d e f ... w)") has readings for most words in every hit, and the
# walk kept 64 sets of registered words after each: 8-10 ms a hit, 75-107 ms for the highlights of
# ten (the search: 0.1 ms). The walk counts the readings it makes (a look at each word of the hit
# per typed piece, SLIP_WORK per slip measured), the sets it chooses from and each set it
# continues (`_best`); as EXPLAIN_WORK runs out it keeps fewer sets, and past it the words left
# are left out. The public queries and 3,000 messy lines (benchmarks/messy.py) spend at most
# 1,409 on a hit, and all their 23,015 hits at limit 10 are explained the same with it as
# without. NOTE: a unit is not a fixed time (an edit distance measured in Python costs 1-40 us),
# so the bound is the most an ordinary hit costs, times about 1.4: benchmarks/fuzz.py --climb
# --highlight finds tens of ms for ten hits; issue 38 (the engine's own readings) is the fix.
EXPLAIN_WORK = 2000
SLIP_WORK = 10           # a slip measured (an edit distance in Python) counts this much

_PC_SHAPE = re.compile(r"[0-9]{4}[a-z]{2}")

# a reading of one piece: (cost, target, kind, span); a match: (piece, kind, target, span)
_Reading = tuple[float, _Target, str, "tuple[int, int] | None"]
_Match = tuple[_Piece, str, "_Target | None", "tuple[int, int] | None"]


def _within(a: str, b: str, k: int) -> int:
    """The optimal-string-alignment distance of a and b (an adjacent swap is one edit), or
    k + 1 when it is more than k: a band of width 2k + 1, left as soon as a row exceeds k."""
    la, lb = len(a), len(b)
    if abs(la - lb) > k:
        return k + 1
    big = k + 1
    prev2: list[int] = []
    prev = [j if j <= k else big for j in range(lb + 1)]
    for i in range(1, la + 1):
        cur = [big] * (lb + 1)
        if i <= k:
            cur[0] = i
        lo, hi = max(1, i - k), min(lb, i + k)
        ca = a[i - 1]
        best = cur[0] if lo == 1 else big
        for j in range(lo, hi + 1):
            v = prev[j - 1] + (ca != b[j - 1])
            if prev[j] + 1 < v:
                v = prev[j] + 1
            if cur[j - 1] + 1 < v:
                v = cur[j - 1] + 1
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == b[j - 1] and prev2[j - 2] + 1 < v:
                v = prev2[j - 2] + 1
            cur[j] = v if v < big else big
            if cur[j] < best:
                best = cur[j]
        if best > k:
            return big
        prev2, prev = prev, cur
    return prev[lb]


@lru_cache(maxsize=65536)
def _slips(typed: str, word: str, k: int) -> int:
    """The slips from a typed word to a registered one, counted as the engine does (folded or in
    the ij spelling; ei for ij, au for ou and back is one), or k + 1 when more than k."""
    d = _within(typed, word, k)
    if d > 1 and ("y" in typed or "y" in word):
        d = min(d, _within(unfold_ij(typed), unfold_ij(word), k))
    if d > 1:
        for v in sound_variants(typed):
            if v:
                d = min(d, 1 + _within(v, word, k - 1))
    return d


@lru_cache(maxsize=65536)
def _sounds_like(typed: str, word: str) -> int:
    """A typed word of SOUND_MIN+ letters that sounds like a registered one (the engine's sound
    key, words.SOUND_RULES: "agterweg", "ofstraat"), counted as a slip: the registered word's
    length; or, still being typed, like its start ("agterw"): about as many of its letters as
    were typed; else 0."""
    if len(typed) < SOUND_MIN:
        return 0
    key = sound_key(word)
    if sound_key(typed) == key:
        return len(word)
    start, follow = sound_start(typed)
    if not start or not key.startswith(start) or (follow and key[len(start):len(start) + 1] not in follow):
        return 0
    return min(len(typed), len(word) - 1)


def _slip_readings(p: _Piece, hit: _Hit, after: bool, spend: list[int]) -> list[_Reading]:
    """A piece that matches nothing as typed: the registered words it is a slip from (one edit
    in a word of 5+ letters, two in one of 9+ typed 7+ long), or the start of one it is one slip
    from when still being typed (`jerestr`, 4+ letters), or that it sounds like (`agterweg`,
    `agterw`: `_sounds_like`), or a postcode one slip away."""
    out: list[_Reading] = []
    t = p.text
    n = len(t)
    if p.role == _WORD and t.isalpha() and n <= 38:
        ulen = p.typed_len
        for g in hit.targets:
            if not g.name or (g.alias and g.whole_only):
                continue
            pen = g.pens[after]
            gt = g.text
            k = 2 if ulen >= 7 and (ulen >= 9 or len(gt) >= 9) else 1
            if ulen >= 5 and abs(len(gt) - n) <= k + 1:
                spend[0] += SLIP_WORK
                d = _slips(t, gt, k)
                if d <= k:
                    out.append((SLIP + SLIP_EDIT * d + pen, g, "slip", g.span))
                    continue
            found = False
            if n >= 4 and not g.alias and n < len(gt):
                for m in (n, n + 1, n - 1):
                    spend[0] += SLIP_WORK
                    if m < len(gt) and _within(t, gt[:m], 1) == 1:
                        span = None if not g.starts else (g.starts[0], g.ends[m - 1])
                        out.append((PREFIX_SLIP + pen, g, "slip", span))
                        found = True
                        break
            if found:
                continue
            spend[0] += SLIP_WORK
            m = _sounds_like(t, gt)
            if m == len(gt):
                out.append((SLIP + SLIP_EDIT + pen, g, "slip", g.span))
            elif m and not g.alias:
                out.append((PREFIX_SLIP + pen, g, "slip", None if not g.starts else (g.starts[0], g.ends[m - 1])))
    elif _PC_SHAPE.fullmatch(t):
        for g in hit.targets:
            if g.field == "postcode" and _within(t, g.text, 1) == 1:
                out.append((SLIP + SLIP_EDIT, g, "slip", g.span))
    return out


def _readings(p: _Piece, hit: _Hit, after: bool, spend: list[int], typing: bool = False) -> list[_Reading]:
    """Each registered word the piece alone may stand for, the cheapest first (at most 6).

    `typing`: the piece is the end of the text, still being typed: where it is both the start of
    a registered word and an abbreviation of it (`v` for Van, `p` for Pieter), it is the start."""
    found: list[_Reading] = []
    whole_alias = ALIAS_WHOLE + (PREFIX if typing else 0.0)
    t = p.text
    role = p.role
    for g in hit.targets:
        if not g.roles & role:
            continue
        gt = g.text
        if t == gt:
            if g.alias:
                found.append((whole_alias + g.pens[after], g, "alias", g.span))
            else:
                found.append((EXACT + g.pens[after], g, "exact", g.span))
        elif gt.startswith(t):
            if g.alias:
                if not g.whole_only:
                    found.append((ALIAS_PREFIX + g.pens[after], g, "alias", g.span))
            elif g.field != "letter":
                span = None if not g.starts else (g.starts[0], g.ends[len(t) - 1])
                found.append((PREFIX + g.pens[after], g, "prefix", span))
        elif t[-1] == "i" and not g.alias and gt.startswith(t[:-1] + "y"):
            # the i of an ij being typed: the start of the y it folds to (the I of IJssel)
            span = None if not g.starts else (g.starts[0], g.starts[len(t) - 1] + 1)
            found.append((PREFIX + g.pens[after], g, "prefix", span))
    if not found:
        # PERF: slips only for a word that matches nothing as typed, as the engine looks for them
        found = _slip_readings(p, hit, after, spend)
    if len(found) > 1:
        found.sort(key=_first)
    return found[:6]


_first = operator.itemgetter(0)


def _glues(p: _Piece, words: tuple[_Word, ...], j: int, hit: _Hit, after: bool
           ) -> list[tuple[float, int, int, tuple[_Match, ...]]]:
    """Several typed words for one registered word: the piece and the words after it, together
    the word or its start (`kerk straat`, `1012 lg`, `129711 lj`, `d 37`)."""
    out: list[tuple[float, int, int, tuple[_Match, ...]]] = []
    t = p.text
    for g in hit.targets:
        gt = g.text
        if g.alias or not g.roles & p.role or len(gt) <= len(t) or not gt.startswith(t):
            continue
        if g.field == "number" or g.field == "letter":
            continue
        got = t
        pieces = [p]
        k = j
        while k < len(words) and len(got) < len(gt) and gt.startswith(got + words[k].text):
            got += words[k].text
            pieces.append(_piece(words[k], 0, len(words[k].text), _WORD))
            k += 1
        if len(pieces) < 2:
            continue
        ms = []
        done = 0
        for i, x in enumerate(pieces):
            kind = "prefix" if i == len(pieces) - 1 and len(got) < len(gt) else "exact"
            ms.append((x, kind, g, (g.starts[done], g.ends[done + len(x.text) - 1]) if g.starts else None))
            done += len(x.text)
        cost = (EXACT if len(got) == len(gt) else PREFIX) + RESPACE * (len(pieces) - 1) + g.pens[after]
        out.append((cost, len(pieces) - 1, g.mask, tuple(ms)))
    return out


def _splits(p: _Piece, hit: _Hit, after: bool) -> list[_Option]:
    """One typed word for several registered words of a name: `vanaerssenstraat`,
    `sgravenhage`, `hc`; the last possibly still being typed."""
    out = []
    t = p.text
    for run in hit.runs:
        for a in range(len(run) - 1):
            if not t.startswith(run[a].text) or len(t) <= len(run[a].text):
                continue
            rest = t[len(run[a].text):]
            mask = run[a].mask
            b = a + 1
            while b < len(run):
                g = run[b]
                mask |= g.mask
                if g.text.startswith(rest):
                    complete = rest == g.text
                    span = None if not g.starts else (run[a].starts[0], g.ends[len(rest) - 1])
                    cost = (EXACT if complete else PREFIX) + RESPACE * (b - a) + g.pens[after]
                    out.append(_Option(cost, 1, mask, ((p, "exact" if complete else "prefix", g, span),)))
                    break
                if not rest.startswith(g.text) or len(rest) == len(g.text):
                    break
                rest = rest[len(g.text):]
                b += 1
    return out


@dataclass(frozen=True, slots=True)
class _Option:
    cost: float
    ntok: int              # typed words it reads
    mask: int              # registered words it uses
    matches: tuple[_Match, ...]


def _extend(partial: list[tuple[float, int, tuple[_Match, ...]]], p: _Piece, readings: list[_Reading]
            ) -> list[tuple[float, int, tuple[_Match, ...]]]:
    """Every reading so far, continued with each reading of `p` or with `p` left out (the 8
    cheapest)."""
    out = []
    left = LEFT_OUT + 0.1 * len(p.text)
    for cost, mask, ms in partial:
        out.append((cost + left, mask, ms + ((p, "left_out", None, None),)))
        for c, g, kind, span in readings:
            if not g.mask & mask:
                out.append((cost + c, mask | g.mask, ms + ((p, kind, g, span),)))
    if len(out) > 1:
        out.sort(key=_first)
    return out[:8]


def _options(query: _Query, i: int, hit: _Hit, after: bool, spend: list[int]) -> list[_Option]:
    """The readings of typed word i (and of the words after it it may be glued to)."""
    typing = query.typing and i == len(query.words) - 1
    opts: list[_Option] = []
    words = query.words
    for pieces in query.cuts[i]:
        partial: list[tuple[float, int, tuple[_Match, ...]]] = [(0.0, 0, ())]
        for p in pieces[:-1]:
            partial = _extend(partial, p, _readings(p, hit, after, spend))
        last = pieces[-1]
        if i + 1 < len(words):
            for cost, extra, mask, ms in _glues(last, words, i + 1, hit, after):
                opts.extend(_Option(c + cost, 1 + extra, m | mask, pms + ms)
                            for c, m, pms in partial if not m & mask)
        partial = _extend(partial, last, _readings(last, hit, after, spend, typing))
        opts.extend(_Option(c, 1, m, ms) for c, m, ms in partial)
    opts.extend(_splits(query.cuts[i][0][0], hit, after))
    opts.sort(key=_per_word)
    return opts


def _per_word(o: _Option) -> float:
    return o.cost / o.ntok


def _number_at(words: tuple[_Word, ...], number: str) -> int:
    """Where the house number was typed (the word that is it, else the first that starts with
    it), or -1."""
    for i, w in enumerate(words):
        if w.text == number:
            return i
    for i, w in enumerate(words):
        if w.text.startswith(number) and w.text[len(number):len(number) + 1].isalpha():
            return i
    return -1


def _left_out(query: _Query, i: int) -> list[_Option]:
    """Typed word i left out: the only reading of a word once the work budget is spent."""
    p = query.cuts[i][0][0]
    return [_Option(LEFT_OUT + 0.1 * len(p.text), 1, 0, ((p, "left_out", None, None),))]


def _best(options: Callable[[int], tuple[list[_Option], int]], left_out: Callable[[int], list[_Option]],
          n: int, work: int) -> tuple[list[_Option], int]:
    """The reading of the query with the lowest cost whose registered words are all distinct.

    Dynamic programming over the typed words: after each word, the cheapest reading for each
    set of registered words used so far (a set used twice costs more than once, so only the
    cheaper reading of it can be the best), at most _BEAM sets a word (the cheapest).

    `options(i)` gives the readings of typed word i (and of the words after it it may be glued
    to), made as the walk reaches it, and the work they took. PERF: the walk spends at most
    about `work` (besides those, each set continued by a reading counts 1): as it runs out,
    fewer sets are kept, at least one, and once spent each word left has only `left_out(i)`
    (EXPLAIN_WORK). Returns the readings and the work left (below zero: spent)."""
    layers: list[dict[int, tuple[float, tuple[int, int, _Option] | None]]] = [{} for _ in range(n + 1)]
    layers[0][0] = (0.0, None)
    for i in range(n):
        layer = layers[i]
        if not layer:
            continue  # no reading ends here: a glued reading of words before it went past it
        if work > 0:
            opts, took = options(i)
            work -= took
        else:
            opts = left_out(i)
        # the cheapest sets, as many as the work left continues (at least one); choosing them
        # counts one a set
        work -= len(layer)
        beam = min(_BEAM, max(1, work // len(opts)))
        states = sorted(layer.items(), key=_cost_of)[:beam] if len(layer) > beam else layer.items()
        work -= len(states) * len(opts)
        for mask, (cost, _) in states:
            for o in opts:
                j = i + o.ntok
                if o.mask & mask or j > n:
                    continue
                m = mask | o.mask
                c = cost + o.cost
                old = layers[j].get(m)
                if old is None or c < old[0] - 1e-9:
                    layers[j][m] = (c, (i, mask, o))
    mask = min(layers[n].items(), key=_cost_of)[0]
    out = []
    j = n
    while j > 0:
        back = layers[j][mask][1]
        assert back is not None
        j, mask, o = back
        out.append(o)
    out.reverse()
    return out, work


def _cost_of(item: tuple[int, tuple[float, object]]) -> float:
    return item[1][0]


def explain(q: str, hit: Mapping[str, Any], *, aliases: Mapping[str, Iterable[str]] | None = None
            ) -> tuple[WordMatch, ...]:
    """Say how each typed word of `q` matched `hit`, in the order typed.

    Parameters
    ----------
    q : the query as typed.
    hit : one element of the contract's ``"hits"`` list (``components``, ``lines``, ...).
    aliases : the alias table of the index that answered (`aliases_from_manifest`, read once
        per table object: pass the same one each time); the engine's static table when None.

    Returns
    -------
    One `WordMatch` per typed word (a word the hit reads as two parts, ``12a``, gives two),
    in the order of `q`.
    """
    return _explained(q, hit, aliases, EXPLAIN_WORK)[0]


def _explained(q: str, hit: Mapping[str, Any], aliases: Mapping[str, Iterable[str]] | None, work: int
               ) -> tuple[tuple[WordMatch, ...], int]:
    """`explain` with a work budget of `work`; also the work it spent (for benchmarks/fuzz.py)."""
    if not isinstance(q, str):
        raise TypeError(f"q must be a str, not {type(q).__name__}")
    fields, lines = _hit_key(hit)
    h = _hit_targets(fields, lines, _table(aliases))
    query = _query(q)
    words = query.words
    if not words:
        return (), 0
    num_at = _number_at(words, h.number) if h.number else -1
    before = num_at > 0 and any(not w.text[:1].isdigit() for w in words[:num_at])
    out = []
    def options(i: int) -> tuple[list[_Option], int]:
        # the readings of word i take a look at every word of the hit per piece of it, and
        # SLIP_WORK per slip measured
        spend = [len(h.targets) * sum(map(len, query.cuts[i]))]
        return _options(query, i, h, before and i > num_at, spend), spend[0]

    readings, left = _best(options, lambda i: _left_out(query, i), len(words), work)
    for o in readings:
        for p, kind, g, span in o.matches:
            typed = q[p.start:p.end]
            if g is None:
                out.append(WordMatch(typed, p.start, p.end, "left_out", None, None, None))
            else:
                out.append(WordMatch(typed, p.start, p.end, kind, g.field,  # type: ignore[arg-type]
                                     g.line if span is not None else None, span))
    out.sort(key=_position)
    return tuple(out), work - left


def _position(m: WordMatch) -> int:
    return m.start


def highlights(q: str, hit: Mapping[str, Any], *, aliases: Mapping[str, Iterable[str]] | None = None
               ) -> list[list[tuple[int, int]]]:
    """Return, per line of ``hit["lines"]``, the sorted and merged (start, end) code-point spans
    of the text the typed words matched: what a suggestion list shows in bold."""
    matches = explain(q, hit, aliases=aliases)
    out: list[list[tuple[int, int]]] = [[] for _ in hit["lines"]]
    for m in matches:
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
