"""Parse and validate the query string of ``/v1/address`` by the contract's rules.

The service parses the *raw* query string itself (Falcon's parser silently replaces undecodable
bytes and merges repeated parameters, both of which the contract makes a 400).

The rules, in the order they are checked (the first failure is the answer):

1. Parameters are split on ``&`` and ``=``; ``+`` is a space; ``%XX`` is a byte. Names are
   compared after decoding (``%71=x`` is ``q``). Unknown parameters are ignored, whatever they
   hold. A known parameter given twice is ``invalid_parameter``.
2. ``country`` absent, then ``q`` absent: ``missing_parameter``. A parameter written with an
   empty value (``q=``, ``country=``) is present, not missing.
3. ``country`` must be exactly ``NLD`` (ISO 3166-1 alpha-3 codes are upper case; ``nld`` and
   ``NLD `` are not ``NLD``): else ``unsupported_country``.
4. ``q`` empty or blank: a 200 with no hits (the engine's answer). More than 128 code points
   after decoding: ``query_too_long``. C0/C1 control characters (U+0000-U+001F,
   U+007F-U+009F: tab and NUL included) are ``invalid_parameter``: no address holds one and
   they do not belong in logs.
5. ``limit`` absent: 5. Otherwise it must be written the canonical way: ``1`` .. ``10`` in ASCII
   digits, no sign, no leading zero, no spaces, no decimal point or exponent; ``05``, ``+5``,
   `` 5``, ``5.0``, ``1e1`` and ``-0`` are all ``invalid_parameter``.
6. ``highlight`` absent: false. Otherwise exactly ``true`` or ``false`` (``1``, ``True``,
   ``yes``, empty are ``invalid_parameter``). Without it the body is the contract's, byte for
   byte; with ``true`` each hit also holds ``highlights`` (``server.resources``).
7. ``lat`` and ``lon``: both or neither (the absent one is named in the error); each a decimal
   number (``-?digits[.digits][e[+-]digits]``, no ``inf``/``nan``/spaces/``+``) with
   ``-90 <= lat <= 90`` and ``-180 <= lon <= 180``; else ``invalid_parameter``.

8. The area (issue 39): ``municipality``, ``locality``, ``province``, ``postcode`` and ``bbox``,
   each optional, decoded and handed to the engine as written; the engine owns their rules
   (``engine.AddressIndex.area``: names in any case and without diacritics, several separated
   by commas; a postcode area of 4 digits with a letter or two or none; ``bbox`` as
   ``minlon,minlat,maxlon,maxlat``) and its ``QueryError`` is the 400, naming the parameter
   and the value. Without any of them the request is the one before issue 39, byte for byte.

The other questions (issue 39) read their own parameters with the same rules 1-3 and decoding:
``/v1/address/postcode`` (:func:`parse_lookup`: ``postcode`` and ``number`` required,
``letter`` and ``addition`` optional) and ``/v1/address/reverse`` (:func:`parse_reverse`:
``lat`` and ``lon`` required, ``limit`` as rule 5, ``radius`` a decimal number of metres, and
the area of rule 8).

Decoding, for every known parameter: a ``%`` not followed by two hex digits, or bytes that are
not UTF-8, are ``invalid_parameter`` (the contract's "undecodable input").
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

import engine
from server.errors import ApiError

MAX_QUERY_CODE_POINTS = engine.MAX_QUERY_LENGTH   # the engine's limits, not restated here
DEFAULT_LIMIT = engine.DEFAULT_LIMIT
_NAMES = {
    b"country": "country",
    b"q": "q",
    b"limit": "limit",
    b"lat": "lat",
    b"lon": "lon",
    b"highlight": "highlight",
}
#: the area parameters (rule 8), known to ``/v1/address`` and ``/v1/address/reverse``
AREA_PARAMETERS: tuple[str, ...] = engine.AREA_PARAMETERS
_AREA_NAMES = {name.encode(): name for name in AREA_PARAMETERS}
_NAMES.update(_AREA_NAMES)
_LOOKUP_NAMES = {name.encode(): name for name in ("country", "postcode", "number", "letter", "addition")}
_REVERSE_NAMES = {name.encode(): name for name in ("country", "lat", "lon", "limit", "radius")} | _AREA_NAMES
#: house numbers as the register has them: 1 to engine.MAX_HOUSE_NUMBER, canonical digits (rule 5's spelling);
#: 0 for anything else (the engine's rule, read in C)
_house_number = engine.read_house_number
_BOOLEANS = {b"true": True, b"false": False}
_LIMITS = {str(n): n for n in range(1, engine.MAX_LIMIT + 1)}
_RAW_LIMITS = {str(n).encode(): n for n in range(1, engine.MAX_LIMIT + 1)}
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_RANGES = engine.COORDINATE_BOUNDS   # the engine's bounds of lat and lon


class Query(NamedTuple):
    """A valid request for the engine (PERF: a NamedTuple builds 3x faster than a dataclass)."""

    q: str
    limit: int = DEFAULT_LIMIT
    lat: float | None = None
    lon: float | None = None
    highlight: bool = False
    area: dict[str, str] | None = None   # the area parameters given (rule 8), or None


class Lookup(NamedTuple):
    """A valid request of ``/v1/address/postcode``."""

    postcode: str
    number: int
    letter: str | None = None
    addition: str | None = None


class Reverse(NamedTuple):
    """A valid request of ``/v1/address/reverse``."""

    lat: float
    lon: float
    limit: int = DEFAULT_LIMIT
    radius: float | None = None
    area: dict[str, str] | None = None


#: PERF: ``Query(...)`` runs the NamedTuple's Python ``__new__`` (0.2 us); this is the tuple's
#: own, called as ``_new_query(Query, values)``
_new_query = tuple.__new__
read_plain_query = engine.read_plain_query
#: PERF (issue 39): the other questions' plain spellings, read in C as ``read_plain_query``
_read_plain_lookup = engine.read_plain_lookup
_read_plain_reverse = engine.read_plain_reverse


def _invalid(parameter: str, detail: str) -> ApiError:
    return ApiError("invalid_parameter", detail, parameter=parameter)


def _decode(raw: bytes, name: str) -> str:
    """Percent-decode ``raw`` strictly into text (rule "decoding" above)."""
    if b"+" in raw:
        raw = raw.replace(b"+", b" ")
    if b"%" in raw:
        if _BAD_ESCAPE.search(raw):
            raise _invalid(name, f"{name} has a '%' that is not followed by two hex digits")
        raw = unquote_to_bytes(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _invalid(name, f"{name} is not valid UTF-8 after percent-decoding") from None


def split_query(raw: bytes, names: dict[bytes, str] = _NAMES) -> dict[str, bytes]:
    """Return the known parameters (`names`: those of ``/v1/address``) of a raw query string,
    still encoded (rule 1)."""
    found: dict[str, bytes] = {}
    for part in raw.split(b"&"):
        key, _, value = part.partition(b"=")
        name = names.get(key)
        if name is None:
            if b"%" not in key and b"+" not in key:
                continue  # PERF: the common unknown parameter costs one dict lookup
            name = names.get(unquote_to_bytes(key.replace(b"+", b" ")))
            if name is None:
                continue
        if name in found:
            raise _invalid(name, f"{name} is given more than once")
        found[name] = value
    return found


def parse_query(raw: bytes) -> Query:
    """Validate a raw (still percent-encoded) query string; raise the 400 of the contract."""
    # PERF: the spelling of a plain request as the widget (``server/static/widget.js``) and
    # ``urlencode`` write it (``country=NLD&q=...`` and a canonical ``limit`` or none) is read
    # in C (``engine.read_plain_query``: 0.2 instead of 1.2 us in Python); for such a string
    # rules 1-3, 5, 6 and 7 hold by its shape alone. Anything else, and a ``q`` that is too
    # long, not printable or not decodable, takes the general path, which words the 400.
    plain = read_plain_query(raw)
    if plain is not None:
        return _new_query(Query, (*plain, None, None, False, None))
    return _parse_general(raw)


def _parse_general(raw: bytes) -> Query:
    """:func:`parse_query` for any query string: every rule of the module's docstring."""
    found = split_query(raw)

    _country(found)
    q = found.get("q")
    if q is None:
        raise ApiError("missing_parameter", "q is required", parameter="q")
    _check_country(found)

    text = _decode(q, "q")
    if len(text) > MAX_QUERY_CODE_POINTS:
        raise ApiError(
            "query_too_long",
            f"q must be at most {MAX_QUERY_CODE_POINTS} characters",
            parameter="q",
        )
    # PERF: a printable text (the usual one) holds no control character; only others are searched
    if not text.isprintable() and _CONTROL.search(text):
        raise _invalid("q", "q must not contain control characters")

    limit = _limit(found)

    highlight = False
    raw_highlight = found.get("highlight")
    if raw_highlight is not None:
        highlight = _BOOLEANS.get(raw_highlight)
        if highlight is None:
            highlight = _BOOLEANS.get(_decode(raw_highlight, "highlight").encode())
            if highlight is None:
                raise _invalid("highlight", "highlight must be true or false")

    area = _area(found)
    raw_lat, raw_lon = found.get("lat"), found.get("lon")
    if raw_lat is None and raw_lon is None:
        return Query(text, limit, None, None, highlight, area)
    if raw_lat is None or raw_lon is None:
        absent = "lat" if raw_lat is None else "lon"
        raise _invalid(absent, "lat and lon must be given together")
    return Query(text, limit, _coordinate(raw_lat, "lat"), _coordinate(raw_lon, "lon"), highlight, area)


