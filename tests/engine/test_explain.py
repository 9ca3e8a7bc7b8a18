"""How a hit matched the typed words (engine.explain), on real hits of the sample index.

Each test types what a person types, takes the hit the engine answers, and checks what a reader
of the explanation would check: which typed word matched which part of the address, how, and
which characters of the hit's lines are to be shown in bold.
"""

from __future__ import annotations

import importlib
import random

import pytest

from engine.explain import WordMatch, aliases_from_manifest, default_aliases, explain, highlights, match_score
from engine.ingest.source import read_source
from engine.normalize import fold


@pytest.fixture(scope="module")
def aliases(sample_index):
    return aliases_from_manifest(sample_index.manifest)


def first_hit(index, q, line0_starts=""):
    """The first hit of `q` (whose street line starts with `line0_starts`)."""
    for hit in (h.to_dict() for h in index.suggest(q, limit=10)):
        if hit["lines"][0].startswith(line0_starts):
            return hit
    raise AssertionError(f"{q!r}: no hit whose street line starts with {line0_starts!r}")


def check_invariants(q, hit, matches):
    """What holds for every explanation: the typed words are q's own characters, in order and
    apart, and every span lies inside its line."""
    assert all(isinstance(m, WordMatch) for m in matches)
    last = 0
    for m in matches:
        assert q[m.start:m.end] == m.typed and m.typed, (q, m)
        assert m.start >= last, (q, matches)
        last = m.end
        if m.kind == "left_out":
            assert (m.field, m.line, m.span) == (None, None, None), m
            continue
        assert m.field is not None
        if m.span is not None:
            assert m.line is not None and 0 <= m.line < len(hit["lines"]), m
            s, e = m.span
            assert 0 <= s < e <= len(hit["lines"][m.line]), (q, hit["lines"], m)
        else:
            assert m.line is None
    # every letter and digit of q is in some typed word (separators are not)
    covered = {i for m in matches for i in range(m.start, m.end)}
    assert all(i in covered for i, c in enumerate(q) if fold(c).strip()), (q, matches)


def shown(hit, m):
    return hit["lines"][m.line][m.span[0]:m.span[1]]


def table(q, hit, aliases):
    """(typed, kind, field, the text of the line the span marks) for each typed word."""
    matches = explain(q, hit, aliases=aliases)
    check_invariants(q, hit, matches)
    return [(m.typed, m.kind, m.field, shown(hit, m) if m.span else None) for m in matches]


def test_every_word_as_typed(sample_index, aliases):
    q = "Herestraat 12 Groningen"
    hit = first_hit(sample_index, q, "Herestraat 12")
    assert table(q, hit, aliases) == [
        ("Herestraat", "exact", "street", "Herestraat"),
        ("12", "exact", "number", "12"),
        ("Groningen", "exact", "locality", "Groningen"),
    ]
    assert match_score(explain(q, hit, aliases=aliases)) == 1.0
    assert highlights(q, hit, aliases=aliases) == [[(0, 10), (11, 13)], [(8, 17)], []]


def test_words_still_being_typed_mark_their_typed_part(sample_index, aliases):
    q = "prinsegr 1 s-grav"
    hit = first_hit(sample_index, q, "Prinsegracht 1")
    assert table(q, hit, aliases) == [
        ("prinsegr", "prefix", "street", "Prinsegr"),
        ("1", "exact", "number", "1"),
        ("s", "exact", "locality", "s"),
        ("grav", "prefix", "locality", "Grav"),
    ]
    # a house number being typed: 1 of 112
    q = "burgemeester bauduinstraat 1"
    hit = first_hit(sample_index, q, "Burgemeester Bauduinstraat 1")
    if hit["lines"][0] != "Burgemeester Bauduinstraat 1":
        assert table(q, hit, aliases)[-1] == ("1", "prefix", "number", "1")
    score = match_score(explain("prinsegr 1 s-grav", first_hit(sample_index, "prinsegr 1 s-grav"),
                                aliases=aliases))
    assert 0.5 < score < 1.0


