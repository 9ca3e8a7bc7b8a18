"""The highlight=true example of docs/guide/web.md, through the HTTP app on the whole-country index."""

from __future__ import annotations

import json

import falcon.testing
import pytest

pytestmark = pytest.mark.full


def test_readme_highlight_example(tmp_path, full_index_path):
    import engine
    from server.app import create_app
    from server.config import Config
    from server.keys import KeyStore

    store = KeyStore(str(tmp_path / "keys.sqlite3"))
    key = store.create("readme", 1e6)
    index = engine.AddressIndex.open(full_index_path)
    client = falcon.testing.TestClient(create_app(index, Config(keystore_path=store.path)))
    resp = client.simulate_get(
        "/v1/address",
        query_string="country=NLD&q=kerkstr+1+gron&limit=10&highlight=true",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert resp.status_code == 200
    hits = {tuple(hit["lines"][:2]): hit["highlights"] for hit in json.loads(resp.content)["hits"]}
    assert hits[("Kerkstraat 1", "9745 CC Groningen")] == [[[0, 7], [11, 12]], [[8, 12]], []]
