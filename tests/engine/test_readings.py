"""How the engine reads a query, rule by rule, checked as a person would: a query in, the
address out, on the sample; and, through `Index.trace`, which reading found it.

These rules were pinned only by the twin's copy of the parsing and the retries until issue 13;
the twin now replays the engine's readings (engine/_reference.py), so these tests specify them
(with tests/engine/test_understanding.py, which holds the rest)."""

from __future__ import annotations

import pytest

from engine._core import query_tokens


def lines(index, q, limit=5):
    return [h.lines[0] + ", " + h.lines[1] for h in index.suggest(q, limit=limit)]


def stages(index, q, limit=5):
    """(stage, found) of each reading the engine tried for q."""
    return [(r["stage"], r["found"]) for r in index.trace(q, limit=limit)["readings"]]


def found_by(index, q):
    """The reading that found the answer."""
    return index.trace(q)["readings"][-1]


# ---- tokens (_parse.pxi _tokenise; _core.pyx _new_search)

def test_a_number_glued_to_the_street_is_cut_from_it(sample_index):
    assert query_tokens("Herestraat12a Rijswijk") == ["herestraat", "12a", "ryswyk"]
    assert lines(sample_index, "herestraat12 groningen")[0] == "Herestraat 12, 9711 LJ Groningen"
    assert stages(sample_index, "herestraat12 groningen") == [("typed", True)]


def test_letters_glued_to_a_number_stay_on_it():
    """12a is a number with its letter, and so is 3-b (a hyphen glues an addition's few letters
    and digits to the number); 's-Gravenhage is two words."""
    assert query_tokens("12a 3-b 's-Gravenhage") == ["12a", "3b", "s", "gravenhage"]
    assert query_tokens("123-H 12-bis 45\u2013RD 2-ap8") == ["123h", "12bis", "45rd", "2ap", "8"]
    # numbers apart, and words longer than an addition: as before
    assert query_tokens("12-2 1-Februariweg 1672-Laan 5-Meistraat") == [
        "12", "2", "1", "februariweg", "1672", "laan", "5", "meistraat"]


def test_a_letter_after_a_hyphen_is_the_house_s_not_the_start_of_a_place(sample_index):
    """Acacialaan 1 is in Groningen and in Rosmalen, neither with an R: "Acacialaan 1-R" read
    the R as the start of Rosmalen and answered only Rosmalen's. With the hyphen the R is a
    letter or addition typed with the number, as "Acacialaan 1R": both, the likelier first."""
    hits = lines(sample_index, "Acacialaan 1-R")
    assert hits == lines(sample_index, "Acacialaan 1R")
    assert hits[:2] == ["Acacialaan 1, 9741 KV Groningen", "Acacialaan 1, 5248 BH Rosmalen"]
    # apart, the R may still start the place
    assert lines(sample_index, "Acacialaan 1 R")[0] == "Acacialaan 1, 5248 BH Rosmalen"


# ---- postcodes (_parse.pxi _parse)

@pytest.mark.parametrize("q", ["9711lj 12", "9711 lj 12", "9711LJ 12", "12 9711 LJ"])
def test_a_postcode_glued_or_apart_with_the_number(sample_index, q):
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"
    assert stages(sample_index, q) == [("typed", True)]


@pytest.mark.parametrize(("q", "start"), [("9711", " 9711 "), ("9711 l", " 9711 L"), ("9711l", " 9711 L")])
def test_a_postcode_being_typed_alone(sample_index, q, start):
    """Four digits alone, with a letter glued on or apart: the addresses of those postcodes."""
    got = lines(sample_index, q, limit=10)
    assert len(got) == 10 and all(start in h for h in got), got


def test_a_postcode_being_typed_after_the_number_narrows_by_slips_only_of_unknown_words(sample_index):
    """Within a postcode being typed, no slip in a whole word: `kerkstraat 12 2011` is a
    Kerkstraat near 2011, never a Parkstraat in it."""
    got = lines(sample_index, "kerkstraat 12 2011")
    assert got and all(h.startswith("Kerkstraat 12,") for h in got), got
    # read within 2011 (nothing), then 2011 as an addition (nothing), then near it
    assert [r["mode"] for r in sample_index.trace("kerkstraat 12 2011")["readings"]] == [1, 0, 3]


def test_a_split_postcode_with_a_slip(sample_index):
    assert lines(sample_index, "herestraat 12 9712 lj")[0] == "Herestraat 12, 9711 LJ Groningen"
    last = found_by(sample_index, "herestraat 12 9712 lj")
    assert last["stage"] == "postcode slip" and last["added"] == ["9711lj"], last


# ---- the parts after the number

def test_a_word_no_addition_starts_is_no_part_of_the_number(sample_index):
    """`dijk 21 sero`: no addition starts with `sero`, so it is no part of 21; it names
    nothing either, so it is left out."""
    assert lines(sample_index, "dijk 21 sero")[0].startswith("Oude Dijk 21,")
    assert found_by(sample_index, "dijk 21 sero")["dropped"] == ["sero"]


