"""/metrics is cheap to scrape in a loop and can be put behind a token (issue 11, defect 7)."""

from __future__ import annotations

import falcon.testing

from server.app import create_app
from server.config import Config
from server.metrics import Metrics


def test_a_scrape_in_a_loop_adds_up_the_workers_once_a_second(monkeypatch):
    now = [0.0]
    metrics = Metrics(lambda: None, clock=lambda: now[0])
    renders = []
    real = metrics._render_now
    monkeypatch.setattr(metrics, "_render_now", lambda: renders.append(1) or real())
    for _ in range(1000):
        metrics.render()
    assert len(renders) == 1
    metrics.observe("/healthz", "GET", 200, 0.001, None)
    now[0] += Metrics.RENDER_SECONDS
    assert b'route="/healthz"' in metrics.render()
    assert len(renders) == 2


def test_a_metrics_token_guards_metrics(index, keys, flavour):
    app = create_app(index, Config(keystore_path=keys.path, metrics_token="s3cret-token"), asgi=flavour == "asgi")
    client = falcon.testing.TestClient(app)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {keys.alice}"}):
        resp = client.simulate_get("/metrics", headers=headers)
        assert (resp.status_code, resp.json["code"]) == (401, "unauthorized")
        assert resp.headers["www-authenticate"] == "Bearer"
        assert "address_" not in resp.text
    resp = client.simulate_get("/metrics", headers={"Authorization": "Bearer s3cret-token"})
    assert resp.status_code == 200
    assert "address_http_requests_total" in resp.text
    # the API itself does not take the metrics token as a key
    assert client.simulate_get("/v1/address", query_string="country=NLD&q=a",
                               headers={"Authorization": "Bearer s3cret-token"}).status_code == 401


def test_the_token_comes_from_the_environment():
    assert Config.from_env({"ADDRESS_METRICS_TOKEN": "abc"}).metrics_token == "abc"
    assert Config.from_env({}).metrics_token is None
