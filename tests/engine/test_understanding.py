"""What people type, checked the way a person would check it, on the real sample."""

from __future__ import annotations

import pytest


def lines(index, q, limit=5, **kw):
    return [h.lines[0] + ", " + h.lines[1] for h in index.suggest(q, limit=limit, **kw)]


def first_place(index, q, **kw):
    hit = index.suggest(q, limit=1, **kw)[0].to_dict()
    return {c["type"]: c["value"] for c in hit["components"]}


@pytest.mark.parametrize("q", ["hooistraat 2a den haag", "den haag hooistraat 2a",
                               "hooistraat 2a 's-gravenhage", "hooistraat 2a s gravenhage",
                               "hooistraat 2a sgravenhage", "HOOISTRAAT 2A 'S-GRAVENHAGE"])
def test_den_haag_and_its_spellings_find_s_gravenhage(sample_index, q):
    c = first_place(sample_index, q)
    assert (c["NLD_PUBLIC_SPACE"], c["NLD_HOUSE_NUMBER"], c["NLD_HOUSE_LETTER"], c["NLD_LOCALITY"]) == (
        "Hooistraat", 2, "A", "'s-Gravenhage")


def test_den_bosch_finds_s_hertogenbosch(sample_index):
    assert first_place(sample_index, "kerkstraat 10 den bosch")["NLD_LOCALITY"] == "'s-Hertogenbosch"
    assert first_place(sample_index, "kerkstraat 10 s-hertogenbosch")["NLD_LOCALITY"] == "'s-Hertogenbosch"


@pytest.mark.parametrize(("q", "place"), [
    ("lange voorhout 1 the hague", "'s-Gravenhage"),   # the English name
    ("grote kerkstraat 10 snits", "Sneek"),            # the Frisian name of a place registered in Dutch
    ("oosterend", "Easterein"),                        # the Dutch name of one registered in Frisian
    ("buorren 1 rauwerd", "Raerd"),
])
def test_other_everyday_names_of_places(sample_index, q, place):
    assert first_place(sample_index, q)["NLD_LOCALITY"] == place


def test_burgemeester_finds_a_burg_street_and_back(sample_index):
    assert lines(sample_index, "burgemeester s gockingastraat 1 groningen")[0].startswith(
        "Burg. S. Gockingastraat 1,")
    assert lines(sample_index, "burg bauduinstraat 112 maastricht")[0].startswith(
        "Burgemeester Bauduinstraat 112,")


@pytest.mark.parametrize("q", ["vd duynstraat 11 den haag", "v.d. duynstraat 11 den haag",
                               "v/d duynstraat 11 den haag", "van der duynstraat 11 den haag"])
def test_van_der_written_vd(sample_index, q):
    assert lines(sample_index, q)[0] == "Van der Duynstraat 11, 2515 NG 's-Gravenhage"


def test_sint_and_st_and_eerste_and_1e(sample_index):
    assert lines(sample_index, "st amandusstraat 1 maastricht")[0].startswith("Sint Amandusstraat 1,")
    assert lines(sample_index, "eerste hollandiastraat 1 bolsward")[0].startswith(
        "1e Hollandiastraat 1,")


@pytest.mark.parametrize(("q", "street"), [
    ("2de hunzestraat 1 groningen", "Tweede Hunzestraat 1,"),   # registered Tweede
    ("2e hunzestraat 1 groningen", "Tweede Hunzestraat 1,"),
    ("1ste hunzestraat 1 groningen", "Eerste Hunzestraat 1,"),
    ("2de schuytstraat 100", "2e Schuytstraat 100,"),            # registered 2e
    ("tweede schuytstraat 100", "2e Schuytstraat 100,"),
    ("eerste hollandiastraat 1 bolsward", "1e Hollandiastraat 1,"),
    ("1ste hollandiastraat 1 bolsward", "1e Hollandiastraat 1,"),
])
def test_an_ordinal_in_any_of_its_spellings(sample_index, q, street):
    assert lines(sample_index, q)[0].startswith(street)