@pytest.mark.parametrize("q, street_start, want", [
    # an abbreviation for the registered word, and the registered abbreviation for the word typed
    ("burg bauduinstraat 112", "Burgemeester Bauduinstraat 112",
     ("burg", "alias", "street", "Burgemeester")),
    ("burgemeester s gockingastraat 1", "Burg. S. Gockingastraat 1",
     ("burgemeester", "alias", "street", "Burg")),
    ("st amandusstraat 1", "Sint Amandusstraat 1", ("st", "alias", "street", "Sint")),
    ("eerste braamstraat 1", "1e Braamstraat 1", ("eerste", "alias", "street", "1e")),
    ("2de schuytstraat 27", "2e Schuytstraat 27", ("2de", "alias", "street", "2e")),
    ("v aerssenstraat 1", "Van Aerssenstraat 1", ("v", "alias", "street", "Van")),
    ("vd spiegelstraat 2", "Van de Spiegelstraat 2", ("vd", "alias", "street", "Van de")),
])
def test_abbreviations_both_ways(sample_index, aliases, q, street_start, want):
    hit = first_hit(sample_index, q, street_start)
    got = table(q, hit, aliases)
    assert got[0] == want
    assert all(kind == "exact" for _, kind, _, _ in got[1:]), got


def test_an_abbreviation_still_being_typed_is_the_start_of_the_word(sample_index, aliases):
    """`v` typed last may be the V of Van being typed: the start is marked, not the whole word;
    `v ` (a space after it, or words after it) is the abbreviation of Van."""
    hit = first_hit(sample_index, "v aerssenstraat 1", "Van Aerssenstraat 1")
    assert table("v", hit, aliases) == [("v", "prefix", "street", "V")]
    assert table("v ", hit, aliases) == [("v", "alias", "street", "Van")]
    assert table("aerssenstraat v", hit, aliases)[1] == ("v", "prefix", "street", "V")
    # where the start is no reading, the abbreviation is one, typed last or not
    hit = first_hit(sample_index, "st amandusstraat 1", "Sint Amandusstraat 1")
    assert table("amandusstraat st", hit, aliases)[1] == ("st", "alias", "street", "Sint")


def test_everyday_place_names_mark_the_registered_name(sample_index, aliases):
    q = "den haag hooistraat 2a"
    hit = first_hit(sample_index, q, "Hooistraat 2A")
    assert hit["lines"][1].endswith("'s-Gravenhage")
    assert table(q, hit, aliases) == [
        ("den", "alias", "locality", "'s-Gravenhage"),
        ("haag", "alias", "locality", "'s-Gravenhage"),
        ("hooistraat", "exact", "street", "Hooistraat"),
        ("2", "exact", "number", "2"),
        ("a", "exact", "letter", "A"),
    ]
    assert highlights(q, hit, aliases=aliases)[0] == [(0, 10), (11, 13)]   # 2 and A merge


def test_den_bosch(sample_index, aliases):
    q = "kerkstraat 10 den bosch"
    hit = first_hit(sample_index, q, "Kerkstraat 10")
    got = table(q, hit, aliases)
    assert got[-2:] == [("den", "alias", "locality", "'s-Hertogenbosch"),
                        ("bosch", "alias", "locality", "'s-Hertogenbosch")]


@pytest.mark.parametrize("q, street_start, want", [
    ("herestrat 12 groningen", "Herestraat 12", ("herestrat", "slip", "street", "Herestraat")),
    ("hreestraat 12", "Herestraat 12", ("hreestraat", "slip", "street", "Herestraat")),   # swapped
    ("zeedikj", "Zeedijk", ("zeedikj", "slip", "street", "Zeedijk")),                    # ij spelling
    # still being typed, with a slip: the start it stands for
    ("jerestr 12", "Herestraat 12", ("jerestr", "slip", "street", "Herestr")),
])
def test_slips(sample_index, aliases, q, street_start, want):
    hit = first_hit(sample_index, q, street_start)
    assert table(q, hit, aliases)[0] == want


def test_a_short_word_is_a_slip_only_as_a_start(sample_index, aliases):
    hit = first_hit(sample_index, "herestraat 12", "Herestraat 12")
    # four letters: too short for a slip in a whole word, but one slip from Herestraat's start
    assert table("hers 12", hit, aliases)[0] == ("hers", "slip", "street", "Here")
    # three: too short for either
    assert table("hrs 12", hit, aliases)[0] == ("hrs", "left_out", None, None)


