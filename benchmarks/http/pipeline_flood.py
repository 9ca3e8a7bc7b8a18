"""Pipelining flood: connections that write GETs back to back and never read an answer.

    python benchmarks/http/pipeline_flood.py --index /work/indexes/nl [--worker uvicorn]
                                             [--connections 16] [--seconds 25] [--path address]
                                             [--tree DIR] [--json FILE]

Issue 37, item 1. Starts gunicorn (``server/gunicorn.conf.py``, ``--worker``, one process per
core) on a free loopback port with a practically unlimited key, warms it up with a normal
client, then for ``--seconds`` runs ``--connections`` flooding connections: each writes
pipelined ``GET /v1/address`` requests (``--path healthz``: ``GET /healthz``) as fast as the
socket takes them and never reads; a connection the server closes is opened again. Meanwhile:

- a *normal client* asks ``/v1/address`` (real queries of ``../shared/eval/queries-public.jsonl``
  in turn) on a new connection each time, one request every 20 ms, and records each answer's
  time and status (a new connection each time, so that both workers get its requests);
- every 0.5 s, the RSS and the private memory (``/proc/PID/smaps_rollup``) of every worker.

It prints the normal client's p50/p99/max and errors, each worker's memory before the flood,
at its highest during it and 5 s after it ended, and how many bytes the flood got written
(the server stops taking them when it has backpressure). The issue's bar: worker memory grows
by at most 100 MB and the normal client's p99 stays under 50 ms; the exit status says whether
both held (1 if not). ``--tree DIR`` serves another checkout (its ``server/`` and ``engine/``,
built in place: ``python setup.py build_ext --inplace``), e.g. the code before a change.
Loopback only; every process started is stopped.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from run import QUERIES, REPO, Gunicorn, create_key, wait_ready  # noqa: E402
from soak import memory_kib  # noqa: E402

from server.config import WORKER_CLASSES  # noqa: E402  (run put the repository on sys.path)

#: The issue's bar.
MAX_GROWTH_MB = 100.0
MAX_P99_MS = 50.0


class Flood(threading.Thread):
    """One connection writing pipelined requests until stopped, never reading."""

    def __init__(self, port: int, request: bytes, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.stop = port, stop
        self.burst = request * max(1, 65536 // len(request))
        self.sent = 0  # bytes the server's socket took
        self.closed = 0  # times the server closed (or reset) the connection

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    view, offset = memoryview(self.burst), 0
                    while not self.stop.is_set():
                        try:
                            offset += s.send(view[offset:])
                        except TimeoutError:
                            continue  # the socket takes nothing more now: try again
                        if offset == len(view):
                            self.sent += offset
                            offset = 0
            except OSError:
                self.closed += 1
                self.stop.wait(0.05)


class Normal(threading.Thread):
    """A client that asks one query every ``period`` seconds on a new connection."""

    def __init__(self, port: int, key: str, paths: list[str], stop: threading.Event, period: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.port, self.key, self.paths, self.stop, self.period = port, key, paths, stop, period
        self.times: list[float] = []  # seconds per answered request
        self.stamps: list[float] = []  # when each answered request was sent (monotonic)
        self.statuses: dict[str, int] = {}

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            path = self.paths[i % len(self.paths)]
            i += 1
            started = time.perf_counter()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", path, headers={"Authorization": f"Bearer {self.key}"})
                response = conn.getresponse()
                response.read()
                conn.close()
                status = str(response.status)
                self.times.append(time.perf_counter() - started)
                self.stamps.append(time.monotonic())
            except OSError as exc:
                status = type(exc).__name__
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.stop.wait(max(0.0, self.period - (time.perf_counter() - started)))


class Memory(threading.Thread):
    """Samples every worker's (RSS, private) KiB every ``every`` seconds."""

    def __init__(self, server: Gunicorn, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.server, self.every = server, every
        self.samples: list[tuple[float, dict[int, tuple[int, int]]]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.monotonic()
            row = {pid: mem for pid in self.server.workers() if (mem := memory_kib(pid)) is not None}
            self.samples.append((now, row))
            self.stop.wait(self.every)

    def between(self, start: float, end: float) -> list[dict[int, tuple[int, int]]]:
        return [row for t, row in self.samples if start <= t <= end]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/current"))
    ap.add_argument("--worker", default="uvicorn", choices=tuple(WORKER_CLASSES))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="gunicorn processes")
    ap.add_argument("--connections", type=int, default=16, help="flooding connections")
    ap.add_argument("--seconds", type=float, default=25.0, help="how long the flood lasts")
    ap.add_argument("--path", choices=("address", "healthz"), default="address", help="what the flood asks")
    ap.add_argument("--tree", help="serve this checkout instead (built in place)")
    ap.add_argument("--json", help="write the figures to this file as JSON")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="pipeline-flood-"))
    queries = [json.loads(line)["q"] for line in open(QUERIES, encoding="utf-8")]
    paths = [f"/v1/address?{urlencode({'country': 'NLD', 'q': q, 'limit': 5})}" for q in queries]
    keystore = str(tmp / "keys.sqlite3")
    key = create_key(keystore)
    env = {
        "ADDRESS_INDEX": args.index,
        "ADDRESS_KEYSTORE": keystore,
        "ADDRESS_WORKERS": str(args.workers),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
    }
    tree = Path(args.tree).resolve() if args.tree else REPO
    server = Gunicorn(args.worker, None, env, tmp / "gunicorn.log", tree)
    try:
        wait_ready(f"{server.base}/readyz", time.monotonic() + 180)
        target = paths[0] if args.path == "address" else "/healthz"
        request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\r\n".encode()
        memory = Memory(server)
        memory.start()
        stop_normal = threading.Event()
        normal = Normal(server.port, key, paths, stop_normal)
        normal.start()
        time.sleep(5.0)  # warm: the normal client alone
        before_end = time.monotonic()
        warm_times, normal.times, normal.stamps = normal.times, [], []
        warm_statuses, normal.statuses = normal.statuses, {}
        cpu_before = server.cpu_seconds()
        stop_flood = threading.Event()
        floods = [Flood(server.port, request, stop_flood) for _ in range(args.connections)]
        flood_start = time.monotonic()
        for flood in floods:
            flood.start()
        time.sleep(args.seconds)
        stop_flood.set()
        flood_end = time.monotonic()
        cpu_flood = server.cpu_seconds() - cpu_before
        for flood in floods:
            flood.join(timeout=5)
        stop_normal.set()
        normal.join(timeout=15)
        time.sleep(5.0)  # after: is the memory given back?
        memory.stop.set()
        memory.join()

        baseline = memory.between(before_end - 3.0, before_end)
        during = memory.between(flood_start, flood_end + 0.5)
        after = memory.between(flood_end + 4.5, time.monotonic())
        pids = sorted({pid for row in baseline for pid in row})
        workers = {}
        for pid in pids:
            rss0 = min(row[pid][0] for row in baseline if pid in row) / 1024
            priv0 = min(row[pid][1] for row in baseline if pid in row) / 1024
            seen = [row[pid] for row in during if pid in row]
            # gone: the samples after the flood list workers, and not this one (a sample of no
            # worker at all is a failed read of /proc, not a worker that died)
            listed = [row for row in after if row]
            gone = not seen or (bool(listed) and not any(pid in row for row in listed))
            rss_max = max((m[0] for m in seen), default=0) / 1024
            priv_max = max((m[1] for m in seen), default=0) / 1024
            rss_after = next((row[pid][0] / 1024 for row in reversed(after) if pid in row), float("nan"))
            workers[pid] = {
                "rss_before": rss0,
                "rss_max": rss_max,
                "rss_after": rss_after,
                "private_before": priv0,
                "private_max": priv_max,
                "growth_mb": (rss_max - rss0) * 1.048576,
                "gone": gone,
            }
        times_ms = [t * 1e3 for t in normal.times]
        # the normal client's p99 in each fifth of the flood
        fifths = []
        for i in range(5):
            lo = flood_start + i * args.seconds / 5
            part = [
                t * 1e3 for t, at in zip(normal.times, normal.stamps, strict=True) if lo <= at < lo + args.seconds / 5
            ]
            fifths.append(percentile(part, 0.99))
        log = (tmp / "gunicorn.log").read_text(errors="replace")
        result = {
            "worker": args.worker,
            "tree": str(tree),
            "flood": {
                "connections": args.connections,
                "seconds": args.seconds,
                "path": target.split("?")[0],
                "bytes_written": sum(f.sent for f in floods),
                "closed_by_server": sum(f.closed for f in floods),
            },
            "normal": {
                "requests": len(times_ms),
                "statuses": normal.statuses,
                "p50_ms": percentile(times_ms, 0.5),
                "p99_ms": percentile(times_ms, 0.99),
                "max_ms": max(times_ms, default=float("nan")),
                "warm_p99_ms": percentile([t * 1e3 for t in warm_times], 0.99),
                "warm_statuses": warm_statuses,
                "p99_ms_by_fifth": fifths,
            },
            "workers": workers,
            "workers_cpu_seconds": cpu_flood,
            "worker_timeouts": log.count("WORKER TIMEOUT"),
            "tracebacks": log.count("Traceback"),
            "log": str(tmp / "gunicorn.log"),
        }
        flood = result["flood"]
        print(
            f"{args.worker} worker, {tree}: {args.connections} connections pipelining GET {flood['path']} for "
            f"{args.seconds:g} s without reading: {flood['bytes_written'] / 1e6:,.1f} MB written, "
            f"{flood['closed_by_server']} closed by the server"
        )
        nrm = result["normal"]
        print(
            f"normal client: {nrm['requests']} answers, statuses {nrm['statuses']}, p50 {nrm['p50_ms']:.2f} ms, "
            f"p99 {nrm['p99_ms']:.2f} ms, max {nrm['max_ms']:.1f} ms (before the flood: p99 "
            f"{nrm['warm_p99_ms']:.2f} ms); p99 in each fifth of the flood: "
            + ", ".join(f"{v:.1f}" for v in fifths)
            + " ms"
        )
        print(f"the workers used {cpu_flood:.1f} s of CPU during the flood ({args.seconds:g} s)")
        for pid, w in workers.items():
            print(
                f"worker {pid}: RSS {w['rss_before']:.0f} MiB before, {w['rss_max']:.0f} at most during, "
                f"{w['rss_after']:.0f} 5 s after (growth {w['growth_mb']:.0f} MB); private {w['private_before']:.0f}"
                f" -> {w['private_max']:.0f} MiB{'; EXITED' if w['gone'] else ''}"
            )
        print(f"gunicorn log: {result['worker_timeouts']} worker timeouts, {result['tracebacks']} tracebacks ({tmp})")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
        ok = (
            all(w["growth_mb"] <= MAX_GROWTH_MB and not w["gone"] for w in workers.values())
            and nrm["p99_ms"] < MAX_P99_MS
            and set(nrm["statuses"]) == {"200"}
        )
        print(
            f"bar (growth <= {MAX_GROWTH_MB:g} MB per worker, normal p99 < {MAX_P99_MS:g} ms, all 200): "
            f"{'held' if ok else 'NOT held'}"
        )
        return 0 if ok else 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
