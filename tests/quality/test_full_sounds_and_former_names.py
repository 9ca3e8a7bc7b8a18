"""Issue 40 on the whole-country index, for what only the whole country holds: spellings that
sound alike where both words are registered, and the municipalities people still write years
after a merger (the sample's five municipalities had none since 2011).

Runs only when asked for (`make test-full`, marker `full`)."""

from __future__ import annotations

import numpy as np
import pytest
from testdata import DATA_DIR

from engine.ingest.municipalities import MERGERS
from engine.ingest.source import read_source
from engine.normalize import fold

pytestmark = pytest.mark.full


def lines(index, q, limit=5):
    return [f"{h.lines[0]}, {h.lines[1]}" for h in index.suggest(q, limit=limit)]


def places(index, q, limit=5):
    return [(h.street, h.locality, h.municipality) for h in index.suggest(q, limit=limit)]


# ---- sound-alikes

def test_a_street_typed_as_registered_is_never_replaced_by_one_that_sounds_like_it(full_index):
    """Mollenstraat (Bergeijk) and Molenstraat (a hundred places) sound alike: each typed
    finds itself first; Torrenstraat (Venlo) and Torenstraat too."""
    assert lines(full_index, "mollenstraat")[0].startswith("Mollenstraat 1, ")
    assert all(street == "Molenstraat" for street, _, _ in places(full_index, "molenstraat"))
    assert lines(full_index, "torrenstraat 1")[0].startswith("Torrenstraat 1, ")
    assert places(full_index, "torenstraat 1")[0][0] == "Torenstraat"


def test_a_place_without_the_street_typed_finds_the_one_that_sounds_like_it(full_index):
    """Bergeijk has a Mollenstraat and no Molenstraat, Venlo a Torrenstraat and no
    Torenstraat; Zeist has Couwenhoven 3038, and Kouwenhoven only elsewhere."""
    assert lines(full_index, "mollenstraat 1 bergeijk")[0].startswith("Mollenstraat 1, ")
    assert lines(full_index, "torenstraat 2 venlo") == ["Torrenstraat 2, 5912 KW Venlo"]
    assert lines(full_index, "kouwenhoven 3038 zeist")[0] == "Couwenhoven 3038, 3703 HA Zeist"


@pytest.mark.parametrize(("q", "street"), [
    ("agterweg 1", "Achterweg"),             # not Asterweg, a slip of a key from it
    ("ofstraat 3", "Hofstraat"),
    ("kristiaan huygensstraat 5", "Christiaan Huygensstraat"),
    ("filipslaan 2 roosendaal", "Philipslaan"),
    ("raathuisplein 1 hoofddorp", "Raadhuisplein"),
])
def test_a_word_that_sounds_like_the_street(full_index, q, street):
    """(The register writes Huygens and Huijgens: one word, folded.)"""
    assert fold(places(full_index, q)[0][0]) == fold(street)


@pytest.mark.parametrize(("q", "first", "typed"), [
    ("agterweg 2 groningen", "Achterweg 2, 9725 BN Groningen", "agterweg"),        # ch written g
    ("ofstraat 5 groningen", "Hofstraat 5-1, 9712 JA Groningen", "ofstraat"),       # an h left out
    ("kristiaan sterckstraat 2 maastricht", "Christiaan Sterckstraat 2, 6217 HH Maastricht", "kristiaan"),
    ("haagse bluf 12 den haag", "Haagsche Bluf 12, 2511 CN 's-Gravenhage", "haagse"),  # sch written s
    ("dorpstraat 10 rosmalen", "Dorpsstraat 10, 5241 EC Rosmalen", "dorpstraat"),   # ss written s
    ("agterw 2 gron", "Achterweg 2, 9725 BN Groningen", "agterw"),                  # still being typed
    ("westhe 25 hard", "Westeinde 25, 3844 DD Harderwijk", "westhe"),               # ... a common start
    ("bosstraat 5 maastricht", "Boschstraat 5, 6211 AS Maastricht", "bosstraat"),   # no Bosstraat there
    ("ugo de grootstraat 2 den haag", "Hugo de Grootstraat 2, 2518 ED 's-Gravenhage", "ugo"),
])
def test_the_sound_alikes_the_docs_show(full_index, q, first, typed):
    """docs/understanding.md's examples of words that sound alike, on the whole country: the
    street first, and `explain` reads the word that sounds like it as a slip."""
    assert lines(full_index, q)[0] == first
    hit = full_index.suggest(q, limit=1)[0]
    assert {m.typed: (m.kind, m.field) for m in full_index.explain(hit)}[typed] == ("slip", "street")


@pytest.mark.parametrize(("q", "first"), [
    ("sybrands hac 6 heem", "Sybrands acker 6, 1965 SV Heemskerk"),        # an h added
    ("de hoe 23 swal", "De Oever 23, 6071 SK Swalmen"),
    ("dokter van der cop 5 ophe", "Dokter van der Koppelstraat 5, 4061 AT Ophemert"),  # k written c
    ("de pha 35 hoog", "De Fazant 35, 7905 HA Hoogeveen"),                 # f written ph
    ("simon sthe 62a hilv", "Simon Stevinweg 62A, 1222 ST Hilversum"),     # t written th
])
def test_a_short_start_whose_sound_starts_many_words(full_index, q, first):
    """A start of three or four letters whose sound key is short starts the keys of thousands
    of tokens ("hac": every key that starts with a, 6,719); those that go on as the word may
    (g, k or s: 1,158) are few enough to look at, and the street is found."""
    assert lines(full_index, q)[0] == first


