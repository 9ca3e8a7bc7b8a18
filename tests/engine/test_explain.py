"""How a hit matched the typed words (engine.explain), on real hits of the sample index.

Each test types what a person types, takes the hit the engine answers, and checks what a reader
of the explanation would check: which typed word matched which part of the address, how, and
which characters of the hit's lines are to be shown in bold.
"""

from __future__ import annotations

import json
import random

import pytest

from engine import QueryError
from engine.explain import WordMatch, explain, highlights, match_score
from engine.ingest.source import read_source
from engine.normalize import fold


def first_hit(index, q, line0_starts=""):
    """The first hit of `q` (whose street line starts with `line0_starts`)."""
    for hit in index.suggest(q, limit=10):
        if hit.lines[0].startswith(line0_starts):
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
            assert m.line is not None and 0 <= m.line < len(hit.lines), m
            s, e = m.span
            assert 0 <= s < e <= len(hit.lines[m.line]), (q, hit.lines, m)
        else:
            assert m.line is None
    # every letter and digit of q is in some typed word (separators are not)
    covered = {i for m in matches for i in range(m.start, m.end)}
    assert all(i in covered for i, c in enumerate(q) if fold(c).strip()), (q, matches)


def shown(hit, m):
    return hit.lines[m.line][m.span[0]:m.span[1]]


def table(index, q, hit):
    """(typed, kind, field, the text of the line the span marks) for each typed word."""
    matches = explain(index, q, hit)
    check_invariants(q, hit, matches)
    return [(m.typed, m.kind, m.field, shown(hit, m) if m.span else None) for m in matches]


def test_every_word_as_typed(sample_index):
    q = "Herestraat 12 Groningen"
    hit = first_hit(sample_index, q, "Herestraat 12")
    assert table(sample_index, q, hit) == [
        ("Herestraat", "exact", "street", "Herestraat"),
        ("12", "exact", "number", "12"),
        ("Groningen", "exact", "locality", "Groningen"),
    ]
    assert match_score(explain(sample_index, q, hit)) == 1.0
    assert highlights(sample_index, q, hit) == [[(0, 10), (11, 13)], [(8, 17)], []]


def test_words_still_being_typed_mark_their_typed_part(sample_index):
    q = "prinsegr 1 s-grav"
    hit = first_hit(sample_index, q, "Prinsegracht 1")
    assert table(sample_index, q, hit) == [
        ("prinsegr", "prefix", "street", "Prinsegr"),
        ("1", "exact", "number", "1"),
        ("s", "exact", "locality", "s"),
        ("grav", "prefix", "locality", "Grav"),
    ]
    # a house number being typed: 1 of 112
    q = "burgemeester bauduinstraat 1"
    hit = first_hit(sample_index, q, "Burgemeester Bauduinstraat 1")
    if hit.lines[0] != "Burgemeester Bauduinstraat 1":
        assert table(sample_index, q, hit)[-1] == ("1", "prefix", "number", "1")
    score = match_score(explain(sample_index, "prinsegr 1 s-grav", first_hit(sample_index, "prinsegr 1 s-grav")))
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
def test_abbreviations_both_ways(sample_index, q, street_start, want):
    hit = first_hit(sample_index, q, street_start)
    got = table(sample_index, q, hit)
    assert got[0] == want
    assert all(kind == "exact" for _, kind, _, _ in got[1:]), got


def test_an_abbreviation_still_being_typed_is_the_start_of_the_word(sample_index):
    """`v` typed last may be the V of Van being typed: the start is marked, not the whole word;
    `v ` (a space after it, or words after it) is the abbreviation of Van."""
    hit = first_hit(sample_index, "v aerssenstraat 1", "Van Aerssenstraat 1")
    assert table(sample_index, "v", hit) == [("v", "prefix", "street", "V")]
    assert table(sample_index, "v ", hit) == [("v", "alias", "street", "Van")]
    assert table(sample_index, "aerssenstraat v", hit)[1] == ("v", "prefix", "street", "V")
    # where the start is no reading, the abbreviation is one, typed last or not
    hit = first_hit(sample_index, "st amandusstraat 1", "Sint Amandusstraat 1")
    assert table(sample_index, "amandusstraat st", hit)[1] == ("st", "alias", "street", "Sint")


def test_everyday_place_names_mark_the_registered_name(sample_index):
    q = "den haag hooistraat 2a"
    hit = first_hit(sample_index, q, "Hooistraat 2A")
    assert hit.lines[1].endswith("'s-Gravenhage")
    assert table(sample_index, q, hit) == [
        ("den", "alias", "locality", "'s-Gravenhage"),
        ("haag", "alias", "locality", "'s-Gravenhage"),
        ("hooistraat", "exact", "street", "Hooistraat"),
        ("2", "exact", "number", "2"),
        ("a", "exact", "letter", "A"),
    ]
    assert highlights(sample_index, q, hit)[0] == [(0, 10), (11, 13)]   # 2 and A merge


