"""Building from the official BAG formats: the Kadaster's LVBAG XML extract and PDOK's GeoPackage.

The expectations are written by hand from the real samples in ADDRESS_DATA_DIR/bag (see its
README): the Doesburg LVBAG extract (2020-09-15) and PDOK's Amsterdam GeoPackage. Variants
(an unpacked copy, an edited copy, a small bag-light GeoPackage) are made in tmp_path. The
municipalities are named by the default reference, ADDRESS_DATA_DIR/nl-addresses.csv.zst,
unless a test gives another.
"""

from __future__ import annotations

import math
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from testdata import DATA_DIR, REPO

from engine.ingest.build import build
from engine.ingest.source import SourceError, read_source

BAG = DATA_DIR / "bag"
DOESBURG_ZIP = BAG / "lvbag-doesburg" / "BAGNLDL-15092020-small.zip"
EXPANDED = BAG / "lvbag-doesburg" / "expanded"
GPKG = BAG / "pdok-amsterdam-addresses.gpkg"


def rows(table) -> dict[tuple, tuple]:
    """(street, number, letter, addition, postcode) -> (place, municipality, province, lat, lon)."""
    out = {}
    for i in range(len(table)):
        pc = int(table.postcode[i])
        postcode = f"{pc // 676:04d}{chr(65 + pc % 676 // 26)}{chr(65 + pc % 26)}"
        key = (table.streets[table.street[i]], int(table.number[i]),
               chr(table.letter[i]) if table.letter[i] else "", table.additions[table.addition[i]], postcode)
        out[key] = (table.localities[table.locality[i]], table.municipalities[table.municipality[i]],
                    table.provinces[table.province[i]], table.lat[i] / 1e6, table.lon[i] / 1e6)
    return out


def rd_to_wgs(x: float, y: float) -> tuple[float, float]:
    from pyproj import Transformer
    lon, lat = Transformer.from_crs("EPSG:28992", "EPSG:4326", always_xy=True).transform(x, y)
    return round(lat, 6), round(lon, 6)


def metres(a: tuple[float, float], b: tuple[float, float]) -> float:
    dy = (a[0] - b[0]) * 111_195.0
    dx = (a[1] - b[1]) * 111_195.0 * math.cos(math.radians(a[0]))
    return math.hypot(dx, dy)


# The address points, by hand from the XML: a verblijfsobject's gml:pos, and the area centroid
# of a ligplaats' or standplaats' exterior ring (computed once with the shoelace formula).
KOSTERSTRAAT_4 = (206335.699, 447529.842)         # VBO 0221010000330226, all four versions
KOPPENBERCH_2 = (207439.6967, 446264.6487)        # LIG 0221020000330152 (a parallelogram)
KOPPENBERCH_20 = (207641.5091, 446166.9083)       # LIG 0221020000330154
HOORNWERCK_1 = (206272.8391, 447164.2890)         # STA 0221030000330172 (five corners)
HOORNWERCK_4 = (206280.7422, 447133.0093)         # STA 0221030000330174

DOESBURG = {
    ("Koppenberch", 2, "", "", "6982CZ"): KOPPENBERCH_2,
    ("Koppenberch", 20, "", "", "6982CZ"): KOPPENBERCH_20,
    ("Het Hoornwerck", 1, "", "", "6981ED"): HOORNWERCK_1,
    ("Het Hoornwerck", 4, "", "", "6981ED"): HOORNWERCK_4,
    ("Kosterstraat", 4, "", "", "6981CH"): KOSTERSTRAAT_4,
}


def check_doesburg(got: dict, expected: dict) -> None:
    assert set(got) == set(expected)
    for key, (x, y) in expected.items():
        place, mun, prov, lat, lon = got[key]
        assert (place, mun, prov) == ("Doesburg", "Doesburg", "Gelderland"), key
        assert metres((lat, lon), rd_to_wgs(x, y)) < 0.2, key


