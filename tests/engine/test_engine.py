"""The engine on the real sample of the register: behaviour a person and a client rely on."""

from __future__ import annotations

import json
import pickle
import random
import shutil
import threading

import numpy as np
import pytest

import engine
from engine.ingest.source import read_source
from engine.normalize import fold

COMPONENT_ORDER = [
    "NLD_PUBLIC_SPACE", "NLD_HOUSE_NUMBER", "NLD_HOUSE_LETTER", "NLD_HOUSE_NUMBER_ADDITION",
    "NLD_POSTAL_CODE", "NLD_LOCALITY", "NLD_MUNICIPALITY", "NLD_PROVINCE", "NLD_COUNTRY",
]


@pytest.fixture(scope="module")
def rows(sample_source):
    """Every row of the sample as (street, number, letter, addition, postcode, locality)."""
    t = read_source(sample_source, progress=False)
    out = []
    for i in range(len(t.number)):
        pc = int(t.postcode[i])
        digits, r = divmod(pc, 676)
        postcode = f"{digits:04d} {chr(65 + r // 26)}{chr(65 + r % 26)}"
        out.append((t.streets[t.street[i]], int(t.number[i]),
                    chr(t.letter[i]) if t.letter[i] else "", t.additions[t.addition[i]],
                    postcode, t.localities[t.locality[i]]))
    return out


def comps(hit):
    return {c["type"]: c["value"] for c in hit["components"]}


def key(hit):
    c = comps(hit)
    return (c["NLD_PUBLIC_SPACE"], c["NLD_HOUSE_NUMBER"], c.get("NLD_HOUSE_LETTER", ""),
            c.get("NLD_HOUSE_NUMBER_ADDITION", ""), c["NLD_POSTAL_CODE"], c["NLD_LOCALITY"])


def test_postcode_and_number_find_exactly_that_address_first(sample_index, rows):
    rng = random.Random(7)
    for row in rng.sample(rows, 300):
        street, number, letter, addition, postcode, locality = row
        q = f"{postcode.replace(' ', '')} {number}{letter}" + (f" {addition}" if addition else "")
        hits = [h.to_dict() for h in sample_index.suggest(q, limit=5)]
        assert hits, q
        assert key(hits[0]) == row, q


@pytest.mark.parametrize("form", ["{pc} {n}", "{pcl} {n}", "{pcg}{n}", "{pcs}{n}"])
def test_postcode_forms(sample_index, rows, form):
    rng = random.Random(11)
    for row in rng.sample([r for r in rows if not r[2] and not r[3]], 50):
        pc = row[4]
        q = form.format(pc=pc, pcl=pc.lower(), pcg=pc.replace(" ", "").lower(),
                        pcs=pc.replace(" ", ""), n=row[1])
        assert key(sample_index.suggest(q, limit=1)[0].to_dict()) == row, q


def test_street_number_locality_in_any_order_and_case(sample_index, rows):
    rng = random.Random(3)
    for row in rng.sample([r for r in rows if not r[2] and not r[3]], 200):
        street, number, _, _, _, locality = row
        for q in (f"{street} {number} {locality}", f"{locality} {street} {number}",
                  f"{number} {street} {locality}".upper()):
            keys = [key(h.to_dict()) for h in sample_index.suggest(q, limit=5)]
            assert row in keys, q


def test_hits_are_real_rows_and_never_exceed_the_limit(sample_index, rows):
    real = set(rows)
    for q in ["kerkstraat", "a", "1", "groningen 1", "s", "2511", "hoofd", "maastricht", "z 1"]:
        for limit in (1, 3, 5, 10):
            hits = sample_index.suggest(q, limit=limit)
            assert len(hits) <= limit
            for hit in hits:
                assert key(hit.to_dict()) in real, (q, hit)