def test_den_bosch(sample_index):
    q = "kerkstraat 10 den bosch"
    hit = first_hit(sample_index, q, "Kerkstraat 10")
    got = table(sample_index, q, hit)
    assert got[-2:] == [("den", "alias", "locality", "'s-Hertogenbosch"),
                        ("bosch", "alias", "locality", "'s-Hertogenbosch")]


@pytest.mark.parametrize("q, street_start, want", [
    ("herestrat 12 groningen", "Herestraat 12", ("herestrat", "slip", "street", "Herestraat")),
    ("hreestraat 12", "Herestraat 12", ("hreestraat", "slip", "street", "Herestraat")),   # swapped
    ("zeedikj", "Zeedijk", ("zeedikj", "slip", "street", "Zeedijk")),                    # ij spelling
    # still being typed, with a slip: the start it stands for
    ("jerestr 12", "Herestraat 12", ("jerestr", "slip", "street", "Herestr")),
])
def test_slips(sample_index, q, street_start, want):
    hit = first_hit(sample_index, q, street_start)
    assert table(sample_index, q, hit)[0] == want


def test_a_short_word_is_a_slip_only_as_a_start(sample_index):
    hit = first_hit(sample_index, "herestraat 12", "Herestraat 12")
    # five letters: one slip from Herestraat's start, the word still being typed
    assert table(sample_index, "hetes 12", hit)[0] == ("hetes", "slip", "street", "Heres")
    # three: too short for a slip; nothing the search reads matches this hit
    assert table(sample_index, "hrs 12", hit) == [("hrs", "left_out", None, None), ("12", "left_out", None, None)]


def test_diacritics_and_ij_are_mapped_back(sample_index):
    q = "afkelansdijk sneek"
    hit = first_hit(sample_index, q, "Afkelânsdyk")
    assert table(sample_index, q, hit)[0] == ("afkelansdijk", "exact", "street", "Afkelânsdyk")
    q = "AFKELÂNSDYK"
    assert table(sample_index, q, hit)[0] == ("AFKELÂNSDYK", "exact", "street", "Afkelânsdyk")
    hit = first_hit(sample_index, "ijlst", "")
    assert hit.lines[1].endswith("IJlst")
    assert table(sample_index, "ijlst", hit) == [("ijlst", "exact", "locality", "IJlst")]
    # IJ folds to one letter: its first half typed marks the I, both halves the IJ
    hit = first_hit(sample_index, "ijsselstraat 15", "IJsselstraat 15")
    assert table(sample_index, "i", hit) == [("i", "prefix", "street", "I")]
    assert table(sample_index, "ij", hit) == [("ij", "prefix", "street", "IJ")]
    assert table(sample_index, "ijss", hit) == [("ijss", "prefix", "street", "IJss")]


def test_a_municipality_is_matched_but_not_shown(sample_index):
    q = "frittemaleane súdwest-fryslân"
    hit = first_hit(sample_index, q, "Frittemaleane")
    matches = explain(sample_index, q, hit)
    check_invariants(q, hit, matches)
    assert [(m.typed, m.kind, m.field, m.line, m.span) for m in matches[1:]] == [
        ("súdwest", "exact", "municipality", None, None),
        ("fryslân", "exact", "municipality", None, None),
    ]


@pytest.mark.parametrize("q", ["'s-Gravenhage prinsegracht 1", "s gravenhage prinsegracht 1",
                               "sgravenhage prinsegracht 1", "S-GRAVENHAGE prinsegracht 1"])
def test_apostrophe_names(sample_index, q):
    hit = first_hit(sample_index, q, "Prinsegracht 1")
    hl = highlights(sample_index, q, hit)
    line1 = hit.lines[1]
    assert line1.endswith("'s-Gravenhage")
    bold = "".join(line1[s:e] for s, e in hl[1])
    assert bold.replace("-", "") == "sGravenhage"      # the apostrophe is not typed, so not bold
    assert all(m.kind == "exact" for m in explain(sample_index, q, hit))


