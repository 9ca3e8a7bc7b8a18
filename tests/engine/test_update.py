"""Applying the Kadaster's mutation deliveries: python -m engine update, checked as a person would.

The Doesburg sample extract (2020-09-15) is built once; deliveries are written in the Kadaster's
layout by the round trip's writer (benchmarks/lvbag_roundtrip.py `write_delivery`) with
objects of that extract: a new address (Kosterstraat 6, a nummeraanduiding and its
verblijfsobject), a withdrawn one (Koppenberch 20, its next version "Naamgeving ingetrokken")
and a renamed street (Het Hoornwerck -> Hoornwerckplein, its version closed, the next added).
The real national delivery of 2021-11-14 (ADDRESS_DATA_DIR/bag/mutations) is applied to the
Doesburg state as its README counts it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from testdata import DATA_DIR, REPO

import engine
from engine.ingest.build import build

sys.path.insert(0, str(REPO / "benchmarks"))
try:
    import lvbag_roundtrip as rt
finally:
    sys.path.pop(0)

pytestmark = pytest.mark.slow   # builds indexes and runs the command line

BAG = DATA_DIR / "bag"
DOESBURG_ZIP = BAG / "lvbag-doesburg" / "BAGNLDL-15092020-small.zip"
REAL = BAG / "mutations" / "BAGNLDM-13112021-14112021.zip"
DAY0, DAY1, DAY2 = dt.date(2020, 9, 15), dt.date(2020, 9, 16), dt.date(2020, 9, 17)

KOSTERSTRAAT, KOPPENBERCH, HOORNWERCK, DOESBURG = "0221300000311333", "0221300000311239", "0221300000311236", "2142"


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ADDRESS_DATA_DIR": str(DATA_DIR)}
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=REPO, env=env, capture_output=True, text=True)


def day1_groups() -> list[str]:
    """The delivery of 2020-09-15 -> 16: what the module's docstring says."""
    v = rt.voorkomen
    d1 = DAY1.isoformat()
    new_num = rt.num_xml("0221200000999001", 6, "", "", "6981CH", KOSTERSTRAAT, v(1, d1, None))
    new_vbo = rt.vbo_xml("0221010000999001", "0221200000999001", [], 206345.0, 447530.0, v(1, d1, None))
    kop = "0221200000330153"
    kop_was = rt.num_xml(kop, 20, "", "", "6982CZ", KOPPENBERCH, v(1, "2009-01-20", None), "Ligplaats")
    kop_closed = rt.num_xml(kop, 20, "", "", "6982CZ", KOPPENBERCH, v(1, "2009-01-20", d1), "Ligplaats")
    kop_gone = rt.num_xml(kop, 20, "", "", "6982CZ", KOPPENBERCH, v(2, d1, None), "Ligplaats",
                          status="Naamgeving ingetrokken")
    horn_was = rt.opr_xml(HOORNWERCK, "Het Hoornwerck", DOESBURG, v(1, "2009-01-20", None))
    horn_closed = rt.opr_xml(HOORNWERCK, "Het Hoornwerck", DOESBURG, v(1, "2009-01-20", d1))
    horn_new = rt.opr_xml(HOORNWERCK, "Hoornwerckplein", DOESBURG, v(2, d1, None))
    return [
        rt.mutation_group([("toevoeging", None, new_num)]),
        rt.mutation_group([("toevoeging", None, new_vbo)]),
        rt.mutation_group([("wijziging", kop_was, kop_closed), ("toevoeging", None, kop_gone)]),
        rt.mutation_group([("wijziging", horn_was, horn_closed), ("toevoeging", None, horn_new)]),
    ]


@pytest.fixture(scope="module")
def doesburg(tmp_path_factory) -> Path:
    """The Doesburg sample's index, built once; each test copies it."""
    if not DOESBURG_ZIP.exists():
        pytest.fail(f"the LVBAG sample is missing: {DOESBURG_ZIP} (set ADDRESS_DATA_DIR)")
    out = tmp_path_factory.mktemp("doesburg") / "index"
    build(DOESBURG_ZIP, out, progress=False, jobs=1)
    return out


@pytest.fixture
def index(doesburg, tmp_path) -> Path:
    out = tmp_path / "index"
    shutil.copytree(doesburg, out)
    return out


