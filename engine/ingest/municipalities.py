"""Municipality names and provinces for the official formats, from a reference given at build time.

The BAG names no municipality: the LVBAG extract links each woonplaats to a CBS municipality
code (its `GEM-WPL-RELATIE` file), and PDOK's GeoPackage names only the woonplaats (the code is
a `gemeentecode` column or the first four digits of the nummeraanduiding's identification, the
municipality that issued it). The project ships no table of municipalities: a build of an
official format reads a reference (`python -m engine build --municipalities FILE`; by default
`$ADDRESS_DATA_DIR/nl-addresses.csv.zst`, `ADDRESS_DATA_DIR` defaulting to `../shared/data`),
one of, recognised by its header:

- an address CSV of our layout (`.csv`, `.csv.zst`, `.csv.gz`; the columns `woonplaats`,
  `postcode`, `gemeente` and `provincie` are read). Each address of the source is looked up by
  its (woonplaats, postcode); where the reference does not hold that pair, by its woonplaats
  when only one municipality has a woonplaats of that name (not Hengelo), else by its postcode
  when only one municipality has it. An LVBAG extract names each municipality code by the
  majority of its addresses' look-ups (every address of a code gets that name); a GeoPackage
  takes each address's own look-up, and its code's majority for an address the reference
  cannot place. The province is the one the reference gives the municipality.
- CBS's list of municipalities ("Gemeenten alfabetisch", as CSV: `Gemeentecode` or
  `GemeentecodeGM`, `Gemeentenaam`, `Provincienaam`), read by code.

What the reference cannot place (a code CBS does not list, a code none of whose addresses the
address list knows) is left out as a dangling reference, counted and shown by the build like
every other record left out, and fails the build beyond `--max-bad-share`.

People keep writing the municipality they lived in for years after a merger. An address CSV
says it in its `gemeente_bron` column; for an official format, `MERGERS` is the reference: the
municipalities merged or divided since 2018 (CBS, "Gemeentelijke indelingen"), each with its
CBS code, which begins the identification of every nummeraanduiding it issued, so that an
address issued before the merger is known by its former municipality (`former_name`). The
build makes that name an alias of the municipality the address is in now.
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..files import CHUNK_SIZE, DECOMPRESS_ERRORS, CountingReader, SourceError, compression_of, decompressed

__all__ = ["MERGERS", "Merger", "Municipality", "MunicipalityReference", "default_reference", "former_name",
           "former_names", "load_reference"]

#: The file of the data directory used when no reference is given.
DEFAULT_FILE = "nl-addresses.csv.zst"
_ADDRESS_COLUMNS = ("woonplaats", "postcode", "gemeente", "provincie")
_HOW = ("give one with --municipalities FILE (an address CSV of our layout such as nl-addresses.csv.zst, "
        "or CBS's list 'Gemeenten alfabetisch' as CSV), or set ADDRESS_DATA_DIR to the directory "
        f"that holds {DEFAULT_FILE}")


class Municipality(NamedTuple):
    name: str
    province: str


class Merger(NamedTuple):
    """A municipality that ended on 1 January of `year`, and those it became part of."""

    year: int
    former: str              # its name
    code: str                # its CBS code: the first four digits of the identifications it issued
    into: tuple[str, ...]    # the municipalities its places are in now (several: divided)


#: The municipalities merged or divided from 2018 to 2023 (CBS), with their CBS codes.
MERGERS: tuple[Merger, ...] = (
    Merger(2018, "Hoogezand-Sappemeer", "0018", ("Midden-Groningen",)),
    Merger(2018, "Menterwolde", "1987", ("Midden-Groningen",)),
    Merger(2018, "Slochteren", "0040", ("Midden-Groningen",)),
    Merger(2018, "Bellingwedde", "0007", ("Westerwolde",)),
    Merger(2018, "Vlagtwedde", "0048", ("Westerwolde",)),
    Merger(2018, "Franekeradeel", "0070", ("Waadhoeke",)),
    Merger(2018, "het Bildt", "0063", ("Waadhoeke",)),
    Merger(2018, "Menameradiel", "1908", ("Waadhoeke",)),
    Merger(2018, "Littenseradiel", "0140", ("Waadhoeke", "Leeuwarden", "Súdwest-Fryslân")),
    Merger(2018, "Leeuwarderadeel", "0081", ("Leeuwarden",)),
    Merger(2018, "Rijnwaarden", "0196", ("Zevenaar",)),
    Merger(2019, "Haren", "0017", ("Groningen",)),
    Merger(2019, "Ten Boer", "0009", ("Groningen",)),
    Merger(2019, "Bedum", "0005", ("Het Hogeland",)),
    Merger(2019, "De Marne", "1663", ("Het Hogeland",)),
    Merger(2019, "Eemsmond", "1651", ("Het Hogeland",)),
    Merger(2019, "Winsum", "0053", ("Het Hogeland", "Westerkwartier")),
    Merger(2019, "Grootegast", "0015", ("Westerkwartier",)),
    Merger(2019, "Leek", "0022", ("Westerkwartier",)),
    Merger(2019, "Marum", "0025", ("Westerkwartier",)),
    Merger(2019, "Zuidhorn", "0056", ("Westerkwartier",)),
    Merger(2019, "Dongeradeel", "0058", ("Noardeast-Fryslân",)),
    Merger(2019, "Ferwerderadiel", "1722", ("Noardeast-Fryslân",)),
    Merger(2019, "Kollumerland en Nieuwkruisland", "0079", ("Noardeast-Fryslân",)),
    Merger(2019, "Aalburg", "0738", ("Altena",)),
    Merger(2019, "Werkendam", "0870", ("Altena",)),
    Merger(2019, "Woudrichem", "0874", ("Altena",)),
    Merger(2019, "Binnenmaas", "0585", ("Hoeksche Waard",)),
    Merger(2019, "Cromstrijen", "0611", ("Hoeksche Waard",)),
    Merger(2019, "Korendijk", "0588", ("Hoeksche Waard",)),
    Merger(2019, "Oud-Beijerland", "0584", ("Hoeksche Waard",)),
    Merger(2019, "Strijen", "0617", ("Hoeksche Waard",)),
    Merger(2019, "Giessenlanden", "0689", ("Molenlanden",)),
    Merger(2019, "Molenwaard", "1927", ("Molenlanden",)),
    Merger(2019, "Leerdam", "0545", ("Vijfheerenlanden",)),
    Merger(2019, "Zederik", "0707", ("Vijfheerenlanden",)),
    Merger(2019, "Vianen", "0620", ("Vijfheerenlanden",)),
    Merger(2019, "Geldermalsen", "0236", ("West Betuwe",)),
    Merger(2019, "Lingewaal", "0733", ("West Betuwe",)),
    Merger(2019, "Neerijnen", "0304", ("West Betuwe",)),
    Merger(2019, "Nuth", "0951", ("Beekdaelen",)),
    Merger(2019, "Onderbanken", "0881", ("Beekdaelen",)),
    Merger(2019, "Schinnen", "0962", ("Beekdaelen",)),
    Merger(2019, "Haarlemmerliede en Spaarnwoude", "0393", ("Haarlemmermeer",)),
    Merger(2019, "Noordwijkerhout", "0576", ("Noordwijk",)),
    Merger(2021, "Appingedam", "0003", ("Eemsdelta",)),
    Merger(2021, "Delfzijl", "0010", ("Eemsdelta",)),
    Merger(2021, "Loppersum", "0024", ("Eemsdelta",)),
    Merger(2021, "Haaren", "0788", ("Boxtel", "Oisterwijk", "Tilburg", "Vught")),
    Merger(2022, "Beemster", "0370", ("Purmerend",)),
    Merger(2022, "Heerhugowaard", "0398", ("Dijk en Waard",)),
    Merger(2022, "Langedijk", "0416", ("Dijk en Waard",)),
    Merger(2022, "Weesp", "0457", ("Amsterdam",)),
    Merger(2022, "Boxmeer", "0756", ("Land van Cuijk",)),
    Merger(2022, "Cuijk", "1684", ("Land van Cuijk",)),
    Merger(2022, "Grave", "0786", ("Land van Cuijk",)),
    Merger(2022, "Mill en Sint Hubert", "0815", ("Land van Cuijk",)),
    Merger(2022, "Sint Anthonis", "1702", ("Land van Cuijk",)),
    Merger(2022, "Landerd", "1685", ("Maashorst",)),
    Merger(2022, "Uden", "0856", ("Maashorst",)),
    Merger(2023, "Brielle", "0501", ("Voorne aan Zee",)),
    Merger(2023, "Hellevoetsluis", "0530", ("Voorne aan Zee",)),
    Merger(2023, "Westvoorne", "0614", ("Voorne aan Zee",)),
)
_MERGED = {m.code: m for m in MERGERS}


def former_name(identification: int | str, municipality: str) -> str:
    """The former municipality of an address of `municipality` (its name now) whose
    nummeraanduiding identification is `identification` (its first four digits: the
    municipality that issued it), or "" when it was issued by none of `MERGERS` that
    `municipality` took in (a new address, or a number issued after the merger)."""
    ident = f"{int(identification):016d}" if isinstance(identification, int) else str(identification)
    merger = _MERGED.get(ident[:4]) if len(ident) == 16 and ident.isdigit() else None
    return merger.former if merger is not None and municipality in merger.into else ""


def former_names(identifications: np.ndarray, municipality: np.ndarray,
                 name_of: Mapping[int, str]) -> tuple[np.ndarray, list[str]]:
    """`former_name` of many addresses at once: (the code of each one's, the distinct names;
    code 0 is ""). `identifications` are integers, `municipality` a code of each address that
    `name_of` names.

    PERF: `former_name` is asked once per (issuing municipality, municipality) pair, not once
    per address (the whole country: 9 million calls, 2 us each): an identification of 16
    digits is the issuer's four and twelve more, so the pairs are told apart by `// 10**12`."""
    ids = np.asarray(identifications, dtype=np.int64)
    issuer = np.where((ids >= 0) & (ids < 10**16), ids // 10**12, -1)
    pair = issuer * (1 << 32) + np.asarray(municipality, dtype=np.int64)
    _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    code = {"": 0}
    per_pair = np.array([code.setdefault(former_name(int(ids[i]), name_of[int(municipality[i])]), len(code))
                         for i in first.tolist()], dtype=np.int32)
    names = list(code)
    return per_pair[inverse.ravel()], names


def default_reference() -> Path:
    """`$ADDRESS_DATA_DIR/nl-addresses.csv.zst` (`ADDRESS_DATA_DIR` defaults to `../shared/data`)."""
    return Path(os.environ.get("ADDRESS_DATA_DIR", "../shared/data")) / DEFAULT_FILE


def _place_key(s: str) -> str:
    return " ".join(s.split()).casefold()


def _pc_key(s: str) -> str:
    return "".join(s.split()).upper()


class MunicipalityReference:
    """A loaded reference: `kind` is 'addresses' or 'cbs'; `munis` the municipalities it names."""

    def __init__(self, path: Path, kind: str, munis: list[Municipality]) -> None:
        self.path, self.kind, self.munis = path, kind, munis
        self.codes: dict[str, int] = {}              # cbs: four-digit code -> municipality
        self.pairs: dict[tuple[str, str], int] = {}  # addresses: (woonplaats, postcode) -> municipality
        self.places: dict[str, int] = {}             # woonplaats -> municipality, -1 when several have it
        self.postcodes: dict[str, int] = {}          # postcode -> municipality, -1 when several have it

    def to_dict(self) -> dict:
        """The reference as plain data (JSON): what `from_dict` reads back. The register's state
        keeps it (`engine.ingest.register`), so an update names municipalities as its build did."""
        return {"path": str(self.path), "kind": self.kind, "munis": [list(m) for m in self.munis],
                "codes": self.codes, "pairs": [[p, c, m] for (p, c), m in self.pairs.items()],
                "places": self.places, "postcodes": self.postcodes}

    @classmethod
    def from_dict(cls, d: dict) -> MunicipalityReference:
        """The reference `to_dict` wrote."""
        ref = cls(Path(d["path"]), d["kind"], [Municipality(n, p) for n, p in d["munis"]])
        ref.codes = dict(d["codes"])
        ref.pairs = {(p, c): m for p, c, m in d["pairs"]}
        ref.places, ref.postcodes = dict(d["places"]), dict(d["postcodes"])
        return ref

    def describe(self) -> str:
        if self.kind == "cbs":
            return f"{self.path.name} (CBS list, {len(self.codes)} codes)"
        return (f"{self.path.name} (address list, {len(self.munis)} municipalities, "
                f"{len(self.pairs):,} woonplaats-postcode pairs)")

    def lookup(self, place: str, postcode: str) -> int:
        """The municipality of one address by its woonplaats and postcode (address list), or -1."""
        m = self.pairs.get((_place_key(place), _pc_key(postcode)), -1)
        if m < 0:
            m = self.places.get(_place_key(place), -1)
        if m < 0:
            m = self.postcodes.get(_pc_key(postcode), -1)
        return m

    def by_code(self, counts: Mapping[tuple[str, str, str], int]) -> tuple[dict[str, int], int]:
        """code -> municipality (-1: cannot place) from how many addresses each (code,
        woonplaats, postcode) has; and how many addresses the reference does not know by
        themselves (named by their code's others).

        A CBS list reads the code; an address list names each code by the majority of its
        addresses' look-ups (ties: the first municipality of the reference)."""
        if self.kind == "cbs":
            return {code: self.codes.get(code, -1) for code, _, _ in counts}, 0
        votes: dict[str, Counter] = {}
        unknown: Counter = Counter()
        for (code, place, pc), n in counts.items():
            v = votes.setdefault(code, Counter())
            m = self.lookup(place, pc)
            if m >= 0:
                v[m] += n
            else:
                unknown[code] += n
        named = {code: _majority(v) for code, v in votes.items()}
        return named, sum(n for code, n in unknown.items() if named[code] >= 0)

    def each(self, keys: list[tuple[str, str, str]]) -> tuple[list[int], int]:
        """The municipality of each address (-1: cannot place) from its (code, woonplaats,
        postcode): an address list by its own look-up, else its code's majority; CBS by code.
        And how many addresses the reference does not know by themselves."""
        if self.kind == "cbs":
            return [self.codes.get(code, -1) for code, _, _ in keys], 0
        own = {k: self.lookup(k[1], k[2]) for k in set(keys)}
        votes: dict[str, Counter] = {}
        for k in keys:
            if own[k] >= 0:
                votes.setdefault(k[0], Counter())[own[k]] += 1
        out = [own[k] if own[k] >= 0 else _majority(votes.get(k[0], Counter())) for k in keys]
        return out, sum(own[k] < 0 <= m for k, m in zip(keys, out, strict=True))

    def describe_use(self, codes: int, unknown: int) -> str:
        """What the build report says of the reference."""
        by_code = f", {unknown:,} addresses it does not know named by their code's others" if unknown else ""
        return f"{codes} municipality codes named by {self.describe()}{by_code}"

    def why_not(self, code: str, place: str, postcode: str) -> str:
        """Why an address of `code` in (place, postcode) cannot be placed."""
        if self.kind == "cbs":
            return f"municipality code {code or '(none)'} is not in {self.path.name}"
        return (f"{self.path.name} names no municipality for woonplaats {place!r}, postcode {postcode} "
                f"(municipality code {code or '(none)'})")


def _majority(votes: Counter) -> int:
    """The municipality with the most votes (ties: the first of the reference), -1 for none."""
    return min(votes, key=lambda m: (-votes[m], m)) if votes else -1


def load_reference(path: str | os.PathLike | None = None, *, progress: bool = False) -> MunicipalityReference:
    """Read a reference (see the module docstring); SourceError when it is missing or unusable.

    The last two read are kept while their files are unchanged (size and time), so several
    builds in one process read the whole-country list once (about 15 s)."""

    given = path is not None
    path = Path(path) if given else default_reference()
    if not path.is_file():
        what = "the municipality reference" if given else "the default municipality reference"
        raise SourceError(f"{what} {path} is {'a directory' if path.is_dir() else 'not there'}: "
                          f"an LVBAG extract or a GeoPackage names no municipality; {_HOW}")
    st = path.stat()
    key = (path.resolve(), st.st_size, st.st_mtime_ns)
    if key not in _kept:
        ref = _read(path, progress)
        while len(_kept) >= 2:
            del _kept[next(iter(_kept))]
        _kept[key] = ref
    return _kept[key]


_kept: dict[tuple, MunicipalityReference] = {}   # the last two references read


def _read(path: Path, progress: bool) -> MunicipalityReference:

    try:
        lines = _lines(path, progress)
        header = next(lines, "").lstrip("\ufeff")
        delimiter = max(";,\t", key=header.count)
        columns = [c.strip().strip('"') for c in header.split(delimiter)]
        if set(_ADDRESS_COLUMNS) <= set(columns):
            ref = _read_addresses(path, columns, delimiter, lines)
        elif "Gemeentenaam" in columns and ({"Gemeentecode", "GemeentecodeGM"} & set(columns)):
            ref = _read_cbs(path, header, delimiter, lines)
        else:
            raise SourceError(f"{path}: not a municipality reference: neither an address list (columns "
                              f"{', '.join(_ADDRESS_COLUMNS)}) nor CBS's list (Gemeentecode, Gemeentenaam, "
                              f"Provincienaam); its header is {header[:200]!r}; {_HOW}")
    except UnicodeDecodeError as e:
        raise SourceError(f"{path}: the municipality reference is not UTF-8 text ({e}); {_HOW}") from None
    except OSError as e:
        raise SourceError(f"{path}: cannot read the municipality reference: {e}; {_HOW}") from None
    if not ref.munis:
        raise SourceError(f"{path}: the municipality reference names no municipality; {_HOW}")
    return ref


def _lines(path: Path, progress: bool) -> Iterator[str]:
    """The text lines of a plain, .gz or .zst file, decompressed with the CSV reader's checks."""
    from tqdm import tqdm


    with open(path, "rb") as raw, tqdm(total=path.stat().st_size, desc=f"reading {path.name}", unit="B",
                                       unit_scale=True, unit_divisor=1024, disable=not progress) as bar:
        kind = compression_of(path, raw.read(4))
        raw.seek(0)
        rest = b""
        try:
            for chunk in decompressed(CountingReader(raw, bar), kind, CHUNK_SIZE):
                data = rest + bytes(chunk)
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                text = data[:cut].decode("utf-8")
                yield from (text.replace("\r\n", "\n") if "\r" in text else text).split("\n")[:-1]
        except (OSError, *DECOMPRESS_ERRORS) as e:
            raise SourceError(f"{path}: cannot decompress the municipality reference ({kind}): {e}") from e
        if rest:
            yield rest.decode("utf-8").rstrip("\r\n")


def _read_addresses(path: Path, columns: list[str], delimiter: str, lines: Iterator[str]) -> MunicipalityReference:
    """An address list: every (woonplaats, postcode, gemeente, provincie) and how often it occurs."""

    idx = [columns.index(c) for c in _ADDRESS_COLUMNS]
    need = max(idx) + 1
    fields = itemgetter(*idx)
    counts: Counter = Counter()
    prev, run = None, 0
    for lineno, line in enumerate(lines, start=2):
        # PERF: a split up to the last column read; the rare quoted line through the csv module
        parts = next(csv.reader([line], delimiter=delimiter)) if '"' in line else line.split(delimiter, need)
        if len(parts) < need:
            if not line.strip():
                continue
            raise SourceError(f"{path}:{lineno}: the municipality reference has {len(parts)} fields, "
                              f"not the {len(columns)} of its header")
        key = fields(parts)
        if key != prev:     # the file runs street by street: count each run once
            if run:
                counts[prev] += run
            prev, run = key, 0
        run += 1
    if run:
        counts[prev] += run
    munis: dict[str, int] = {}
    provinces: dict[str, Counter] = {}
    per_pair: Counter = Counter()
    places: dict[str, int] = {}
    postcodes: dict[str, int] = {}
    for (place, pc, name, province), n in counts.items():
        name, province = name.strip(), province.strip()
        if not name or not province:
            continue
        m = munis.setdefault(name, len(munis))
        provinces.setdefault(name, Counter())[province] += n
        p, c = _place_key(place), _pc_key(pc)
        per_pair[p, c, m] += n
        places[p] = m if places.get(p, m) == m else -1
        postcodes[c] = m if postcodes.get(c, m) == m else -1
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for (p, c, m), n in per_pair.items():    # the municipality most of the pair's addresses are in
        held = best.get((p, c))
        if held is None or (-n, m) < (-held[1], held[0]):
            best[p, c] = (m, n)
    ref = MunicipalityReference(path, "addresses",
                                [Municipality(n, provinces[n].most_common(1)[0][0]) for n in munis])
    ref.pairs = {k: m for k, (m, _) in best.items()}
    ref.places = {k: m for k, m in places.items() if k}
    ref.postcodes = {k: m for k, m in postcodes.items() if k}
    return ref


def _read_cbs(path: Path, header: str, delimiter: str, lines: Iterator[str]) -> MunicipalityReference:
    """CBS's list: one municipality a row, by its four-digit code."""

    rows = csv.DictReader(io.StringIO("\n".join([header, *lines])), delimiter=delimiter)
    munis: list[Municipality] = []
    codes: dict[str, int] = {}
    for lineno, r in enumerate(rows, start=2):
        r = {k.strip(): (v or "").strip() for k, v in r.items() if k}
        if not any(r.values()):
            continue
        code = (r.get("GemeentecodeGM") or r.get("Gemeentecode") or "").removeprefix("GM").zfill(4)
        name, province = r.get("Gemeentenaam", ""), r.get("Provincienaam", "")
        if not (code.isdigit() and len(code) == 4 and name):
            raise SourceError(f"{path}:{lineno}: a row of the CBS list without a four-digit code and a name: {r}")
        if not province:
            raise SourceError(f"{path}:{lineno}: the CBS list names no province for {name} (a Provincienaam "
                              "column is needed); give the list with its provinces, or an address list")
        if code in codes:
            raise SourceError(f"{path}:{lineno}: municipality code {code} twice in the CBS list")
        codes[code] = len(munis)
        munis.append(Municipality(name, province))
    ref = MunicipalityReference(path, "cbs", munis)
    ref.codes = codes
    return ref
