"""Each answer leaves a worker in one write (server.workers._OneWrite): a worker killed between
an answer's head and its body would leave the balancer half an answer it cannot retry."""

from __future__ import annotations

import asyncio
import socket

from server import workers


class Recorder(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = self.eof = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def write_eof(self) -> None:
        self.eof = True

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 8000) if name == "peername" else default


def test_what_one_step_writes_leaves_in_one_write():
    async def main() -> Recorder:
        raw = Recorder()
        t = workers._OneWrite(raw, asyncio.get_running_loop())
        t.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        t.write(b"{}")
        assert raw.writes == []  # nothing yet: the step is not over
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        t.write(b"next")  # a later step: a write of its own
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return raw

    raw = asyncio.run(main())
    assert raw.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", b"next"]


def test_close_and_eof_send_what_is_pending_first():
    async def main() -> tuple[Recorder, Recorder]:
        loop = asyncio.get_running_loop()
        a, b = Recorder(), Recorder()
        ta, tb = workers._OneWrite(a, loop), workers._OneWrite(b, loop)
        ta.write(b"head")
        ta.write(b"body")
        ta.close()
        tb.write(b"last")
        tb.write_eof()
        assert (a.writes, a.closed, b.writes, b.eof) == ([b"headbody"], True, [b"last"], True)
        await asyncio.sleep(0)  # the scheduled flush finds nothing left to send
        return a, b

    a, b = asyncio.run(main())
    assert a.writes == [b"headbody"] and b.writes == [b"last"]
    # everything else is the real transport's
    loop = asyncio.new_event_loop()
    try:
        assert workers._OneWrite(a, loop).get_extra_info("peername") == ("127.0.0.1", 8000)
    finally:
        loop.close()


def test_a_live_worker_sends_head_and_body_together(live_server):
    """Against real gunicorn: the first read after the request holds the whole answer."""
    live = live_server()
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
        request = (f"GET /v1/address?country=NLD&q=kerkstraat&limit=10 HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Bearer {live.key}\r\n\r\n")
        sock.sendall(request.encode())
        first = sock.recv(1 << 20)
    head, _, body = first.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = int(next(line.split(b":")[1] for line in lines if line.lower().startswith(b"content-length")))
    assert head.startswith(b"HTTP/1.1 200") and len(body) == length > 0
