"""Typed hits (issue 12, part 5): `suggest` returns `engine.Hit`s, the same addresses in the same
order as `suggest_json`, whose bytes each hit's `to_json` gives back exactly; the score and how
each was found come from the search itself."""

from __future__ import annotations

import pickle
import random

import msgspec
import orjson
import pytest

import engine
from engine.explain import explain
from engine.normalize import fold

QUERIES = ["hooistraat 2a den haag", "den haag hooistraat 2a", "2511 ab", "2511ab 1", "kerk", "s",
           "gro", "herestraat 12 groningen", "herestrat 12 groningen", "herestraat 14-h groningen",
           "vrijthof 1 maastricht", "sneek", "", "   ", "qqqqxxzz 12", "laan van meerdervoort 1"]


@pytest.fixture(scope="module")
def queries(sample_index):
    """QUERIES, then typed prefixes and whole lines of random addresses of the sample."""
    rng = random.Random(12)
    out = list(QUERIES)
    for a in rng.sample(range(len(sample_index)), 150):
        line = " ".join(sample_index.hit(a).lines[:2])
        out += [line, line.lower()[: rng.randrange(1, len(line))]]
    return out


def body(hits, limit):
    return b'{"hits":[' + b",".join(h.to_json() for h in hits) + b'],"limit":' + str(limit).encode() + b"}"


@pytest.mark.parametrize("limit", [1, 5, 10])
def test_hits_are_the_json_hits_byte_for_byte(sample_index, queries, limit):
    for q in queries:
        hits = sample_index.suggest(q, limit=limit)
        assert all(type(h) is engine.Hit for h in hits)
        assert [h.address_id for h in hits] == sample_index.search_ids(q, limit=limit), q
        assert body(hits, limit) == sample_index.suggest_json(q, limit=limit), q
        assert [h.to_dict() for h in hits] == orjson.loads(sample_index.suggest_json(q, limit=limit))["hits"]


def test_with_a_focus_point_too(sample_index, queries):
    for q in queries[::3]:
        hits = sample_index.suggest(q, limit=5, lat=53.2, lon=6.56)
        assert body(hits, 5) == sample_index.suggest_json(q, limit=5, lat=53.2, lon=6.56), q


def test_fields_are_the_components(sample_index, queries):
    for q in queries[:60]:
        for h in sample_index.suggest(q, limit=3):
            d = h.to_dict()
            c = {x["type"]: x["value"] for x in d["components"]}
            assert (h.street, h.number, h.letter or None, h.addition or None, h.postcode, h.locality,
                    h.municipality, h.province) == (
                c["NLD_PUBLIC_SPACE"], c["NLD_HOUSE_NUMBER"], c.get("NLD_HOUSE_LETTER"),
                c.get("NLD_HOUSE_NUMBER_ADDITION"), c["NLD_POSTAL_CODE"], c["NLD_LOCALITY"],
                c["NLD_MUNICIPALITY"], c["NLD_PROVINCE"])
            assert (h.latitude, h.longitude) == (d["location"]["latitude"], d["location"]["longitude"])
            assert list(h.lines) == d["lines"]
            assert h.query == q


def test_best_first_by_score(sample_index, queries):
    """The hits come in the order of their scores (ties on the address id), as the core ranks."""
    for q in queries:
        hits = sample_index.suggest(q, limit=10)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True), q
        assert sample_index.search_scored(q, limit=10) == [(h.address_id, h.score) for h in hits]


def test_stored_answers_have_scores_and_the_same_hits(sample_index):
    """One-word queries answered from the index's stored answers ('s', 'gro') are searched again
    for their scores: the same hits, scores like any other query's."""
    for q in ["s", "gro", "den", "k"]:
        for limit in (1, 5, 10):
            hits = sample_index.suggest(q, limit=limit)
            assert [h.address_id for h in hits] == sample_index.search_ids(q, limit=limit)
            assert all(-10 < h.score < 1 for h in hits)
            assert len({h.score for h in hits}) > 1 or limit == 1