def test_response_shape_follows_the_contract(sample_index):
    body = json.loads(sample_index.suggest_json("Hooistraat 2a den haag", limit=1))
    hit = body["hits"][0]
    assert [c["type"] for c in hit["components"]] == [
        t for t in COMPONENT_ORDER if t != "NLD_HOUSE_NUMBER_ADDITION"]
    c = comps(hit)
    assert isinstance(c["NLD_HOUSE_NUMBER"], int)
    assert hit["country"] == "NLD"
    assert hit["lines"] == ["Hooistraat 2A", f"{c['NLD_POSTAL_CODE']} 's-Gravenhage", "Nederland"]
    assert c["NLD_COUNTRY"] == "Nederland"
    assert set(hit["location"]) == {"latitude", "longitude"}
    assert 50 < hit["location"]["latitude"] < 54 and 3 < hit["location"]["longitude"] < 8


def test_addition_appears_in_components_and_line(sample_index, rows):
    row = next(r for r in rows if r[3] and not r[2])
    hit = [h.to_dict() for h in sample_index.suggest(f"{row[4]} {row[1]}-{row[3]}", limit=1)][0]
    assert comps(hit)["NLD_HOUSE_NUMBER_ADDITION"] == row[3]
    assert hit["lines"][0] == f"{row[0]} {row[1]}-{row[3]}"


def test_blank_and_unknown_queries_give_no_hits(sample_index):
    for q in ["", "   ", "qqqqxxzz 12", "!!!", "\x00", "😀"]:
        assert sample_index.suggest(q) == []
        assert sample_index.suggest_json(q) == b'{"hits":[],"limit":5}'


def test_same_query_same_body(sample_index):
    for q in ["kerk", "hoofdstraat 1", "2511 ab", "s"]:
        assert len({sample_index.suggest_json(q, limit=7) for _ in range(5)}) == 1


def test_complete_number_before_prefix_and_letters_in_order(sample_index):
    hits = [h.to_dict() for h in sample_index.suggest("Hooistraat 2 den haag", limit=10)]
    numbers = [(comps(h)["NLD_HOUSE_NUMBER"], comps(h).get("NLD_HOUSE_LETTER", "")) for h in hits]
    exact = [n for n in numbers if n[0] == 2]
    assert numbers[: len(exact)] == exact and exact == sorted(exact)
    assert all(str(n).startswith("2") for n, _ in numbers)


@pytest.mark.parametrize("bad, parameter", [
    (dict(q="x", limit=0), "limit"), (dict(q="x", limit=11), "limit"),
    (dict(q="x" * 129), "q"), (dict(q="x", lat=52.0), "lon"), (dict(q="x", lat=91, lon=4), "lat"),
])
def test_bad_arguments_raise_query_error(sample_index, bad, parameter):
    with pytest.raises(engine.QueryError) as e:
        sample_index.suggest_json(**bad)
    assert e.value.parameter == parameter


def test_limit_must_be_an_int(sample_index):
    with pytest.raises(TypeError):
        sample_index.suggest_json("x", limit="5")


def test_128_code_points_is_the_maximum(sample_index):
    assert [h.to_dict() for h in sample_index.suggest("é" * 128)] == []
    with pytest.raises(engine.QueryError) as e:
        sample_index.suggest("😀" * 129)
    assert e.value.code == "query_too_long"


def test_pickle_reopens_the_same_files(sample_index):
    clone = pickle.loads(pickle.dumps(sample_index))
    assert clone.suggest_json("hooistraat 2") == sample_index.suggest_json("hooistraat 2")


def test_threads_get_the_same_answers(sample_index):
    queries = ["kerkstraat 1", "2511 ab 1", "groningen herestraat", "hooistraat 2a den haag"] * 50
    expected = [sample_index.suggest_json(q) for q in queries]
    results = {}

    def run(k):
        results[k] = [sample_index.suggest_json(q) for q in queries]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results.values())


def test_the_arrays_are_memory_mapped_read_only(sample_index):
    import mmap
    for name, arr in sample_index.arrays.items():
        assert not arr.flags.writeable, name
        if arr.size:
            base = arr
            while isinstance(base, np.ndarray):
                base = base.base
            if isinstance(base, memoryview):
                base = base.obj
            assert isinstance(base, mmap.mmap), name