def test_diacritics_and_ij_are_mapped_back(sample_index, aliases):
    q = "afkelansdijk sneek"
    hit = first_hit(sample_index, q, "Afkelânsdyk")
    assert table(q, hit, aliases)[0] == ("afkelansdijk", "exact", "street", "Afkelânsdyk")
    q = "AFKELÂNSDYK"
    assert table(q, hit, aliases)[0] == ("AFKELÂNSDYK", "exact", "street", "Afkelânsdyk")
    hit = first_hit(sample_index, "ijlst", "")
    assert hit["lines"][1].endswith("IJlst")
    assert table("ijlst", hit, aliases) == [("ijlst", "exact", "locality", "IJlst")]
    # IJ folds to one letter: its first half typed marks the I, both halves the IJ
    hit = first_hit(sample_index, "ijsselstraat 15", "IJsselstraat 15")
    assert table("i", hit, aliases) == [("i", "prefix", "street", "I")]
    assert table("ij", hit, aliases) == [("ij", "prefix", "street", "IJ")]
    assert table("ijss", hit, aliases) == [("ijss", "prefix", "street", "IJss")]


def test_a_municipality_is_matched_but_not_shown(sample_index, aliases):
    q = "frittemaleane súdwest-fryslân"
    hit = first_hit(sample_index, q, "Frittemaleane")
    matches = explain(q, hit, aliases=aliases)
    check_invariants(q, hit, matches)
    assert [(m.typed, m.kind, m.field, m.line, m.span) for m in matches[1:]] == [
        ("súdwest", "exact", "municipality", None, None),
        ("fryslân", "exact", "municipality", None, None),
    ]


@pytest.mark.parametrize("q", ["'s-Gravenhage prinsegracht 1", "s gravenhage prinsegracht 1",
                               "sgravenhage prinsegracht 1", "S-GRAVENHAGE prinsegracht 1"])
def test_apostrophe_names(sample_index, aliases, q):
    hit = first_hit(sample_index, q, "Prinsegracht 1")
    hl = highlights(q, hit, aliases=aliases)
    line1 = hit["lines"][1]
    assert line1.endswith("'s-Gravenhage")
    bold = "".join(line1[s:e] for s, e in hl[1])
    assert bold.replace("-", "") == "sGravenhage"      # the apostrophe is not typed, so not bold
    assert all(m.kind == "exact" for m in explain(q, hit, aliases=aliases))


def test_t_hof(sample_index, aliases):
    hit = first_hit(sample_index, "t hof 1 bolsward", "'t Hof 1")
    assert table("'t hof 1 bolsward", hit, aliases)[:2] == [("t", "exact", "street", "t"),
                                                           ("hof", "exact", "street", "Hof")]


@pytest.mark.parametrize("q, want", [
    ("9711LJ 12", [("9711LJ", "exact", "postcode", "9711 LJ"), ("12", "exact", "number", "12")]),
    ("9711 lj 12", [("9711", "exact", "postcode", "9711"), ("lj", "exact", "postcode", "LJ"),
                    ("12", "exact", "number", "12")]),
    ("9711lj12", [("9711lj", "exact", "postcode", "9711 LJ"), ("12", "exact", "number", "12")]),
    # a pasted address that lost its line break: the number glued to the postcode
    ("herestraat 129711 lj", [("herestraat", "exact", "street", "Herestraat"), ("12", "exact", "number", "12"),
                              ("9711", "exact", "postcode", "9711"), ("lj", "exact", "postcode", "LJ")]),
    ("herestraat 129711lj", [("herestraat", "exact", "street", "Herestraat"), ("12", "exact", "number", "12"),
                             ("9711lj", "exact", "postcode", "9711 LJ")]),
    ("9711ljgroningen 12", [("9711lj", "exact", "postcode", "9711 LJ"), ("groningen", "exact", "locality", "Groningen"),
                            ("12", "exact", "number", "12")]),
    ("herestraat 12 9711lm", [("herestraat", "exact", "street", "Herestraat"),
                              ("12", "exact", "number", "12"),
                              ("9711lm", "slip", "postcode", "9711 LJ")]),
])
def test_postcode_forms(sample_index, aliases, q, want):
    hit = first_hit(sample_index, q, "Herestraat 12")
    assert table(q, hit, aliases) == want


