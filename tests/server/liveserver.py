"""A real gunicorn serving an index on a free loopback port, for the tests that need one.

``Live(tmp, index_dir, key=KEY)`` starts the default worker (2 processes) with the index behind
a ``current`` symlink and the key store ``tmp/keys.sqlite3``; ``env`` adds or overrides
variables. The ``live_server`` fixture of ``conftest.py`` starts them and stops them after the test.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from testdata import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Live:
    """A running gunicorn and what it serves."""

    def __init__(
        self,
        tmp: Path,
        index_dir: Path,
        *,
        key: str,
        env: dict[str, str] | None = None,
        ready_path: str = "/readyz",
        port: int | None = None,
    ) -> None:
        self.tmp = tmp
        self.key = key
        self.keystore = tmp / "keys.sqlite3"
        self.link = tmp / "current"
        self.link.symlink_to(index_dir)
        self.port = port or free_port()
        self.log = tmp / "gunicorn.log"
        environ = {
            **os.environ,
            "ADDRESS_INDEX": str(self.link),
            "ADDRESS_KEYSTORE": str(self.keystore),
            "ADDRESS_WORKERS": "2",
            "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
        }
        environ.pop("ADDRESS_WORKER", None)  # the default worker class
        environ.update(env or {})
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", "server/gunicorn.conf.py", "-b", f"127.0.0.1:{self.port}"],
                cwd=REPO,
                env=environ,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.get(ready_path, auth=False)[0] == 200:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"gunicorn did not start:\n{self.log.read_text()}")
            time.sleep(0.1)

    def get(
        self, path: str, *, auth: bool | str = True, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One request on a new connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            h = dict(headers or {})
            if auth:
                h["Authorization"] = f"Bearer {self.key if auth is True else auth}"
            conn.request("GET", path, headers=h)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def address(self, q: str, limit: int = 5, **kw) -> tuple[int, dict[str, str], bytes]:
        return self.get("/v1/address?" + urlencode({"country": "NLD", "q": q, "limit": limit}), **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
