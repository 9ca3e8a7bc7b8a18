"""The request path without the network: the ASGI app called directly, CPU µs per request.

    python benchmarks/http/inprocess.py --index indexes/current [--limit 5] [--requests 3000]
                                        [--repeat 15] [--profile out.prof]
                                        [--endpoint address|postcode|reverse]

Calls, in turn and ``--repeat`` times, with the first ``--requests`` queries of
``../shared/eval/queries-public.jsonl``: the service's ASGI app (keys, limits and metrics on,
as under gunicorn); the same app whose index looks the answers up instead of searching
("canned": all of the request path but the engine); the fixed-body app of ``trivial_app.py``
with a body of the same mean size; and the engine alone (``suggest_json``). ``--endpoint
postcode`` or ``reverse`` asks the other questions instead (issue 39), ``--requests`` of the
requests ``run.py --endpoints`` sends (``run.requests``: drawn addresses' postcodes and
numbers, points near them; ``--limit`` is reverse's), against a fixed body of their mean size. It prints the
best and the median process CPU time per request of each (CPU time, not wall time: a busy
machine takes the core away from a process, not the instructions), then ours (canned - fixed
body: keys, limits, metrics, parameters, CORS) and the engine inside the service (service -
canned). These move by about a microsecond between runs on a busy machine, where wrk's req/s
move by 10-50 %. ``--profile`` writes a cProfile of the service's requests (view it with
``python -m pstats``; the engine is compiled, so its time shows as the resource's own).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
QUERIES = REPO.parent / "shared" / "eval" / "queries-public.jsonl"


class _CannedIndex:
    """The index's answers to the benchmark's requests, looked up instead of searched: the
    service with it costs all of the request path but the engine. An answer not known yet is
    asked of the index once, and the call kept (``calls``: the engine alone replays them)."""

    def __init__(self, index, queries: list[str], limit: int) -> None:  # noqa: ANN001
        self.manifest = index.manifest
        self._index = index
        self._answers: dict = {q: index.suggest_json(q, limit=limit) for q in queries}
        self.calls: list[tuple[str, tuple, dict]] = []

    def _ask(self, key, name: str, args: tuple, kw: dict) -> bytes:  # noqa: ANN001
        body = self._answers[key] = getattr(self._index, name)(*args, **kw)
        self.calls.append((name, args, kw))
        return body

    def suggest_json(self, q: str, **kw: object) -> bytes:
        body = self._answers.get(q)
        return self._ask(q, "suggest_json", (q,), kw) if body is None else body

    def lookup_json(self, postcode: str, number: int, **kw: object) -> bytes:
        key = (postcode, number)
        body = self._answers.get(key)
        return self._ask(key, "lookup_json", key, kw) if body is None else body

    def reverse_json(self, lat: float, lon: float, **kw: object) -> bytes:
        key = (lat, lon)
        body = self._answers.get(key)
        return self._ask(key, "reverse_json", key, kw) if body is None else body


def _scope(path: str, query: bytes, headers: list[tuple[bytes, bytes]]) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def _run(app, scopes: list[dict]) -> tuple[float, int]:
    """Call ``app`` once per scope; return (seconds, bytes of the bodies)."""
    sent = 0
    status = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        nonlocal sent
        if message["type"] == "http.response.start":
            status.append(message["status"])
        else:
            sent += len(message.get("body", b""))

    start = time.process_time()
    for scope in scopes:
        await app(scope, receive, send)
    seconds = time.process_time() - start
    bad = [s for s in status if s != 200]
    if bad:
        raise SystemExit(f"{len(bad)} answers were not 200 (first: {bad[0]})")
    return seconds, sent


class Bench:
    """What an in-process measurement needs: a key store with one practically unlimited key,
    the index, ``requests`` queries of ``queries_path`` (repeated if it holds fewer), the
    fixed-body app of ``trivial_app.py`` with their mean body size, and an ASGI scope per query
    for ``/v1/address`` (``service``) and for the fixed body (``fixed``), both with the key.
    With ``endpoint`` ``postcode`` or ``reverse``, the scopes are ``requests`` of that
    endpoint's requests in ``run.py`` (``run.requests``) and ``queries`` is empty."""

    def __init__(self, index_path: str, queries_path: str, requests: int, limit: int, prefix: str,
                 endpoint: str = "address") -> None:
        sys.path.insert(0, str(REPO))
        sys.path.insert(0, str(HERE))
        import engine
        from server.config import Config
        from server.keys import KeyStore

        tmp = Path(tempfile.mkdtemp(prefix=prefix))
        self.key = KeyStore(str(tmp / "keys.sqlite3")).create("bench", 1e9)
        self.config = Config(keystore_path=str(tmp / "keys.sqlite3"))
        self.index = engine.AddressIndex.open(os.path.realpath(index_path))
        queries = [json.loads(line)["q"] for line in open(queries_path, encoding="utf-8")]
        self.headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Bearer {self.key}".encode())]
        if endpoint == "address":
            self.queries = (queries * (requests // len(queries) + 1))[:requests]
            sample = self.queries[:2000]
            load = str(limit)
            self.size = round(sum(len(self.index.suggest_json(q, limit=limit)) for q in sample) / len(sample))
            paths = [f"/v1/address?{urlencode({'country': 'NLD', 'q': q, 'limit': limit})}" for q in self.queries]
        else:
            from run import requests as run_requests

            self.queries = []
            load, _, _, paths, bodies = run_requests(self.index, [endpoint], [limit], [], requests)[0]
            self.size = round(sum(map(len, bodies)) / len(bodies))
        os.environ["TRIVIAL_BODY_BYTES"] = f"{load}:{self.size}"
        import trivial_app

        self.trivial_app = trivial_app
        self.service = [_scope(route, query.encode(), self.headers)
                        for route, _, query in (path.partition("?") for path in paths)]
        self.fixed = [_scope(f"/fixed/{load}", b"", self.headers) for _ in paths]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/current"))
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--requests", type=int, default=3_000, help="requests per measurement")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--queries", default=str(QUERIES))
    ap.add_argument("--profile", help="write a cProfile of the service's requests here")
    ap.add_argument("--endpoint", choices=("address", "postcode", "reverse"), default="address",
                    help="the question asked (issue 39's postcode and reverse: run.py's requests)")
    args = ap.parse_args()

    # NOTE: Bench puts this checkout first on sys.path; imported before it, ``server`` was the
    # installed one, whichever tree the script ran from
    bench = Bench(args.index, args.queries, args.requests, args.limit, "inprocess-bench-", args.endpoint)
    from server.app import create_app

    index, queries, size, trivial_app = bench.index, bench.queries, bench.size, bench.trivial_app
    app = create_app(index, bench.config, asgi=True)
    answers = _CannedIndex(index, queries, args.limit)
    canned = create_app(answers, bench.config, asgi=True)
    service, fixed = bench.service, bench.fixed
    loop = asyncio.new_event_loop()
    loop.run_until_complete(_run(app, service[:2000]))  # warm the caches and the key table
    loop.run_until_complete(_run(canned, service))  # the answers of the other questions, asked once
    calls = [(getattr(index, name), a, kw) for name, a, kw in answers.calls]

    def engine_alone() -> float:
        start = time.process_time()
        if queries:
            for q in queries:
                index.suggest_json(q, limit=args.limit)
        else:
            for call, a, kw in calls:
                call(*a, **kw)
        return time.process_time() - start

    times: dict[str, list[float]] = {"service": [], "canned": [], "fixed": [], "engine": []}
    for _ in range(args.repeat):
        times["service"].append(loop.run_until_complete(_run(app, service))[0])
        times["canned"].append(loop.run_until_complete(_run(canned, service))[0])
        times["fixed"].append(loop.run_until_complete(_run(trivial_app.asgi_app, fixed))[0])
        times["engine"].append(engine_alone())
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        loop.run_until_complete(_run(app, service))
        profiler.disable()
        profiler.dump_stats(args.profile)
    n = len(service)
    print(f"{n} requests of {args.endpoint} x {args.repeat}, limit {args.limit}, mean body {size} bytes; "
          "µs per request")
    print(f"{'':<8} {'best':>7} {'median':>7}")
    med = {}
    for name, values in times.items():
        best, med[name] = min(values) / n * 1e6, statistics.median(values) / n * 1e6
        print(f"{name:<8} {best:>7.1f} {med[name]:>7.1f}")
    print(f"ours (canned - fixed): {med['canned'] - med['fixed']:.1f} µs: keys, limits, metrics, parameters, CORS")
    print(f"engine inside the service (service - canned): {med['service'] - med['canned']:.1f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
