"""The words of an address: tokens, abbreviations and everyday names, for the index builder.

Everything here runs at build time. A street or place becomes a list of `Entry` tokens; besides
the folded words of the registered name it carries *aliases* (the other spelling of an
abbreviation, two words glued together, an everyday place name, the name of a former
municipality) so that a person who types either form finds it. An alias never counts against a
street the person did not type in full: it names, in `cover`, the real street words it stands
for.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ._core import BITS
from .normalize import fold, tokens
from .words import ORDINALS

# Token kinds stored per group token (uint8; defined in _core.pxd). ALIAS is a flag on top of a
# kind; KIND masks it off.
STREET, LOCALITY, MUNICIPALITY = BITS["K_STREET"], BITS["K_LOCALITY"], BITS["K_MUNICIPALITY"]
ALIAS, KIND = BITS["K_ALIAS"], BITS["K_KIND"]

# Abbreviations as the register writes them, with their expansions. Both directions are indexed:
# a street registered with either form is found by either. Folded forms (`ij` is `y`).
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "burg": ("burgemeester",),
    "st": ("sint",),
    "mr": ("meester",),
    "dr": ("dokter", "doctor"),
    "drs": ("doctorandus",),
    "prof": ("professor",),
    "pr": ("prins", "prinses"),
    "kon": ("koning", "koningin"),
    "gen": ("generaal",),
    "weth": ("wethouder",),
    "mgr": ("monseigneur",),
    "ir": ("ingenieur",),
    "ing": ("ingenieur",),
    "jhr": ("jonkheer",),
    "ds": ("dominee",),
    "past": ("pastoor",),
    "gebr": ("gebroeders",),
    "hert": ("hertog", "hertogin"),
    "zr": ("zuster",),
    "min": ("minister",),
    "mevr": ("mevrouw",),
    "mw": ("mevrouw",),
    "secr": ("secretaris",),
    "kard": ("kardinaal",),
    "v": ("van",),
    "nwe": ("nieuwe",),   # people write Nwe Binnenweg; the register never does
    "nw": ("nieuw", "nieuwe"),
}

# Short forms people type for a registered word, one way only: the register also writes "OZ"
# for oostzijde ("Mussel-A-kanaal OZ"), which must not answer to "oudezijds".
SHORT_FORMS: dict[str, tuple[str, ...]] = {
    # Amsterdam's OZ and NZ Voorburgwal, Achterburgwal, Kolk: as the city writes them on signs
    "oudezyds": ("oz",),
    "nieuwezyds": ("nz",),
}

# A place's name whose last word has at most GLUED_LAST_LEN letters ("Afferden L") is also a
# token glued ("afferdenl"), as people type it. (Not a name that starts with a short word:
# "denhelder" as a token would put all of Den Helder in the range of every "den" typed.)
GLUED_LAST_LEN = 2

# Everyday names of places whose registered name people rarely type.
PLACE_ALIASES: dict[str, tuple[str, ...]] = {
    "'s-Gravenhage": ("Den Haag", "The Hague"),
    "'s-Hertogenbosch": ("Den Bosch",),   # not Bois-le-Duc: "leden" (Leiden, a slip) read as le + den
    "Amsterdam": ("Adam",),      # typed A'dam: the query glues a lone letter to the word
    "Rotterdam": ("Rdam",),
    "Dordrecht": ("Dordt",),
    # the names visitors from abroad use
    "Vlissingen": ("Flushing",),
    "Hoek van Holland": ("Hook of Holland",),
    "Nijmegen": ("Nimwegen",),
    # Friesland: the Frisian name of a place registered in Dutch ...
    "Leeuwarden": ("Ljouwert",),
    "Sneek": ("Snits",),
    "Heerenveen": ("It Hearrenfean",),
    "Harlingen": ("Harns",),
    "Franeker": ("Frjentsjer",),
    "Bolsward": ("Boalsert",),
    "Joure": ("De Jouwer",),
    "Workum": ("Warkum",),
    "Hindeloopen": ("Hylpen",),
    "Stavoren": ("Starum",),
    "IJlst": ("Drylts",),
    "Sloten": ("Sleat",),
    # ... and the Dutch name of a place registered in Frisian (the register's name since the
    # municipality made the Frisian one official)
    "Aldtsjerk": ("Oudkerk",),
    "Burgum": ("Bergum",),
    "Earnewâld": ("Eernewoude",),
    "Eastermar": ("Oostermeer",),
    "Garyp": ("Garijp",),
    "Gytsjerk": ("Giekerk",),
    "Hurdegaryp": ("Hardegarijp",),
    "Jistrum": ("Eestrum",),
    "Mûnein": ("Molenend",),
    "Noardburgum": ("Noordbergum",),
    "Oentsjerk": ("Oenkerk",),
    "Ryptsjerk": ("Rijperkerk",),
    "Sumar": ("Suameer",),
    "Suwâld": ("Suawoude",),
    "Tytsjerk": ("Tietjerk",),
    "Wyns": ("Wijns",),
    "Broeksterwâld": ("Broeksterwoude",),
    "Damwâld": ("Damwoude",),
    "De Westereen": ("Zwaagwesteinde",),
    "Feanwâlden": ("Veenwouden",),
    "Readtsjerk": ("Roodkerk",),
    "Rinsumageast": ("Rinsumageest",),
    "Sibrandahûs": ("Sibrandahuis",),
    "Wâlterswâld": ("Wouterswoude",),
    "Grou": ("Grouw",),
    "Wergea": ("Warga",),
    "Jirnsum": ("Irnsum",),
    "Reduzum": ("Roordahuizum",),
    "Eagum": ("Aegum",),
    "Easterlittens": ("Oosterlittens",),
    "Koarnjum": ("Cornjum",),
    "Easterein": ("Oosterend",),
    "Easterwierrum": ("Oosterwierum",),
    "Boazum": ("Bozum",),
    "Dearsum": ("Deersum",),
    "Raerd": ("Rauwerd",),
    "Reahûs": ("Roodhuis",),
    "Tersoal": ("Terzool",),
    "Lytsewierrum": ("Lutkewierum",),
    "Sibrandabuorren": ("Sijbrandaburen",),
    "Burdaard": ("Birdaard",),
    "Ferwert": ("Ferwerd",),
    "Easternijtsjerk": ("Oosternijkerk",),
    "Feankleaster": ("Veenklooster",),
    "Westergeast": ("Westergeest",),
    "Aldwâld": ("Oudwoude",),
    "Sweagerbosk": ("Zwagerbosch",),
    "Eanjum": ("Anjum",),
    "Eastrum": ("Oostrum",),
    "Wânswert": ("Wanswerd",),
    "Ljussens": ("Lioessens",),
    "Boarnwert": ("Bornwerd",),
    "Berltsum": ("Berlikum",),
    "Bitgum": ("Beetgum",),
    "Bitgummole": ("Beetgumermolen",),
    "Dronryp": ("Dronrijp",),
    "Wjelsryp": ("Welsrijp",),
    "Aldeboarn": ("Oldeboorn",),
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One token of a group: its text, kind (with ALIAS flag) and the street words it covers."""

    text: str
    kind: int
    cover: int = 0  # bit i set: this token accounts for the i-th real street word


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(c in it for c in short)