@pytest.fixture(scope="module")
def doesburg_zip():
    if not DOESBURG_ZIP.exists():
        pytest.fail(f"the LVBAG sample is missing: {DOESBURG_ZIP} (set ADDRESS_DATA_DIR)")
    return read_source(DOESBURG_ZIP, progress=False, jobs=1)


def test_lvbag_zip_gives_the_current_addresses(doesburg_zip):
    """The nested zip: ligplaatsen and standplaatsen (polygon centroids) and the verblijfsobject,
    each address in the version valid on 2020-09-15."""
    t = doesburg_zip
    assert (t.source_format, t.extract_date) == ("lvbag-xml", "2020-09-15")
    check_doesburg(rows(t), DOESBURG)
    assert t.rejected == 0


def test_lvbag_right_version_and_counts(doesburg_zip):
    """Nummeraanduiding 0221200000330998 is Het Hoornwerck 4x (version 1, never ended) and 9x
    (version 3, 2019-03-05, no postcode): the highest valid version wins, so 4x is history and
    9x is left out for its missing postcode; so are 9y (...999) and 9l (...229, whose version 1
    was 9b with postcode 6981EA, ended 2013). The verblijfsobject of Kosterstraat 4 has four
    versions; its earlier three are history, as are three older street versions."""
    t = doesburg_zip
    got = rows(t)
    for letter in "xyblX":
        assert not [k for k in got if k[1] in (4, 9) and k[2] == letter]
    assert t.left_out == {"history": 12, "status": 0, "dangling_reference": 0, "no_postcode": 3,
                          "no_position": 0}
    by_type = t.left_out_detail["by_type"]
    assert by_type["NUM"]["history"] == 6 and by_type["VBO"]["history"] == 3
    assert by_type["OPR"]["history"] == 3
    assert sorted(t.left_out_detail["examples"]["no_postcode"]) == [
        "nummeraanduiding 0221200000330229: no postcode",
        "nummeraanduiding 0221200000330998: no postcode",
        "nummeraanduiding 0221200000330999: no postcode"]


def test_lvbag_junk_is_skipped_and_listed(doesburg_zip):
    skipped = doesburg_zip.skipped
    assert ".DS_Store (junk)" in skipped
    assert "9999OPR15092020.zip/__MACOSX/._0221OPR15092020-000001.xml (junk)" in skipped
    for name in ("9999Inactief15092020.zip", "9999InOnderzoek15092020.zip", "9999NietBag15092020.zip"):
        assert f"{name} (not the current register)" in skipped
    assert "9999PND15092020.zip (panden hold no address)" in skipped


def _unzip_all(src: Path, dest: Path, *, inner: bool = True) -> None:
    """Unpack a zip as a person would; with `inner`, each inner zip into a folder of its name."""
    with zipfile.ZipFile(src) as z:
        z.extractall(dest)
    if inner:
        for p in sorted(dest.rglob("*.zip")):
            _unzip_all(p, p.with_suffix(""))
            p.unlink()


@pytest.mark.slow
def test_lvbag_zip_and_unpacked_directory_give_the_same_index(tmp_path):
    """The zip, the directory it unpacks to (inner zips left packed) and the directory with every
    zip unpacked give byte for byte the same index arrays."""
    outer_only, all_unpacked = tmp_path / "outer", tmp_path / "all"
    _unzip_all(DOESBURG_ZIP, outer_only, inner=False)
    _unzip_all(DOESBURG_ZIP, all_unpacked)
    manifests = {}
    for name, src in (("zip", DOESBURG_ZIP), ("outer", outer_only), ("all", all_unpacked)):
        manifests[name] = build(src, tmp_path / f"idx-{name}", progress=False, jobs=1)
    assert manifests["all"]["left_out"] == manifests["zip"]["left_out"] == manifests["outer"]["left_out"]
    for arr in manifests["zip"]["arrays"]:
        a = np.load(tmp_path / "idx-zip" / f"{arr}.npy")
        for other in ("outer", "all"):
            assert np.array_equal(a, np.load(tmp_path / f"idx-{other}" / f"{arr}.npy")), (other, arr)