def test_a_postcode_being_typed(sample_index, aliases):
    for q, want in (("9711", [("9711", "prefix", "postcode", "9711")]),
                    ("9711 l", [("9711", "exact", "postcode", "9711"), ("l", "prefix", "postcode", "L")]),
                    ("9711l", [("9711l", "prefix", "postcode", "9711 L")])):
        hit = sample_index.suggest(q, limit=1)[0].to_dict()
        assert table(q, hit, aliases) == want, q


@pytest.mark.parametrize("q", ["2e schuytstraat 27b", "2e schuytstraat 27 b", "2e schuytstraat 27B",
                               "2e schuytstraat 27-b"])
def test_house_letter_forms(sample_index, aliases, q):
    hit = first_hit(sample_index, q, "2e Schuytstraat 27B")
    got = table(q, hit, aliases)
    assert got[0] == ("2e", "exact", "street", "2e")
    assert [g[1:] for g in got[2:]] == [("exact", "number", "27"), ("exact", "letter", "B")]
    assert highlights(q, hit, aliases=aliases)[0] == [(0, 2), (3, 15), (16, 19)]


@pytest.mark.parametrize("q", ["frittemaleane 1-011", "frittemaleane 1 011", "frittemaleane 1/011"])
def test_addition_forms(sample_index, aliases, q):
    hit = first_hit(sample_index, q, "Frittemaleane 1-011")
    assert table(q, hit, aliases)[1:] == [("1", "exact", "number", "1"), ("011", "exact", "addition", "011")]


def test_a_letter_the_house_does_not_have_is_left_out(sample_index, aliases):
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    assert table("herestraat 12q", hit, aliases) == [
        ("herestraat", "exact", "street", "Herestraat"),
        ("12", "exact", "number", "12"),
        ("q", "left_out", None, None),
    ]


@pytest.mark.parametrize("q, gone", [
    ("herestraat 1 (achterhuis)", "achterhuis"),
    ("herestraat 1 3 hoog", "hoog"),
    ("herestraat 1 groningen centrum", "centrum"),
    ("adres: herestraat 1", "adres"),
])
def test_words_the_hit_does_not_account_for_are_left_out(sample_index, aliases, q, gone):
    hit = first_hit(sample_index, q, "Herestraat 1")
    matches = explain(q, hit, aliases=aliases)
    check_invariants(q, hit, matches)
    left = [m for m in matches if m.kind == "left_out"]
    assert gone in [m.typed for m in left]
    assert q[left[-1].start:left[-1].end] == left[-1].typed
    assert [m.field for m in matches if m.typed == "herestraat"] == ["street"]
    assert match_score(matches) < 1.0


def test_a_house_number_the_street_does_not_have(sample_index, aliases):
    q = "herestraat 200 groningen"
    hit = first_hit(sample_index, q, "Herestraat")
    assert hit["lines"][0] != "Herestraat 200"
    assert table(q, hit, aliases)[1] == ("200", "left_out", None, None)


@pytest.mark.parametrize("q, street_start, want", [
    ("kerkstraat12", "Kerkstraat 12", [("kerkstraat", "exact", "street", "Kerkstraat"),
                                       ("12", "exact", "number", "12")]),
    ("vanaerssenstraat 1", "Van Aerssenstraat 1", [("vanaerssenstraat", "exact", "street", "Van Aerssenstraat"),
                                                   ("1", "exact", "number", "1")]),
    ("vanaerssenstr", "Van Aerssenstraat", [("vanaerssenstr", "prefix", "street", "Van Aerssenstr")]),
    ("kerk straat 1", "Kerkstraat 1", [("kerk", "exact", "street", "Kerk"), ("straat", "exact", "street", "straat"),
                                       ("1", "exact", "number", "1")]),
])
def test_words_spaced_otherwise(sample_index, aliases, q, street_start, want):
    hit = first_hit(sample_index, q, street_start)
    assert table(q, hit, aliases) == want


def test_one_registered_word_answers_one_typed_word(sample_index, aliases):
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    got = table("herestraat herestraat 12", hit, aliases)
    assert [g[1] for g in got] == ["exact", "left_out", "exact"]


