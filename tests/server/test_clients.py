"""Who a request comes from (server/clients.py), and the demo key's limit per client address
(issue 37: one script spending the demo key took its whole rate from the page's visitors)."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest

from server.clients import TrustedProxies, client_address
from server.config import Config

LOOPBACK = TrustedProxies()  # gunicorn's default: 127.0.0.1 and ::1
QUERY = "country=NLD&q=kerkstraat+1&limit=3"


@pytest.mark.parametrize(
    "peer, forwarded, trusted, client",
    [
        ("203.0.113.5", None, LOOPBACK, "203.0.113.5"),
        ("203.0.113.5", "198.51.100.1", LOOPBACK, "203.0.113.5"),  # not a proxy of ours: ignored
        ("127.0.0.1", None, LOOPBACK, "127.0.0.1"),
        ("127.0.0.1", "198.51.100.1", LOOPBACK, "198.51.100.1"),
        # what the client wrote itself stands left of what the proxy appended
        ("127.0.0.1", "192.0.2.66, 198.51.100.1", LOOPBACK, "198.51.100.1"),
        ("127.0.0.1", "192.0.2.66,198.51.100.1, 127.0.0.1", LOOPBACK, "198.51.100.1"),  # two trusted hops
        ("127.0.0.1", "198.51.100.1, unknown", LOOPBACK, "127.0.0.1"),  # not an address: its reporter
        ("127.0.0.1", "unknown, 198.51.100.1", LOOPBACK, "198.51.100.1"),
        ("127.0.0.1", "127.0.0.1, ::1", LOOPBACK, "127.0.0.1"),  # every hop trusted: the farthest
        ("::1", "::ffff:198.51.100.1", LOOPBACK, "198.51.100.1"),
        ("127.0.0.1", "2001:db8:1:2:3:4:5:6", LOOPBACK, "2001:db8:1:2::/64"),  # IPv6: its /64
        ("2001:db8:1:2::9", None, LOOPBACK, "2001:db8:1:2::/64"),
        ("10.1.2.3", "198.51.100.1", TrustedProxies("10.0.0.0/8"), "198.51.100.1"),
        ("10.1.2.3", "198.51.100.1", TrustedProxies("*"), "198.51.100.1"),
        ("127.0.0.1", "198.51.100.1", TrustedProxies(""), "127.0.0.1"),  # nobody trusted
        (None, "198.51.100.1", LOOPBACK, "198.51.100.1"),  # no IP peer (a UNIX socket): trusted
        ("", None, LOOPBACK, "unknown"),
    ],
)
def test_the_client_is_the_first_untrusted_hop_from_the_right(peer, forwarded, trusted, client):
    assert client_address(peer, forwarded, trusted) == client


def test_trusted_proxies_are_checked_when_the_config_is_made():
    with pytest.raises(ValueError, match="trusted proxies"):
        Config(trusted_proxies="10.0.0.0/8, not-an-address")
    with pytest.raises(ValueError, match="demo_client_rate"):
        Config(demo_client_rate=0)


def demo(client) -> tuple[str, dict]:
    body = json.loads(client.simulate_get("/demo-key").content)
    return body["key"], {"Authorization": f"Bearer {body['key']}", "Sec-Fetch-Site": "same-origin"}


def statuses(client, headers: dict, n: int, **kw: str) -> list[int]:
    return [client.simulate_get("/v1/address", query_string=QUERY, headers=headers, **kw).status_code for _ in range(n)]


def test_the_demo_key_is_limited_per_client_address(app_factory):
    """Issue 37: a script spending the demo key (forged ``Sec-Fetch-Site``) left 17 of 21
    requests of a visitor refused. Each client address now has a rate of its own."""
    client = app_factory(demo_rate=1000, demo_client_rate=3)
    _, headers = demo(client)
    assert json.loads(client.simulate_get("/demo-key").content)["client_rate"] == 3
    assert statuses(client, headers, 10, remote_addr="203.0.113.7") == [200] * 3 + [429] * 7
    resp = client.simulate_get("/v1/address", query_string=QUERY, headers=headers, remote_addr="203.0.113.7")
    problem = json.loads(resp.content)
    assert problem["code"] == "rate_limited" and "3 requests per second per client address" in problem["detail"]
    assert resp.headers["retry-after"] == "1"
    # a visitor elsewhere is served; so is one behind a proxy of ours, by the address it names
    assert statuses(client, headers, 3, remote_addr="198.51.100.20") == [200] * 3
    behind = {**headers, "X-Forwarded-For": "192.0.2.9"}
    assert statuses(client, behind, 4) == [200] * 3 + [429]  # falcon.testing's peer is 127.0.0.1
    assert statuses(client, headers, 1) == [200]  # the proxy itself, as a client: its own limit


def test_the_demo_key_keeps_its_rate_for_all(app_factory):
    client = app_factory(demo_rate=4, demo_client_rate=100)
    _, headers = demo(client)
    blank = "country=NLD&q=+"  # no search: no cost beyond the request itself
    sent = [
        client.simulate_get("/v1/address", query_string=blank, headers=headers, remote_addr=f"198.51.100.{i}")
        for i in range(6)
    ]
    assert [resp.status_code for resp in sent] == [200] * 4 + [429] * 2
    assert "rate limit of 4 requests per second exceeded" in json.loads(sent[-1].content)["detail"]


def test_a_forged_forwarded_for_from_an_untrusted_peer_is_ignored(app_factory):
    client = app_factory(demo_rate=100, demo_client_rate=2)
    _, headers = demo(client)
    sent = [
        client.simulate_get(
            "/v1/address",
            query_string=QUERY,
            headers={**headers, "X-Forwarded-For": f"192.0.2.{i}"},
            remote_addr="203.0.113.7",
        ).status_code
        for i in range(5)
    ]
    assert sent == [200, 200, 429, 429, 429]


def test_keys_without_a_client_rate_are_not_limited_per_client(app_factory, auth):
    client = app_factory(demo_rate=1, demo_client_rate=1)
    assert statuses(client, auth, 5, remote_addr="203.0.113.7") == [200] * 5


@pytest.mark.slow
def test_a_script_spending_the_demo_key_leaves_a_visitor_served(live_server):
    """Issue 37, over HTTP: a script that read /demo-key and spent it as fast as it could (with
    a forged ``Sec-Fetch-Site``) got 17 of a visitor's 21 requests refused. Both come through a
    proxy on this machine (loopback is trusted), which names them in ``X-Forwarded-For``."""
    live = live_server(env={"ADDRESS_DEMO_RATE": "20", "ADDRESS_DEMO_CLIENT_RATE": "4"})
    key = json.loads(live.get("/demo-key", auth=False)[2])["key"]
    path = "/v1/address?country=NLD&q=kerkstraat&limit=5"
    stop, script = threading.Event(), []

    def spend() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
        try:
            spend_on(conn)
        finally:
            conn.close()

    def spend_on(conn: http.client.HTTPConnection) -> None:
        while not stop.is_set():
            conn.request(
                "GET",
                path,
                headers={
                    "Authorization": f"Bearer {key}",
                    "Sec-Fetch-Site": "same-origin",
                    "X-Forwarded-For": "203.0.113.7",
                },
            )
            response = conn.getresponse()
            response.read()
            script.append(response.status)

    spender = threading.Thread(target=spend, daemon=True)
    spender.start()
    try:
        # the visitor comes once the script has been spending for a second past its first 429:
        # in the first moments a worker new to the key serves only its first credit (3 of a
        # 20/s key, server.limiter) until its first lease from the quota, one sync later
        # (0.1 s, later on a loaded machine); the script's first burst spends it, and a visitor
        # asking in that moment got the key's 429 (one CI run), which is not what this is about
        deadline = time.monotonic() + 10
        while 429 not in script and time.monotonic() < deadline:
            time.sleep(0.01)
        assert 429 in script, f"the script was never limited: {script[:20]}"
        time.sleep(1)
        visitor = []
        for _ in range(21):  # three keystrokes a second, within the visitor's own rate
            headers = {"Sec-Fetch-Site": "same-origin", "X-Forwarded-For": "198.51.100.9"}
            visitor.append(live.get(path, auth=key, headers=headers)[0])
            time.sleep(1 / 3)
    finally:
        stop.set()
        spender.join(timeout=10)
    assert visitor == [200] * 21
    assert script.count(429) > script.count(200) > 0  # the script got its own rate, no more
