"""A running service picks up a mutation delivery with its usual reload (issue 41).

A real gunicorn serves the Doesburg sample's index (built from the LVBAG extract of
2020-09-15) behind its ``current`` link; ``python -m engine update`` applies a delivery of
2020-09-16 to that index in place (a new directory renamed over the old one), a HUP makes the
workers open it, and the address the delivery added is answered within the minute while every
request before, during and after gets its 200.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testdata import DATA_DIR, REPO

from engine.ingest.build import build

sys.path.insert(0, str(REPO / "benchmarks"))
try:
    import lvbag_roundtrip as rt
finally:
    sys.path.pop(0)

pytestmark = pytest.mark.slow

DOESBURG_ZIP = DATA_DIR / "bag" / "lvbag-doesburg" / "BAGNLDL-15092020-small.zip"


def streets(live, q: str) -> list[str]:
    status, _, body = live.address(q, limit=10)
    assert status == 200, body
    return [f"{h['street']} {h['number']}" for h in _hits(json.loads(body))]


def _hits(body: dict) -> list[dict]:
    out = []
    for hit in body["hits"]:
        parts = {c["type"]: c["value"] for c in hit["components"]}
        out.append({"street": parts["NLD_PUBLIC_SPACE"], "number": parts["NLD_HOUSE_NUMBER"]})
    return out


def test_an_address_added_by_a_delivery_is_served_the_next_minute(tmp_path, live_server):
    if not DOESBURG_ZIP.exists():
        pytest.fail(f"the LVBAG sample is missing: {DOESBURG_ZIP} (set ADDRESS_DATA_DIR)")
    index = tmp_path / "doesburg"
    build(DOESBURG_ZIP, index, progress=False, jobs=1)
    v = rt.voorkomen
    new_num = rt.num_xml("0221200000999001", 6, "", "", "6981CH", "0221300000311333", v(1, "2020-09-16", None))
    new_vbo = rt.vbo_xml("0221010000999001", "0221200000999001", [], 206345.0, 447530.0, v(1, "2020-09-16", None))
    delivery = rt.write_delivery(tmp_path / "mutations", [rt.mutation_group([("toevoeging", None, new_num)]),
                                                          rt.mutation_group([("toevoeging", None, new_vbo)])],
                                 dt.date(2020, 9, 15), dt.date(2020, 9, 16))
    live = live_server(index=index)
    assert "Kosterstraat 6" not in streets(live, "kosterstraat 6 doesburg")
    ready = json.loads(live.get("/readyz", auth=False)[2])["index"]
    assert ready["register_date"] == "2020-09-15"

    started = time.monotonic()
    env = {**os.environ, "ADDRESS_DATA_DIR": str(DATA_DIR)}
    done = subprocess.run([sys.executable, "-m", "engine", "update", str(index), str(delivery)], cwd=REPO, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Kosterstraat 4" in streets(live, "kosterstraat 4 doesburg")   # the old index, still served
    live.proc.send_signal(signal.SIGHUP)
    while "Kosterstraat 6" not in streets(live, "kosterstraat 6 doesburg"):
        assert time.monotonic() - started < 60, "the new address was not served within a minute"
        time.sleep(0.2)
    ready = json.loads(live.get("/readyz", auth=False)[2])["index"]
    assert ready["register_date"] == "2020-09-16"
    assert ready["register_age_days"] == (dt.datetime.now(dt.UTC).date() - dt.date(2020, 9, 16)).days
    assert "Kosterstraat 4" in streets(live, "kosterstraat 4 doesburg")
    assert Path(os.path.realpath(live.link)) == index
