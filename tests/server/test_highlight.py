"""``highlight=true``: the spans of each hit's lines that the typed text matched (opt-in)."""

from __future__ import annotations

import json

import pytest

from engine.explain import highlights

QUERIES = ["kerkstr 1 gron", "s grav kerkstraat 1", "1e sweel 1", "2514kp 1", "hoofdstr", "nothing like it"]


@pytest.mark.parametrize("q", QUERIES)
@pytest.mark.parametrize("flag", ["", "&highlight=false"], ids=["absent", "false"])
def test_without_highlight_the_body_is_the_contracts_byte_for_byte(get, index, q, flag):
    resp = get(f"country=NLD&q={q}&limit=7{flag}")
    assert resp.status_code == 200
    assert resp.content == index.suggest_json(q, limit=7)


@pytest.mark.parametrize("q", QUERIES)
def test_highlight_adds_the_spans_of_engine_explain_to_the_same_hits(get, index, q):
    resp = get(f"country=NLD&q={q}&limit=7&highlight=true")
    assert resp.status_code == 200
    body = json.loads(resp.content)
    plain = json.loads(index.suggest_json(q, limit=7))
    assert body["limit"] == 7
    assert [{k: v for k, v in hit.items() if k != "highlights"} for hit in body["hits"]] == plain["hits"]
    for hit, typed in zip(body["hits"], index.suggest(q, limit=7), strict=True):
        spans = hit["highlights"]
        assert len(spans) == len(hit["lines"]) == 3
        assert spans == [[list(s) for s in line] for line in highlights(index, q, typed)]
        for line, line_spans in zip(hit["lines"], spans, strict=True):
            ends = [0] + [e for _, e in line_spans]
            for (start, end), before in zip(line_spans, ends, strict=False):
                assert before <= start < end <= len(line)  # sorted, merged, inside the line


def marked(hit: dict) -> list[list[str]]:
    return [[line[s:e] for s, e in spans] for line, spans in zip(hit["lines"], hit["highlights"], strict=True)]


def test_highlight_marks_prefixes_numbers_and_places(get):
    hit = json.loads(get("country=NLD&q=kerkstr+1+gron&highlight=true").content)["hits"][0]
    assert hit["lines"][:2] == ["Kerkstraat 1", "9745 CC Groningen"]
    assert marked(hit) == [["Kerkstr", "1"], ["Gron"], []]


def test_highlight_marks_the_registered_spelling_of_an_abbreviation(get):
    hit = json.loads(get("country=NLD&q=1e+sweel+1&highlight=true").content)["hits"][0]
    assert hit["lines"][0] == "1e Sweelinckstraat 1"
    assert marked(hit)[0] == ["1e", "Sweel", "1"]


@pytest.mark.parametrize("value", ["TRUE", "True", "1", "yes", "", "true%20", "on", "false,true"])
def test_highlight_is_true_or_false_only(get, value):
    resp = get(f"country=NLD&q=kerk&highlight={value}")
    assert resp.status_code == 400
    problem = json.loads(resp.content)
    assert (problem["code"], problem["parameter"]) == ("invalid_parameter", "highlight")


def test_highlight_given_twice_is_400(get):
    resp = get("country=NLD&q=kerk&highlight=true&highlight=true")
    assert json.loads(resp.content)["parameter"] == "highlight"


def test_highlight_percent_encoded_is_still_true(get):
    resp = get("country=NLD&q=kerk&%68ighlight=%74rue")
    assert resp.status_code == 200
    assert all("highlights" in hit for hit in json.loads(resp.content)["hits"])