def test_a_street_typed_as_registered_answers_before_one_that_sounds_like_it(full_index):
    """"bosstraat 5": a Bosstraat 5 (there are many), no Boschstraat, which sounds like it."""
    assert all(street == "Bosstraat" for street, _, _ in places(full_index, "bosstraat 5"))


def test_a_slip_of_a_key_is_no_sound_alike(full_index):
    """An h before a consonant is heard: "hreestraat" is a slip from Herestraat (two letters
    swapped), not Reestraat with an h added."""
    assert places(full_index, "hreestraat 12 groningen")[0][:2] == ("Herestraat", "Groningen")
    assert places(full_index, "reestraat 12")[0][0] == "Reestraat"


@pytest.mark.parametrize(("q", "want"), [
    ("westerbaan 37 's-g", "Westerbaenstraat 37, 2513 GG 's-Gravenhage"),
    ("westerbaan 37 den h", "Westerbaenstraat 37, 2513 GG 's-Gravenhage"),
    ("van der duin 144 's-g", "Van der Duynstraat 144, 2515 NL 's-Gravenhage"),
    ("van marrum 20b 's-g", "Van Marumstraat 20B, 2562 LS 's-Gravenhage"),
])
def test_a_place_being_typed_is_no_letter_and_addition(full_index, q, want):
    """docs/understanding.md's example, and more. Every word is a whole token, but the place's
    start ("s g") could be read as the house's letter and addition: the Westerbaan streets,
    which hold the words that reading leaves, kept the sound-alike waiting, and the retries
    answered Westerbaan 36 in Noordwijk (no place, another number). No Westerbaan is in a
    place of a word g: Westerbaenstraat 37, 's-Gravenhage, which sounds like it, answers."""
    assert lines(full_index, q)[0] == want


@pytest.mark.parametrize(("q", "want"), [
    ("maastr 19 leid", "Maasstraat 19, 2314 TT Leiden"),
    ("maastr 173-3 amst", "Maasstraat 173-3, 1079 BG Amsterdam"),
])
def test_the_place_being_typed_is_read_as_typed_beside_a_sound_alike(full_index, q, want):
    """docs/understanding.md's example, and another. The sound-alikes of the place's start
    ("leid", "amst"), which many words' sound starts with, spent the scan before the street's
    ("maastr": Maasstraat) was reached, and the query answered nothing."""
    assert lines(full_index, q)[0] == want


# ---- former municipalities

@pytest.mark.parametrize(("q", "want"), [
    ("hoofdstraat 1 nuth", ("Hoofdstraat", "Schimmert", "Beekdaelen")),    # Nuth until 2019
    ("kerkstraat 1 onderbanken", ("Kerkstraat", "Schinveld", "Beekdaelen")),
    ("dorpsstraat 5 geldermalsen", ("Dorpsstraat", "Meteren", "West Betuwe")),
    ("voorstraat 1 cromstrijen", ("Voorstraat", "Klaaswaal", "Hoeksche Waard")),
])
def test_a_street_and_number_with_the_municipality_before_the_merger(full_index, q, want):
    assert places(full_index, q)[0] == want


def test_a_former_municipality_is_an_alias(full_index):
    """Hoofdstraat 1 is in Schimmert, a place of Nuth until 2019: "nuth" names it as an alias
    of Beekdaelen (`explain`), not as its locality."""
    hit = full_index.suggest("hoofdstraat 1 nuth", limit=1)[0]
    assert (hit.locality, hit.municipality) == ("Schimmert", "Beekdaelen")
    kinds = {m.typed: (m.kind, m.field) for m in full_index.explain(hit)}
    assert kinds["nuth"] == ("alias", "municipality")


def test_a_current_place_of_the_name_comes_before_the_former_municipality(full_index):
    """Haaren is a place (in Oisterwijk) and was a municipality until 2021, of Helvoirt too:
    "kerkstraat 1 haaren" is Haaren's Kerkstraat 1 first, then Helvoirt's."""
    got = places(full_index, "kerkstraat 1 haaren")
    assert got[0] == ("Kerkstraat", "Haaren", "Oisterwijk")
    assert ("Kerkstraat", "Helvoirt", "Vught") in got


def test_a_short_word_of_a_former_name_names_nothing_alone(full_index):
    """"haaren" cut into "haar en" is no Haarlemmerliede en Spaarnwoude (Haarlemmermeer): the
    "en" of that name is not an alias of its places."""
    assert all(municipality != "Haarlemmermeer" for _, _, municipality in places(full_index, "schoolstraat 1 haaren"))


def test_a_former_name_of_several_words_typed_whole(full_index):
    """Mill en Sint Hubert (Langenboom was one of its places) typed whole, its "en" too, which
    alone names no place."""
    assert lines(full_index, "vliesweg 18 mill en sint hubert") == ["Vliesweg 18, 5453 RX Langenboom"]
    hit = full_index.suggest("vliesweg 18 mill en sint hubert", limit=1)[0]
    assert {m.typed: m.kind for m in full_index.explain(hit)}["hubert"] == "alias"


def test_the_mergers_cover_the_data():
    """Every municipality the source had before a merger (`gemeente_bron`) is in MERGERS, with
    the municipality its addresses are in now: the reference an official build reads agrees
    with the data we build from."""
    t = read_source(DATA_DIR / "nl-addresses.csv.zst", progress=False)
    had = t.former_municipality > 0
    both = np.unique(np.stack([t.former_municipality[had], t.municipality[had]], axis=1), axis=0).tolist()
    pairs = {(t.former_municipalities[f], t.municipalities[m]) for f, m in both
             if t.former_municipalities[f] != t.municipalities[m]}
    listed = {(m.former, into) for m in MERGERS for into in m.into}
    assert pairs and pairs <= listed, sorted(pairs - listed)
