"""Every query does a bounded amount of work (issue 11, defect 6): `_core._set_work_budget`.

The figures (no query over about 1 ms, the public set's answers unchanged) are in
benchmarks/fuzz.py and the commit that set the budget; here, that the budget is applied."""

from __future__ import annotations

import pytest

from engine import _core

QUERIES = ["kerkstraat 1", "d b br br 1 o b b 9288 b br", "a b c d e f g h i j", "van der k 1", "1012 lg 1"]


@pytest.fixture
def budget():
    yield _core._set_work_budget
    _core._set_work_budget(25_000)  # the default (engine/_core.pyx)


def test_a_spent_budget_stops_the_search(sample_index, budget):
    budget(0)
    # nothing is scored, not even a reading tried: an empty answer, the same every time
    for q in QUERIES[1:3]:
        assert sample_index.suggest(q, limit=10) == []
        assert sample_index.suggest_json(q, limit=10) == sample_index.suggest_json(q, limit=10)


def test_the_default_budget_leaves_ordinary_answers_alone(sample_index, budget):
    budget(25_000)
    default = [sample_index.suggest_json(q, limit=limit) for q in QUERIES for limit in (1, 5, 10)]
    budget(10**15)
    unbounded = [sample_index.suggest_json(q, limit=limit) for q in QUERIES for limit in (1, 5, 10)]
    assert default == unbounded