@pytest.fixture(scope="module")
def deliveries(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("deliveries")
    rt.write_delivery(d, day1_groups(), DAY0, DAY1)
    rt.write_delivery(d, [], DAY1, DAY2)
    return d


def delivery(folder: Path, start: dt.date, end: dt.date) -> Path:
    return folder / f"BAGNLDM-{start:%d%m%Y}-{end:%d%m%Y}.zip"


def hits(index_dir: Path, q: str) -> list[str]:
    with engine.AddressIndex.open(index_dir) as index:
        return [f"{h.street} {h.number}{h.letter}" for h in index.suggest(q, limit=10)]


def test_a_built_extract_has_its_state_and_its_date(doesburg):
    """The build writes the register's state beside the arrays, named in the manifest; the
    index has the extract's date."""
    manifest = json.loads((doesburg / "manifest.json").read_text())
    register = manifest["register"]
    assert register["date"] == manifest["register_date"] == "2020-09-15"
    assert register["area"] == ["0221"] and register["deliveries"] == []
    for name in register["files"]:
        assert (doesburg / name).is_file()
    with engine.AddressIndex.open(doesburg) as index:
        assert index.register_date == dt.date(2020, 9, 15)


def test_added_address_is_found_withdrawn_is_not_renamed_street_by_its_new_name_only(index, deliveries):
    assert "Kosterstraat 6" not in hits(index, "kosterstraat 6 doesburg")
    assert "Koppenberch 20" in hits(index, "koppenberch 20")
    done = run("update", str(index), str(delivery(deliveries, DAY0, DAY1)))
    assert done.returncode == 0, done.stderr
    assert hits(index, "kosterstraat 6 doesburg")[0] == "Kosterstraat 6"
    assert "Koppenberch 20" not in hits(index, "koppenberch 20")
    assert "Koppenberch 2" in hits(index, "koppenberch 2")          # its neighbour stays
    assert hits(index, "hoornwerckplein 1")[0] == "Hoornwerckplein 1"
    assert not [h for h in hits(index, "het hoornwerck 1") if h.startswith("Het Hoornwerck")]
    with engine.AddressIndex.open(index) as opened:
        assert opened.register_date == dt.date(2020, 9, 16)
        assert opened.manifest["extract_date"] == "2020-09-15"
    # the report: by object type, and the addresses
    assert "NUM: toevoeging 2, wijziging 1: 2 objects; versions added 2 (new objects 1), changed 1, removed 0" \
        in done.stderr
    assert "OPR: toevoeging 1, wijziging 1: 1 objects; versions added 1 (new objects 0), changed 1" in done.stderr
    # as docs/guide/official.md shows it
    assert ("addresses: 1 appeared, 2 changed, 1 disappeared\n"
            "  appeared: Kosterstraat 6, 6981CH Doesburg\n"
            "  changed: Het Hoornwerck 1, 6981ED Doesburg: street 'Het Hoornwerck' -> 'Hoornwerckplein'\n"
            "  changed: Het Hoornwerck 4, 6981ED Doesburg: street 'Het Hoornwerck' -> 'Hoornwerckplein'\n"
            "  disappeared: Koppenberch 20, 6982CZ Doesburg\n") in done.stderr


def test_the_same_delivery_twice_changes_nothing(index, deliveries):
    first = run("update", str(index), str(delivery(deliveries, DAY0, DAY1)))
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in index.iterdir()}
    again = run("update", str(index), str(delivery(deliveries, DAY0, DAY1)))
    assert again.returncode == 0, again.stderr
    assert "BAGNLDM-15092020-16092020.zip (2020-09-15 to 2020-09-16): applied already" in again.stderr
    assert f"nothing to do: {index} holds the register of 2020-09-16" in again.stderr   # as the docs say
    assert {p.name: p.read_bytes() for p in index.iterdir()} == before
    # given with the next one, it is skipped and the next one applied
    both = run("update", str(index), str(delivery(deliveries, DAY1, DAY2)), str(delivery(deliveries, DAY0, DAY1)))
    assert both.returncode == 0, both.stderr
    assert json.loads((index / "manifest.json").read_text())["register_date"] == "2020-09-17"


