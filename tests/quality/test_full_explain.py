"""How a hit matched (engine.explain) on the whole-country index: the example of docs/understanding.md and the
forms only the whole country holds (Amsterdam's Damrak, A'dam, R'dam)."""

from __future__ import annotations

import pytest

from engine.explain import explain, highlights, match_score

pytestmark = pytest.mark.full


@pytest.fixture(scope="module")
def country(full_index):
    return full_index


def readings(index, q):
    hit = index.suggest(q, limit=5)[0]
    return hit, [(m.typed, m.kind, m.field, m.span) for m in explain(index, q, hit)]


def test_the_readme_example(country):
    q = "den haag hooistraat 2a"
    hit, got = readings(country, q)
    assert hit.lines == ("Hooistraat 2A", "2514 BM 's-Gravenhage", "Nederland")
    assert got == [("den", "alias", "locality", (8, 21)), ("haag", "alias", "locality", (8, 21)),
                   ("hooistraat", "exact", "street", (0, 10)), ("2", "exact", "number", (11, 12)),
                   ("a", "exact", "letter", (12, 13))]
    assert highlights(country, q, hit) == [[(0, 10), (11, 13)], [(8, 21)], []]
    assert round(match_score(explain(country, q, hit)), 2) == 0.96


@pytest.mark.parametrize(("q", "want"), [
    ("damrak 1 (achterhuis) amsterdam", [("damrak", "exact", "street", (0, 6)), ("1", "exact", "number", (7, 8)),
                                         ("achterhuis", "left_out", None, None),
                                         ("amsterdam", "exact", "locality", (8, 17))]),
    ("1012lg1", [("1012lg", "exact", "postcode", (0, 7)), ("1", "exact", "number", (7, 8))]),
    ("damrak 1 a'dam", [("damrak", "exact", "street", (0, 6)), ("1", "exact", "number", (7, 8)),
                        ("a'dam", "alias", "locality", (8, 17))]),
    ("nwe binnenweg 1 r'dam", [("nwe", "alias", "street", (0, 6)), ("binnenweg", "exact", "street", (7, 16)),
                               ("1", "exact", "number", (17, 18)), ("r'dam", "alias", "locality", (8, 17))]),
    ("kerkstr 12 utr", [("kerkstr", "prefix", "street", (0, 7)), ("12", "exact", "number", (11, 13)),
                        ("utr", "prefix", "locality", (8, 11))]),
])
def test_whole_country_forms(country, q, want):
    assert readings(country, q)[1] == want
