"""The register's date the served index holds (issue 41): in /readyz, in /metrics with its age in
days, and on the try-it page. The index's manifest says it (``register_date``: an LVBAG extract's
date, or the last mutation delivery's applied to it; none for a CSV)."""

from __future__ import annotations

import datetime as dt
import re

import falcon.testing
import pytest

from server.app import create_app
from server.config import Config
from server.metrics import register_age_days


class UpdatedIndex:
    """An index as far as /readyz and /metrics read one: its manifest."""

    def __init__(self, manifest: dict) -> None:
        self.manifest = manifest

    def suggest_json(self, q, *, limit=5, lat=None, lon=None):
        return b'{"hits":[]}'


def lvbag_manifest(register_date: str) -> dict:
    return {"built_at": "2026-11-28T10:00:00+00:00", "source_name": "lvbag-extract-nl.zip", "rows_out": 9,
            "format_version": 1, "source_format": "lvbag-xml", "extract_date": "2026-11-08",
            "register_date": register_date}


@pytest.fixture
def client_of(keys, flavour):
    def make(manifest: dict) -> falcon.testing.TestClient:
        app = create_app(UpdatedIndex(manifest), Config(keystore_path=keys.path), asgi=flavour == "asgi")
        return falcon.testing.TestClient(app)
    return make


def test_readyz_and_metrics_give_the_register_date_and_its_age(client_of):
    """An index built from the extract of 2026-11-08 and updated to three days ago."""
    date = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=3)
    client = client_of(lvbag_manifest(date.isoformat()))
    index = client.simulate_get("/readyz").json["index"]
    assert (index["register_date"], index["register_age_days"]) == (date.isoformat(), 3)
    assert index["extract_date"] == "2026-11-08"
    text = client.simulate_get("/metrics").text
    assert "address_index_register_age_days 3.0" in text
    stamp = dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC).timestamp()
    (line,) = [x for x in text.splitlines() if x.startswith("address_index_register_timestamp_seconds ")]
    assert float(line.split()[1]) == stamp


def test_an_index_of_today_is_0_days_old_and_a_csv_index_names_no_date(client, client_of):
    today = dt.datetime.now(dt.UTC).date()
    assert client_of(lvbag_manifest(today.isoformat())).simulate_get("/readyz").json["index"]["register_age_days"] == 0
    index = client.simulate_get("/readyz").json["index"]         # the sample index: built from the CSV
    assert (index["register_date"], index["register_age_days"]) == (None, None)
    assert "address_index_register" not in client.simulate_get("/metrics").text


def test_an_index_built_before_updates_existed_gives_its_extract_date():
    """A manifest of an earlier build has extract_date and no register_date: that is its date."""
    manifest = {"source_format": "lvbag-xml", "extract_date": "2026-11-08"}
    now = dt.datetime(2026, 11, 28, 12, 0, tzinfo=dt.UTC).timestamp()
    assert register_age_days(manifest, now) == 20


def test_the_try_it_page_shows_the_register_date(client):
    """The page asks /readyz and writes the date and its age into the footer."""
    page = client.simulate_get("/").text
    assert re.search(r'<span id="register-date">[^<]*</span>', page)
    script = client.simulate_get("/try.js").text
    assert 'fetch("/readyz"' in script and "register_date" in script and "register_age_days" in script