def test_a_delivery_out_of_order_is_refused_naming_both_dates(index, deliveries):
    before = (index / "manifest.json").read_bytes()
    gap = run("update", str(index), str(delivery(deliveries, DAY1, DAY2)))
    assert gap.returncode == 1
    assert gap.stderr.splitlines()[-1] + "\n" == (
        f"update failed: refusing BAGNLDM-16092020-17092020.zip (2020-09-16 to 2020-09-17): it starts on 2020-09-16, "
        f"but the register in {index} is of 2020-09-15: the deliveries from 2020-09-15 to 2020-09-16 are missing "
        "(a gap); give the deliveries in order from 2020-09-15, or --out-of-order to apply it anyway\n")
    assert (index / "manifest.json").read_bytes() == before
    assert run("update", str(index), str(delivery(deliveries, DAY0, DAY1))).returncode == 0
    assert run("update", str(index), str(delivery(deliveries, DAY1, DAY2))).returncode == 0
    # the state is of 2020-09-17: a delivery of 2020-09-15 -> 16 written anew (not the same file) is older
    older = index.parent / "older"
    rt.write_delivery(older, day1_groups()[:1], DAY0, DAY1)
    done = run("update", str(index), str(delivery(older, DAY0, DAY1)))
    assert done.returncode == 0 and "applied already" in done.stderr   # the same period: applied already
    other = index.parent / "other"
    rt.write_delivery(other, [], dt.date(2020, 9, 14), DAY1)
    done = run("update", str(index), str(delivery(other, dt.date(2020, 9, 14), DAY1)))
    assert done.returncode == 1
    assert ("it ends on 2020-09-16, but the register in " in done.stderr
            and "is of 2020-09-17 already: it is older than the register" in done.stderr)


def test_a_csv_built_index_takes_no_delivery(sample_index_dir, deliveries, tmp_path):
    done = run("update", str(sample_index_dir), str(delivery(deliveries, DAY0, DAY1)), "--out", str(tmp_path / "x"))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] + "\n" == (
        f"update failed: {sample_index_dir} was built from nl-addresses-sample.csv.zst (csv) and holds no register "
        "state: only an index built from the Kadaster's LVBAG extract can take mutation deliveries; build one "
        "with python -m engine build lvbag-extract-nl.zip INDEX_DIR\n")
    assert not (tmp_path / "x").exists()