def _country(found: dict[str, bytes]) -> None:
    """Rule 2 for ``country``: present."""
    if found.get("country") is None:
        raise ApiError("missing_parameter", "country is required", parameter="country")


def _check_country(found: dict[str, bytes]) -> None:
    """Rule 3: ``country`` is exactly ``NLD`` (PERF: the plain spelling skips decoding)."""
    country = found["country"]
    if country != b"NLD" and _decode(country, "country") != "NLD":
        raise ApiError("unsupported_country", "only country=NLD is served", parameter="country")


def _limit(found: dict[str, bytes]) -> int:
    """Rule 5."""
    raw_limit = found.get("limit")
    if raw_limit is None:
        return DEFAULT_LIMIT
    limit = _RAW_LIMITS.get(raw_limit) or _LIMITS.get(_decode(raw_limit, "limit"), 0)
    if not limit:
        raise _invalid("limit", "limit must be an integer from 1 to 10")
    return limit


def _area(found: dict[str, bytes]) -> dict[str, str] | None:
    """Rule 8: the area parameters given, decoded (the engine checks them), or None."""
    area = None
    for name in AREA_PARAMETERS:
        raw = found.get(name)
        if raw is not None:
            if area is None:
                area = {}
            area[name] = _decode(raw, name)
    return area


