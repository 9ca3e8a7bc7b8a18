"""Messy input (issue 14), checked the way a person would check it, on the real sample: notes
and addressee lines around the address, the country in other languages, and never a wrong
street."""

from __future__ import annotations

import pytest


def lines(index, q, limit=5, **kw):
    return [h.lines[0] + ", " + h.lines[1] for h in index.suggest(q, limit=limit, **kw)]


HERESTRAAT_12 = "Herestraat 12, 9711 LJ Groningen"


@pytest.mark.parametrize("q", [
    "Herestraat 12, Groningen (achterom)",
    "Herestraat 12, Groningen (2e bel)",
    "Herestraat 12 (bellen a.u.b.) Groningen",
    "Herestraat 12 [na 17u], Groningen",
    "Herestraat 12, Groningen {niet bellen}",
    "Herestraat 12, Groningen (achter",           # a note still being typed
])
def test_a_note_in_brackets_is_left_out(sample_index, q):
    assert lines(sample_index, q)[0] == HERESTRAAT_12


def test_a_place_in_brackets_still_counts(sample_index):
    # the note is left out only when the query finds nothing with it
    assert lines(sample_index, "Herestraat 12 (Groningen)")[0] == HERESTRAAT_12
    assert lines(sample_index, "Lange Voorhout 1 (Den Haag)")[0].endswith("'s-Gravenhage")


@pytest.mark.parametrize("q", [
    "t.a.v. J. Jansen, Herestraat 12, Groningen",
    "Fam. Bakker, Herestraat 12, Groningen",
    "A. de Boer, Herestraat 12, Groningen",
    "Bakkerij De Vries, Herestraat 12, Groningen",
    "attn. P. Visser; Herestraat 12; Groningen",
    "J. Jansen\nHerestraat 12\n9711 LJ Groningen",  # pasted lines
    "Herestraat 12, Groningen, t.a.v. J. Jansen",
    "c/o Jansen, Herestraat 12, Groningen",
])
def test_an_addressee_line_is_left_out(sample_index, q):
    assert lines(sample_index, q)[0] == HERESTRAAT_12


def test_the_place_line_first_is_no_addressee(sample_index):
    assert lines(sample_index, "Groningen, Herestraat 12")[0] == HERESTRAAT_12
    assert lines(sample_index, "Groningen, Herestraat 12 (achterom)")[0] == HERESTRAAT_12


def test_left_out_words_say_the_answer_was_retried(sample_index):
    hit = sample_index.suggest("Fam. Bakker, Herestraat 12, Groningen", limit=1)[0]
    assert hit.found == "retry"
    assert sample_index.suggest("Herestraat 12, Groningen", limit=1)[0].found == "typed"


@pytest.mark.parametrize("country", ["Nederland", "Netherlands", "The Netherlands", "Holland",
                                     "Niederlande", "Pays-Bas", "NL", "Olanda", "Países Bajos"])
def test_the_country_in_other_languages(sample_index, country):
    assert lines(sample_index, f"Herestraat 12, 9711 LJ Groningen, {country}")[0] == HERESTRAAT_12
    assert lines(sample_index, f"Herestraat 12, Groningen, {country}")[0] == HERESTRAAT_12


@pytest.mark.parametrize("q", [
    "Zorplimstraat 99, Groningen",     # no such street: not Herestraat 99 or any other
    "Zorplimweg 12, Maastricht",
    "Zorplim 12 Maastricht",           # no street's form, but it stands where the street does
    "Kwelvaxlaan 3, 's-Gravenhage",
])
def test_a_street_that_does_not_exist_finds_nothing(sample_index, q):
    assert lines(sample_index, q) == []


def test_a_wrong_street_in_a_noisy_query_finds_nothing(sample_index):
    assert lines(sample_index, "Fam. Bakker, Zorplimstraat 12, Groningen (achterom)") == []
    assert lines(sample_index, "Zorplimstraat 12, Groningen, Netherlands") == []


