"""Real headless Chromium (Debian's chromium + chromium-driver) against the real server.

- ``server``: gunicorn (2 workers) on a free loopback port, serving the sample index, with the
  try-it page's demo key (``ADDRESS_DEMO_RATE``) and a key store holding a secret key and
  publishable keys for the second pages' origins.
- ``pages``: two more loopback origins (other ports) serving the manual's embed snippet (docs/guide/web.md).
- ``proxy``: the server behind a loopback proxy that holds back the answers to chosen queries,
  to show that a slow answer to an earlier prefix never replaces a newer one.
- ``axe_source``: axe-core from the npm registry (``npm ci`` in tests/browser, pinned by
  package-lock.json), injected into the page by the tests.
- Screenshots go to ``build/browser-artifacts`` (``BROWSER_ARTIFACTS``), outside git.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from testdata import REPO

HERE = Path(__file__).resolve().parent
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", REPO / "build" / "browser-artifacts"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
DEMO_RATE = 30  # requests/s per worker and per client: room for a test typing fast on a loaded
# machine (cost-charged: each highlighted answer costs several tokens)

pytestmark = pytest.mark.slow

# NOTE: the server tests' helper, imported as they import it (pytest puts their directory on the
# path only when it collects them)
sys.path.insert(0, str(REPO / "tests" / "server"))
from liveserver import Live  # noqa: E402


def cli(keystore: Path, *args: str) -> str:
    """``python -m server keys ...``; the key is the last line."""
    out = subprocess.run(
        [sys.executable, "-m", "server", "--keystore", str(keystore), "keys", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.splitlines()[-1]


class Server:
    """gunicorn (tests/server/liveserver.py) with the demo key, and the keys of the tests."""

    def __init__(self, tmp: Path, index_dir: Path, page_ports: list[int]) -> None:
        keystore = tmp / "keys.sqlite3"
        self.secret = cli(keystore, "create", "--name", "tests", "--rate", "1e6")
        page_origins = [f"http://127.0.0.1:{port}" for port in page_ports]
        # a publishable key for the first second page's origin, and one for an origin no page has
        self.publishable = cli(keystore, "create", "--name", "shop", "--publishable", "--origin", page_origins[0])
        self.elsewhere = cli(
            keystore, "create", "--name", "elsewhere", "--publishable", "--origin", "https://elsewhere.example"
        )
        rates = {"ADDRESS_DEMO_RATE": str(DEMO_RATE), "ADDRESS_DEMO_CLIENT_RATE": str(DEMO_RATE)}
        self.live = Live(tmp, index_dir, key=self.secret, env=rates)
        self.log = self.live.log
        self.port = self.live.port
        self.origin = f"http://127.0.0.1:{self.port}"
        # the try-it page with a pasted publishable key that lists this server (known to every
        # worker within a second: wait until it is)
        self.own = cli(keystore, "create", "--name", "own", "--publishable", "--origin", self.origin)
        query = "/v1/address?country=NLD&q=a"
        same = {"Authorization": f"Bearer {self.own}", "Sec-Fetch-Site": "same-origin"}
        deadline = time.monotonic() + 10
        while not all(self.request(query, same)[0] == 200 for _ in range(4)):
            assert time.monotonic() < deadline, "the new key did not reach the workers"
            time.sleep(0.1)

    def request(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        status, _, body = self.live.get(path, auth=False, headers=headers)
        return status, body

    def hits(self, q: str, limit: int = 5, highlight: bool = False) -> list[dict]:
        """The API's answer, asked directly with the secret key."""
        query = urlencode({"country": "NLD", "q": q, "limit": limit, "highlight": str(highlight).lower()})
        status, body = self.request(f"/v1/address?{query}", {"Authorization": f"Bearer {self.secret}"})
        assert status == 200, body
        return json.loads(body)["hits"]

    def stop(self) -> None:
        self.live.stop()


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.ThreadingHTTPServer:
    """Serve ``handler`` on a loopback port the system picks, bound before anyone is told of it."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


#: The manual's embed snippet (docs/guide/web.md): the tests serve it as it is written there.
SNIPPET_DOC = REPO / "docs" / "guide" / "web.md"
SNIPPET_HOST = "https://address.example"
SNIPPET_KEY = "nlk_YOUR_PUBLISHABLE_KEY"


def doc_snippet() -> str:
    """The ```html block of the manual's page on web pages that loads widget.js."""
    blocks = re.findall(r"```html\n(.*?)```", SNIPPET_DOC.read_text(encoding="utf-8"), re.S)
    found = [block for block in blocks if "/widget.js" in block]
    assert len(found) == 1, f"{SNIPPET_DOC} must hold one html block with the widget snippet"
    return found[0]


def snippet_page(api: str, key: str) -> bytes:
    """A shop's page holding the manual's snippet, pointed at this server with ``key``."""
    snippet = doc_snippet()
    assert SNIPPET_HOST in snippet and SNIPPET_KEY in snippet
    body = snippet.replace(SNIPPET_HOST, api).replace(SNIPPET_KEY, key)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A shop's checkout</title></head>
<body><main><h1>Checkout</h1>
{body}</main></body></html>
""".encode()


class Pages:
    """Loopback origins other than the server's, serving a shop's form that embeds the widget.

    The ports are bound here, before the server's keys name their origins: a port only chosen
    here and bound later could be taken by another process in between.
    """

    def __init__(self, count: int = 2) -> None:
        self.keys: dict[str, str] = {}
        pages = self

        class Handler(_Quiet):
            def do_GET(self) -> None:  # noqa: N802
                name = urlsplit(self.path).path.strip("/")
                if name not in pages.keys:
                    self.send(404, b"no such page", "text/plain")
                    return
                self.send(200, snippet_page(pages.api, pages.keys[name]), "text/html; charset=utf-8")

        self.api = ""
        self._servers = [serve(Handler) for _ in range(count)]
        self.ports = [httpd.server_address[1] for httpd in self._servers]
        self.origins = [f"http://127.0.0.1:{port}" for port in self.ports]

    def stop(self) -> None:
        for httpd in self._servers:
            httpd.shutdown()
            httpd.server_close()


class Proxy:
    """The server behind a loopback proxy that holds back the answers to ``slow`` queries."""

    def __init__(self, upstream: int, delay: float = 1.5) -> None:
        self.slow: set[str] = set()
        self.delay = delay
        self.held: list[str] = []
        proxy = self

        class Handler(_Quiet):
            def do_GET(self) -> None:  # noqa: N802
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
                conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=10)
                try:
                    conn.request("GET", self.path, headers=headers)
                    resp = conn.getresponse()
                    body = resp.read()
                    passed = [(k, v) for k, v in resp.getheaders() if k.lower() not in ("connection", "content-length")]
                finally:
                    conn.close()
                q = parse_qs(urlsplit(self.path).query).get("q", [None])[0]
                if q in proxy.slow:
                    proxy.held.append(q)
                    time.sleep(proxy.delay)
                try:
                    self.send_response(resp.status)
                    for name, value in passed:
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the browser gave up on this answer (aborted)

        self._httpd = serve(Handler)
        self.port = self._httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture(scope="session")
def page_servers():
    second = Pages()
    yield second
    second.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory, sample_index_dir, page_servers):
    srv = Server(tmp_path_factory.mktemp("browser-server"), sample_index_dir, page_servers.ports)
    yield srv
    srv.stop()
    log = srv.log.read_text()
    assert "Traceback" not in log, log[-5000:]


@pytest.fixture(scope="session")
def pages(server, page_servers):
    page_servers.api = server.origin
    return page_servers


@pytest.fixture(scope="session")
def proxy(server):
    front = Proxy(server.port)
    yield front
    front.stop()


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe.min.js from the npm registry, installed by ``npm ci`` as package-lock.json pins it."""
    path = HERE / "node_modules" / "axe-core" / "axe.min.js"
    if not path.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed to fetch axe-core: `make system-packages` installs it (make test runs it)")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True, timeout=600)
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def new_driver(user_data_dir: Path):
    """Headless Chromium through Debian's chromedriver; Selenium Manager never downloads."""
    os.environ["SE_OFFLINE"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--lang=en-US",
        f"--user-data-dir={user_data_dir}",
    ]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    return driver


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is missing: `make system-packages` installs it (make test runs it)")
    driver = new_driver(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()