def test_the_default_table_knows_the_static_abbreviations(sample_index):
    hit = first_hit(sample_index, "burg bauduinstraat 112", "Burgemeester Bauduinstraat 112")
    assert explain("burg bauduinstraat 112", hit)[0].kind == "alias"
    assert "burg" in default_aliases()["burgemeester"]
    assert aliases_from_manifest({"derived_abbreviations": {"wg": ["weg"]}})["wg"] == ("weg",)
    assert aliases_from_manifest({}) == default_aliases()


def test_a_callers_own_alias_table(sample_index):
    """A table of one's own is read as the engine's is: folded, both spellings given by the
    caller (here Herestraat typed as `hs`)."""
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    mine = {"Herestraat": ["HS"]}
    assert [(m.typed, m.kind, m.span) for m in explain("hs 12", hit, aliases=mine)] == [
        ("hs", "alias", (0, 10)), ("12", "exact", (11, 13))]
    # without it, hs matches nothing of this hit
    assert explain("hs 12", hit)[0].kind == "left_out"
    with pytest.raises(TypeError, match="aliases must map"):
        explain("hs 12", hit, aliases=["hs"])
    with pytest.raises(TypeError, match="aliases must map words to lists"):
        explain("hs 12", hit, aliases={"herestraat": "hs"})
    with pytest.raises(TypeError, match="aliases must map words to lists"):
        explain("hs 12", hit, aliases={"herestraat": 5})
    # any iterable of spellings, a generator too (read once)
    table = {"herestraat": (w for w in ["hs"])}
    assert explain("hs 12", hit, aliases=table)[0].kind == "alias"
    assert explain("hs 12", hit, aliases=table)[0].kind == "alias"


def test_many_alias_tables_one_after_another(sample_index):
    """A caller that makes a new table for every call (not what one should do) still gets the
    right answer from each, while old tables are let go."""
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    for i in range(100):
        word = "qz" + chr(97 + i % 26) + chr(97 + i // 26)
        assert explain(f"{word} 12", hit, aliases={"herestraat": [word]})[0].kind == "alias"
        assert explain(f"{word} 12", hit, aliases={"groningen": [word]})[0].field == "locality"


def test_bad_arguments_are_refused_clearly(sample_index):
    hit = sample_index.suggest("herestraat 1", limit=1)[0].to_dict()
    with pytest.raises(TypeError, match="q must be a str"):
        explain(b"herestraat", hit)
    with pytest.raises(TypeError, match="hit must be"):
        explain("herestraat", ["Herestraat 1"])
    with pytest.raises(ValueError, match="components"):
        explain("herestraat", {"lines": []})
    with pytest.raises(ValueError, match="component that is not"):
        explain("herestraat", {"components": [{"type": "X", "value": 1}], "lines": []})
    with pytest.raises(ValueError, match="derived_abbreviations"):
        aliases_from_manifest({"derived_abbreviations": {"wg": "weg"}})
    with pytest.raises(ValueError, match="lines must be strings"):
        explain("herestraat", {"components": hit["components"], "lines": [1, 2]})
    # tuples serve as lists do
    frozen = {"components": tuple(hit["components"]), "lines": tuple(hit["lines"])}
    assert explain("herestraat 1", frozen) == explain("herestraat 1", hit)
    assert explain("", hit) == () and explain(" ,. ", hit) == ()
    assert highlights("", hit) == [[], [], []]
    assert match_score(()) == 0.0


def test_many_words_that_could_each_be_several(sample_index, aliases):
    """The same short word typed many times, where each could stand for several registered
    words: the best reading is still found (each registered word answers one typed word)."""
    hit = first_hit(sample_index, "van de spiegelstraat 2", "Van de Spiegelstraat 2")
    q = "van de " * 12
    matches = explain(q, hit, aliases=aliases)
    check_invariants(q, hit, matches)
    assert [(m.typed, m.kind) for m in matches[:2]] == [("van", "exact"), ("de", "exact")]
    assert all(m.kind == "left_out" for m in matches[2:])


def test_threads_get_the_answers_one_thread_gets(sample_index, aliases):
    """Batch matching explains hits from several threads at once: the caches are shared, the
    answers are those of a plain loop."""
    import threading

    queries = ["den haag hooistraat 2a", "herestrat 12", "9711 lj 12", "v aerssenstraat 1", "ijlst",
               "kerk straat 1", "st amandusstraat 1", "afkelansdijk sneek", "herestraat 1 (achterhuis)"]
    pairs = [(q, h) for q in queries for h in [h.to_dict() for h in sample_index.suggest(q, limit=10)]]
    want = [explain(q, h, aliases=aliases) for q, h in pairs]
    got: dict[int, list] = {}

    def work(k):
        importlib.import_module("engine.explain")._hit_targets.cache_clear()
        got[k] = [explain(q, h, aliases=aliases) for q, h in pairs * 5]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got[k] == want * 5 for k in range(4))