@pytest.mark.parametrize(("q", "want"), [
    ("Herestraat 12, Groningen, Groningen", HERESTRAAT_12),       # a place line pasted twice
    ("Groningen, Herestraat 12, Groningen", HERESTRAAT_12),
    ("herestraat herestraat 12 groningen", HERESTRAAT_12),
    ("Vrijthof 1 Maastricht Maastricht", "Vrijthof 1, 6211 LC Maastricht"),
    ("Maastricht Vrijthof 1 Maastricht", "Vrijthof 1, 6211 LC Maastricht"),
    ("Lange Voorhout 1 Den Haag Den Haag", "Lange Voorhout 1, 2514 EA 's-Gravenhage"),
])
def test_a_word_typed_twice_is_read_once(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


def test_a_street_typed_twice_that_does_not_exist_finds_nothing(sample_index):
    assert lines(sample_index, "Zorplimstraat Zorplimstraat 12, Groningen") == []


@pytest.mark.parametrize("q", ["Herestraat 12 zzzzzz Groningen", "zzzz Herestraat 12 Groningen"])
def test_a_stray_word_beside_the_street_is_still_left_out(sample_index, q):
    assert lines(sample_index, q)[0] == HERESTRAAT_12


def test_the_street_within_a_slip_is_still_found(sample_index):
    assert lines(sample_index, "Herestrat 12, Groningen (achterom)")[0] == HERESTRAAT_12
    assert lines(sample_index, "Fam. Bakker, Herestrat 12, Groningen")[0] == HERESTRAAT_12


@pytest.mark.parametrize(("q", "want"), [
    ("herestraat12groningen", HERESTRAAT_12),
    ("vanspeykstraat8cgroningen", "Van Speykstraat 8c, 9726 BL Groningen"),   # the letter glued too
    ("langevoorhout1denhaag", "Lange Voorhout 1, 2514 EA 's-Gravenhage"),
    ("langevoorhout 1", "Lange Voorhout 1, 2514 EA 's-Gravenhage"),
    ("vanderduynstraat11", "Van der Duynstraat 11, 2515 NG 's-Gravenhage"),
])
def test_spaces_missing_anywhere(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


@pytest.mark.parametrize(("q", "want"), [
    # the house letter glued between number and place: "25b sgravenhage" as much as "25 bs
    # gravenhage" is two pieces; the likelier words win (it answered nothing, or house 69
    # without its letter)
    ("laanvanmeerdervoort25bsgravenhage", "Laan van Meerdervoort 25B, 2517 AC 's-Gravenhage"),
    ("loosduinseweg69bsgravenhage", "Loosduinseweg 69B, 2571 AA 's-Gravenhage"),
    ("hinthamereinde49hshertogenbosch", "Hinthamereinde 49H, 5211 PM 's-Hertogenbosch"),
])
def test_glued_words_are_cut_into_the_likeliest_words(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


@pytest.mark.parametrize("q", ["kjikduinse", "kikjduinse"])
def test_a_slip_in_a_word_being_typed_that_makes_an_ij(sample_index, q):
    # two letters swapped undone make "kijk", which the register's words spell "kyk"
    assert lines(sample_index, q)[0].startswith("Kijkduinsestraat ")


@pytest.mark.parametrize(("q", "want"), [
    # no token starts "baginj" nor "bagini": the i was the start of ij (y), the j typed late
    ("baginjes", "Bagijnestraat 1, 2511 CK 's-Gravenhage"),
    ("aquamarinjst", "Aquamarijnstraat 1, 9743 PA Groningen"),
    ("anderlinjst", "Anderlijnstraat 1, 5213 TG 's-Hertogenbosch"),
])
def test_an_i_typed_for_ij_with_the_j_after_the_next_letter(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


def test_a_slip_comes_before_glued_words_that_match_loosely(sample_index):
    # "hekel aan" is Aan de Kleine Hekel, its words out of order and two of them not typed:
    # "hekelaan" is one slip from Hekkelaan (and Hekellaan)
    assert lines(sample_index, "hekelaan 5")[:2] == ["Hekkelaan 5, 2511 XB 's-Gravenhage",
                                                     "Hekellaan 50, 5211 LZ 's-Hertogenbosch"]
    # glued words that name a street as typed stay before a slip (Nieuwendijk, in Rosmalen)
    assert lines(sample_index, "nieuwedijk 2")[0] == "Nieuwe Dijk 2, 5216 VV 's-Hertogenbosch"


def test_glued_words_come_before_a_slip_in_one_long_word(sample_index):
    # "vanderduynstraat" is Van der Duynstraat, not a street two slips from one long word
    hit = sample_index.suggest("vanderduynstraat11", limit=1)[0]
    assert (hit.street, hit.found) == ("Van der Duynstraat", "retry")


def test_a_glued_street_that_does_not_exist_finds_nothing(sample_index):
    assert lines(sample_index, "zorplimstraat12groningen") == []



@pytest.mark.parametrize(("q", "want"), [
    # "102" glued to words: no house 102 there, so house 10 with addition 2
    ("praediniussingel102groningen", "Praediniussingel 10-2, 9711 AG Groningen"),
    # an addition of two or three digits (it answered the nearest numbers, or nothing; six
    # digits were never cut)
    ("grootzand51102sneek", "Grootzand 51-102, 8601 AT Sneek"),
    ("hoogeweg3329groningen", "Hoogeweg 3-329, 9746 TN Groningen"),
    ("friesestraatweg181233groningen", "Friesestraatweg 181-233, 9743 AB Groningen"),
])
def test_a_number_and_its_numeric_addition_glued_between_street_and_place(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


@pytest.mark.parametrize(("q", "want"), [
    ("Schoolstraat 20 III Arum", "Schoolstraat 20, 8822 VP Arum"),
    ("Washuisterweg 9 III Ten Boer", "Washuisterweg 9, 9791 TE Ten Boer"),
])
def test_a_floor_in_roman_numerals(sample_index, q, want):
    # "III" is a whole word of the register (Willem III straat), so it was never left out
    assert lines(sample_index, q)[0] == want
    # ... and an address with that addition still has it
    assert lines(sample_index, "walperterwei 47 iii")[0] == "Walperterwei 47-III, 8731 CD Wommels"


@pytest.mark.parametrize("q", ["herestraat 12 9711 lj 3 hoog", "herestraat 12 9711lj 3 hoog",
                               "herestraat 12 9711 lj groningen 2e etage"])
def test_a_floor_typed_after_the_postcode(sample_index, q):
    # it found nothing: "3" was read as a second house number
    assert lines(sample_index, q)[0] == HERESTRAAT_12
