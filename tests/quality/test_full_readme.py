"""The README's two examples with their answers, on the whole-country index, as a reader runs them.

The curl request goes through the HTTP app with a key; its ```json block is the body, byte for
byte. The ```python block runs as written (its index path pointed at the whole-country index),
and what it prints is the ``# ...`` lines under it.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import falcon.testing
import pytest

pytestmark = pytest.mark.full

README = Path(__file__).resolve().parents[2] / "README.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_request_answers_the_body_it_shows(tmp_path, full_index):
    from server.app import create_app
    from server.config import Config
    from server.keys import KeyStore

    [request] = [b for b in blocks("sh") if "curl" in b and "/v1/address?" in b]
    [query] = re.findall(r"/v1/address\?([^' ]+)'", request)
    [shown] = [b for b in blocks("json") if '"hits"' in b]
    store = KeyStore(str(tmp_path / "keys.sqlite3"))
    key = store.create("readme", 1e6)
    client = falcon.testing.TestClient(create_app(full_index, Config(keystore_path=store.path)))
    resp = client.simulate_get("/v1/address", query_string=query, headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 200
    assert resp.content == shown.strip().encode()


def test_the_readme_embedding_example_prints_what_it_shows(full_index_path):
    [example] = [b for b in blocks("python") if "AddressIndex.open" in b]
    code = "\n".join(line for line in example.splitlines() if not line.startswith("#"))
    shown = [line[2:] for line in example.splitlines() if line.startswith("# ")]
    assert shown, "the example shows what it prints"
    assert '"indexes/nl"' in code
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code.replace('"indexes/nl"', repr(full_index_path)), {})  # noqa: S102 (our own README)
    assert out.getvalue().splitlines() == shown