def test_the_parts_of_the_last_numbers_are_left_out_before_the_nearest_numbers(sample_index):
    """`herestraat 12-2 groningen`: no 12-2, so Herestraat 12 (its parts left out)."""
    assert lines(sample_index, "herestraat 12-2 groningen")[0] == "Herestraat 12, 9711 LJ Groningen"
    assert stages(sample_index, "herestraat 12-2 groningen") == [("typed", False), ("without parts", True)]


# ---- words left out (_retry.pxi _drop_retry)

@pytest.mark.parametrize("q", ["gemeente groningen herestraat 12", "herestraat 12 woonplaats groningen"])
def test_a_word_that_labels_a_field_is_left_out(sample_index, q):
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"
    last = found_by(sample_index, q)
    assert last["stage"] == "without words" and last["dropped"] in (["gemeente"], ["woonplaats"]), last


@pytest.mark.parametrize("q", ["herestraat 12 groningen nederland nederland nederland",
                               "nederland herestraat 12 groningen"])
def test_country_words_at_either_end_are_left_out(sample_index, q):
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"
    assert "nederland" in found_by(sample_index, q)["dropped"]


def test_a_word_that_matches_only_with_a_slip_is_left_out(sample_index):
    """`wirle` is two slips from anything here: Lodewijkstraat in Groningen without it."""
    assert lines(sample_index, "wirle lodewijkstraat 1 groningen")[0].startswith("Lodewijkstraat 1")
    assert found_by(sample_index, "wirle lodewijkstraat 1 groningen")["dropped"] == ["wirle"]


def test_a_word_that_matches_nothing_is_left_out_after_respacing(sample_index):
    q = "herestraat 12 zzzzzz groningen"
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"
    got = stages(sample_index, q)
    # (a glued-words reading comes first, since issue 14: zzzzzz starts no word)
    assert got[-3:] == [("typed", False), ("respaced", False), ("without words", True)], got


def test_a_query_of_more_than_twelve_words_is_not_retried(sample_index):
    """The retries (respaced, words left out, nearest numbers) are for queries of at most
    DROP_MAX_TOKENS (12) tokens: longer ones are read as typed only."""
    q = "a b c d e f g h i j k l herestraat 12"
    assert lines(sample_index, q) == []
    assert stages(sample_index, q) == [("typed", False)]
    assert stages(sample_index, "herestraat 12 groningen zzzzzz")[-1] == ("without words", True)


def test_a_number_that_reads_as_a_postcode_is_tried_in_order(sample_index):
    """`herestraat 1233hs groningen`: no house 1233 with HS, no postcode 1233 HS nor one a
    slip from it that holds such a house: the words alone, near where 1233 lies."""
    q = "herestraat 1233hs groningen"
    assert lines(sample_index, q)[0].startswith("Herestraat ")
    got = [s for s, _ in stages(sample_index, q)]
    assert got[0] == "typed" and got[-1] == "without postcode", got
    assert got.index("without parts") < got.index("postcode slip"), got
    assert found_by(sample_index, q)["dropped"] == ["1233hs"]


def test_the_nearest_numbers_come_after_the_parts_are_left_out(sample_index):
    q = "herestraat 1 2 3"
    assert lines(sample_index, q)[0] == "Herestraat 1, 9711 LA Groningen"
    assert [s for s, _ in stages(sample_index, q)] == ["typed", "without parts", "nearest numbers"]


@pytest.mark.parametrize("q", ["Here straat 500 Groningen", "heres traat 500 groningen", "Here straat 500"])
def test_a_street_typed_in_two_words_without_the_number_typed_gets_its_nearest_numbers(sample_index, q):
    """Herestraat has no number 500. Typed as one word, its nearest numbers answer; typed in two
    words that glued make the street, it answered nothing: the respaced reading is read as typed
    (number 500 only), and the nearest numbers were of the two words apart."""
    hits = sample_index.suggest(q, limit=3)
    assert [h.street for h in hits] == ["Herestraat"] * 3
    assert [h.number for h in hits] == [h.number for h in sample_index.suggest("herestraat 500 groningen", limit=3)]
    last = sample_index.trace(q)["readings"][-1]
    assert (last["stage"], last["near_number"], last["tokens"][:2]) == ("nearest numbers", True, ["herestraat", "500"])


def test_two_words_glued_for_their_nearest_numbers_still_need_street_and_place(sample_index):
    """Glued, the words must name a street of the place typed: no Herestraat in 's-Gravenhage,
    no Teststraat at all (a wrong street is worse than no answer)."""
    assert sample_index.suggest("Herestraat 500 's-Gravenhage") == []
    assert sample_index.suggest("Heres traat 500 's-Gravenhage") == []
    assert sample_index.suggest("Test straat 999 Groningen") == []