@pytest.mark.parametrize("damage", ["manifest", "version", "truncate", "missing", "shape"])
def test_a_broken_index_fails_clearly(sample_index_dir, tmp_path, damage):
    broken = tmp_path / "broken"
    shutil.copytree(sample_index_dir, broken)
    if damage == "manifest":
        (broken / "manifest.json").unlink()
    elif damage == "version":
        m = json.loads((broken / "manifest.json").read_text())
        m["format_version"] = 999
        (broken / "manifest.json").write_text(json.dumps(m))
    elif damage == "truncate":
        f = broken / "a_number.npy"
        f.write_bytes(f.read_bytes()[:1000])
    elif damage == "missing":
        (broken / "g_tokrec.npy").unlink()
    elif damage == "shape":
        np.save(broken / "g_start.npy", np.zeros(3, dtype=np.int32))
    with pytest.raises(engine.IndexOpenError):
        engine.AddressIndex.open(broken)


def test_postcodes_out_of_order_fail_clearly(sample_index_dir, tmp_path):
    """Guards `_pc_ranks`: a postcode's place is counted in a table made when the index opens,
    right only when pc_code rises strictly; an index whose postcodes do not is refused."""
    broken = tmp_path / "broken"
    shutil.copytree(sample_index_dir, broken)
    codes = np.load(broken / "pc_code.npy")
    codes[[0, 1]] = codes[[1, 0]]
    np.save(broken / "pc_code.npy", codes)
    m = json.loads((broken / "manifest.json").read_text())   # (the file as if the build wrote it)
    m["files"].update(engine.checksums.file_checksums(broken, ["pc_code.npy"]))
    (broken / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(engine.IndexOpenError, match="postcodes are not sorted and distinct"):
        engine.AddressIndex.open(broken)


def test_open_a_missing_directory(tmp_path):
    with pytest.raises(engine.IndexOpenError, match="no index"):
        engine.AddressIndex.open(tmp_path / "nothing")


def test_manifest_counts(sample_index):
    m = sample_index.manifest
    assert m["rows_in"] == 643071
    assert m["rows_out"] + m["merged"] + m["rejected"] == m["rows_in"]
    assert m["merged"] > 0 and len(sample_index) == m["rows_out"]
    assert len(m["source_sha256"]) == 64


@pytest.mark.parametrize("text, folded", [
    ("'s-Gravenhage", "s gravenhage"), ("Súdwest-Fryslân", "sudwest fryslan"),
    ("Curaçaostraat", "curacaostraat"), ("IJsselmonde", "ysselmonde"),
    ("Burg. de Withstraat", "burg de withstraat"), ("kerkstraat12a", "kerkstraat 12a"),
    ("1012LG1", "1012lg 1"), ("H.C. Pootstraat", "h c pootstraat"), ("Straße", "strasse"),
])
def test_fold(text, folded):
    assert fold(text) == folded


def test_fold_in_c_matches_python(sample_index):
    # the compiled folding must see "Súdwest-Fryslân" and "sudwest fryslan" alike
    a = sample_index.suggest_json("Herestraat 1 Súdwest-Fryslân", limit=10)
    b = sample_index.suggest_json("herestraat 1 sudwest fryslan", limit=10)
    assert a == b


def test_a_failed_build_leaves_the_good_index_in_place(sample_index_dir, tmp_path):
    from engine.ingest.build import build
    from engine.ingest.source import SourceError

    target = tmp_path / "nl"
    shutil.copytree(sample_index_dir, target)
    before = engine.AddressIndex.open(target).suggest_json("hooistraat 2a den haag")
    bad = tmp_path / "bad.csv"
    header = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon\n"
    bad.write_text(header + "Damrak;0;;;1012LG;Amsterdam;Amsterdam;Noord-Holland;52.37;4.89\n" * 10)
    with pytest.raises(SourceError, match="line 2"):
        build(bad, target, progress=False)
    assert engine.AddressIndex.open(target).suggest_json("hooistraat 2a den haag") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "nl"]  # no temporary left