@pytest.mark.parametrize(("q", "found", "street", "number"), [
    ("herestraat 12 groningen", "typed", "Herestraat", 12),
    ("herest 12 groningen", "typed", "Herestraat", 12),
    ("herestrat 12 groningen", "slip", "Herestraat", 12),
    ("herestraat 14-h groningen", "retry", "Herestraat", 14),
    ("herestraat 12 groningen nederland", "retry", "Herestraat", 12),
])
def test_how_each_was_found(sample_index, q, found, street, number):
    hit = sample_index.suggest(q, limit=1)[0]
    assert (hit.found, hit.street, hit.number, hit.locality) == (found, street, number, "Groningen")


def test_a_whole_match_scores_above_a_prefix_and_a_slip(sample_index):
    whole, prefix, slip = (sample_index.suggest(q, limit=1)[0].score for q in
                           ("herestraat 12 groningen", "herest 12 groningen", "herestrat 12 groningen"))
    assert whole >= 0 > prefix > slip


def test_hits_are_frozen_hashable_and_picklable(sample_index):
    hit = sample_index.suggest("hooistraat 2a den haag", limit=1)[0]
    with pytest.raises(AttributeError):
        hit.street = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(hit)) == hit
    assert {hit, sample_index.suggest("hooistraat 2a den haag", limit=1)[0]} == {hit}
    assert msgspec.structs.asdict(hit)["postcode"] == hit.postcode
    assert fold(hit.lines[0]) == "hooistraat 2a"


def test_hit_by_address_id(sample_index):
    hit = sample_index.suggest("vrijthof 1 maastricht", limit=1)[0]
    again = sample_index.hit(hit.address_id, q=hit.query, score=hit.score, found=hit.found)
    assert again == hit
    for bad in (-1, len(sample_index)):
        with pytest.raises(IndexError):
            sample_index.hit(bad)


def test_bad_arguments_are_refused_as_suggest_json_refuses_them(sample_index):
    for kw in ({"limit": 0}, {"limit": 11}, {"lat": 52.0}, {"lat": 91.0, "lon": 5.0}):
        with pytest.raises(engine.QueryError):
            sample_index.suggest("damrak", **kw)
        with pytest.raises(engine.QueryError):
            sample_index.suggest_json("damrak", **kw)
    with pytest.raises(engine.QueryError):
        sample_index.suggest("x" * 129)


def test_how_each_typed_word_matched(sample_index):
    """`index.explain(hit)` says, per typed word, exact / prefix / alias / slip / left_out
    (engine.explain)."""
    hit = sample_index.suggest("den haag hooistr 2a", limit=1)[0]
    words = sample_index.explain(hit)
    assert [(w.typed, w.kind, w.field) for w in words] == [
        ("den", "alias", "locality"), ("haag", "alias", "locality"), ("hooistr", "prefix", "street"),
        ("2", "exact", "number"), ("a", "exact", "letter")]
    assert explain(sample_index, hit.query, hit) == words
    slip = sample_index.suggest("herestrat 12 groningen achterhuis", limit=1)[0]
    assert [w.kind for w in sample_index.explain(slip)] == ["slip", "exact", "exact", "left_out"]


def test_a_closed_index_refuses_typed_hits_and_batches(sample_index_dir):
    """Hits, scores and batches read the arrays as the other searches do: never after close()
    (which unmaps them), always with IndexClosedError."""
    index = engine.AddressIndex.open(sample_index_dir)
    hit = index.suggest("vrijthof 1 maastricht", limit=1)[0]
    assert [m.hit for m in index.match(["vrijthof 1 maastricht"])] == [hit]
    index.close()
    for call in (lambda: index.suggest("vrijthof 1"), lambda: index.search_scored("vrijthof 1"),
                 lambda: index.hit(hit.address_id), lambda: list(index.match(["vrijthof 1"]))):
        with pytest.raises(engine.IndexClosedError):
            call()
    assert hit.to_json().startswith(b'{"components"')     # a hit stands on its own
