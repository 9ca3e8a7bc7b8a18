"""Typed hits: what `AddressIndex.suggest` returns, one `Hit` per address found.

    >>> hit = index.suggest("damrak 1 amsterdam", limit=1)[0]
    >>> hit.street, hit.number, hit.postcode, hit.locality
    ('Damrak', 1, '1012 LG', 'Amsterdam')
    >>> hit.to_json()          # the hit's object of the HTTP contract, as suggest_json writes it
    b'{"components":[{"type":"NLD_PUBLIC_SPACE","value":"Damrak"},...'

A hit is a frozen `msgspec.Struct`: immutable, hashable, picklable, compared field by field.
PERF: of the three types the issue allows, it is the cheapest to make; for a hit's 14 fields
(Python 3.11, one core, best of 5 x 200,000):

    msgspec.Struct(frozen=True)         84 ns to make, 57 ns to read 4 fields
    typing.NamedTuple                  260 ns               98 ns
    dataclass(frozen=True, slots=True) 1243 ns               54 ns
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from ._core import _address_fields

if TYPE_CHECKING:
    from . import AddressIndex

__all__ = ["Hit"]


class Hit(msgspec.Struct, frozen=True, gc=False):
    """One address found for a query.

    Attributes
    ----------
    street, number, letter, addition
        The street as registered, the house number, its letter ("" when none) and addition
        ("" when none), as the register writes them.
    postcode
        ``"1012 LG"``: four digits, a space, two capitals.
    locality, municipality, province
        The place (woonplaats), the municipality and the province, as registered.
    latitude, longitude
        WGS84 degrees of the address point, to 6 decimals.
    score
        The engine's ranking score: higher is better; hits are returned best first. A query
        whose every typed part names the address whole scores about 0 or more; a word only
        started costs 1 or more, a slip of a key 1.6 or more (`engine/params.py`). Compare it
        between hits of one query; across queries it is a rough guide only.
    found
        How the search found it: ``"typed"`` (every word read as typed, whole or as the start
        of a word), ``"slip"`` (with a slip of a key in some word), ``"retry"`` (only once
        retried: words respaced or left out, the nearest house numbers, a slip in the
        postcode).
    query
        The text that was asked.
    address_id
        The row of the address in this index (`AddressIndex.hit`); another build of the index
        numbers its rows differently.
    distance
        Of a hit of `AddressIndex.reverse` only: its distance from the point in metres, to a
        tenth (the ``distance`` of the reverse endpoint's hits); None for every other hit.
    """

    street: str
    number: int
    letter: str
    addition: str
    postcode: str
    locality: str
    municipality: str
    province: str
    latitude: float
    longitude: float
    score: float
    found: str
    query: str
    address_id: int
    distance: float | None = None

    @property
    def lines(self) -> tuple[str, str, str]:
        """The address on three lines, as the contract's ``lines``: street and number,
        postcode and place, country."""
        number = f"{self.number}{self.letter}" + (f"-{self.addition}" if self.addition else "")
        return (f"{self.street} {number}", f"{self.postcode} {self.locality}", "Nederland")

    def to_json(self) -> bytes:
        """The hit's JSON object of the HTTP contract, byte for byte the one
        `AddressIndex.suggest_json` writes for this address (with the ``distance`` the reverse
        endpoint adds, for a hit of `AddressIndex.reverse`)."""
        s = _json_str
        parts = [b'{"components":[{"type":"NLD_PUBLIC_SPACE","value":', s(self.street),
                 b'},{"type":"NLD_HOUSE_NUMBER","value":', str(self.number).encode(), b"},"]
        if self.letter:
            parts += [b'{"type":"NLD_HOUSE_LETTER","value":', s(self.letter), b"},"]
        if self.addition:
            parts += [b'{"type":"NLD_HOUSE_NUMBER_ADDITION","value":', s(self.addition), b"},"]
        line1, line2, _ = self.lines
        parts += [b'{"type":"NLD_POSTAL_CODE","value":', s(self.postcode),
                  b'},{"type":"NLD_LOCALITY","value":', s(self.locality),
                  b'},{"type":"NLD_MUNICIPALITY","value":', s(self.municipality),
                  b'},{"type":"NLD_PROVINCE","value":', s(self.province),
                  b'},{"type":"NLD_COUNTRY","value":"Nederland"}],"country":"NLD","lines":[',
                  s(line1), b",", s(line2), b',"Nederland"],"location":{"latitude":',
                  f"{self.latitude:.6f}".encode(), b',"longitude":', f"{self.longitude:.6f}".encode(),
                  b"}"]
        if self.distance is not None:
            parts.append(f',"distance":{self.distance:.1f}'.encode())
        parts.append(b"}")
        return b"".join(parts)

    def _with_distance(self, metres: float) -> Hit:
        """This hit with its `distance` (for `AddressIndex.reverse`)."""
        return msgspec.structs.replace(self, distance=metres)

    def to_dict(self) -> dict[str, Any]:
        """The hit's JSON object of the HTTP contract as Python objects."""
        result: dict[str, Any] = orjson.loads(self.to_json())
        return result


def _json_str(text: str) -> bytes:
    # orjson escapes as the index build stored the names (engine/ingest/build.py `_json_str`)
    return orjson.dumps(text)


def make_hits(index: AddressIndex, q: str, scored: list[tuple[int, float]], found: str) -> list[Hit]:
    """A Hit for each (address id, score) of a search of q."""
    return [Hit(*_address_fields(index, a), score, found, q, a) for a, score in scored]