def test_the_build_reports_bad_rows_with_their_line(tmp_path, capsys):
    from engine.ingest.build import build

    good = "Damrak;{n};;;1012LG;Amsterdam;Amsterdam;Noord-Holland;52.376053;4.895985\n"
    header = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon\n"
    rows = [good.format(n=n) for n in range(1, 2001)]
    rows[41] = "Damrak;12;;;1012 LG;Amsterdam;Amsterdam;Noord-Holland;52.37;4.89\n"  # line 43
    src = tmp_path / "mini.csv"
    src.write_text(header + "".join(rows))
    manifest = build(src, tmp_path / "idx", progress=False)
    assert manifest["rejected"] == 1 and manifest["rows_out"] == 1999
    assert "mini.csv:43: malformed postcode" in capsys.readouterr().err
    tiny = engine.AddressIndex.open(tmp_path / "idx")  # a tiny index works like a big one
    assert tiny.suggest("damrak 2000")[0].lines[0] == "Damrak 2000"
    hits = [h.to_dict() for h in tiny.suggest("damrak 42", limit=3)]  # 42 itself was the bad row
    assert [h["lines"][0] for h in hits] == ["Damrak 420", "Damrak 421", "Damrak 422"]


def test_a_house_number_with_hundreds_of_additions(tmp_path):
    """Regression: a marina's 100K-K029 sat past a cap of 256 addresses per house number."""
    from engine.ingest.build import build

    header = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon\n"
    row = "Wierstraat;100;{l};{a};3151VP;Hoek van Holland;Rotterdam;Zuid-Holland;51.99;4.12\n"
    rows = [row.format(l=letter, a=f"K{k:03d}") for letter in "ABCDEFGHIJK" for k in range(1, 60)]
    (tmp_path / "marina.csv").write_text(header + "".join(rows))
    build(tmp_path / "marina.csv", tmp_path / "idx", progress=False)
    index = engine.AddressIndex.open(tmp_path / "idx")
    for q in ["3151VP 100K K029", "wierstraat 100k-k029 hoek van holland", "3151 vp 100 k k029"]:
        assert index.suggest(q, limit=1)[0].lines[0] == "Wierstraat 100K-K029", q
    # a typed letter is read as the letter before it is read as the start of an addition
    assert index.suggest("3151VP 100K", limit=1)[0].lines[0] == "Wierstraat 100K-K001"


def test_a_slip_in_a_short_word_counts_its_ij_as_typed(tmp_path):
    """Regression: "zuije" folds to the 4-letter "zuye", below the typo threshold of 5 letters."""
    from engine.ingest.build import build

    header = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon\n"
    rows = [f"Zuidje;{n};;;1636XB;Schermerhorn;Alkmaar;Noord-Holland;52.6;4.9\n" for n in range(1, 30)]
    rows += [f"Zwetstraat;{n};;;1636XC;Schermerhorn;Alkmaar;Noord-Holland;52.6;4.9\n" for n in range(1, 30)]
    (tmp_path / "mini.csv").write_text(header + "".join(rows))
    build(tmp_path / "mini.csv", tmp_path / "idx", progress=False)
    index = engine.AddressIndex.open(tmp_path / "idx")
    assert index.suggest("zuije 15 schermerhorn", limit=1)[0].lines[0] == "Zuidje 15"


def test_the_bound_beside_each_posting():
    """`H.C. Pootstraat` in Hengelo (municipality Hengelo Ov, say): what each token leaves for
    the other words to cover, and its kind flags (build._posting_meta)."""
    from engine.ingest.build import _posting_meta
    from engine.vocab import ALIAS, LOCALITY, MUNICIPALITY, STREET
    kinds = [STREET, STREET, STREET | ALIAS, STREET, LOCALITY, MUNICIPALITY]
    covers = [1, 2, 3, 4, 0, 0]            # h, c, hc (glued), pootstraat, hengelo, hengelo ov
    meta = _posting_meta(np.array([0, 6], np.int32), np.array(kinds, np.uint8),
                         np.array(covers, np.uint64)).tolist()
    unc = [m & 15 for m in meta]
    assert unc == [2, 2, 1, 2, 3, 3]
    # the glued `hc` can cover two of what `pootstraat` or the place leave
    assert [(m >> 4) & 1 for m in meta] == [0, 0, 0, 1, 1, 1]
    assert [bool(m & 0x20) for m in meta] == [False, False, False, False, True, False]
    assert [bool(m & 0x40) for m in meta] == [False, False, True, False, False, False]
    assert [bool(m & 0x80) for m in meta] == [False, False, False, False, False, True]


