"""A column of texts held as codes: the text columns of the register's tables.

    col = TextColumn.of(["A", "", "A"])     # codes [0, 1, 0], values ["A", ""]
    col[2], len(col), col.take(rows), TextColumn.concat([col, other])

The letters, additions and postcodes of the nummeraanduidingen and the names of the streets and
woonplaatsen (`engine.ingest.lvbag.Columns`) are read from an extract or a delivery, kept in the
register's state (`engine.ingest.register`), and joined into addresses (`engine.ingest.lvbag.join`)
as these columns: the code of each record's text (int32) and the distinct texts.

PERF: the whole country's state holds 9 million nummeraanduidingen: as lists of str its three
text columns took 3 CPU s to make when the state was read, had to be coded again to be written,
and every join looked each postcode up in a dict; as codes they are read and written as they
are stored, and a join reads them as integers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TextColumn"]


class TextColumn:
    """A column of texts: the code of each record (`codes`, int32) into the distinct texts
    (`values`, each once; a value no record uses may be among them)."""

    __slots__ = ("codes", "values")

    def __init__(self, codes: np.ndarray, values: list[str]) -> None:
        self.codes = codes
        self.values = values

    @classmethod
    def of(cls, texts: list[str]) -> TextColumn:
        """The column of `texts`, its values in the order first met."""
        seen: dict[str, int] = {}
        codes = np.fromiter((seen.setdefault(v, len(seen)) for v in texts), dtype=np.int32, count=len(texts))
        return cls(codes, list(seen))

    @classmethod
    def concat(cls, parts: list[TextColumn]) -> TextColumn:
        """The records of `parts`, one after the other; their values merged (first met first)."""
        seen: dict[str, int] = {}
        codes = []
        for p in parts:
            remap = np.fromiter((seen.setdefault(v, len(seen)) for v in p.values), dtype=np.int32,
                                count=len(p.values))
            codes.append(remap[p.codes])
        return cls(np.concatenate(codes) if codes else np.zeros(0, np.int32), list(seen))

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: int) -> str:
        """The text of record `i`."""
        return self.values[self.codes[i]]

    def __repr__(self) -> str:
        return f"TextColumn({len(self.codes):,} records, {len(self.values):,} values)"

    def tolist(self) -> list[str]:
        """The text of each record."""
        return np.array(self.values, dtype=object)[self.codes].tolist() if len(self.codes) else []

    def take(self, rows: np.ndarray) -> TextColumn:
        """Records `rows` (indices, in that order); the values shared."""
        return TextColumn(self.codes[rows], self.values)

    def distinct(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """(code of each of records `rows` among the texts they hold, those texts, each once).

        PERF: `np.unique(codes[rows], return_inverse=True)` without its sort: the codes are
        below len(values)."""
        codes = self.codes[rows]
        present = np.zeros(len(self.values), dtype=bool)
        present[codes] = True
        renumber = np.cumsum(present, dtype=np.int64) - 1
        return renumber[codes], [self.values[i] for i in np.flatnonzero(present).tolist()]

    def compact(self) -> TextColumn:
        """The same texts with only the values a record uses (in their order)."""
        codes, values = self.distinct(slice(None))
        return TextColumn(codes.astype(np.int32), values)

    def check(self) -> None:
        """ValueError unless every code names a value."""
        if len(self.codes) and (self.codes.min() < 0 or self.codes.max() >= len(self.values)):
            raise ValueError("a text column's codes do not fit its values")