def derive_abbreviations(streets: list[str], min_count: int = 2) -> dict[str, set[str]]:
    """Find abbreviation pairs the register itself shows: `Burg. X` next to `Burgemeester X`.

    A pair (abbr, word) is kept when at least `min_count` street names exist in both forms, the
    abbreviation was written with a dot, and its letters occur in order in the word.
    """
    abbreviated: dict[str, set[str]] = {}
    for s in streets:
        for m in re.finditer(r"(?<![\w.])([A-Za-z]{1,5})\.", s):
            rest = fold(s[: m.start()] + " " + s[m.end():])
            abbreviated.setdefault(rest, set()).add(fold(m.group(1)))
    counts: Counter[tuple[str, str]] = Counter()
    for s in streets:
        words = tokens(s)
        for i, w in enumerate(words):
            if len(w) < 3 or not w.isalpha():
                continue
            rest = " ".join(words[:i] + words[i + 1:])
            for abbr in abbreviated.get(rest, ()):
                if abbr != w and abbr[0] == w[0] and len(abbr) < len(w) and _is_subsequence(abbr, w):
                    counts[abbr, w] += 1
    found: dict[str, set[str]] = {}
    for (abbr, word), n in counts.items():
        if n >= min_count:
            found.setdefault(abbr, set()).add(word)
    return found