def test_the_bound_beside_each_posting_with_two_glued_forms():
    """`H.C. v.d. Pootstraat`: `hc` and `vd` each cover two street words. The scan takes k other
    words to cover at most k + 1 of what a token leaves (with the glued bit), so the count
    stored is the least that holds for every k; it used to be 0, and every group of a street
    with two sets of initials was scored for a one-letter word ("d 3077 39")."""
    from engine.ingest.build import _posting_meta
    from engine.vocab import ALIAS, LOCALITY, STREET
    kinds = [STREET, STREET, STREET | ALIAS, STREET, STREET, STREET | ALIAS, STREET, LOCALITY]
    covers = [1, 2, 3, 4, 8, 12, 16, 0]    # h, c, hc, v, d, vd, pootstraat, the place
    meta = _posting_meta(np.array([0, 8], np.int32), np.array(kinds, np.uint8),
                         np.array(covers, np.uint64)).tolist()
    assert [m & 15 for m in meta] == [4, 4, 3, 4, 4, 3, 3, 4]
    assert all((m >> 4) & 1 for m in meta)
    # the bound holds: after the place, k words cover at most 2, 4, 5 of the five street words
    # (`hc`, `vd`, then one more), and the scan's count leaves 4 - k - 1 of them
    for k, left in ((1, 3), (2, 1), (3, 0)):
        assert max(0, (meta[7] & 15) - k - 1) <= left


def test_the_filter_of_starts_never_turns_away_a_start_of_a_token(sample_index):
    """The per-process filter that spares the searches for a word no token starts with
    (`_may_start`, slips in a word being typed, glued words cut): every start of every token
    passes it, and most words that start none do not."""
    from engine import _core
    a = sample_index.arrays
    blob, off = bytes(a["v_blob"]), a["v_off"]
    tokens = [blob[off[k]:off[k + 1]] for k in range(len(off) - 1)]
    starts = {t[:n] for t in tokens for n in range(1, len(t) + 1)}
    for w in sorted(starts):
        assert _core._may_start_word(sample_index, w), w
    # each start with its letters from the fourth on changed: the start of no token
    others = {w[:3] + bytes((97 + (c - 97 + 13) % 26) if 97 <= c <= 122 else c for c in w[3:])
              for w in starts if len(w) >= 5} - starts
    assert len(others) > 1000
    turned = sum(not _core._may_start_word(sample_index, w) for w in others)
    assert turned > 0.9 * len(others), (turned, len(others))


