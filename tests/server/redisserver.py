"""A real ``redis-server`` (Debian's package) on a free loopback port, for the tests that need one.

``RedisServer(tmp)`` starts it (its data is saved in ``tmp`` when it stops, as a real one's
would be); ``stop()`` and ``start()`` stop and start the same server on the same port, with
its data (the Redis-down tests); ``pause()``
and ``resume()`` freeze it with SIGSTOP (a Redis that accepts connections and never answers).
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, tmp: Path) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            pytest.fail("redis-server is missing: `make system-packages` installs it (make test runs it)")
        self.binary = binary
        self.tmp = tmp
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        log = open(self.tmp / f"redis-{self.port}.log", "ab")  # noqa: SIM115 (kept by the process)
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "3600 1", "--appendonly", "no",
             "--dir", str(self.tmp)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a paused server cannot stop
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)