def test_a_long_text_is_explained_word_by_word(sample_index, aliases):
    """No limit on the typed text here (the engine refuses more than 128 characters; a caller
    may explain anything): a pasted page of words, each accounted for or left out."""
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    q = "herestraat 12 groningen " + "en nog wat woorden " * 300
    matches = explain(q, hit, aliases=aliases)
    check_invariants(q, hit, matches)
    assert [m.kind for m in matches[:3]] == ["exact", "exact", "exact"]
    assert len(matches) == 3 + 4 * 300
    assert all(m.kind == "left_out" for m in matches[3:])


def test_typed_hits_from_another_index_still_explain(sample_index, aliases):
    """A hit built by hand in the contract's shape (no engine involved) explains too."""
    hit = {"components": [
        {"type": "NLD_PUBLIC_SPACE", "value": "Damrak"}, {"type": "NLD_HOUSE_NUMBER", "value": 1},
        {"type": "NLD_HOUSE_LETTER", "value": "A"}, {"type": "NLD_HOUSE_NUMBER_ADDITION", "value": "2"},
        {"type": "NLD_POSTAL_CODE", "value": "1012 LG"}, {"type": "NLD_LOCALITY", "value": "Amsterdam"},
        {"type": "NLD_MUNICIPALITY", "value": "Amsterdam"}, {"type": "NLD_PROVINCE", "value": "Noord-Holland"},
        {"type": "NLD_COUNTRY", "value": "Nederland"}],
        "country": "NLD", "lines": ["Damrak 1A-2", "1012 LG Amsterdam", "Nederland"],
        "location": {"latitude": 52.376053, "longitude": 4.895985}}
    assert table("1012lg1a 2 a'dam nh nederland", hit, aliases) == [
        ("1012lg", "exact", "postcode", "1012 LG"),
        ("1", "exact", "number", "1"),
        ("a", "exact", "letter", "A"),
        ("2", "exact", "addition", "2"),
        ("a'dam", "alias", "locality", "Amsterdam"),
        ("nh", "alias", "province", None),
        ("nederland", "exact", "country", "Nederland"),
    ]
    # spans touching each other merge; the separators between words are not bold
    assert highlights("damrak 1a-2", hit) == [[(0, 6), (7, 9), (10, 11)], [], []]


def test_folding_keeps_where_each_letter_came_from():
    """The words found in a text are the engine's own (normalize.fold for the register, the
    query reader's tokens for a query: A'dam glued), and each points back at the characters
    that fold to it; plain ASCII takes a quicker path to the same words."""
    from engine._core import query_tokens
    from engine.explain import _fold_any, _fold_words

    rng = random.Random(5)
    alphabet = "abcdeijklsxyz IJAZ0129'`-./()éÂßĳŒ’ñ\u0301"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        for glue in (False, True):
            words = _fold_words(text, glue)
            assert words == _fold_any(text, glue), text
            want = query_tokens(text) if glue else fold(text).split()
            assert [w.text for w in words] == want, (text, glue)
            for w in words:
                assert len(w.starts) == len(w.ends) == len(w.text)
                piece = text[w.starts[0]:w.ends[-1]]
                assert fold(piece).replace(" ", "").replace("ij", "y") == w.text, (text, w)


# ---------------------------------------------------------------------------------------------
# random queries: prefixes of real addresses as people type them


