"""No input crashes the engine or yields a body that is not the contract's shape."""

from __future__ import annotations

import json
import random

import pytest

ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    " .,-'/\\\"%&+()#;:!?\t\n\r\x00\x1f\x7f"
    "ÀÁÂÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÖØÙÚÛÜÝßàáâäåæçèéêëìíîïñòóôöøùúûüýÿĳĲŁłŒœẞ"
    "\u0301\u0308\u200b\u2019\u2013\ufeff😀𝔘中文ק"
)


def random_queries(n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        k = rng.choice([0, 1, 2, 3, 5, 8, 13, 40, 127, 128])
        yield "".join(rng.choice(ALPHABET) for _ in range(k))


def mutated_queries(n: int, seed: int):
    """Real-looking queries with random damage: digits glued, words cut, characters doubled."""
    rng = random.Random(seed)
    base = ["hooistraat 2a den haag", "1e hollandiastraat 1 bolsward", "2511 ab 1",
            "burg. s. gockingastraat 1", "herestraat 12-3 groningen", "9711LJ12", "s gr",
            "st amandusstraat 1 bis maastricht", "12 kerk", "3a d37", "1234", "1234 a"]
    for _ in range(n):
        q = list(rng.choice(base))
        for _ in range(rng.randint(0, 4)):
            i = rng.randrange(len(q) + 1)
            op = rng.random()
            if op < 0.4:
                q.insert(i, rng.choice("0123456789 -a"))
            elif op < 0.7 and q:
                del q[min(i, len(q) - 1)]
            elif q:
                q.insert(i, q[min(i, len(q) - 1)])
        yield "".join(q)[:128]


@pytest.mark.parametrize("limit", [1, 5, 10])
def test_random_input_gives_valid_bodies(sample_index, limit):
    for q in list(random_queries(400, limit)) + list(mutated_queries(400, limit)):
        body = json.loads(sample_index.suggest_json(q, limit=limit))
        assert set(body) == {"hits", "limit"} and body["limit"] == limit, q
        assert len(body["hits"]) <= limit, q
        for hit in body["hits"]:
            assert hit["country"] == "NLD" and len(hit["lines"]) == 3, q
        assert sample_index.suggest_json(q, limit=limit) == sample_index.suggest_json(q, limit=limit)
