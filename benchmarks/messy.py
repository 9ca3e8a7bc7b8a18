"""Messy address lines made from the register, as a data-cleaning job meets them (issue 12).

`messy_rows(source, n, seed)` reads the register (a `;`-separated CSV, .zst/.gz/plain),
streaming, keeps every k-th row so that n rows come out spread over the whole country, and
writes each as a person or a form would have: a clean line, lower or upper case, a slip of a
key in the street, the place left out, the postcode in another form or alone with the number,
the parts in another order; a few texts are invalid (empty, only punctuation, too long).
Nothing is stored: the benchmark and the tests make their file at run time.

    python benchmarks/messy.py ../shared/data/nl-addresses.csv.zst 1000000 /tmp/messy.csv.zst
"""

from __future__ import annotations

import csv
import gzip
import io
import random
import sys
from collections.abc import Iterator
from pathlib import Path

REGISTER_ROWS = 9_140_077      # rows of nl-addresses.csv.zst (../shared/data/README.md)


def _open_text(path: Path, mode: str = "r"):
    if path.suffix == ".zst":
        import zstandard

        if mode == "r":
            return io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(open(path, "rb")),
                                    encoding="utf-8", newline="")
        return io.TextIOWrapper(zstandard.ZstdCompressor(level=3).stream_writer(open(path, "wb")),
                                encoding="utf-8", newline="")
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8", newline="")
    return open(path, mode, encoding="utf-8", newline="")


def _slip(word: str, rng: random.Random) -> str:
    """One edit in a word of 5+ letters: a letter dropped, doubled, swapped or replaced."""
    if len(word) < 5:
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return word[:i] + word[i + 1:]
    if kind == 1:
        return word[:i] + word[i] + word[i:]
    if kind == 2:
        return word[:i - 1] + word[i] + word[i - 1] + word[i + 1:]
    return word[:i] + rng.choice("aeiourstnl") + word[i + 1:]


def messy_text(row: dict, rng: random.Random) -> str:
    """One messy line for one register row."""
    number = row["huisnummer"] + row["huisletter"]
    if row["huisnummertoevoeging"]:
        number += "-" + row["huisnummertoevoeging"]
    street, place, pc = row["straat"], row["woonplaats"], row["postcode"]
    r = rng.random()
    for share, form in _FORMS:
        if r < share:
            return form(street, number, place, pc, rng)
    return f"{street}{number}{place}".lower()


def _slipped(street: str, number: str, place: str, rng: random.Random) -> str:
    words = street.split()
    k = max(range(len(words)), key=lambda j: len(words[j]))
    words[k] = _slip(words[k], rng)
    return f"{' '.join(words)} {number} {place}"


# (cumulative share, form): the forms a line takes, how often; the rest is glued together
_FORMS = (
    (0.20, lambda s, n, p, pc, rng: f"{s} {n}, {pc[:4]} {pc[4:]} {p}"),
    (0.32, lambda s, n, p, pc, rng: f"{s} {n} {p}".lower()),
    (0.40, lambda s, n, p, pc, rng: f"{s} {n} {p}".upper()),
    (0.55, lambda s, n, p, pc, rng: _slipped(s, n, p, rng)),
    (0.67, lambda s, n, p, pc, rng: f"{s} {n}"),                       # no place
    (0.77, lambda s, n, p, pc, rng: f"{pc.lower()} {n}"),
    (0.85, lambda s, n, p, pc, rng: f"{pc[:4]} {pc[4:]}, {n}"),
    (0.93, lambda s, n, p, pc, rng: f"{p}, {s} {n}"),
    (0.97, lambda s, n, p, pc, rng: f"{s.lower()} {n} {pc}"),
    (0.98, lambda s, n, p, pc, rng: rng.choice(["", "   ", "-", "n/a"])),   # empty
    (0.99, lambda s, n, p, pc, rng: f"{s} {n} {p} " * 8),               # > 128 characters
)


def messy_rows(source: str | Path, n: int, seed: int = 12,
               rows: int = REGISTER_ROWS) -> Iterator[tuple[str, str]]:
    """(id, text) for n of the `rows` rows of `source`, every k-th row, streamed."""
    rng = random.Random(seed)
    step = max(1, rows // n)
    made = 0
    while made < n:
        with _open_text(Path(source)) as f:
            reader = csv.reader(f, delimiter=";")
            names = next(reader)
            for k, fields in enumerate(reader):
                if k % step:
                    continue
                yield str(made), messy_text(dict(zip(names, fields, strict=False)), rng)
                made += 1
                if made == n:
                    return
        step = 1                      # a small register: go round again, row by row


def write_messy(source: str | Path, n: int, out: str | Path, seed: int = 12) -> Path:
    """Write n messy lines to the CSV `out` (columns id, address; .zst/.gz compressed)."""
    out = Path(out)
    with _open_text(out, "w") as f:
        w = csv.writer(f)
        w.writerow(["id", "address"])
        w.writerows(messy_rows(source, n, seed))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(write_messy(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
