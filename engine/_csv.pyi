"""Type stub for the compiled streaming CSV parser (engine/_csv.pyx)."""

from typing import Any, Final

from typing_extensions import disjoint_base

REQUIRED_COLUMNS: Final[tuple[str, ...]]
OPTIONAL_COLUMNS: Final[tuple[str, ...]]
MAX_ERRORS: Final[int]

class HeaderError(ValueError):
    """The header line is missing, unreadable or lacks a required column."""

@disjoint_base
class Parser:
    """Feed the bytes of a CSV file with `feed`, then call `finish` once."""

    @property
    def lines(self) -> int:
        """Physical lines completed so far (the header is line 1)."""
    @property
    def columns(self) -> list[str] | None:
        """Header names (stripped), once the header line has been read."""
    @property
    def rows_in(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    def __init__(self) -> None: ...
    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Parse every line completed by `data`; keep the unfinished tail.

        Raises HeaderError when the header line lacks a required column.
        """
    def finish(self) -> dict[str, Any]:
        """Parse a last line without newline and return the ParsedTable fields
        that come from the content: rows_in, rejected, errors, the numpy
        columns (street, locality, municipality, province, number, letter,
        addition, postcode, lat, lon, line, former_municipality) and the string
        lists (streets, localities, municipalities, provinces, additions,
        former_municipalities: "" first, for none).

        Raises HeaderError when no header line was seen.
        """

def _split_header(line: str) -> list[str]: ...
