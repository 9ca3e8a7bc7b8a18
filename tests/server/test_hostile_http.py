"""Hostile or odd HTTP against a real gunicorn (the default worker), over raw sockets.

Every answer is the contract's problem+json (or a success), given early; nothing a client sends
before its headers end can hold a worker or a connection (server/protocol.py).
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

HEADER_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def server(request, tmp_path_factory, index_dir):
    from liveserver import Live

    from server.keys import KeyStore

    tmp = tmp_path_factory.mktemp("hostile")
    key = KeyStore(str(tmp / "keys.sqlite3")).create("live", 1e6)
    live = Live(tmp, index_dir, key=key, env={"ADDRESS_HEADER_TIMEOUT": str(HEADER_TIMEOUT)})
    yield live
    live.stop()


def exchange(server, *chunks: bytes, pause: float = 0.0, timeout: float = 10.0) -> bytes:
    """Send ``chunks`` on one connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as s:
        for chunk in chunks:
            try:
                s.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and closed before everything was sent
            time.sleep(pause)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass
    return out


def problem(raw: bytes) -> tuple[int, dict]:
    """Status and body of a single problem+json answer."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/problem+json", raw[:500]
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    return status, json.loads(body)


@pytest.mark.parametrize(
    "request_line, detail",
    [
        (b"GET /healthz HTTP/2.0", "HTTP/2.0"),
        (b"GET /healthz HTTP/0.9", "HTTP/0.9"),
        (b"GET /healthz HTTP/3.1", "HTTP/1.1"),
        (b"PRI * HTTP/2.0", "HTTP/1.1"),
    ],
)
def test_other_http_versions_are_400_problems(server, request_line, detail):
    status, body = problem(exchange(server, request_line + b"\r\nHost: x\r\n\r\n"))
    assert (status, body["code"]) == (400, "bad_request")
    assert detail in body["detail"]


def test_a_request_line_without_version_is_answered_at_once(server):
    for chunks in ([b"GET /healthz\r\n"], [b"GET /health", b"z\r", b"\n"], [b"GET /healthz\r\n\r\n"]):
        start = time.monotonic()
        status, body = problem(exchange(server, *chunks, pause=0.05))
        assert (status, body["code"]) == (400, "bad_request")
        assert time.monotonic() - start < HEADER_TIMEOUT  # not the header timeout's 408


def test_a_request_line_without_version_after_a_kept_alive_request(server):
    raw = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /x\r\n", pause=0.1)
    first, _, rest = raw.partition(b'{"status":"ok"}')
    assert first.startswith(b"HTTP/1.1 200 ")
    assert problem(rest)[0] == 400


def test_http_1_1_needs_exactly_one_host(server):
    for head in (b"", b"Host: a\r\nHost: b\r\n"):
        status, body = problem(exchange(server, b"GET /healthz HTTP/1.1\r\n" + head + b"\r\n"))
        assert (status, body["code"]) == (400, "bad_request")
    ok = exchange(server, b"GET /healthz HTTP/1.0\r\n\r\n")  # HTTP/1.0 has no Host rule
    assert ok.startswith(b"HTTP/1.1 200 ")


def test_garbage_is_a_400_problem_not_text(server):
    status, body = problem(exchange(server, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64))
    assert (status, body["code"]) == (400, "bad_request")


def test_an_overlong_target_is_a_414_problem(server):
    for size in (9000, 70_000, 1_000_000):
        line = b"GET /v1/address?country=NLD&q=" + b"a" * size + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        status, body = problem(exchange(server, line))
        assert (status, body["code"]) == (414, "uri_too_long")
    # a q at the contract's limit, every code point percent-encoded 4-byte UTF-8, is fine
    q = "%F0%9F%98%80" * 128
    line = f"GET /v1/address?country=NLD&q={q} HTTP/1.1\r\n".encode()
    raw = exchange(server, line + b"Host: x\r\nConnection: close\r\n\r\n")
    assert problem(raw)[0] == 401  # it reached the app (which wants a key)


def test_a_huge_header_is_refused_early_and_the_worker_stays(server):
    """200 MiB in 64 KiB writes made the parser quadratic until gunicorn killed the worker."""
    start = time.monotonic()
    chunk = b"a" * 65536
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "
    raw = exchange(server, head, *([chunk] * 3200))  # the server closes long before 200 MiB
    status, body = problem(raw)
    assert (status, body["code"]) == (431, "headers_too_large")
    assert time.monotonic() - start < 10
    assert "WORKER TIMEOUT" not in server.log.read_text()
    assert server.get("/healthz", auth=False)[0] == 200


@pytest.mark.parametrize(
    "headers",
    [
        b"X-A: " + b"a" * 9000 + b"\r\n",  # one header line over limit_request_field_size
        b"".join(b"X-%d: a\r\n" % i for i in range(51)),  # over limit_request_fields
        b"".join(b"X-%d: %s\r\n" % (i, b"a" * 4000) for i in range(10)),  # head over 32 KiB
        b"".join(b"X: a\r\n" for _ in range(2_000_000)),  # 2,000,000 headers (12 MB)
    ],
    ids=["field-size", "field-count", "head-size", "two-million"],
)
def test_header_limits_are_431_problems(server, headers):
    raw = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", headers, b"\r\n")
    status, body = problem(raw)
    assert (status, body["code"]) == (431, "headers_too_large")


def test_headers_within_the_limits_are_served(server):
    headers = b"".join(b"X-%d: %s\r\n" % (i, b"a" * 500) for i in range(45))
    raw = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", headers, b"Connection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 200 ")


def test_a_head_that_never_ends_is_closed_with_a_408(server):
    socks = []
    try:
        for _ in range(50):  # many connections held open mid-header
            s = socket.create_connection(("127.0.0.1", server.port), timeout=HEADER_TIMEOUT * 5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            socks.append(s)
        # one byte a while keeps nothing open either (the timeout counts from the first byte)
        time.sleep(HEADER_TIMEOUT / 2)
        for s in socks:
            s.sendall(b"a")
        start = time.monotonic()
        for s in socks:
            raw = b""
            while chunk := s.recv(65536):
                raw += chunk
            status, body = problem(raw)
            assert (status, body["code"]) == (408, "request_timeout")
        assert time.monotonic() - start < HEADER_TIMEOUT * 2
    finally:
        for s in socks:
            s.close()


def test_a_connection_that_asks_nothing_is_closed(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=HEADER_TIMEOUT * 5) as s:
        start = time.monotonic()
        assert s.recv(100) == b""  # closed, without an answer to a question never asked
        assert time.monotonic() - start < HEADER_TIMEOUT * 2


def test_pipelined_requests_are_answered_before_a_refusal(server):
    ok = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    raw = exchange(server, ok + ok + b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n")
    assert raw.count(b"HTTP/1.1 200 OK") == 2
    assert problem(raw[raw.rindex(b"HTTP/1.1 ") :])[0] == 400


def test_no_traceback_in_the_log(server):
    log = server.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    assert "WORKER TIMEOUT" not in log


def test_the_gunicorn_limit_settings_apply(live_server):
    """limit_request_* are gunicorn's settings: changed there, the default worker follows."""
    live = live_server(env={"GUNICORN_CMD_ARGS": "--limit-request-fields 5 --limit-request-line 200"})
    ok = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-1: a\r\n" * 3 + b"Connection: close\r\n\r\n"
    assert exchange(live, ok).startswith(b"HTTP/1.1 200 ")
    status, body = problem(exchange(live, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X: a\r\n" * 5 + b"\r\n"))
    assert (status, "over 5 headers") == (431, body["detail"][-14:])
    status, body = problem(exchange(live, b"GET /healthz?" + b"a" * 300 + b" HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert (status, body["code"]) == (414, "uri_too_long")


# -- bodies (issue 37, item 5) ----------------------------------------------------------------


def test_a_body_that_never_comes_is_a_408_problem(server):
    """Issue 37: `Content-Length: 5` and no body stayed open and unanswered for as long as the
    client liked; the whole request must arrive within the header timeout."""
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
    raw = exchange(server, head, timeout=HEADER_TIMEOUT * 5)
    status, body = problem(raw)
    assert (status, body["code"]) == (408, "request_timeout")
    assert "body" in body["detail"]


def test_a_body_that_stops_after_its_answer_is_closed(server):
    """The app may answer before the body is whole; the rest of it must still come in time, or
    the connection is closed (with no second answer to the same request)."""
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
    raw = exchange(server, head + b"ab", timeout=HEADER_TIMEOUT * 5)
    assert raw.startswith(b"HTTP/1.1 200 ") and raw.endswith(b'{"status":"ok"}')


@pytest.mark.parametrize(
    "body",
    [b"ZZ", b"ZZ\r\n", b"5\r\nhello\r\nZZ\r\n", b"5\r\nhelloXX", b"0\r\nbad trailer\r\n\r\n"],
    ids=["no-size", "no-size-crlf", "after-a-chunk", "no-crlf-after-data", "bad-trailer"],
)
def test_a_bad_chunk_is_a_400_problem(server, body):
    """Issue 37: `Transfer-Encoding: chunked` then `ZZ` was never answered."""
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    status, problem_body = problem(exchange(server, head + body, timeout=HEADER_TIMEOUT * 5))
    assert (status, problem_body["code"]) == (400, "bad_request")
    assert "chunked" in problem_body["detail"]


def test_a_bad_chunk_after_pipelined_requests_is_answered_after_them(server):
    ok = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    bad = b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ"
    raw = exchange(server, ok * 3 + bad, timeout=HEADER_TIMEOUT * 5)
    assert raw.count(b"HTTP/1.1 200 OK") == 3
    assert problem(raw[raw.rindex(b"HTTP/1.1 ") :])[0] == 400


def test_bodies_sent_whole_are_still_served(server):
    chunked = b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    sized = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
    raw = exchange(server, chunked + sized)
    assert raw.count(b"HTTP/1.1 200 OK") == 2 and raw.endswith(b'{"status":"ok"}')


# -- pipelining (issue 37, item 1) ------------------------------------------------------------


def read_answers(sock: socket.socket, count: int) -> list[tuple[int, bytes]]:
    """``count`` answers (status, body) read from ``sock``, in order."""
    buf, out = b"", []
    while len(out) < count:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            assert chunk, f"closed after {len(out)} answers"
            buf += chunk
        head, _, buf = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next(int(line.split(":")[1]) for line in lines if line.lower().startswith("content-length:"))
        while len(buf) < length:
            chunk = sock.recv(65536)
            assert chunk, f"closed in answer {len(out) + 1}"
            buf += chunk
        out.append((int(lines[0].split()[1]), buf[:length]))
        buf = buf[length:]
    return out


def test_pipelined_requests_are_all_answered_in_order(server):
    """Held back (server/protocol.py: MAX_PIPELINE), pipelined requests are answered all the
    same, in the order they were sent, the last in a partial write."""
    requests, limits = [], []
    for i in range(60):
        if i % 3 == 2:
            requests.append(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            limits.append(None)
        else:
            limit = i % 10 + 1
            path = f"/v1/address?country=NLD&q=kerkstraat&limit={limit}"
            requests.append(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n\r\n".encode())
            limits.append(limit)
    data = b"".join(requests)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(data[:-7])
        time.sleep(0.2)
        s.sendall(data[-7:])
        answers = read_answers(s, len(requests))
    for (status, body), limit in zip(answers, limits, strict=True):
        assert status == 200
        assert (json.loads(body)["limit"] if limit else body) == (limit or b'{"status":"ok"}')


def worker_memory_mib(server) -> dict[int, float]:
    """RSS of each worker of ``server`` (Linux)."""
    pid = server.proc.pid
    out = {}
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        for line in Path(f"/proc/{child}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out[int(child)] = int(line.split()[1]) / 1024
    return out


def test_a_client_that_never_reads_stops_being_read(server):
    """Issue 37: a client that wrote GETs back to back and never read the answers made a worker
    read on and queue every request (2,390 MB per worker in 25 s). Now the worker stops reading
    it: the client's writes block once the sockets' buffers are full, long before 48 MB, and
    the workers' memory stays where it was. Other clients are served meanwhile."""
    pad = b"X-Pad: " + b"p" * 900 + b"\r\n"  # ~1 KB a request: the bytes count, not the requests
    path = b"/v1/address?country=NLD&q=kerkstraat&limit=10"
    request = b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server.key.encode() + b"\r\n" + pad
    burst = (request + b"\r\n") * 64
    before = worker_memory_mib(server)
    answered = answers_to(server)
    budget, sent, blocked = 48 * 2**20, 0, False
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.settimeout(5.0)
        while sent < budget:
            try:
                sent += s.send(burst)
            except TimeoutError:
                blocked = True  # nothing taken for 5 s: the server reads no more
                break
        after = worker_memory_mib(server)
        assert server.get("/healthz", auth=False)[0] == 200
    assert blocked, f"the server took {sent / 2**20:.0f} MiB of unread pipelined requests"
    grown = {pid: after[pid] - before[pid] for pid in before if pid in after}
    assert max(grown.values()) < 64, grown
    # and it stopped answering them soon: the kernel holds few answers (SEND_BUFFER_BYTES)
    assert answers_to(server) - answered < 500


def answers_to(server) -> int:
    """How many answers of /v1/address the server counted for its key (its /metrics, whose
    workers add up their counts once a second: read once two reads 1.5 s apart agree)."""
    prefix = 'address_api_key_requests_total{key="live",status="200"} '
    last = -1
    while True:
        text = server.get("/metrics", auth=False)[2].decode()
        now = int(sum(float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix)))
        if now == last:
            return now
        last = now
        time.sleep(1.5)


# -- connections (issue 37, item 5) -----------------------------------------------------------


def metric(text: str, name: str) -> float:
    """The value of the one series ``name`` (any labels) in a /metrics text."""
    values = [float(line.rpartition(" ")[2]) for line in text.splitlines() if line.partition("{")[0] == name]
    values += [float(line.split()[1]) for line in text.splitlines() if line.split(" ")[0] == name]
    assert len(values) == 1, (name, values)
    return values[0]


def test_a_worker_keeps_at_most_worker_connections_open(live_server):
    """Issue 37: 10,000 connections that sent nothing (or a body that never ends) all stayed
    open. A worker keeps gunicorn's ``worker_connections``; one more is answered 503 at once
    (even one that has already sent its request), and the metrics say how many are open."""
    live = live_server(
        env={"ADDRESS_WORKERS": "1", "ADDRESS_HEADER_TIMEOUT": "60", "GUNICORN_CMD_ARGS": "--worker-connections 6"}
    )
    held = [socket.create_connection(("127.0.0.1", live.port), timeout=10) for _ in range(6)]
    try:
        for over in (b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"):
            status, body = problem(exchange(live, over))
            assert (status, body["code"]) == (503, "too_many_connections")
        raw = exchange(live, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert "retry-after: 1\r\n" in raw.decode().lower()
        held.pop().close()
        deadline = time.monotonic() + 10
        while True:  # the closed one is gone once the worker has seen it close
            raw = exchange(live, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if raw.startswith(b"HTTP/1.1 200 ") or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert raw.startswith(b"HTTP/1.1 200 "), raw[:300]
        text = raw.partition(b"\r\n\r\n")[2].decode()
        assert metric(text, "address_http_connections") == 6  # five held and this one
        assert metric(text, "address_http_connections_max") == 6
        assert metric(text, "address_http_connections_refused_total") == 3
    finally:
        for s in held:
            s.close()
    assert live.get("/healthz", auth=False)[0] == 200


def test_gthread_threads_are_not_held_by_answers_nobody_reads(live_server):
    """Issue 37: with gthread, each of a worker's threads blocked for good in a send to a client
    that pipelined requests and never read (16 such connections: no answer for anyone else
    after ~25 s). A send that makes no progress for ADDRESS_HEADER_TIMEOUT now fails and the
    connection is closed (gunicorn.conf.py), so another client is served again."""
    live = live_server(env={"ADDRESS_WORKER": "gthread", "ADDRESS_WORKERS": "1", "ADDRESS_HEADER_TIMEOUT": "2"})
    path = b"/v1/address?country=NLD&q=kerkstraat&limit=10"
    burst = (b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + live.key.encode() + b"\r\n\r\n") * 64
    floods = [socket.create_connection(("127.0.0.1", live.port), timeout=3) for _ in range(6)]  # 4 threads
    try:
        stalled = set()
        deadline = time.monotonic() + 60
        while len(stalled) < len(floods) and time.monotonic() < deadline:
            for i, s in enumerate(floods):
                if i in stalled:
                    continue
                try:
                    s.send(burst)
                except TimeoutError:
                    stalled.add(i)  # took nothing for 3 s: its thread waits on unread answers
                except OSError:
                    stalled.add(i)  # closed by the server already
        assert len(stalled) == len(floods)
        status = live.get("/healthz", auth=False)[0]  # http.client: 10 s to get an answer
        assert status == 200
    finally:
        for s in floods:
            s.close()
