"""Fold text the way the index and the query parser both see it.

One table, built once from `unicodedata`, maps every code point below ``FOLD_LIMIT`` to a short
ASCII string: lower case, diacritics removed, ligatures spelt out, anything that is not a letter
or digit turned into a separator. The compiled query path (`_core.pyx`) gets the very same table
through :func:`fold_table`, so Python and C fold identically. After mapping:

* ``ij`` becomes ``y`` (Dutch writes both: ``Rijnstraat``/``Rynstraat``, ``IJsselmonde``);
* a letter followed by a digit is split (``kerkstraat12`` -> ``kerkstraat 12``), while a digit
  followed by letters stays one token (``12a``, ``1e``, ``1012lg``): the parser decides what
  such a token means.
"""

from __future__ import annotations

import unicodedata

FOLD_LIMIT = 0x2500  # code points at or above this fold to a separator

_SPECIAL = {
    "ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o", "Ø": "o",
    "đ": "d", "Đ": "d", "ł": "l", "Ł": "l", "þ": "th", "Þ": "th", "ı": "i", "ĳ": "ij", "Ĳ": "ij",
}


def _fold_char(cp: int) -> str:
    ch = chr(cp)
    if ch in _SPECIAL:
        return _SPECIAL[ch]
    decomposed = unicodedata.normalize("NFKD", ch)
    out = "".join(c for c in decomposed.lower() if ("a" <= c <= "z") or ("0" <= c <= "9"))
    # NOTE: a character that decomposes into something mixed (e.g. '½' -> '1⁄2') keeps only its
    # letters and digits; one that keeps nothing is a separator.
    return out if out else " "


_TABLE: list[str] = [_fold_char(cp) for cp in range(FOLD_LIMIT)]


def fold_table() -> list[str]:
    """Return the per-code-point fold table (index = code point, value = ASCII replacement)."""
    return _TABLE


def fold(text: str) -> str:
    """Fold `text` to lower-case ASCII words separated by single spaces."""
    mapped = "".join(_TABLE[ord(c)] if ord(c) < FOLD_LIMIT else " " for c in text)
    mapped = mapped.replace("ij", "y")
    out = []
    prev = " "
    for c in mapped:
        if c.isdigit() and prev.isalpha():
            out.append(" ")
        out.append(c)
        prev = c
    return " ".join("".join(out).split())


def tokens(text: str) -> list[str]:
    """Split `text` into folded tokens."""
    return fold(text).split()