def _required(found: dict[str, bytes], name: str) -> bytes:
    raw = found.get(name)
    if raw is None:
        raise ApiError("missing_parameter", f"{name} is required", parameter=name)
    return raw


def parse_lookup(raw: bytes) -> Lookup:
    """Validate the query string of ``/v1/address/postcode``: ``country``, ``postcode`` and
    ``number`` (1 to ``engine.MAX_HOUSE_NUMBER``, canonical digits), optionally ``letter`` and ``addition``; the
    engine checks the postcode, letter and addition (``engine.AddressIndex.lookup``)."""
    # PERF: the plain spelling (``country=NLD&postcode=..&number=..``, as the widget and
    # ``urlencode`` write it) is read in C (``engine.read_plain_lookup``), as ``parse_query``'s
    plain = _read_plain_lookup(raw)
    if plain is not None:
        return _new_query(Lookup, (*plain, None, None))
    return _lookup_general(raw)


def _lookup_general(raw: bytes) -> Lookup:
    """:func:`parse_lookup` for any query string."""
    found = split_query(raw, _LOOKUP_NAMES)
    _country(found)
    raw_postcode = _required(found, "postcode")
    raw_number = _required(found, "number")
    _check_country(found)
    postcode = _decode(raw_postcode, "postcode")
    number = _house_number(_decode(raw_number, "number").encode())
    if not number:
        raise _invalid("number", f"number must be a house number from 1 to {engine.MAX_HOUSE_NUMBER}")
    letter, addition = found.get("letter"), found.get("addition")
    return Lookup(postcode, number,
                  None if letter is None else _decode(letter, "letter"),
                  None if addition is None else _decode(addition, "addition"))


def parse_reverse(raw: bytes) -> Reverse:
    """Validate the query string of ``/v1/address/reverse``: ``country``, ``lat`` and ``lon``
    (rule 7), optionally ``limit`` (rule 5), ``radius`` (a decimal number of metres above 0)
    and the area (rule 8)."""
    # PERF: the plain spelling (``country=NLD&lat=..&lon=..`` and a canonical ``limit`` or
    # none) is read in C (``engine.read_plain_reverse``), as ``parse_query``'s
    plain = _read_plain_reverse(raw)
    if plain is not None:
        return _new_query(Reverse, (*plain, None, None))
    return _reverse_general(raw)


def _reverse_general(raw: bytes) -> Reverse:
    """:func:`parse_reverse` for any query string."""
    found = split_query(raw, _REVERSE_NAMES)
    _country(found)
    raw_lat = _required(found, "lat")
    raw_lon = _required(found, "lon")
    _check_country(found)
    lat, lon = _coordinate(raw_lat, "lat"), _coordinate(raw_lon, "lon")
    limit = _limit(found)
    radius = None
    raw_radius = found.get("radius")
    if raw_radius is not None:
        text = _decode(raw_radius, "radius")
        radius = float(text) if _NUMBER.match(text) else 0.0
        if not 0 < radius < float("inf"):
            raise _invalid("radius", "radius must be a number of metres above 0")
    return Reverse(lat, lon, limit, radius, _area(found))


def _coordinate(raw: bytes, name: str) -> float:
    text = _decode(raw, name)
    bound = _RANGES[name]
    if _NUMBER.match(text):
        value = float(text)
        if -bound <= value <= bound:
            return value
    raise _invalid(name, f"{name} must be a number from {-bound:g} to {bound:g}")
