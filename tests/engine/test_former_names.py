"""Former municipality names (issue 40): read from the source (`gemeente_bron`) or, for an
official format, from the identification that the municipality before the merger issued;
an alias of the municipality the places are in now, below a current place of that name.

(The five municipalities of the sample had no merger since 2011: the behaviour on the real
register is checked by tests/quality/test_full_sounds_and_former_names.py; here the build's
mechanics, on a small source of made-up places.)"""

from __future__ import annotations

import pytest

import engine
from engine.ingest.build import build
from engine.ingest.municipalities import MERGERS, former_name
from engine.ingest.source import read_source

HEADER = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon"


def write(tmp_path, rows: list[str], header: str = HEADER + ";gemeente_bron"):
    src = tmp_path / "src.csv"
    src.write_text(header + "\n" + "".join(r + "\n" for r in rows))
    return src


def rows() -> list[str]:
    """Dorpstraat 1..5 in Westerdorp, of Nieuwgemeente since a merger (before: Oudgemeente);
    Dorpstraat 1..3 in a place of its own named Oudgemeente (in Elders); Kerkweg 1 in
    Westerdorp, with the municipality it has now as its source's."""
    out = [f"Dorpstraat;{n};;;9991AA;Westerdorp;Nieuwgemeente;Utrecht;52.10;5.10;Oudgemeente" for n in range(1, 6)]
    out += [f"Dorpstraat;{n};;;9992BB;Oudgemeente;Elders;Utrecht;52.20;5.20;Elders" for n in range(1, 4)]
    out += ["Kerkweg;1;;;9991AB;Westerdorp;Nieuwgemeente;Utrecht;52.10;5.11;Nieuwgemeente"]
    return out


def test_the_csv_reader_reads_the_municipality_of_the_source(tmp_path):
    t = read_source(write(tmp_path, rows()), progress=False)
    names = [t.former_municipalities[i] for i in t.former_municipality]
    assert names == ["Oudgemeente"] * 5 + ["Elders"] * 3 + ["Nieuwgemeente"]
    assert t.former_municipalities[0] == ""


def test_a_source_without_the_column_names_none(tmp_path):
    src = write(tmp_path, [r.rsplit(";", 1)[0] for r in rows()], header=HEADER)
    t = read_source(src, progress=False)
    assert t.former_municipality.tolist() == [0] * 9 and t.former_municipalities == [""]


@pytest.fixture
def index(tmp_path):
    out = tmp_path / "idx"
    build(write(tmp_path, rows()), out, progress=False)
    return engine.AddressIndex.open(out)


def test_the_former_municipality_finds_its_places(index):
    hit = index.suggest("dorpstraat 4 oudgemeente", limit=1)[0]
    assert (hit.street, hit.number, hit.locality, hit.municipality) == ("Dorpstraat", 4, "Westerdorp", "Nieuwgemeente")
    kinds = {m.typed: (m.kind, m.field) for m in index.explain(hit)}
    assert kinds["oudgemeente"] == ("alias", "municipality")


def test_a_current_place_of_the_name_comes_first(index):
    got = [(h.number, h.locality) for h in index.suggest("dorpstraat 1 oudgemeente", limit=5)]
    assert got[:2] == [(1, "Oudgemeente"), (1, "Westerdorp")]


def test_the_manifest_names_the_former_municipalities(index):
    """The manifest lists them (for a reader of the index); a source's municipality that is the
    one the address has now is no former one."""
    manifest = index.manifest
    assert manifest["former_municipalities"] == {"Nieuwgemeente": ["Oudgemeente"]}
    assert index.suggest("kerkweg 1 oudgemeente", limit=1) == []


def test_an_official_address_is_known_by_the_municipality_that_issued_it():
    """The first four digits of a nummeraanduiding's identification are the CBS code of the
    municipality that issued it: Nuth's (0951) are in Beekdaelen now, Haaren's (0788) in four
    municipalities; a number issued by Beekdaelen itself (1954), or found in a municipality
    the former one did not become part of, has none."""
    assert former_name(951200000012345, "Beekdaelen") == "Nuth"
    assert former_name("0788200000000001", "Vught") == former_name("0788200000000001", "Tilburg") == "Haaren"
    assert former_name(1954200000000001, "Beekdaelen") == ""
    assert former_name(951200000012345, "Heerlen") == ""
    assert former_name(0, "Beekdaelen") == ""


def test_the_mergers_are_one_code_each():
    codes = [m.code for m in MERGERS]
    assert len(set(codes)) == len(codes) and all(len(c) == 4 and c.isdigit() for c in codes)
    assert len({m.former for m in MERGERS}) == len(MERGERS)


def test_former_names_of_many_addresses_are_former_name_of_each():
    """`former_names` (the extract's join, once per issuer and municipality) says of every
    address what `former_name` says of it alone."""
    import numpy as np

    from engine.ingest.municipalities import former_names

    m = MERGERS[0]
    now, other = m.into[0], "Elders"
    issuers = [int(m.code), int(MERGERS[1].code), 344, 0]
    ids = [i * 10**12 + n for i in issuers for n in (1, 999_999_999_999)] + [-1, 10**16 + 5, 10**15]
    ids = np.array(ids * 2, dtype=np.int64)
    gem = np.array([1] * (len(ids) // 2) + [2] * (len(ids) // 2), dtype=np.int64)
    codes, names = former_names(ids, gem, {1: now, 2: other})
    assert names[0] == ""
    got = [names[c] for c in codes]
    assert got == [former_name(int(i), {1: now, 2: other}[int(g)]) for i, g in zip(ids, gem, strict=True)]
    assert got[0] == m.former and got.count(m.former) == 2