def test_update_never_replaces_what_is_not_an_index(index, deliveries, tmp_path):
    """--out into a directory of the user's files is refused, and says how to force it."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    done = run("update", str(index), str(delivery(deliveries, DAY0, DAY1)), "--out", str(mine))
    assert done.returncode == 1
    assert "refusing to replace" in done.stderr and "notes.txt" in done.stderr and "--force" in done.stderr
    assert (mine / "notes.txt").read_text() == "keep me"
    done = run("update", str(index), str(delivery(deliveries, DAY0, DAY1)), "--out", str(tmp_path / "new"))
    assert done.returncode == 0, done.stderr
    assert json.loads((index / "manifest.json").read_text())["register_date"] == "2020-09-15"   # untouched
    assert json.loads((tmp_path / "new" / "manifest.json").read_text())["register_date"] == "2020-09-16"


def test_not_a_delivery_is_a_clear_error(index, tmp_path):
    text = tmp_path / "notes.zip"
    text.write_text("hello")
    done = run("update", str(index), str(text))
    assert (done.returncode, done.stderr) == (1, f"update failed: {text}: not a zip or a directory: a mutation "
                                              "delivery is a zip (BAGNLDM-DDMMYYYY-DDMMYYYY.zip) or the directory "
                                              "it unpacks to\n")
    done = run("update", str(index), str(DOESBURG_ZIP))
    assert done.returncode == 1
    assert "no mutation files (9999MUT…-…-NNNNNN.xml): not a mutation delivery (an extract? build it with " \
        "python -m engine build)" in done.stderr
    done = run("build", str(REAL), str(tmp_path / "idx"))
    assert done.returncode == 1
    assert "a mutation delivery, not an extract: apply it to an index built from an extract with python -m " \
        "engine update INDEX_DIR DELIVERY" in done.stderr


def test_real_delivery_on_the_doesburg_state_accounts_for_every_object(index):
    """The real national delivery of 2021-11-14 (its README: verblijfsobject 5,461 toevoegingen /
    5,457 wijzigingen, pand 45 / 39, nummeraanduiding 5 / 1), 14 months after the Doesburg
    extract: refused for the gap, then applied with --out-of-order. Every object it names is
    counted; none is in Doesburg, so no address changes."""
    if not REAL.exists():
        pytest.fail(f"the real delivery is missing: {REAL} (set ADDRESS_DATA_DIR)")
    refused = run("update", str(index), str(REAL))
    assert refused.returncode == 1
    assert "it starts on 2021-11-13, but the register in" in refused.stderr and "is of 2020-09-15" in refused.stderr
    done = run("update", str(index), str(REAL), "--out-of-order")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((index / "manifest.json").read_text())
    (entry,) = manifest["update"]["deliveries"]
    objects = entry["objects"]
    assert {k: (v["toevoeging"], v["wijziging"], v["verwijdering"]) for k, v in objects.items()} == {
        "NUM": (5, 1, 0), "VBO": (5_461, 5_457, 0), "PND": (45, 39, 0)}
    # every object named, counted by its identification in the XML itself
    named: dict[str, set[str]] = {"NUM": set(), "VBO": set()}
    with zipfile.ZipFile(REAL) as outer, zipfile.ZipFile(outer.open("9999MUT13112021-14112021.zip")) as inner:
        for name in inner.namelist():
            text = inner.read(name).decode()
            for kind, tag in (("NUM", "Nummeraanduiding"), ("VBO", "Verblijfsobject")):
                mark = f'<Objecten:identificatie domein="NL.IMBAG.{tag}">'
                at = text.find(mark)
                while at >= 0:
                    named[kind].add(text[at + len(mark):at + len(mark) + 16])
                    at = text.find(mark, at + 1)
    for kind in ("NUM", "VBO"):
        assert objects[kind]["objects"] == objects[kind]["outside_area"] == len(named[kind])
        assert objects[kind]["added"] == objects[kind]["changed"] == objects[kind]["removed"] == 0
    assert manifest["update"]["addresses"]["appeared"] == manifest["update"]["addresses"]["changed"] == 0
    assert manifest["register_date"] == "2021-11-14"
    assert entry["skipped"] == ["9999IOMUT13112021-14112021.zip (in-onderzoek marks: no part of an address)"]
    # as docs/guide/official.md shows it
    assert (
        "BAGNLDM-13112021-14112021.zip (2021-11-13 to 2021-11-14):\n"
        "  NUM: toevoeging 5, wijziging 1: 5 objects, 5 of them outside the area (0221) (not kept); versions added 0 "
        "(new objects 0), changed 0, removed 0\n"
        "  VBO: toevoeging 5,461, wijziging 5,457: 5,459 objects, 5,459 of them outside the area (0221) (not kept); "
        "versions added 0 (new objects 0), changed 0, removed 0\n"
        "  PND: toevoeging 45, wijziging 39: panden hold no address, not kept\n") in done.stderr


def _as_state_version_1(index: Path) -> None:
    """Rewrite the state of `index` as version 1 wrote it: no WGS84 points (`lon`, `lat`)."""
    from engine.checksums import file_checksums
    from engine.ingest.register import read_arrays, write_arrays

    for kind in ("VBO", "LIG", "STA"):
        path = index / f"register-{kind}.zst"
        arrays = read_arrays(path)
        assert {"lon", "lat"} <= set(arrays)
        path.chmod(0o644)
        write_arrays(path, {k: v for k, v in arrays.items() if k not in ("lon", "lat")})
    manifest = json.loads((index / "manifest.json").read_text())
    manifest["register"]["version"] = 1
    manifest["files"] = file_checksums(index, manifest["files"])
    (index / "manifest.json").chmod(0o644)
    (index / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def test_a_state_of_version_1_takes_a_delivery_and_gives_the_same_index(doesburg, deliveries, tmp_path):
    """Guards the state's version 2 (the WGS84 point of each VBO, LIG and STA record kept, so an
    update converts only the new ones): a state written before, without the points, is read
    with them not converted yet, and the update gives the same index, byte for byte, and a
    state of version 2; a version this engine does not know is refused, naming both."""
    old = tmp_path / "v1"
    shutil.copytree(doesburg, old)
    _as_state_version_1(old)
    day1 = str(delivery(deliveries, DAY0, DAY1))
    for src, out in ((doesburg, tmp_path / "from-v2"), (old, tmp_path / "from-v1")):
        done = run("update", str(src), day1, "--out", str(out))
        assert done.returncode == 0, done.stderr
    assert rt.same_arrays(tmp_path / "from-v1", tmp_path / "from-v2") == []
    manifest = json.loads((tmp_path / "from-v1" / "manifest.json").read_text())
    assert manifest["register"]["version"] == 2
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["register"]["version"] = 99
    (old / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    refused = run("update", str(old), day1, "--out", str(tmp_path / "never"))
    assert refused.returncode == 1
    assert "its register state has version 99, this engine reads versions 1, 2: build it again" in refused.stderr
    assert not (tmp_path / "never").exists()
