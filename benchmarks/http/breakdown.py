"""Where the service's request path spends its time, part by part (in-process, CPU µs).

    python benchmarks/http/breakdown.py --index indexes/current [--limit 5] [--rounds 9]

Calls the ASGI app of ``server.app`` directly (no network, no worker) with the first 3,000
queries of ``../shared/eval/queries-public.jsonl`` and takes the parts of ``/v1/address`` away
one after another, each step on top of the ones before it: the engine (its answers looked up,
as ``inprocess.py``'s "canned"), then the compiled gate (``server/_gate.pyx``: its line is what
the same requests cost on the Python path, which the remaining steps take apart), the key
check, the origin check, the rate limit, the parameters, the CPU clock read around the engine,
the CORS response headers, the metrics (``Finish``). What is left is our request type and
route around Falcon; the fixed-body app of ``trivial_app.py`` and ``/healthz`` of the same app
are measured beside it. Every step is
measured in every round (rounds alternate, best of the rounds is shown: a busy machine makes a
round slower, never faster), so a step's cost is the difference of two bests.

Taking a part away is a monkeypatch of this process only: the figures say what each part
costs, not what a service without it would answer (it would answer wrongly).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
QUERIES = REPO.parent / "shared" / "eval" / "queries-public.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/current"))
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--requests", type=int, default=3_000)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()

    sys.path.insert(0, str(HERE))
    from inprocess import Bench, _CannedIndex, _scope

    bench = Bench(args.index, str(QUERIES), args.requests, args.limit, "breakdown-")
    import server.resources as resources
    from server.app import _build
    from server.params import parse_query

    index, queries, key, trivial_app = bench.index, bench.queries, bench.key, bench.trivial_app
    real, _ = _build(index, bench.config, asgi=True)
    app, service = _build(_CannedIndex(index, queries, args.limit), bench.config, asgi=True)
    scopes, fixed = bench.service, bench.fixed
    health = [_scope("/healthz", b"", bench.headers) for _ in queries]
    loop = asyncio.new_event_loop()

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        pass

    async def run(target, batch) -> None:  # noqa: ANN001
        for scope in batch:
            await target(scope, receive, send)

    auth = service.auth
    record = auth.authenticate(f"Bearer {key}")
    parsed = {s["query_string"]: parse_query(s["query_string"]) for s in scopes}
    clock = types.SimpleNamespace(perf_counter=time.perf_counter, thread_time=time.perf_counter)
    # the finish of the route's answers (``Finish.answered``), held by the route itself
    route = app._router.find("/v1/address")[0]
    answered, gate = route._finish_get, route.gate
    metrics_only = service.metrics.observe

    def observe_only(req, resp) -> None:  # noqa: ANN001
        metrics_only(req.uri_template, req.method, 200, time.perf_counter() - req.started, req.key_name)

    # (name, what it takes away, on top of the steps before it)
    steps = [
        ("service (engine included)", None),
        ("- engine (answers looked up)", None),
        ("+ the Python path, not the gate", lambda: setattr(route, "gate", None)),
        ("- key check", lambda: setattr(auth, "authenticate", lambda header: record)),
        ("- origin check", lambda: setattr(resources, "check_origin", lambda rec, req: None)),
        ("- rate limit", lambda: setattr(auth, "throttle", lambda rec: None)),
        ("- parameters", lambda: setattr(resources, "parse_query", parsed.__getitem__)),
        ("- CPU clock (thread_time)", lambda: setattr(resources, "time", clock)),
        ("- CORS response headers", lambda: setattr(route, "_finish_get", observe_only)),
        ("- metrics (Finish)", lambda: setattr(route, "_finish_get", lambda req, resp: None)),
    ]
    best: dict[str, float] = {}
    n = len(queries)

    def measure(name: str, target, batch) -> None:  # noqa: ANN001
        start = time.process_time()
        loop.run_until_complete(run(target, batch))
        cost = (time.process_time() - start) / n * 1e6
        best[name] = min(best.get(name, float("inf")), cost)
        service.metrics.flush()

    loop.run_until_complete(run(real, scopes))  # warm up
    saved = (auth.authenticate, auth.throttle, resources.check_origin, resources.parse_query,
             resources.time, resources.cors_response_headers)

    def restore() -> None:
        """Put back every part the steps take away."""
        auth.authenticate, auth.throttle = saved[:2]
        (resources.check_origin, resources.parse_query, resources.time,
         resources.cors_response_headers) = saved[2:]
        route._finish_get, route.gate = answered, gate

    try:
        for _ in range(args.rounds):
            restore()
            measure(steps[0][0], real, scopes)
            for name, take_away in steps[1:]:
                if take_away is not None:
                    take_away()
                measure(name, app, scopes)
            route._finish_get, route.gate = answered, gate
            measure("/healthz of the same app", app, health)
            measure("fixed body (trivial_app)", trivial_app.asgi_app, fixed)
    finally:
        restore()
    print(f"{n} requests, limit {args.limit}, best of {args.rounds} rounds; CPU µs per request")
    previous = None
    for name, cost in best.items():
        step = ""
        if previous is not None and name.startswith("-"):
            step = f"{previous - cost:+6.2f}"  # what the part costs
        elif previous is not None and name.startswith("+"):
            step = f"{cost - previous:+6.2f}"  # what the gate saves
        print(f"{name:<30} {cost:7.2f} {step}")
        previous = cost
    return 0


if __name__ == "__main__":
    sys.exit(main())
