"""``ADDRESS_WORKER``: the worker classes gunicorn may run, and the one refused (issue 37)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import REPO

from server.config import REFUSED_WORKERS, WORKER_CLASSES


def check_config(worker: str, index_dir: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """gunicorn loading server/gunicorn.conf.py and the app, then exiting (``--check-config``)."""
    env = {**os.environ, "ADDRESS_WORKER": worker, "ADDRESS_INDEX": str(index_dir),
           "ADDRESS_KEYSTORE": str(tmp_path / "keys.sqlite3"), "PYTHONPATH": str(REPO),
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    return subprocess.run([sys.executable, "-m", "gunicorn", "-c", str(REPO / "server" / "gunicorn.conf.py"),
                           "--check-config"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("worker", sorted(WORKER_CLASSES))
def test_every_offered_worker_loads(worker, index_dir, tmp_path):
    done = check_config(worker, index_dir, tmp_path)
    assert done.returncode == 0, done.stderr


def test_gunicorns_asgi_worker_is_refused_with_the_reason(index_dir, tmp_path):
    """It bounds nothing a hostile client makes it hold: +460 MB a worker in 25 s of requests
    pipelined and never read (benchmarks/http/pipeline_flood.py, gunicorn 27.0.1)."""
    assert "asgi" in REFUSED_WORKERS
    done = check_config("asgi", index_dir, tmp_path)
    assert done.returncode != 0
    assert "ADDRESS_WORKER=asgi is refused" in done.stderr and "use uvicorn" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_worker_names_the_choices(index_dir, tmp_path):
    done = check_config("tornado", index_dir, tmp_path)
    assert done.returncode != 0
    assert "ADDRESS_WORKER must be one of uvicorn, gthread, sync, not 'tornado'" in done.stderr