@pytest.fixture(scope="module")
def typed_addresses(sample_source):
    """300 random addresses of the sample, written as people type them."""
    t = read_source(sample_source, progress=False)
    rng = random.Random(12)
    out = []
    for i in rng.sample(range(len(t.number)), 300):
        digits, r = divmod(int(t.postcode[i]), 676)
        postcode = f"{digits:04d}{chr(65 + r // 26)}{chr(65 + r % 26)}"
        house = f"{int(t.number[i])}{chr(t.letter[i]) if t.letter[i] else ''}"
        if t.additions[t.addition[i]]:
            house += f" {t.additions[t.addition[i]]}"
        street, place = t.streets[t.street[i]], t.localities[t.locality[i]]
        out.append(rng.choice([f"{street} {house} {place}", f"{postcode} {house}",
                               f"{place} {street} {house}".lower(), f"{street} {house}, {postcode} {place}"]))
    return out


def test_random_prefixes_of_real_addresses(sample_index, aliases, typed_addresses):
    rng = random.Random(16)
    n = 0
    for typed in typed_addresses:
        for k in sorted({len(typed), *rng.sample(range(1, len(typed) + 1), 3)}):
            q = typed[:k]
            for hit in (h.to_dict() for h in sample_index.suggest(q, limit=3)):
                matches = explain(q, hit, aliases=aliases)
                check_invariants(q, hit, matches)
                for m in matches:
                    if m.kind in ("exact", "prefix") and m.span is not None:
                        # the bold text is what was typed, but for case, accents and spacing
                        assert fold(shown(hit, m)).replace(" ", "") == fold(m.typed).replace(" ", "") \
                            or (m.kind == "prefix" and m.typed[-1:].lower() == "i"), (q, hit["lines"], m)
                hl = highlights(q, hit, aliases=aliases)
                for line, spans in zip(hit["lines"], hl, strict=True):
                    assert spans == sorted(spans)
                    assert all(0 <= s < e <= len(line) for s, e in spans)
                    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
                n += 1
    assert n > 1000


def test_a_whole_address_typed_is_accounted_for_by_its_own_hit(sample_index, aliases, typed_addresses):
    """Typed in full, an address's own hit accounts for every typed word."""
    found = 0
    for typed in typed_addresses[:150]:
        for hit in (h.to_dict() for h in sample_index.suggest(typed, limit=5)):
            text = fold(" ".join(hit["lines"][:2])).replace(" ", "")
            if all(fold(w).replace(" ", "") in text for w in typed.replace(",", " ").split()):
                matches = explain(typed, hit, aliases=aliases)
                assert all(m.kind != "left_out" for m in matches), (typed, hit["lines"], matches)
                found += 1
                break
    assert found > 100


def test_explaining_a_hit_has_a_work_budget(sample_index, aliases):
    """Regression (issue 37, item 2): a query of fifty one-letter words had readings for most of
    them in every hit, and explaining one hit took 64 sets of registered words through every
    word (about 7,000 units of work, 9 ms; 90 ms for the highlights of ten hits). The walk stops
    near EXPLAIN_WORK: the words it had no work left for are left out, the first ones are still
    explained, and an ordinary query is explained as it would be without a budget."""
    from engine.explain import EXPLAIN_WORK, _explained

    q = ("kerkstraat 1 amst(rdam (a b  d e f g h ji j k l m n o p q r s t u v w7xs y z a b zd e f g h i j k "
         "n m n o p d r s t u v w)")
    hits = [h.to_dict() for h in sample_index.suggest(q, limit=10)]
    assert hits
    for hit in hits:
        unbounded, spent_unbounded = _explained(q, hit, aliases, 10**9)
        matches, spent = _explained(q, hit, aliases, EXPLAIN_WORK)
        assert spent_unbounded > 2 * EXPLAIN_WORK
        assert spent <= 2 * EXPLAIN_WORK
        assert matches == explain(q, hit, aliases=aliases)
        check_invariants(q, hit, matches)
        assert len(matches) == len(unbounded)   # every typed word is said something of
        assert [m.kind for m in matches[:2]] == ["exact", "exact"]   # kerkstraat, 1
        assert matches[-1].kind == "left_out"
    ordinary = "burg bauduinstraat 112"
    hit = first_hit(sample_index, ordinary)
    assert _explained(ordinary, hit, aliases, EXPLAIN_WORK) == _explained(ordinary, hit, aliases, 10**9)
    assert _explained(ordinary, hit, aliases, 10**9)[1] < EXPLAIN_WORK // 4
