"""Floors typed after the house number: ``hs`` or ``huis`` (the whole house, or its ground floor)
for the register's addition H, and an ordinal written out (``tweede etage``) for its number.

Amsterdam registers some 40,000 ground floors as the addition ``H`` (Damrak 11-H), and people
write them ``11 hs``, ``11-hs``, ``11hs`` or ``11 huis``. The engine left these out as floor
words, and Damrak 11-H came after 11-1, 11-2 and 11-3; now, left out, they still say the house:
its addition H comes first. They say no street: a house of the street typed comes before
another street's H. The index here is made up (no row of the register): one street with the
additions Amsterdam has, a literal addition ``HS``, houses without an H.

An ordinal written out after the number made the retry stop at it (``damrak 11 tweede etage``
found nothing at all); now the floor is read as its number first (11-2), and left out when the
house has no such floor.
"""

from __future__ import annotations

import pytest

import engine
from engine.__main__ import main
from engine._reference import ReferenceIndex
from engine.explain import explain

HEADER = "straat;huisnummer;huisletter;huisnummertoevoeging;postcode;woonplaats;gemeente;provincie;lat;lon\n"
ROWS = [
    ("Damrak", 11, "", ""), ("Damrak", 11, "", "1"), ("Damrak", 11, "", "2"), ("Damrak", 11, "", "3"),
    ("Damrak", 11, "", "H"), ("Damrak", 12, "", "H"), ("Damrak", 12, "", "HS"), ("Damrak", 13, "", "1"),
    ("Damrak", 13, "", "2"), ("Damraklaan", 11, "", ""), ("Kerkstraat", 12, "A", ""),
    ("Kerkstraat", 12, "B", ""), ("Kerkstraat", 14, "", ""), ("Nieuwe Kerkstraat", 14, "", "H"),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    d = tmp_path_factory.mktemp("huis")
    src = d / "src.csv"
    src.write_text(HEADER + "".join(
        f"{street};{n};{letter};{addition};1012LG;Amsterdam;Amsterdam;Noord-Holland;52.376;4.896\n"
        for street, n, letter, addition in ROWS))
    assert main(["build", str(src), str(d / "idx"), "--no-progress"]) == 0
    with engine.AddressIndex.open(d / "idx") as opened:
        yield opened


def first(index, q):
    hit = index.suggest(q, limit=5)[0]
    return hit.street, hit.number, hit.letter, hit.addition


@pytest.mark.parametrize("q", ["damrak 11 hs", "damrak 11-hs", "damrak 11hs", "Damrak 11 HS",
                               "damrak 11 hs amsterdam", "1012lg 11 hs", "damrak 11 h",
                               "damrak 11 huis", "damrak 11-huis", "damrak 11huis", "DAMRAK 11 HUIS",
                               "1012 lg 11 huis"])
def test_hs_and_huis_find_the_addition_h_first(index, q):
    assert first(index, q) == ("Damrak", 11, "", "H")


def test_an_addition_hs_as_registered_is_what_was_typed(index):
    assert first(index, "damrak 12 hs") == ("Damrak", 12, "", "HS")


def test_the_other_floors_follow_the_h(index):
    hits = index.suggest("damrak 11 hs", limit=5)
    assert [(h.street, h.addition) for h in hits] == [
        ("Damrak", "H"), ("Damrak", ""), ("Damrak", "1"), ("Damrak", "2"), ("Damrak", "3")]


def test_hs_says_no_street(index):
    """Kerkstraat 14 has no H; Nieuwe Kerkstraat 14 has: the street typed comes first."""
    hits = index.suggest("kerkstraat 14 hs", limit=5)
    assert [(h.street, h.addition) for h in hits][:2] == [("Kerkstraat", ""), ("Nieuwe Kerkstraat", "H")]


def test_a_house_without_an_h_still_answers_with_hs_left_out(index):
    # "hs" says nothing of these houses: their letters, as for "kerkstraat 12"
    assert {h.letter for h in index.suggest("kerkstraat 12 hs", limit=5)} == {"A", "B"}
    assert {h.letter for h in index.suggest("kerkstraat 12 huis", limit=5)} == {"A", "B"}
    assert [h.addition for h in index.suggest("damrak 13 hs", limit=5)] == ["1", "2"]


def test_the_twin_reads_hs_as_the_engine_does(index):
    reference = ReferenceIndex(index.arrays)
    for q in ["damrak 11 hs", "damrak 11hs", "damrak 12 hs", "damrak 13 hs", "kerkstraat 12 hs",
              "damrak 11 h", "damrak 11 hs 2", "damrak 11 huis", "damrak 11huis", "kerkstraat 12 huis",
              "damrak 11 hui", "kerkstraat 14 hs", "1012lg 11 hs", "1012 lg 11 huis amsterdam"]:
        for limit in (1, 5, 10):
            replay = reference.replay(q, limit=limit)
            assert replay.agrees and replay.ids == index.search_ids(q, limit=limit), (q, limit)


@pytest.mark.parametrize("typed", ["hs", "huis"])
def test_explain_says_hs_and_huis_stand_for_the_h(index, typed):
    q = f"damrak 11 {typed}"
    hit = index.suggest(q, limit=1)[0]
    words = explain(index, q, hit)
    assert [(w.typed, w.kind, w.field) for w in words] == [
        ("damrak", "exact", "street"), ("11", "exact", "number"), (typed, "alias", "addition")]
    assert hit.lines[0] == "Damrak 11-H" and words[2].span == (10, 11)


@pytest.mark.parametrize(("q", "addition"), [
    ("damrak 11 tweede etage", "2"), ("damrak 11 tweede verdieping amsterdam", "2"), ("damrak 11 derde", "3"),
    ("damrak 11 3e verdieping", "3"), ("damrak 11 2de etage", "2"), ("damrak 11 eerste etage", "1"),
    ("damrak 13 1ste verdieping", "1"), ("damrak 11 3rd floor", "3"), ("damrak 11 2nd floor", "2"),
    ("damrak 11 iii", "3"), ("damrak 11 II", "2"),
])
def test_an_ordinal_after_the_number_is_the_floor(index, q, addition):
    assert first(index, q) == ("Damrak", int(q.split()[1]), "", addition)


def test_a_floor_the_house_does_not_have_is_left_out(index):
    assert [h.addition for h in index.suggest("damrak 13 tiende etage", limit=5)] == ["1", "2"]
    assert {h.letter for h in index.suggest("kerkstraat 12 eerste etage", limit=5)} == {"A", "B"}


def test_the_twin_reads_the_floor_as_the_engine_does(index):
    reference = ReferenceIndex(index.arrays)
    for q in ["damrak 11 tweede etage", "damrak 11 derde", "damrak 13 tiende etage", "damrak 13 1ste verdieping",
              "kerkstraat 12 eerste etage", "1012lg 11 derde etage", "damrak 11 tweede hs"]:
        for limit in (1, 5, 10):
            replay = reference.replay(q, limit=limit)
            assert replay.agrees and replay.ids == index.search_ids(q, limit=limit), (q, limit)
