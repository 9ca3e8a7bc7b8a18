"""The service's own log lines go where gunicorn's error log goes (server/gunicorn.conf.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from liveserver import free_port
from testdata import REPO

pytestmark = pytest.mark.slow


def test_daemon_with_an_error_logfile_keeps_the_services_lines(tmp_path, index_dir):
    """Issue 37: under ``--daemon --error-logfile FILE`` the lines of the service's loggers
    (``server.*``: index and key-store problems) were missing from FILE: they went to stderr,
    which a daemon sends to /dev/null. A missing key store is such a problem."""
    log, pidfile, port = tmp_path / "error.log", tmp_path / "gunicorn.pid", free_port()
    env = {
        **os.environ,
        "ADDRESS_INDEX": str(index_dir),
        "ADDRESS_KEYSTORE": str(tmp_path / "no-such-store.sqlite3"),
        "ADDRESS_WORKERS": "1",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }
    env.pop("ADDRESS_WORKER", None)
    cmd = [sys.executable, "-m", "gunicorn", "-c", "server/gunicorn.conf.py", "-b", f"127.0.0.1:{port}"]
    cmd += ["--daemon", "--error-logfile", str(log), "--pid", str(pidfile)]
    subprocess.run(cmd, cwd=REPO, env=env, check=True, timeout=60)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
                time.sleep(0.2)
        deadline = time.monotonic() + 10
        while "Booting worker" not in log.read_text() or log.read_text().count("server.auth: no key store") < 2:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    finally:
        if pidfile.exists():
            pid = int(pidfile.read_text())
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while pidfile.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
    text = log.read_text()
    # the master (at preload) and the worker both say it, in gunicorn's format, with the logger
    assert f"[WARNING] server.auth: no key store at {tmp_path / 'no-such-store.sqlite3'}" in text
    assert f"[INFO] server.app: serving index {index_dir}" in text