def test_lvbag_dangling_reference_counts_against_the_bad_share():
    """The unpacked sample holds one record more: 0362200001221879 on street 0363300000003944,
    which is not in the extract. It is counted as a dangling reference, and with 1 bad of 6 the
    default limit (0.1 %) fails the build, naming it."""
    with pytest.raises(SourceError, match="0362200001221879: openbare ruimte 0363300000003944 is not in"):
        read_source(EXPANDED, progress=False, jobs=1)
    t = read_source(EXPANDED, progress=False, jobs=1, max_bad_share=0.2)
    assert t.left_out["dangling_reference"] == 1
    assert t.left_out["no_postcode"] == 3
    # no GEM-WPL-RELATIE here: the delivery document selects one municipality, 0221 Doesburg
    check_doesburg(rows(t), DOESBURG)


def _edited(tmp_path: Path) -> Path:
    """The unpacked sample, edited: street 0363300000003944 (Teststraat, in Doesburg) and
    woonplaats 1050 (Testdorp) added; 0362200001221879 (9y, ligtIn 1050) gets postcode 6981ZZ
    and a verblijfsobject at the RD origin; 0221200000330999 (9y, a nevenadres of verblijfsobject
    0221010000330999 and of standplaats 0221030000330174) gets postcode 6981EA."""
    d = tmp_path / "edited"
    shutil.copytree(EXPANDED, d)
    opr = d / "0221OPR15092020-000001.xml"
    text = opr.read_text()
    first = text.index("<sl:stand>")
    end = text.index("</sl:stand>", first) + len("</sl:stand>")
    stand = text[first:end]
    start = stand.index("<Objecten:identificatie")
    stop = stand.index("</Objecten:identificatie>")
    new = (stand[:start] + '<Objecten:identificatie domein="NL.IMBAG.Openbareruimte">0363300000003944'
           + stand[stop:])
    name = stand[stand.index("<Objecten:naam>") + 15:stand.index("</Objecten:naam>")]
    new = new.replace(f"<Objecten:naam>{name}</Objecten:naam>", "<Objecten:naam>Teststraat</Objecten:naam>")
    opr.write_text(text[:end] + new + text[end:])

    wpl = d / "0221WPL15092020-000001.xml"
    text = wpl.read_text()
    first = text.index("<sl:stand>")
    end = text.index("</sl:stand>", first) + len("</sl:stand>")
    stand = text[first:end].replace(">2142<", ">1050<").replace(">Doesburg<", ">Testdorp<")
    wpl.write_text(text[:end] + stand + text[end:])

    num = d / "0221NUM15092020-000001.xml"
    text = num.read_text()
    at = text.index("0362200001221879")
    hn = text.index("</Objecten:huisletter>", at) + len("</Objecten:huisletter>")
    text = text[:hn] + "<Objecten:postcode>6981ZZ</Objecten:postcode>" + text[hn:]
    # the last record of ...999 (version 3, duplicated at the end of the file) gets a postcode
    for at in [i for i in range(len(text)) if text.startswith(">0221200000330999<", i)]:
        block_end = text.index("</Objecten:Nummeraanduiding>", at)
        if "voorkomenidentificatie>3<" in text[at:block_end]:
            hn = text.index("</Objecten:huisletter>", at) + len("</Objecten:huisletter>")
            text = text[:hn] + "<Objecten:postcode>6981EA</Objecten:postcode>" + text[hn:]
    num.write_text(text)

    vbo = d / "0221VBO15092020-000001.xml"
    text = vbo.read_text()
    first = text.index("<sl:stand>")
    end = text.index("</sl:stand>", first) + len("</sl:stand>")
    stand = (text[first:end].replace("0221200000330227", "0362200001221879")
             .replace(">0221010000330226<", ">0362010000000001<")
             .replace("206335.699 447529.842 0.0", "155000.0 463000.0 0.0")
             .replace("<Historie:eindGeldigheid>2019-01-15</Historie:eindGeldigheid>", ""))
    vbo.write_text(text[:end] + stand + text[end:])
    return d