@pytest.mark.parametrize(("q", "want"), [
    ("JW Frisostraat 1 Sneek", "Johan Willem Frisostraat 1, 8606 CR Sneek"),
    ("jw frisostraat 1 groningen", "Johan Willem Frisostraat 1, 9717 EL Groningen"),
    ("JP Coenstraat 1 's-Hertogenbosch", "Jan Pieterszoon Coenstraat 1, 5223 VN 's-Hertogenbosch"),
])
def test_initials_typed_glued_are_read_letter_by_letter(sample_index, q, want):
    """Initials typed without dots or spaces, where the register spells the names in full: each
    letter starts a word (they answered nothing)."""
    assert lines(sample_index, q)[0] == want
    last = sample_index.trace(q)["readings"][-1]
    assert last["stage"] == "respaced" and len(last["added"]) == 2


def test_two_initials_the_register_glues_are_found_as_typed(sample_index):
    """The index holds two initials also glued (M.K. as "mk"): no retry is needed there; three
    (S.O.J.) are read letter by letter."""
    assert stages(sample_index, "MK Gandhiplein 1") == [("typed", True)]
    assert lines(sample_index, "SOJ Palmelaan 1 Groningen")[0] == "S.O.J. Palmelaan 1, 9728 VD Groningen"
    assert stages(sample_index, "SOJ Palmelaan 1 Groningen") == [("typed", False), ("respaced", True)]


# ---- the trace itself (Index.trace)

@pytest.mark.parametrize("q", ["kerkstr 12 utr", "herestraat 12 9711lk", "kerk straat 12", "de", "", "9711",
                               "wirle de zwijgerlaan 5 den haag", "herestraat 200 groningen"])
def test_the_trace_answers_as_the_search_does(sample_index, q):
    for limit in (1, 5, 10):
        t = sample_index.trace(q, limit=limit)
        assert t["ids"] == sample_index.search_ids(q, limit=limit)
        assert t["lost"] == 0
        assert not t["readings"] or t["readings"][-1]["found"] == bool(t["ids"])
        assert all(not r["found"] for r in t["readings"][:-1])


def test_the_trace_of_a_stored_answer_has_no_reading(sample_index):
    t = sample_index.trace("s")
    assert t["stored"] and t["readings"] == [] and t["tokens"] == ["s"]
    assert t["ids"] == sample_index.search_ids("s")
    t = sample_index.trace("s", lat=52.0, lon=5.0)     # a focus point: the search proper
    assert not t["stored"] and t["readings"][0]["focus"] == (52.0, 5.0)


def test_the_trace_names_the_slip_budget_when_it_runs_out(sample_index):
    from engine import _core
    assert sample_index.trace("wihelminastrat 1")["readings"][-1]["spent"] == []
    _core._set_slip_budget(0)
    try:
        assert "slips" in sample_index.trace("wihelminastrat 1")["readings"][-1]["spent"]
    finally:
        _core._set_slip_budget(40_000)


def test_the_trace_of_a_closed_index_is_refused(sample_index_dir):
    import engine
    index = engine.AddressIndex.open(sample_index_dir)
    index.close()
    with pytest.raises(engine.IndexClosedError):
        index.trace("kerkstraat")


def test_the_trace_names_what_a_pasted_address_left_out(sample_index):
    """Issue 14's readings: without the note in brackets, then without the addressee line."""
    t = sample_index.trace("Herestraat 12, Groningen (achterom)")
    assert [(r["stage"], r["found"], r["dropped"]) for r in t["readings"]] == [
        ("typed", False, []), ("without notes", True, ["achterom"])]
    t = sample_index.trace("t.a.v. J. Jansen, Herestraat 12, Groningen")
    assert t["readings"][-1]["stage"] == "without addressee"
    assert t["readings"][-1]["tokens"] == ["herestraat", "12", "groningen"]


def test_the_trace_shows_glued_words_cut(sample_index):
    """Words typed without spaces (issue 14) are cut before anything else is read: the trace
    keeps the tokens as typed, and the reading's tokens as cut."""
    t = sample_index.trace("vanspeykstraat8cgroningen")
    assert t["tokens"] == ["vanspeykstraat", "8cgroningen"]
    last = t["readings"][-1]
    assert last["stage"] == "glued words cut" and last["found"]
    assert last["tokens"] == ["van", "speykstraat", "8c", "groningen"]
    assert last["dropped"] == t["tokens"] and last["added"] == last["tokens"]


def test_the_trace_says_where_the_time_and_the_budgets_went(sample_index):
    """Each reading carries the time since the one before (µs) and the query's work and slip
    work counted by its end: the counts never fall, and the times add up to at most the call."""
    import time
    q = "wihelminastrat 1 groningen (achterom)"
    t0 = time.perf_counter()
    t = sample_index.trace(q)
    wall_us = (time.perf_counter() - t0) * 1e6
    readings = t["readings"]
    assert len(readings) > 1
    assert all(r["us"] >= 0 for r in readings)
    assert sum(r["us"] for r in readings) <= wall_us
    works = [r["work"] for r in readings]
    slips = [r["slip_work"] for r in readings]
    assert works == sorted(works) and slips == sorted(slips)
    assert slips[-1] > 0   # the slipped street was looked up
    assert works[-1] > 0   # and its groups walked