@pytest.mark.parametrize(("q", "spellings"), [
    ("1ste", ("1e ", "1ste ", "Eerste ")), ("8ste", ("8e ", "8ste ", "Achtste ")),
])
def test_an_ordinal_typed_alone_is_no_number_with_a_word_glued(sample_index, q, spellings):
    """`1ste`, `8ste` are registered words (the ordinals' spellings), not house number 1 or 8
    with `ste` glued to it (Stevinstraat 1, Steijnlaan 8)."""
    assert all(line.startswith(spellings) for line in lines(sample_index, q))


def test_nwe_and_nw_for_nieuwe(sample_index):
    for q in ["nwe boteringestraat 1 groningen", "nw boteringestraat 1", "Nwe. Boteringestraat 1"]:
        assert lines(sample_index, q)[0].startswith("Nieuwe Boteringestraat 1,"), q


def test_oz_and_nz_answer_for_oudezijds_and_nieuwezijds_one_way_only():
    """Amsterdam's OZ and NZ Voorburgwal: the registered words Oudezijds and Nieuwezijds answer
    to oz and nz. The register also writes OZ for oostzijde ("Mussel-A-kanaal OZ"), which must
    not answer to oudezijds: the short forms go one way."""
    from engine.vocab import ALIAS, STREET, Vocabulary

    vocab = Vocabulary()
    oz = {e.text: e.kind for e in vocab.entries("Oudezijds Voorburgwal", STREET)}
    assert oz["oz"] == STREET | ALIAS and oz["oudezyds"] == STREET
    assert "nz" in {e.text for e in vocab.entries("Nieuwezijds Kolk", STREET)}
    assert "oudezyds" not in {e.text for e in vocab.entries("Mussel-A-kanaal OZ", STREET)}


def test_a_place_whose_name_ends_with_a_letter_or_two_is_also_that_name_glued():
    """People type "afferdenl" for Afferden L, whose last word no glued word is cut into (its
    pieces are words of two letters or more). A name that starts with a short word is no
    token glued: "denhelder" would put Den Helder in the range of every "den" typed."""
    from engine.vocab import ALIAS, LOCALITY, MUNICIPALITY, Vocabulary

    vocab = Vocabulary()

    def texts(name, kind=LOCALITY):
        return {e.text: e.kind for e in vocab.entries(name, kind)}

    assert texts("Afferden L")["afferdenl"] == LOCALITY | ALIAS
    assert texts("Bergen (NH)", MUNICIPALITY)["bergennh"] == MUNICIPALITY | ALIAS
    assert "denhelder" not in texts("Den Helder")
    assert "bergenopzoom" not in texts("Bergen op Zoom")
    # a former municipality's name is its glued name too, whatever its words
    assert "millensinthubert" in {e.text for e in vocab.former_entries("Mill en Sint Hubert")}