def test_the_search_for_a_house_number_finds_its_first_address_in_any_run(sample_index):
    """`_lower_bound_number` (galloping from a run's start, then halving) finds where a number
    is or would be in every kind of run: a street's addresses and a postcode's (through
    pc_addr), a number below, inside and above the run, present or missing, at its first or
    last address, in runs of one address and of none."""
    from engine import _core
    a = sample_index.arrays
    num, g_start = a["a_number"], a["g_start"]
    pc_start, pc_num = a["pc_start"], a["a_number"][a["pc_addr"]]
    rng = random.Random(7)
    runs = [(int(g_start[g]), int(g_start[g + 1]), False) for g in rng.sample(range(len(g_start) - 1), 400)]
    runs += [(int(pc_start[p]), int(pc_start[p + 1]), True) for p in rng.sample(range(len(pc_start) - 1), 200)]
    longest = max(range(len(g_start) - 1), key=lambda g: g_start[g + 1] - g_start[g])
    runs.append((int(g_start[longest]), int(g_start[longest + 1]), False))
    runs += [(5, 5, False), (7, 8, False), (3, 3, True)]
    checked = 0
    for lo, hi, is_pc in runs:
        vals = (pc_num if is_pc else num)[lo:hi]
        assert (np.diff(vals) >= 0).all()
        wanted = {0, 1, 2, 99999} | {int(v) + d for v in vals[:: max(1, len(vals) // 9)] for d in (-1, 0, 1)}
        if len(vals):
            wanted |= {int(vals[0]), int(vals[-1]), int(vals[-1]) + 1}
        for number in wanted:
            got = _core._number_lower_bound(sample_index, lo, hi, number, is_pc)
            assert got == lo + int(np.searchsorted(vals, number, "left")), (lo, hi, is_pc, number)
            checked += 1
    assert checked > 5000


def test_every_group_record_holds_its_tokens_length(sample_index):
    """The scoring reads a token's length from the group's record (TokRec.tlen, build.py), not
    from the vocabulary: it must be the length of the token's text, or TLEN_LONG when that
    long or longer."""
    from engine import _core
    a = sample_index.arrays
    first = a["g_tokrec"][0::2]
    tok = (first & np.uint64(0xFFFFFFFF)).astype(np.int64)
    tlen = ((first >> np.uint64(40)) & np.uint64(0xFF)).astype(np.int64)
    lengths = np.diff(a["v_off"])[tok]
    assert len(tok) > 1000 and lengths.min() >= 1
    assert (tlen == np.minimum(lengths, _core.BITS["TLEN_LONG"])).all()
    # the sample's longest tokens are short of the cap: the fallback is read on a copy that
    # says so for every token, and the answers stay the same
    capped = a["g_tokrec"].copy()
    capped[0::2] |= np.uint64(0xFF) << np.uint64(40)
    long_ = _core.Index({**a, "g_tokrec": capped})
    for q in ("kerkstr 1", "s gr", "gron", "heerenveen", "st jansstr 2"):
        assert long_.search_ids(q, limit=10) == sample_index.search_ids(q, limit=10), q


def test_stored_answers_are_what_the_search_answers(sample_index):
    """One-word queries that scan the most, and the four digits of each postcode area, are
    answered from the index (build._stored_answers): at every limit, in any case and spacing,
    exactly what the search computes without them; a focus point or a second word goes past
    them."""
    from engine import _core
    a = sample_index.arrays
    n = len(a["sa_off"]) - 1
    assert n > 20
    bare = _core.Index({**a, "sa_blob": np.zeros(0, np.uint8), "sa_off": np.zeros(1, np.int64),
                        "sa_start": np.zeros(1, np.int32), "sa_addr": np.zeros(0, np.int32)})
    blob, off = bytes(a["sa_blob"]), a["sa_off"]
    words = [blob[off[k]:off[k + 1]].decode() for k in range(n)]
    assert "s" in words and "groningen" in words
    # ... and the four digits of every postcode area
    areas = {str(c // 676) for c in a["pc_code"].tolist()}
    assert areas and areas <= set(words)
    for w in words:
        for limit in range(1, 11):
            for q in (w, f" {w.upper()} "):
                assert sample_index.search_ids(q, limit=limit) == bare.search_ids(q, limit=limit), (q, limit)
    for q, kw in (("kerk", {"lat": 53.2, "lon": 6.56}), ("kerk 1", {}), ("s gr", {})):
        assert sample_index.search_ids(q, limit=5, **kw) == bare.search_ids(q, limit=5, **kw)


@pytest.mark.slow
def test_the_same_data_builds_the_same_index(sample_source, tmp_path):
    """Two builds in processes with different string hashing (PYTHONHASHSEED) write equal
    arrays: nothing depends on the order of a set."""
    import os
    import subprocess
    import sys
    dirs = []
    for seed in ("1", "2"):
        out = tmp_path / f"idx{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "engine", "build", str(sample_source), str(out), "--no-progress"],
                       check=True, env=env, capture_output=True)
        dirs.append(out)
    a, b = (engine.AddressIndex.open(d).arrays for d in dirs)
    assert [k for k in a if not np.array_equal(a[k], b[k])] == []