def test_t_hof(sample_index):
    hit = first_hit(sample_index, "t hof 1 bolsward", "'t Hof 1")
    assert table(sample_index, "'t hof 1 bolsward", hit)[:2] == [("t", "exact", "street", "t"),
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
def test_postcode_forms(sample_index, q, want):
    hit = first_hit(sample_index, q, "Herestraat 12")
    assert table(sample_index, q, hit) == want


def test_a_postcode_being_typed(sample_index):
    for q, want in (("9711", [("9711", "prefix", "postcode", "9711")]),
                    ("9711 l", [("9711", "exact", "postcode", "9711"), ("l", "prefix", "postcode", "L")]),
                    ("9711l", [("9711l", "prefix", "postcode", "9711 L")])):
        hit = sample_index.suggest(q, limit=1)[0]
        assert table(sample_index, q, hit) == want, q


@pytest.mark.parametrize("q", ["2e schuytstraat 27b", "2e schuytstraat 27 b", "2e schuytstraat 27B",
                               "2e schuytstraat 27-b"])
def test_house_letter_forms(sample_index, q):
    hit = first_hit(sample_index, q, "2e Schuytstraat 27B")
    got = table(sample_index, q, hit)
    assert got[0] == ("2e", "exact", "street", "2e")
    assert [g[1:] for g in got[2:]] == [("exact", "number", "27"), ("exact", "letter", "B")]
    assert highlights(sample_index, q, hit)[0] == [(0, 2), (3, 15), (16, 19)]


@pytest.mark.parametrize("q", ["frittemaleane 1-011", "frittemaleane 1 011", "frittemaleane 1/011"])
def test_addition_forms(sample_index, q):
    hit = first_hit(sample_index, q, "Frittemaleane 1-011")
    assert table(sample_index, q, hit)[1:] == [("1", "exact", "number", "1"), ("011", "exact", "addition", "011")]


def test_a_letter_the_house_does_not_have_is_left_out(sample_index):
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    assert table(sample_index, "herestraat 12q", hit) == [
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
def test_words_the_hit_does_not_account_for_are_left_out(sample_index, q, gone):
    hit = first_hit(sample_index, q, "Herestraat 1")
    matches = explain(sample_index, q, hit)
    check_invariants(q, hit, matches)
    left = [m for m in matches if m.kind == "left_out"]
    assert gone in [m.typed for m in left]
    assert q[left[-1].start:left[-1].end] == left[-1].typed
    assert [m.field for m in matches if m.typed == "herestraat"] == ["street"]
    assert match_score(matches) < 1.0


def test_a_house_number_the_street_does_not_have(sample_index):
    q = "herestraat 200 groningen"
    hit = first_hit(sample_index, q, "Herestraat")
    assert hit.lines[0] != "Herestraat 200"
    assert table(sample_index, q, hit)[1] == ("200", "left_out", None, None)


@pytest.mark.parametrize("q, street_start, want", [
    ("kerkstraat12", "Kerkstraat 12", [("kerkstraat", "exact", "street", "Kerkstraat"),
                                       ("12", "exact", "number", "12")]),
    ("vanaerssenstraat 1", "Van Aerssenstraat 1", [("vanaerssenstraat", "exact", "street", "Van Aerssenstraat"),
                                                   ("1", "exact", "number", "1")]),
    ("vanaerssenstr", "Van Aerssenstraat", [("vanaerssenstr", "prefix", "street", "Van Aerssenstr")]),
    ("kerk straat 1", "Kerkstraat 1", [("kerk", "exact", "street", "Kerk"), ("straat", "exact", "street", "straat"),
                                       ("1", "exact", "number", "1")]),
])
def test_words_spaced_otherwise(sample_index, q, street_start, want):
    hit = first_hit(sample_index, q, street_start)
    assert table(sample_index, q, hit) == want


def test_one_registered_word_answers_one_typed_word(sample_index):
    hit = first_hit(sample_index, "herestraat 12 groningen", "Herestraat 12")
    got = table(sample_index, "herestraat herestraat 12", hit)
    assert [g[1] for g in got] == ["exact", "left_out", "exact"]


def test_bad_arguments_are_refused_clearly(sample_index):
    hit = sample_index.suggest("herestraat 1", limit=1)[0]
    with pytest.raises(TypeError, match="q must be a str"):
        explain(sample_index, b"herestraat", hit)
    with pytest.raises(TypeError, match="hit must be"):
        explain(sample_index, "herestraat", hit.to_dict())
    with pytest.raises(IndexError, match="no address"):
        explain(sample_index, "herestraat", len(sample_index))
    # the engine's own limit on a query (the service's 400 query_too_long)
    with pytest.raises(QueryError, match="at most 128"):
        explain(sample_index, "herestraat " * 20, hit)
    # an address id serves as its hit does
    assert explain(sample_index, "herestraat 1", hit.address_id) == explain(sample_index, "herestraat 1", hit)
    assert explain(sample_index, "", hit) == () and explain(sample_index, " ,. ", hit) == ()
    assert highlights(sample_index, "", hit) == [[], [], []]
    assert match_score(()) == 0.0


def test_the_highlights_of_an_answer_are_those_of_each_hit(sample_index):
    """suggest_json(highlight=True) writes per hit what `highlights` says of it: the same
    reading explains both; the hits and every other byte are those of the plain answer."""
    for q in ["kerkstr 1 gron", "s grav kerkstraat 1", "1e sweel 1", "2514kp 1", "v", "herestrat 12 9711lm",
              "den haag hooistraat 2a", "kerkstraat 72A, 870", "nothing like it", "",
              "kerkstraat 1 amst(rdam (a b  d e f g h ji j k l m n o p q r s t u v w7xs y z a b zd e f)"]:
        for limit in (1, 5, 10):
            body = json.loads(sample_index.suggest_json(q, limit=limit, highlight=True))
            plain = json.loads(sample_index.suggest_json(q, limit=limit))
            assert [{k: v for k, v in h.items() if k != "highlights"} for h in body["hits"]] == plain["hits"]
            for hit, got in zip(sample_index.suggest(q, limit=limit), body["hits"], strict=True):
                assert got["highlights"] == [[list(s) for s in line] for line in highlights(sample_index, q, hit)]
    with pytest.raises(TypeError, match="highlight must be a bool"):
        sample_index.suggest_json("kerk", highlight=1)


def test_a_hit_the_query_does_not_find(sample_index):
    """An address the query did not find is explained under the interpretation of the search's
    reading that matches it best; its words are left out when none does."""
    hit = first_hit(sample_index, "van de spiegelstraat 2", "Van de Spiegelstraat 2")
    assert table(sample_index, "van de spiegelstraat 12", hit)[:3] == [
        ("van", "exact", "street", "Van"), ("de", "exact", "street", "de"),
        ("spiegelstraat", "exact", "street", "Spiegelstraat")]
    q = "van de " * 12   # the search finds nothing: nothing it read matches the hit
    matches = explain(sample_index, q, hit)
    check_invariants(q, hit, matches)
    assert len(matches) == 24 and all(m.kind == "left_out" for m in matches)


def test_threads_get_the_answers_one_thread_gets(sample_index):
    """Batch matching explains hits from several threads at once: the caches are shared, the
    answers are those of a plain loop."""
    import threading

    queries = ["den haag hooistraat 2a", "herestrat 12", "9711 lj 12", "v aerssenstraat 1", "ijlst",
               "kerk straat 1", "st amandusstraat 1", "afkelansdijk sneek", "herestraat 1 (achterhuis)"]
    pairs = [(q, h) for q in queries for h in sample_index.suggest(q, limit=10)]
    want = [explain(sample_index, q, h) for q, h in pairs]
    got: dict[int, list] = {}

    def work(k):
        got[k] = [explain(sample_index, q, h) for q, h in pairs * 5]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got[k] == want * 5 for k in range(4))


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


def test_random_prefixes_of_real_addresses(sample_index, typed_addresses):
    rng = random.Random(16)
    n = 0
    for typed in typed_addresses:
        for k in sorted({len(typed), *rng.sample(range(1, len(typed) + 1), 3)}):
            q = typed[:k]
            for hit in (sample_index.suggest(q, limit=3)):
                matches = explain(sample_index, q, hit)
                check_invariants(q, hit, matches)
                for m in matches:
                    if m.kind in ("exact", "prefix") and m.span is not None:
                        # the bold text is what was typed, but for case, accents and spacing
                        assert fold(shown(hit, m)).replace(" ", "") == fold(m.typed).replace(" ", "") \
                            or (m.kind == "prefix" and m.typed[-1:].lower() == "i"), (q, hit.lines, m)
                hl = highlights(sample_index, q, hit)
                for line, spans in zip(hit.lines, hl, strict=True):
                    assert spans == sorted(spans)
                    assert all(0 <= s < e <= len(line) for s, e in spans)
                    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
                n += 1
    assert n > 1000


def test_a_whole_address_typed_is_accounted_for_by_its_own_hit(sample_index, typed_addresses):
    """Typed in full, an address's own hit accounts for every typed word."""
    found = 0
    for typed in typed_addresses[:150]:
        for hit in (sample_index.suggest(typed, limit=5)):
            text = fold(" ".join(hit.lines[:2])).replace(" ", "")
            if all(fold(w).replace(" ", "") in text for w in typed.replace(",", " ").split()):
                matches = explain(sample_index, typed, hit)
                assert all(m.kind != "left_out" for m in matches), (typed, hit.lines, matches)
                found += 1
                break
    assert found > 100