class Vocabulary:
    """Turn registered names into token entries, with the alias table fixed at construction."""

    def __init__(self, derived: dict[str, set[str]] | None = None):
        pairs: dict[str, set[str]] = {}
        for abbr, words in ABBREVIATIONS.items():
            pairs.setdefault(abbr, set()).update(words)
        for abbr, words in (derived or {}).items():
            pairs.setdefault(abbr, set()).update(words)
        self.expansions: dict[str, tuple[str, ...]] = {}
        for abbr, words in pairs.items():
            for w in sorted(words):  # a set: sorted, so that every build is the same
                self.expansions.setdefault(abbr, ())
                self.expansions[abbr] += (w,)
                # the other direction: a registered full word also answers to its abbreviation
                self.expansions.setdefault(w, ())
                self.expansions[w] += (abbr,)
        for word, short in SHORT_FORMS.items():
            self.expansions[word] = self.expansions.get(word, ()) + short
        for spellings in ORDINALS:
            # every spelling of an ordinal answers to every other (`2de` finds a `Tweede ...` street)
            for w in spellings:
                self.expansions[w] = self.expansions.get(w, ()) + tuple(x for x in spellings if x != w)
        self.place_aliases = {k: tuple(fold(v) for v in vs) for k, vs in PLACE_ALIASES.items()}
        self._cache: dict[tuple[str, int], list[Entry]] = {}

    def entries(self, name: str, kind: int) -> list[Entry]:
        """Return the token entries of one registered name (cached per name and kind)."""
        key = (name, kind)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        words = tokens(name)
        street = kind == STREET
        out: list[Entry] = []
        for i, w in enumerate(words):
            bit = (1 << i) if street and i < 63 else 0
            out.append(Entry(w, kind, bit))
            for alt in self.expansions.get(w, ()):
                out.append(Entry(alt, kind | ALIAS, bit))
            if w.endswith("str") and len(w) > 4:
                out.append(Entry(w + "aat", kind | ALIAS, bit))
        # glued forms: 's gravenhage -> sgravenhage, h c pootstraat -> hc, 't hofje -> thofje
        for i in range(len(words) - 1):
            if len(words[i]) == 1:
                bits = ((1 << i) | (1 << (i + 1))) if street and i < 62 else 0
                out.append(Entry(words[i] + words[i + 1], kind | ALIAS, bits))
            elif words[i] == "van" and words[i + 1] in ("de", "der", "den"):
                # "van der" written vd ("jan vd heijdenstraat"), as v.d. is
                bits = ((1 << i) | (1 << (i + 1))) if street and i < 62 else 0
                out.append(Entry("vd", kind | ALIAS, bits))
        if kind == LOCALITY or kind == MUNICIPALITY:
            for alias in self.place_aliases.get(name, ()):
                out.extend(Entry(w, kind | ALIAS, 0) for w in alias.split())
            # a place's name that ends with a word of a letter or two ("Afferden L") is also the
            # name glued, as people type it ("afferdenl"): the search cuts a glued word only
            # into words of two letters or more (`_segment`)
            if len(words) > 1 and len(words[-1]) <= GLUED_LAST_LEN:
                out.append(Entry("".join(words), kind | ALIAS, 0))
        # one entry per distinct (text, kind-without-alias), merging what they cover, except
        # that a word the name holds twice ("Van Hoorn van Burghstraat") stays two entries:
        # the search lets one entry answer one typed word
        merged: dict[tuple[str, int, int], Entry] = {}
        for e in out:
            k = (e.text, e.kind & 0x0F, 0)
            old = merged.get(k)
            if old is None:
                merged[k] = e
            elif not (old.kind & ALIAS) and not (e.kind & ALIAS):
                n = 1
                while (e.text, e.kind & 0x0F, n) in merged:
                    n += 1
                merged[(e.text, e.kind & 0x0F, n)] = e
            else:
                merged[k] = Entry(e.text, old.kind & e.kind, old.cover | e.cover)
        result = list(merged.values())
        self._cache[key] = result
        return result

    def former_entries(self, name: str) -> list[Entry]:
        """The token entries of a former municipality's name (`Nuth`, `Mill en Sint Hubert`),
        an alias of the municipality its places are in now: the entries of the name as a
        municipality's, each an alias; but not its words of one or two letters (`en`, `st`),
        which would let any such word typed name the place ("haaren" cut into "haar en" is no
        Haarlemmerliede en Spaarnwoude). A name of several words is also the name glued, which
        the search reads for two words typed that together start it ("mill en sint hubert":
        "millen sint hubert")."""
        out = [Entry(e.text, e.kind | ALIAS, 0) for e in self.entries(name, MUNICIPALITY) if len(e.text) > 2]
        words = tokens(name)
        if len(words) > 1 and "".join(words) not in {e.text for e in out}:
            out.append(Entry("".join(words), MUNICIPALITY | ALIAS, 0))
        return out
