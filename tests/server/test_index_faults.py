"""A served index that is deleted or damaged never stops the service (issue 11, defect 5)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_index_files_are_read_only_after_the_build(index_dir):
    for file in index_dir.iterdir():
        assert not os.stat(file).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), file.name


def wait_for_new_workers(live, seconds: float = 4.0) -> None:
    time.sleep(seconds)  # new workers have booted and the old ones are gone
    assert live.proc.poll() is None, live.log.read_text()[-3000:]


def switch_back_and_check(live, index_dir) -> None:
    """A good index switched in and a HUP: served, and the problem is gone."""
    live.link.unlink()
    live.link.symlink_to(index_dir)
    live.proc.send_signal(signal.SIGHUP)
    wait_for_new_workers(live)
    for _ in range(10):
        status, _, body = live.get("/readyz", auth=False)
        assert status == 200
        assert "index_problem" not in json.loads(body)
        assert live.address("kerkstraat 1")[0] == 200
    assert "Traceback" not in live.log.read_text()


def test_hup_with_the_served_index_deleted_keeps_serving_it(live_server, index_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    live = live_server(index=copy)
    expected = live.address("kerkstraat 1")[2]
    shutil.rmtree(copy)
    live.proc.send_signal(signal.SIGHUP)
    wait_for_new_workers(live)
    for _ in range(20):  # new connections: every worker
        status, _, body = live.address("kerkstraat 1")
        assert (status, body) == (200, expected)
        status, _, body = live.get("/readyz", auth=False)
        assert status == 200
        assert "cannot open the index" in json.loads(body)["index_problem"]
    assert "serving the last good index" in live.log.read_text()
    switch_back_and_check(live, index_dir)


def test_hup_with_the_served_index_truncated_is_503_not_a_dead_service(live_server, index_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    live = live_server(index=copy)
    victim = copy / "a_number.npy"  # what an operator's mistake can do to a served file
    victim.chmod(0o644)
    os.truncate(victim, 100)
    live.proc.send_signal(signal.SIGHUP)
    wait_for_new_workers(live)
    for _ in range(20):
        status, headers, body = live.address("kerkstraat 1")
        assert (status, json.loads(body)["code"], headers["retry-after"]) == (503, "not_ready", "5")
        status, _, body = live.get("/readyz", auth=False)
        assert status == 503
        assert "a_number.npy" in json.loads(body)["detail"]
    assert "answering 503 until a HUP brings a good one" in live.log.read_text()
    switch_back_and_check(live, index_dir)


def damage(file: Path) -> None:
    """50 x 64 random bytes written into `file` past its header, its size unchanged (issue 37)."""
    size = file.stat().st_size
    file.chmod(0o644)
    rng = random.Random(37)
    with open(file, "r+b") as f:
        for _ in range(50):
            f.seek(rng.randrange(128, size - 64))
            f.write(rng.randbytes(64))


def test_switch_index_refuses_a_damaged_index_naming_the_file(index_dir, tmp_path):
    """Regression (issue 37, item 3): switch-index pointed the link at a copy with damage written
    into one file (exit 0), and the workers that opened it crashed in a loop."""
    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    damage(copy / "v_post.npy")
    link = tmp_path / "current"
    link.symlink_to(index_dir)
    r = subprocess.run([sys.executable, "-m", "server", "switch-index", str(copy), "--link", str(link)],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert f"index {copy} is damaged: v_post.npy: its content is not what the build wrote" in r.stderr
    assert "Traceback" not in r.stderr
    assert os.readlink(link) == str(index_dir)


def test_hup_with_a_damaged_index_keeps_serving_the_good_one(live_server, index_dir, tmp_path):
    """A HUP with the link on a damaged index: the master refuses it naming the file, and every
    worker serves the index it served (no worker crashes)."""
    live = live_server()
    expected = live.address("kerkstraat 1")[2]
    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    damage(copy / "a_number.npy")
    live.link.unlink()
    live.link.symlink_to(copy)
    live.proc.send_signal(signal.SIGHUP)
    wait_for_new_workers(live)
    for _ in range(20):  # new connections: every worker
        status, _, body = live.address("kerkstraat 1")
        assert (status, body) == (200, expected)
        status, _, body = live.get("/readyz", auth=False)
        assert status == 200 and "index_problem" not in json.loads(body)
    log = live.log.read_text()
    assert f"HUP: cannot open the index {live.link} (index {copy} is damaged: a_number.npy" in log
    assert "SIGSEGV" not in log and "SIGBUS" not in log
    switch_back_and_check(live, index_dir)


def test_hup_with_the_served_index_written_into_is_503_naming_the_file(live_server, index_dir, tmp_path):
    """The served files themselves written into (size kept): the new workers would map the damage
    too, so they answer 503 naming the file until a HUP brings a good index."""
    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    live = live_server(index=copy)
    assert live.address("kerkstraat 1")[0] == 200
    damage(copy / "a_number.npy")
    live.proc.send_signal(signal.SIGHUP)
    wait_for_new_workers(live)
    for _ in range(20):
        status, headers, body = live.address("kerkstraat 1")
        assert (status, json.loads(body)["code"]) == (503, "not_ready")
        status, _, body = live.get("/readyz", auth=False)
        assert status == 503
        assert "damaged: a_number.npy" in json.loads(body)["detail"]
    switch_back_and_check(live, index_dir)
