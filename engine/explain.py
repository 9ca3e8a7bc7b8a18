"""How a hit matched what was typed: for each typed word, exact, prefix, alias, slip or left out.

    >>> from engine.explain import explain, highlights, match_score
    >>> hit = index.suggest("burg de withstr 1", limit=1)[0]
    >>> explain(index, "burg de withstr 1", hit)      # one WordMatch per typed word (index.explain(hit))
    >>> highlights(index, "burg de withstr 1", hit)   # per line, the spans to show bold
    >>> match_score(explain(index, "burg de withstr 1", hit))

The search says it itself (engine/_explain.pxi): the query is searched again, and the reading
that found the hit says which typed word took which word of the hit and through which of the
word's ranges: the token as typed (``exact``), its start (``prefix``: a word still being typed),
another spelling of it (``alias``: an abbreviation, an everyday name, ``2e`` for Tweede), a token
within its slips (``slip``), or none (``left_out``: a floor, ``achterhuis``, a part of town, a
stray word). A typed word read as two parts (``12a``: the number and the letter) is two
`WordMatch`es; a typed word that says the hit's province or country, which the search reads as
no name, is said to match it. Nothing here decides whether a word matches: the rules are the
search's own, so an explanation cannot disagree with the answer. Each span points at the
registered spelling in the hit's ``lines`` (``afkelansdijk`` marks ``Afkelânsdyk``, ``ys`` the
``IJs`` of ``IJsselstraat``).

A hit the query did not find (an address of the index asked about) is explained under the
interpretation of the query's last reading that matches it best; its words are left out when
none does. The highlights of a whole answer come with it, cheaper: ``suggest_json(q,
highlight=True)`` (the service's ``highlight=true``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ._core import _explain_address

if TYPE_CHECKING:
    from . import AddressIndex
    from .hits import Hit

__all__ = ["MatchKind", "Field", "WordMatch", "explain", "highlights", "match_score"]

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
    line: int | None               # index into the hit's lines showing the matched text, or None
    span: tuple[int, int] | None   # code-point offsets into that line: the whole registered
                                   # word (exact, alias, slip), the leading part matched (prefix)


def _address(hit: Hit | int) -> int:
    address = getattr(hit, "address_id", hit)
    if not isinstance(address, int) or isinstance(address, bool):
        raise TypeError(f"hit must be an engine.Hit or an address id, not {type(hit).__name__}")
    return address


def _check_q(q: object) -> str:
    if not isinstance(q, str):
        raise TypeError(f"q must be a str, not {type(q).__name__}")
    return q


def explain(index: AddressIndex, q: str, hit: Hit | int) -> tuple[WordMatch, ...]:
    """Say how each typed word of `q` matched `hit`, in the order typed.

    Parameters
    ----------
    index : the index that answered.
    q : the query as typed (`engine.QueryError` as a search of it: at most 128 characters).
    hit : a hit of `index` (`engine.Hit`: ``index.suggest(q)``), or an address id of it.

    Returns
    -------
    One `WordMatch` per typed word (a word the hit reads as two parts, ``12a``, gives two),
    in the order of `q`; none for a query of no words.
    """
    pieces, _ = _explain_address(index, _check_q(q), _address(hit))
    return tuple(WordMatch(q[start:end], start, end, kind, field, line, span)  # type: ignore[arg-type]
                 for start, end, kind, field, line, span in pieces)


def highlights(index: AddressIndex, q: str, hit: Hit | int) -> list[list[tuple[int, int]]]:
    """Return, per line of the hit's ``lines``, the sorted and merged (start, end) code-point
    spans of the text the typed words matched: what a suggestion list shows in bold (the
    ``highlights`` of ``suggest_json(q, highlight=True)``)."""
    return _explain_address(index, _check_q(q), _address(hit))[1]


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