@pytest.mark.parametrize(("q", "want"), [
    # "a den bosch" or "aden bosch": when the likelier cutting finds nothing, the house letter
    ("vughterstraat 3adenbosch", "Vughterstraat 3A, 5211 EW 's-Hertogenbosch"),
    ("hooistraat 2adenhaag", "Hooistraat 2A, 2514 BM 's-Gravenhage"),
])
def test_a_place_typed_glued_after_a_house_letter(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


def test_a_short_alias_answers_only_when_typed_whole(sample_index):
    # "n" starts no word of Nieuwe Boteringestraat but Nieuwe, which "nieuwe" already answers:
    # the alias nw must not stand in for it a second time
    for hit in lines(sample_index, "nieuwe n", limit=10):
        street, place = hit.split(", ")
        words = street.lower().split()[1:] + place.lower().split()[2:]
        assert any(w.startswith("n") for w in words), hit


def test_ij_and_y_and_diacritics(sample_index):
    want = lines(sample_index, "abdijbrink 1 den haag")[0]
    assert want.startswith("Abdijbrink 1,")
    assert lines(sample_index, "abdybrink 1 den haag")[0] == want
    assert lines(sample_index, "ABDÍJBRINK 1 DEN HAAG")[0] == want


def test_a_slip_of_a_key_is_forgiven_but_ranked_below_exact(sample_index):
    for q in ["herestrat 12 groningen", "hersetraat 12 groningen", "heerestraat 12 groningen",
              "herestraat 12 groninge", "herestraat 12 gorningen"]:
        assert lines(sample_index, q)[0].startswith("Herestraat 12,"), q
    # an exact street beats a street one edit away
    assert lines(sample_index, "kerkstraat 1 groningen")[0].startswith("Kerkstraat 1,")


def test_free_word_order(sample_index):
    want = lines(sample_index, "herestraat 12 groningen")[0]
    for q in ["groningen herestraat 12", "12 herestraat groningen", "herestraat groningen 12",
              "herestraat 12 9711 lj", "herestraat 12 9711LJ"]:
        assert want in lines(sample_index, q), q


def test_words_still_being_typed(sample_index):
    assert lines(sample_index, "heres 12 gron")[0].startswith("Herestraat 12,")
    assert lines(sample_index, "hooistr 2a den h")[0].startswith("Hooistraat 2A,")


def test_open_input_spreads_over_places(sample_index):
    hits = [h.to_dict() for h in sample_index.suggest("kerkstraat 1", limit=5)]
    places = [h["lines"][1].split(" ", 2)[2] for h in hits]
    assert len(set(places)) == 5
    assert all(h["lines"][0] == "Kerkstraat 1" for h in hits)


def test_limit_three_is_chosen_for_three_not_cut_from_ten(sample_index):
    """Rule 3: the short list spreads over streets; the long one has room for a second address."""
    three = sample_index.search_ids("hoofdstr", limit=3)
    ten = sample_index.search_ids("hoofdstr", limit=10)
    assert three != ten[:3]
    groups = sample_index.arrays["a_group"]
    assert len({int(groups[a]) for a in three}) == 3
    assert set(three) <= set(ten)


def test_focus_point_prefers_nearer_addresses(sample_index):
    near_maastricht = first_place(sample_index, "kerkstraat 1", lat=50.85, lon=5.69)
    near_groningen = first_place(sample_index, "kerkstraat 1", lat=53.22, lon=6.57)
    assert near_maastricht["NLD_LOCALITY"] == "Maastricht"
    assert near_groningen["NLD_LOCALITY"] in {"Groningen", "Haren Gn", "Noordlaren"}


def test_the_same_word_twice_needs_two_names(sample_index):
    """One typed word is answered by one word of the address: `exmorra 1 exmorra` means the
    street Exmorrazijl in Exmorra, not any street of Exmorra matched twice by the place."""
    hits = [h.to_dict() for h in sample_index.suggest("exmorra 1 exmorra", limit=5)]
    assert hits
    assert all(h["lines"][0].startswith("Exmorrazijl ") for h in hits), [h["lines"] for h in hits]
    assert sample_index.suggest("exmorra 1", limit=5)[0].lines[1].endswith("Exmorra")


def test_a_word_after_the_number_is_the_place(sample_index):
    """`jaco 20 grav` is typed street, number, place: Jacobastraat in 's-Gravenhage, not the
    street Gravin Jacobalaan, which `grav` would only match as a street word after the number."""
    got = lines(sample_index, "jaco 20 grav", limit=5)
    assert got and all(g.startswith("Jacob") and g.endswith("'s-Gravenhage") for g in got), got
    # typed before the street, the same word may well be the street's
    assert "Gravin Jacobalaan 20, 2553 GX 's-Gravenhage" in lines(sample_index, "grav jaco 20", limit=5)


def test_a_short_word_after_the_number_is_not_the_street_again(sample_index):
    """Read as a letter or addition that is not there, `vink` after `vinkelse 2` is the start
    of the place (Vinkel), never the street word that `vinkelse` already answered."""
    hits = [h.to_dict() for h in sample_index.suggest("vinkelse 2 vink", limit=5)]
    assert hits and all(h["lines"][1].endswith(" Vinkel") for h in hits), [h["lines"] for h in hits]
    assert lines(sample_index, "10 op het rooth maastricht")[0] == "Op het Rooth 10, 6223 GB Maastricht"


def test_a_place_typed_after_the_number_is_not_taken_for_an_addition(sample_index):
    """`hooistr 2 grav`: `grav` starts no registered addition, so it is only read as the
    place; a word that does start one (`bis`) may still be the addition."""
    first = lines(sample_index, "hooistr 2 grav")[0]
    assert first.startswith("Hooistraat 2, ") and first.endswith(" 's-Gravenhage"), first
    assert lines(sample_index, "sportsingel 2 bis")[0] == "Sportsingel 2-BIS, 2492 WJ 's-Gravenhage"
    assert lines(sample_index, "walperterwei 47 iii")[0] == "Walperterwei 47-III, 8731 CD Wommels"


def test_a_word_before_the_number_with_a_place_after_it_is_the_street(sample_index):
    """`rosmalen 7 hert` is street, number, place: Rosmalensedijk 7 in 's-Hertogenbosch, not a
    street of Rosmalen; with no place after the number, `rosmalen` is the place again."""
    assert lines(sample_index, "rosmalen 7 hert")[0] == "Rosmalensedijk 7, 5236 BD 's-Hertogenbosch"
    assert lines(sample_index, "rosmalen brabanth 7")[0] == "Brabanthoeven 7, 5244 HE Rosmalen"


@pytest.mark.parametrize("q", ["hooistraat 2a den haag nederland", "Hooistraat 2A, 2514 BM Den Haag, The Netherlands",
                               "hooistraat 2a, den haag, nl", "hooistraat 2a zzzzzzz den haag"])
def test_a_pasted_address_with_words_it_does_not_hold(sample_index, q):
    """A copied address line ends in the country, or carries a word no address holds: when
    nothing holds every word, the engine answers without them instead of with nothing."""
    assert lines(sample_index, q)[0] == "Hooistraat 2A, 2514 BM 's-Gravenhage"


def test_a_query_of_nothing_known_finds_nothing(sample_index):
    assert [h.to_dict() for h in sample_index.suggest("zzzzzz qqqqqq xxxxxx", limit=5)] == []


def test_a_place_word_is_never_dropped_to_find_something(sample_index):
    """`grote markt 1 den bosch`: no Grote Markt in 's-Hertogenbosch, and answering with the
    one of 's-Gravenhage (`den`, with `bosch` dropped) would mislead; only words that match
    nothing and a trailing country or province are left out."""
    hits = [h.to_dict() for h in sample_index.suggest("grote markt 1 den bosch", limit=5)]
    assert not any(h["lines"][1].endswith("'s-Gravenhage") for h in hits), [h["lines"] for h in hits]
    assert lines(sample_index, "grote markt 1 den haag zuid-holland")[0].startswith("Grote Markt 1, ")


@pytest.mark.parametrize("q", ["d'aumeriestraat 2", "d’aumeriestraat 2", "d aumeriestraat 2", "daumeriestraat 2",
                               "D'AUMERIESTRAAT 2 DEN HAAG"])
def test_an_apostrophe_after_a_lone_letter_in_any_spelling(sample_index, q):
    """The register's `d'Aumeriestraat`, typed with a straight or curly apostrophe, a space or
    nothing (the query glues a lone letter to the next word across an apostrophe, the way
    `A'dam` is Amsterdam)."""
    assert lines(sample_index, q)[0] == "d'Aumeriestraat 2, 2586 XN 's-Gravenhage"


@pytest.mark.parametrize("q", ["vanspeykstraat 12 den haag", "VanSpeijkstraat 12 den haag",
                               "van speyk straat 12 den haag", "van speijk straat 12 den haag"])
def test_words_glued_or_split_otherwise_than_the_register(sample_index, q):
    """`Van Speijkstraat` typed as one word, or with `straat` apart: when nothing holds the
    words as typed, they are read again spaced as the register spaces them."""
    assert lines(sample_index, q)[0] == "Van Speijkstraat 12, 2518 GC 's-Gravenhage"


@pytest.mark.parametrize("q, want", [
    ("oudeboteringestraat 1 groningen", "Oude Boteringestraat 1, 9712 GA Groningen"),
    ("oude boteringe straat 1 groningen", "Oude Boteringestraat 1, 9712 GA Groningen"),
    ("groteMarkt 1 groningen", "Grote Markt 1, 9712 HN Groningen"),
    ("here straat 12 groningen", "Herestraat 12, 9711 LJ Groningen"),
    ("prinses segracht 2", "Prinsessegracht 2, 2514 AN 's-Gravenhage"),
    ("den haag hooi str 2", "Hooistraat 2, 2514 BM 's-Gravenhage"),
    ("alddyk 1 scharnegoutum", "Ald Dyk 1, 8629 PA Scharnegoutum"),   # `alddyk` is a street elsewhere
])
def test_more_respaced_words(sample_index, q, want):
    assert lines(sample_index, q)[0] == want


@pytest.mark.parametrize("q", ["herestraat 12groningen", "herestraat12groningen", "12groningen herestraat",
                               "HERESTRAAT 12GRONINGEN"])
def test_a_number_glued_to_the_place(sample_index, q):
    """The space after the number left out: five letters or more are no addition (at most
    four), so the number is cut from the word that follows it."""
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"


@pytest.mark.parametrize("q", ["Herestraat 129711 LJ Groningen", "herestraat 129711lj", "herestraat 12 9711ljgroningen",
                               "9711LJGroningen 12", "Nederland, Groningen, Herestraat 12",
                               "NL herestraat 12 groningen", "the netherlands, herestraat 12 groningen"])
def test_a_pasted_address_that_lost_its_breaks_or_opens_with_the_country(sample_index, q):
    """A line break lost between the number and the postcode, or between the postcode and the
    place; the country first. The postcode glued to either side must be a registered one."""
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"


def test_a_word_still_being_typed_is_glued_to_the_one_before(sample_index):
    """`hooi str` is no street of two words: `hooistr` starts Hooistraat."""
    assert lines(sample_index, "hooi str 2 den haag")[0] == "Hooistraat 2, 2514 BM 's-Gravenhage"


def test_respacing_never_replaces_what_was_found(sample_index):
    """Words that are found as typed are answered as typed: `de hoven` stays two words."""
    for q in ["grote markt 1 groningen", "van speijkstraat 12"]:
        assert lines(sample_index, q) == lines(sample_index, q.replace(" ", "  "))
    assert lines(sample_index, "grote markt 1 groningen")[0] == "Grote Markt 1, 9712 HN Groningen"


@pytest.mark.parametrize("q", ["hooistraat nr 2 den haag", "hooistraat nr. 2 den haag", "hooistraat no 2 den haag",
                               "hooistraat huisnummer 2 den haag"])
def test_a_word_that_only_says_a_number_follows(sample_index, q):
    assert lines(sample_index, q)[0] == "Hooistraat 2, 2514 BM 's-Gravenhage"


@pytest.mark.parametrize("q", ["herestraat no 1", "herestraat no. 1", "herestraat num 1", "Herestraat Nr. 1"])
def test_a_number_word_between_the_street_and_the_number_is_no_name(sample_index, q):
    """`no` starts Noordlaren, where Kerkstraat 1 is two slips from `herestraat`: between a
    word and the number it only says a number follows."""
    assert lines(sample_index, q) == lines(sample_index, "herestraat 1")
    assert lines(sample_index, q)[0] == "Herestraat 1, 9711 LA Groningen"


@pytest.mark.parametrize("q", ["hooistraat 2-5 den haag", "hooistraat 2 hs den haag", "hooistraat 2hs den haag",
                               "2514bm 2-5", "2514 BM 2 zz", "hooistraat 2 bis"])
def test_an_addition_the_house_does_not_have_still_finds_the_house(sample_index, q):
    """Hooistraat 2 in Den Haag has no `-5` or `hs`: the house is answered rather than nothing,
    and the other number typed is never read as the house number instead (`2514 bm 2 5`)."""
    got = lines(sample_index, q)
    assert got[:2] == ["Hooistraat 2, 2514 BM 's-Gravenhage", "Hooistraat 2A, 2514 BM 's-Gravenhage"], got


def test_an_addition_the_house_has_is_still_required(sample_index):
    assert lines(sample_index, "hooistraat 2a den haag") == ["Hooistraat 2A, 2514 BM 's-Gravenhage"]


def test_a_stray_number_in_a_postcode_query_is_no_house_number(sample_index):
    """`2514 bm 9999 2`: no house 9999; house 2 with an unknown `9999` beside it was answered
    before. A number must be the house number or part of a name."""
    got = lines(sample_index, "2514 bm 9999 2")
    assert not any(x.startswith("Hooistraat 2,") for x in got[:1]), got


@pytest.mark.parametrize("q, want", [
    ("prinsesesgr 2", "Prinsessegracht 2, 2514 AN 's-Gravenhage"),     # two letters swapped
    ("prinsessgr 2 den h", "Prinsessegracht 2, 2514 AN 's-Gravenhage"),  # a letter left out
    ("prinsesseqgr 2", "Prinsessegracht 2, 2514 AN 's-Gravenhage"),    # a letter too many
    ("prinsessrgr 2", "Prinsessegracht 2, 2514 AN 's-Gravenhage"),     # a wrong letter
])
def test_a_slip_in_a_word_still_being_typed(sample_index, q, want):
    """No token starts with the word as typed, and none is one slip from it: the tokens it
    starts with one slip undone are taken, below every exact and prefix match."""
    assert lines(sample_index, q)[0] == want


def test_a_slip_early_in_a_word_still_being_typed(sample_index):
    """`jerestr`: the key beside h, at the word's first letter, far before where the typed
    word stops starting tokens."""
    assert lines(sample_index, "jerestr 12 gron")[0] == "Herestraat 12, 9711 LJ Groningen"


def test_a_slip_still_being_typed_where_the_word_is_one_slip_from_another(sample_index):
    """`nieuwstar` is one slip from Nieuwstad, which has no 120 in Groningen: at the last look
    the streets it starts with one slip undone are taken too. Nieuwstad still comes first
    where it has the number."""
    assert lines(sample_index, "nieuwstar 120 gron")[0] == "Nieuwstraat 120, 9724 KS Groningen"
    assert lines(sample_index, "nieuwstar 12 groningen")[0].startswith("Nieuwstad 12,")
    # a word too short for two slips: "matrin" is one slip from Martin, and meant Martinus
    assert lines(sample_index, "matrin nijhoffweg 7")[0] == "Martinus Nijhoffweg 7, 2548 ER 's-Gravenhage"


@pytest.mark.parametrize(("q", "want"), [
    ("wesre badstraat 1", "Wester Badstraat 1, 9726 CN Groningen"),           # 31 words start "weste"
    ("konimg emmakade 118", "Koningin Emmakade 118, 2518 JJ 's-Gravenhage"),  # 20 start "konin"
])
def test_a_slip_still_being_typed_in_a_common_start(sample_index, q, want):
    """A slip undone gives a start that many words share; the rest of the street picks the
    one meant."""
    assert lines(sample_index, q)[0] == want


def test_a_slip_still_being_typed_never_hides_a_prefix_match(sample_index):
    """`prinsessegr` starts Prinsessegracht as typed; no slip is looked for then."""
    assert lines(sample_index, "prinsessegr 2") == lines(sample_index, "prinsessegra 2")


@pytest.mark.parametrize(("q", "want"), [
    ("emmstaat 42a groningen", "Emmastraat 42a, 9722 EZ Groningen"),     # two letters left out
    ("hrestrat 12 groningen", "Herestraat 12, 9711 LJ Groningen"),
    ("abstraut 11c maastricht", "Abtstraat 11C, 6211 LS Maastricht"),    # one out, one wrong
])
def test_two_slips_in_a_long_word_that_left_it_shorter(sample_index, q, want):
    """Two slips are forgiven in a word of 9+ letters, also when two left-out letters made
    the typed word only 7 or 8 letters long."""
    assert lines(sample_index, q)[0] == want


def test_two_slips_are_not_stretched_to_short_words(sample_index):
    """Two slips are forgiven only where the word meant has 9+ letters: `korarweg` is two
    slips from the 8-letter Korreweg, and is not read as it."""
    assert not any(h.startswith("Korreweg") for h in lines(sample_index, "korarweg", limit=10))
    assert lines(sample_index, "korreweg 12")[0].startswith("Korreweg 12,")


@pytest.mark.parametrize("q", ["herestraat 12 9711lk", "herestraat 12 9117lj", "herestraat 12 9711 lk groningen"])
def test_a_postcode_the_address_does_not_have(sample_index, q):
    """A slip in the postcode typed beside the street and number: the street and number
    answer (near where the postcode's digits lie), rather than nothing."""
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"


@pytest.mark.parametrize("q", ["herestraat 12 9711lm", "herestraat 12 9117 lj", "herestraat 12 9711jl",
                               "herestraat 12 9711kj"])
def test_a_slip_in_the_postcode_of_another_street(sample_index, q):
    """9711 LM, 9117 LJ ... exist and hold other streets: the words name Herestraat, so the
    postcode one slip away that holds Herestraat 12 answers, not the other street's 12."""
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"


def test_a_postcode_the_address_has_still_decides(sample_index):
    assert lines(sample_index, "herestraat 12 9711lj", limit=10) == ["Herestraat 12, 9711 LJ Groningen"]
    # a postcode and a number alone are not read as a number alone
    assert all(" 9711 " in h for h in lines(sample_index, "9711lk 12", limit=10))


@pytest.mark.parametrize("q", ["kerkstraat 1 6223", "kerkstraat 1 6223 b", "kerkstraat 1 6223b",
                               "kerkstrat 1 6223", "kerkstraat 1 6224", "kerkstraat 1 6223 c"])
def test_a_postcode_being_typed_after_the_number(sample_index, q):
    """`kerkstraat 1` alone answers Groningen first; its postcode's four digits (and a first
    letter) say which Kerkstraat is meant. Digits that hold no Kerkstraat 1 (6224, 6223 C) still
    point near it."""
    assert lines(sample_index, "kerkstraat 1")[0] != "Kerkstraat 1, 6223 BK Maastricht"
    assert lines(sample_index, q)[0] == "Kerkstraat 1, 6223 BK Maastricht"


def test_a_postcode_being_typed_narrows_the_street(sample_index):
    got = lines(sample_index, "kerkstraat 12 5211", limit=10)
    assert got and all(" 5211 " in h for h in got), got
    # four digits where the street has no such house number: its addresses there
    got = lines(sample_index, "kerkstraat 5211", limit=10)
    assert len(got) == 10 and all(h.startswith("Kerkstraat ") and " 5211 " in h for h in got), got


@pytest.mark.parametrize(("q", "want"), [
    ("antaresstraat 45 1001", "Antaresstraat 45-1001, 9742 LB Groningen"),
    ("duyn en daelseweg 15 1008", "Duyn en Daelseweg 15H-1008, 5391 EC Nuland"),
])
def test_four_digits_after_the_number_may_be_its_addition(sample_index, q, want):
    """No Antaresstraat in a postcode from 1001: the digits are the addition they are."""
    assert lines(sample_index, q)[0] == want


@pytest.mark.parametrize(("q", "want"), [
    ("herestraat 14-h groningen", "Herestraat 14, 9711 LJ Groningen"),    # not Kerkstraat 14 in Haren
    ("hoekstraat 11-2 groningen", "Hoekstraat 11, 9712 AM Groningen"),    # not Hofstraat 11-2
    ("parklaan 8-h groningen", "Parklaan 8, 9724 AL Groningen"),          # not Perklaan 8 in Haren
])
def test_an_addition_the_house_has_not_before_a_slip_in_a_whole_word(sample_index, q, want):
    """Every word is a whole name as typed and the house has no such addition: the addition
    is the slip, not a word that matches as typed."""
    assert lines(sample_index, q)[0] == want


def test_a_house_number_the_street_has_not_answers_its_nearest(sample_index):
    """Herestraat in Groningen ends at 113: `herestraat 200 groningen` answers its highest
    numbers (not Grote Beerstraat 200, two slips from the typed street). The nearer number
    first, the lower of two as near; a postcode's numbers likewise."""
    got = lines(sample_index, "herestraat 200 groningen")
    assert got[0] == "Herestraat 113, 9711 LG Groningen", got
    assert all(h.startswith("Herestraat 113") for h in got), got
    got = lines(sample_index, "hooistraat 8 den haag", limit=10)
    assert got[0].startswith("Hooistraat 7,") or got[0].startswith("Hooistraat 9,"), got
    got = lines(sample_index, "9711lj 999", limit=10)
    assert got and all(" 9711 LJ " in h for h in got), got
    # a number the street has is still the only answer
    assert lines(sample_index, "herestraat 113d groningen", limit=10) == ["Herestraat 113d, 9711 LG Groningen"]


@pytest.mark.parametrize("q", ["herestraat 12 3 hoog", "herestraat 12 boven", "herestraat 12 1 hoog groningen",
                               "herestraat 12 huis"])
def test_the_floor_typed_after_the_number(sample_index, q):
    """`3 hoog`, `boven`, `huis` say which floor: the house is Herestraat 12."""
    assert lines(sample_index, q)[0] == "Herestraat 12, 9711 LJ Groningen"


@pytest.mark.parametrize(("q", "place"), [
    ("kerkstraat 1 limburg", "Maastricht"), ("kerkstraat 1 lb", "Maastricht"),
    ("kerkstraat 1 noord-brabant", "Nuland"), ("kerkstraat 1 zuid-holland", "'s-Gravenhage"),
])
def test_a_province_at_the_end_says_where(sample_index, q, place):
    """`kerkstraat 1` alone answers Groningen first; a province typed after it names no
    address, but says which Kerkstraat 1 is meant."""
    assert first_place(sample_index, "kerkstraat 1")["NLD_LOCALITY"] == "Groningen"
    assert first_place(sample_index, q)["NLD_LOCALITY"] == place


@pytest.mark.parametrize(("q", "want"), [
    ("fitterei 1 groningen", "Fitterij 1, 9712 MS Groningen"),           # ij written ei
    ("ijmeren 3 den bosch", "Eimeren 3, 5235 DR 's-Hertogenbosch"),     # ei written ij
])
def test_ei_and_ij_mixed_up(sample_index, q, want):
    """Dutch writes one sound both as ei and as ij; writing the other is one slip, also in a
    word too short for two (`fitterei` is two edits from `fitterij`)."""
    assert lines(sample_index, q)[0] == want


@pytest.mark.parametrize(("q", "want"), [
    # a word of 3 or 4 letters, too short for a slip of a key
    ("tweede rijt 15", "Tweede Reit 15, 5233 JN 's-Hertogenbosch"),
    ("ald rei 2 witmarsum", "Ald Rij 2, 8748 BC Witmarsum"),
    ("zijs 1 nuland", "Zeis 1, 5391 CH Nuland"),
    # a word still being typed
    ("neiverheidsw 2 ten boer", "Nijverheidsweg 2, 9791 DA Ten Boer"),
    ("groendeiksterz 2", "Groendijksterzijl 2, 8604 EV Sneek"),
    ("einstijnstr 1 sneek", "Einsteinstraat 1, 8606 JE Sneek"),
    ("reiswijksew 101", "Rijswijkseweg 101, 2516 HA 's-Gravenhage"),
    # a word with the sound twice, one of them written the other way
    ("laan van de vreiheid 3", "Laan van de Vrijheid 3, 9728 GA Groningen"),
    ("rijgereil 1", "Reigereiland 1, 9613 AN Meerstad"),
])
def test_ei_and_ij_mixed_up_in_short_words_and_words_being_typed(sample_index, q, want):
    """The same slip in a word too short for a slip of a key (Reit, Rij, Zeis), in a word still
    being typed, and in one of two ei/ij of a word: the other spelling is one slip there too."""
    assert lines(sample_index, q)[0] == want