def test_lvbag_ligtin_overrides_the_street_and_nevenadres_has_a_position(tmp_path):
    """An address's own woonplaats (ligtIn) beats its street's; a nevenadres of both a
    verblijfsobject and a standplaats takes the verblijfsobject's point. The point at the RD
    origin (155000, 463000) lands within 1 m of its published WGS84 position (52.15517440 N,
    5.38720621 E, RDNAPTRANS): the accuracy this build states."""
    t = read_source(_edited(tmp_path), progress=False, jobs=1)
    got = rows(t)
    place, mun, prov, lat, lon = got[("Teststraat", 9, "y", "", "6981ZZ")]
    assert (place, mun, prov) == ("Testdorp", "Doesburg", "Gelderland")
    assert metres((lat, lon), (52.15517440, 5.38720621)) < 1.0
    (key,) = [k for k in got if k[1:] == (9, "y", "", "6981EA")]
    assert got[key][:3] == ("Doesburg", "Doesburg", "Gelderland")
    assert metres(got[key][3:], rd_to_wgs(206289.487, 447359.374)) < 0.2
    assert t.left_out["dangling_reference"] == 0
    assert t.left_out["no_postcode"] == 2          # ...229 (9l) and ...998 (9x) still have none


def test_lvbag_not_an_extract_is_a_clear_error(tmp_path):
    junk = tmp_path / "junk.zip"
    with zipfile.ZipFile(junk, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(SourceError, match="holds no LVBAG extract"):
        read_source(junk, progress=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="no LVBAG object files"):
        read_source(empty, progress=False)


@pytest.mark.parametrize("jobs", [1, 2])
def test_lvbag_broken_xml_is_a_clear_error(tmp_path, jobs):
    d = tmp_path / "broken"
    shutil.copytree(EXPANDED, d)
    p = d / "0221NUM15092020-000001.xml"
    p.write_bytes(p.read_bytes()[:20_000])
    with pytest.raises(SourceError, match="0221NUM15092020-000001.xml: broken XML"):
        read_source(d, progress=False, jobs=jobs, municipalities=_cbs_list(tmp_path))


def build_command(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", "build", str(source), str(out), "--no-progress", *extra],
                          capture_output=True, text=True, cwd=REPO)


@pytest.mark.slow
def test_lvbag_broken_xml_with_the_default_jobs_is_a_message(tmp_path):
    """Regression (issue 37, item 6): with the default --jobs (worker processes) a broken XML file
    was "TypeError: cannot pickle 'lxml.etree._ListErrorLog' object" and a traceback; with
    --jobs 1 the message was clear. Both say which file is broken, in one line."""
    d = tmp_path / "broken"
    shutil.copytree(EXPANDED, d)
    p = d / "0221NUM15092020-000001.xml"
    p.write_bytes(p.read_bytes()[:20_000])
    r = build_command(d, tmp_path / "idx", "--municipalities", str(_cbs_list(tmp_path)))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "0221NUM15092020-000001.xml: broken XML" in r.stderr
    assert not (tmp_path / "idx").exists()


@pytest.mark.slow
def test_gpkg_with_damaged_pages_is_a_message(tmp_path):
    """Regression (issue 37, item 6): a GeoPackage whose table pages are damaged (50 x 64 random
    bytes in the pages of its biggest table, the file's size unchanged) was
    `sqlite3.DatabaseError: database disk image is malformed` and a traceback."""
    import random

    bad = tmp_path / "bad.gpkg"
    shutil.copyfile(GPKG, bad)
    con = sqlite3.connect(f"file:{bad}?mode=ro", uri=True)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    roots = sorted(r[0] for r in con.execute("SELECT rootpage FROM sqlite_master WHERE rootpage > 0"))
    first = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'verblijfsobjecten'").fetchone()[0]
    con.close()
    last = next(r for r in roots if r > first)    # the pages after its root, up to the next table's
    data = bytearray(bad.read_bytes())
    rng = random.Random(0)
    for _ in range(50):
        at = (rng.randrange(first + 1, last) - 1) * page + rng.randrange(page - 64)
        data[at:at + 64] = rng.randbytes(64)
    bad.write_bytes(bytes(data))
    r = build_command(bad, tmp_path / "idx", "--municipalities", str(_cbs_list(tmp_path)))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "the GeoPackage is damaged: database disk image is malformed" in r.stderr
    assert not (tmp_path / "idx").exists()


def test_lvbag_code_the_reference_cannot_place_is_a_dangling_reference(tmp_path):
    """The delivery document names code 0003 instead of 0221. CBS's list (0221 and 0363 only)
    cannot place it: every address is a dangling reference, named in the error; with the limit
    lifted they are counted, not indexed. The address list names the code by its addresses'
    woonplaats and postcode, whatever its number: Doesburg."""
    d = tmp_path / "unknown"
    shutil.copytree(EXPANDED, d)
    p = d / "Leveringsdocument-BAG-Extract.xml"
    p.write_text(p.read_text().replace(">0221<", ">0003<"))
    cbs = _cbs_list(tmp_path)
    with pytest.raises(SourceError, match="0221200000330151: municipality code 0003 is not in gemeenten.csv"):
        read_source(d, progress=False, jobs=1, max_bad_share=0.2, municipalities=cbs)
    t = read_source(d, progress=False, jobs=1, max_bad_share=1.0, municipalities=cbs)
    assert len(t) == 0 and t.left_out["dangling_reference"] == 5 + 1   # and the street not in it
    t = read_source(d, progress=False, jobs=1, max_bad_share=0.2)
    check_doesburg(rows(t), DOESBURG)
    assert "1 municipality codes named by nl-addresses.csv.zst (address list, " in t.left_out_detail["note"]


# ---------------------------------------------------------------- GeoPackage

def test_gpkg_flat_layout():
    """PDOK's sample (older flat layout): 1,836 verblijfsobject addresses, 67 ligplaatsen, one
    standplaats; one address has no postcode. Municipality from the nummeraanduiding's code 0363."""
    t = read_source(GPKG, progress=False)
    assert t.source_format == "gpkg" and t.extract_date == "2021-10-28"
    assert t.rows_in == 1_836 + 67 + 1 - 1
    assert t.left_out["no_postcode"] == 1
    assert "main addresses only" in t.skipped[0]
    got = rows(t)
    place, mun, prov, lat, lon = got[("Barentszplein", 1, "", "H", "1013NJ")]
    assert (place, mun, prov) == ("Amsterdam", "Amsterdam", "Noord-Holland")
    assert metres((lat, lon), rd_to_wgs(121223.0, 489163.0)) < 1.0
    assert ("Van Diemenkade", 14, "", "", "1013CR") in got          # a ligplaats


def _gp_point(x: float, y: float) -> bytes:
    """A GeoPackage geometry blob: header (no envelope, little endian) + WKB point."""
    return b"GP\x00\x01" + struct.pack("<i", 28992) + struct.pack("<BIdd", 1, 1, x, y)


def _bag_light(p: Path) -> sqlite3.Connection:
    """An empty GeoPackage of today's bag-light layout, open for rows to be added."""
    con = sqlite3.connect(p)
    con.executescript(
        "CREATE TABLE gpkg_contents (table_name TEXT, data_type TEXT, identifier TEXT, description TEXT,"
        " last_change TEXT, min_x, min_y, max_x, max_y, srs_id INTEGER);"
        "CREATE TABLE gpkg_geometry_columns (table_name TEXT, column_name TEXT, geometry_type_name TEXT,"
        " srs_id INTEGER, z INTEGER, m INTEGER);")
    for table in ("verblijfsobject", "ligplaats", "standplaats"):
        con.execute("INSERT INTO gpkg_contents VALUES (?, 'features', ?, '', '2026-11-01T04:00:00Z', 0,0,0,0, 28992)",
                    (table, table))
        con.execute("INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', 'POINT', 28992, 0, 0)", (table,))
        con.execute(f"CREATE TABLE {table} (fid INTEGER PRIMARY KEY, geom BLOB, identificatie TEXT,"
                    " nummeraanduiding_hoofdadres_identificatie TEXT, openbare_ruimte_naam TEXT, huisnummer INTEGER,"
                    " huisletter TEXT, toevoeging TEXT, postcode TEXT, woonplaats_naam TEXT, status TEXT)")
    return con


def test_gpkg_bag_light_layout(tmp_path):
    """Today's bag-light columns on the tables verblijfsobject, ligplaats, standplaats."""
    p = tmp_path / "bag-light.gpkg"
    con = _bag_light(p)
    con.execute("INSERT INTO verblijfsobject VALUES (1, ?, '0599010000000001', '0599200000000001', 'Coolsingel',"
                " 40, NULL, NULL, '3011AD', 'Rotterdam', 'Verblijfsobject in gebruik')",
                (_gp_point(92800.0, 437700.0),))
    con.execute("INSERT INTO ligplaats VALUES (1, ?, '0599020000000001', '0599200000000002', 'Maashaven',"
                " 1, 'a', NULL, '3072AA', 'Rotterdam', 'Plaats aangewezen')", (_gp_point(93000.0, 435000.0),))
    con.execute("INSERT INTO standplaats VALUES (1, ?, '0599030000000001', '0599200000000003', 'Kampweg',"
                " 2, NULL, NULL, NULL, 'Rotterdam', 'Plaats aangewezen')", (_gp_point(93100.0, 435100.0),))
    con.commit()
    con.close()
    t = read_source(p, progress=False)
    got = rows(t)
    assert set(got) == {("Coolsingel", 40, "", "", "3011AD"), ("Maashaven", 1, "a", "", "3072AA")}
    assert got[("Coolsingel", 40, "", "", "3011AD")][:3] == ("Rotterdam", "Rotterdam", "Zuid-Holland")
    assert metres(got[("Coolsingel", 40, "", "", "3011AD")][3:], rd_to_wgs(92800.0, 437700.0)) < 0.2
    assert t.left_out["no_postcode"] == 1 and t.extract_date == "2026-11-01"


# ---------------------------------------------------------------- the municipality reference

def _cbs_list(tmp_path: Path) -> Path:
    """CBS's 'Gemeenten alfabetisch' as a person saves it from the spreadsheet: two municipalities."""
    p = tmp_path / "gemeenten.csv"
    p.write_text("Gemeentecode;GemeentecodeGM;Gemeentenaam;Provinciecode;ProvinciecodePV;Provincienaam\n"
                 "221;GM0221;Doesburg;25;PV25;Gelderland\n363;GM0363;Amsterdam;27;PV27;Noord-Holland\n",
                 encoding="utf-8-sig")
    return p


def test_no_municipality_table_is_tracked():
    """Municipalities come from a reference given at build time: no table of them (nor any
    other data file) is in git."""
    tracked = subprocess.run(["git", "ls-files", "engine"], cwd=REPO, check=True, capture_output=True,
                             text=True).stdout.split()
    assert tracked, "not a git checkout"
    assert [f for f in tracked if f.endswith((".csv", ".tsv", ".zst", ".gz", ".gpkg"))] == []


def test_cbs_reference_names_by_code(tmp_path):
    """With CBS's list, the extract's code 0221 (GEM-WPL-RELATIE) is Doesburg, Gelderland, and
    the GeoPackage's 0363 (its nummeraanduidingen's first digits) Amsterdam, Noord-Holland."""
    cbs = _cbs_list(tmp_path)
    t = read_source(DOESBURG_ZIP, progress=False, jobs=1, municipalities=cbs)
    check_doesburg(rows(t), DOESBURG)
    assert "named by gemeenten.csv (CBS list, 2 codes)" in t.left_out_detail["note"]
    t = read_source(GPKG, progress=False, municipalities=cbs)
    assert {v[1:3] for v in rows(t).values()} == {("Amsterdam", "Noord-Holland")}
    assert len(t) == 1_836 + 67 + 1 - 1


def test_address_reference_uses_the_postcode_for_a_name_two_places_share(tmp_path):
    """Hengelo is a woonplaats in Hengelo (Overijssel) and in Bronckhorst (Gelderland): an
    address list of our layout places each by its postcode; a woonplaats only one municipality
    has (Vorden) by its name alone, whatever its postcode; one it does not know is dangling."""
    ref = tmp_path / "adressen.csv"
    ref.write_text("straat;huisnummer;postcode;woonplaats;gemeente;provincie\n"
                   "Markt;1;7551AA;Hengelo;Hengelo;Overijssel\n"
                   "Spalstraat;1;7255AA;Hengelo;Bronckhorst;Gelderland\n"
                   "Dorpsstraat;1;7251AA;Vorden;Bronckhorst;Gelderland\n", encoding="utf-8")
    p = tmp_path / "bag-light.gpkg"
    con = _bag_light(p)
    for i, (code, street, postcode, place) in enumerate([
            ("0164", "Markt", "7551AA", "Hengelo"), ("1876", "Spalstraat", "7255AA", "Hengelo"),
            ("1876", "Nieuwstad", "7251ZZ", "Vorden"), ("1876", "Kerkstraat", "7255ZZ", "Hengelo"),
            ("0003", "Hoofdstraat", "7255AB", "Hengelo")]):
        con.execute("INSERT INTO verblijfsobject VALUES (?, ?, NULL, ?, ?, 1, NULL, NULL, ?, ?, NULL)",
                    (i, _gp_point(230000.0 + i, 470000.0), f"{code}2000000000{i:02d}", street, postcode, place))
    con.commit()
    con.close()
    t = read_source(p, progress=False, municipalities=ref, max_bad_share=1.0)
    got = {k[0]: v[1:3] for k, v in rows(t).items()}
    assert got == {"Markt": ("Hengelo", "Overijssel"), "Spalstraat": ("Bronckhorst", "Gelderland"),
                   "Nieuwstad": ("Bronckhorst", "Gelderland"),     # Vorden: one municipality
                   "Kerkstraat": ("Bronckhorst", "Gelderland")}    # unknown: its code's others
    assert t.left_out["dangling_reference"] == 1
    assert t.left_out_detail["note"] == ("2 municipality codes named by adressen.csv (address list, 2 "
                                         "municipalities, 3 woonplaats-postcode pairs), 1 addresses it does "
                                         "not know named by their code's others")
    assert t.left_out_detail["examples"]["dangling_reference"] == [
        "verblijfsobject 0003200000000004: adressen.csv names no municipality for woonplaats 'Hengelo', "
        "postcode 7255AB (municipality code 0003)"]


def test_missing_or_bad_reference_is_a_clear_error(tmp_path, monkeypatch):
    """No reference where it is looked for, or a file that is none: the error names the file
    and how to give one, before the extract is read."""
    with pytest.raises(SourceError, match=r"the municipality reference .*nope\.csv is not there: .*"
                       r"--municipalities FILE"):
        read_source(DOESBURG_ZIP, progress=False, jobs=1, municipalities=tmp_path / "nope.csv")
    monkeypatch.setenv("ADDRESS_DATA_DIR", str(tmp_path))
    with pytest.raises(SourceError, match=r"the default municipality reference .*nl-addresses\.csv\.zst is "
                       r"not there: .*--municipalities FILE .*or set ADDRESS_DATA_DIR"):
        read_source(GPKG, progress=False)
    monkeypatch.delenv("ADDRESS_DATA_DIR")
    bad = tmp_path / "bad.csv"
    bad.write_text("code;name\n0221;Doesburg\n", encoding="utf-8")
    with pytest.raises(SourceError, match="bad.csv: not a municipality reference: .*header is 'code;name'"):
        read_source(GPKG, progress=False, municipalities=bad)
    bad.write_text("Gemeentecode;Gemeentenaam\n0221;Doesburg\n", encoding="utf-8")
    with pytest.raises(SourceError, match="bad.csv:2: the CBS list names no province for Doesburg"):
        read_source(GPKG, progress=False, municipalities=bad)
    bad.write_text("woonplaats;postcode;gemeente;provincie\nDoesburg;6981CH\n", encoding="utf-8")
    with pytest.raises(SourceError, match="bad.csv:2: the municipality reference has 2 fields, not the 4"):
        read_source(GPKG, progress=False, municipalities=bad)
    whole = (DATA_DIR / "nl-addresses-sample.csv.zst").read_bytes()
    cut = tmp_path / "cut.csv.zst"
    cut.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(SourceError, match="cut.csv.zst: cannot decompress the municipality reference"):
        read_source(GPKG, progress=False, municipalities=cut)


@pytest.mark.slow
def test_build_command_names_the_reference(tmp_path):
    """`python -m engine build` of the Doesburg extract: by default from the address list of the
    data directory (Doesburg, Gelderland in the index); without one, exit 1 and the message."""
    env = {**__import__("os").environ, "ADDRESS_DATA_DIR": str(DATA_DIR)}
    cmd = [sys.executable, "-m", "engine", "build", str(DOESBURG_ZIP), str(tmp_path / "idx"), "--no-progress"]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "1 municipality codes named by nl-addresses.csv.zst (address list" in done.stderr
    import engine
    with engine.AddressIndex.open(tmp_path / "idx") as index:
        hit = index.suggest("kosterstraat 4 doesburg", limit=1)[0]
    assert (hit.street, hit.municipality, hit.province) == ("Kosterstraat", "Doesburg", "Gelderland")
    done = subprocess.run([*cmd, "--municipalities", str(tmp_path / "gemeenten.csv")], cwd=REPO, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.startswith("build failed: the municipality reference ")
    assert "gemeenten.csv is not there" in done.stderr and "--municipalities FILE" in done.stderr


# ---------------------------------------------------------------- the round trip, on the sample

@pytest.mark.slow
def test_lvbag_round_trip_on_the_sample(tmp_path, sample_source, capsys):
    """benchmarks/lvbag_roundtrip.py on the sample: an extract written from the CSV (nested zips,
    history versions, nevenadressen, LIG/STA polygons, records to leave out) builds the same
    addresses, every point within 1 m, and the left-out counts are exactly those written.

    And the day after: the extract of day 0 and the delivery to day 1 (points moved, addresses
    withdrawn and added, streets renamed, new woonplaatsen, a version with tijdstipInactief, a
    verwijdering) applied by python -m engine update give, array for array, the bytes of the
    index built from the extract of day 1."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import lvbag_roundtrip
    finally:
        sys.path.pop(0)
    rc = lvbag_roundtrip.main(["--source", str(sample_source), "--work", str(tmp_path), "--no-progress",
                               "--changes", "1500"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "round trip: same addresses" in out
    assert "day 0 + delivery == day 1: same addresses, byte for byte" in out
    changed = re.search(r"the delivery between them, BAGNLDM-08112026-09112026.zip: ([\d,]+) objects changed", out)
    assert changed and int(changed.group(1).replace(",", "")) > 1000


def test_lvbag_coordinates_and_numbers_are_written_as_python_writes_them():
    """The extract's join hands its points to the CSV parser as `{:.6f}` and its numbers as
    `str`, made with tables of digits: the same text, halves and edges included."""
    from engine.ingest.lvbag import _coordinates, _numbers

    rng = np.random.default_rng(7)
    v = np.concatenate([rng.uniform(3, 54, 200_000), np.round(rng.uniform(3, 54, 50_000), 6),
                        52 + (np.arange(5000) + 0.5) / 1e6,
                        [0.0, -0.0, -1.5, np.nan, np.inf, -np.inf, 999.9999996, 1000.0, 1e20, 5e-7, 0.1234565]])
    assert [t.replace(b"\0", b"").decode() for t in _coordinates(v).tolist()] == [f"{x:.6f}" for x in v.tolist()]
    n = np.array([1, 0, 7, 99999, 100000, -1, 123456789, 42], dtype=np.int64)
    assert [t.decode() for t in _numbers(n).tolist()] == [str(x) for x in n.tolist()]
