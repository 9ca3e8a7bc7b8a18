"""A key used at half its rate by paced wrk connections: how many of its requests are refused.

    python benchmarks/http/half_rate.py --index /work/indexes/nl [--rate 100] [--share 0.5]
                                        [--seconds 120] [--connections 32] [--stores sqlite,redis]
                                        [--runs 2] [--tree DIR]

Issue 37, item 8. For each run and key store it starts gunicorn (``server/gunicorn.conf.py``,
the default worker, 2 processes) with one key of ``--rate`` requests per second, then runs wrk
for ``--seconds`` with ``--connections`` connections, each pacing itself (wrk's ``delay()``, as
``benchmarks/soak.py`` does) so that together they ask ``--share`` of the rate: every query of
``../shared/eval/queries-public.jsonl`` in turn (or ``--query`` only). A paced connection waits a fixed time after
each answer, so connections that got their answers together ask together again: the requests
come in bursts, the average stays at the share. A key within its rate should get no 429; it
prints, per run, the requests, their rate, and the answers by status as the service counted
them (its /metrics), and exits 1 if any was refused. ``--tree DIR`` serves another checkout
(built in place), e.g. the code before a change. Loopback only; every process started is
stopped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from run import QUERIES, REPO, Gunicorn, Redis, create_key, wait_ready  # noqa: E402
from soak import answers_by_status  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default="indexes/current")
    ap.add_argument("--rate", type=float, default=100.0, help="the key's rate (requests per second)")
    ap.add_argument("--share", type=float, default=0.5, help="of the rate, asked on average")
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--stores", default="sqlite", help="comma list of sqlite, redis")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--tree", help="serve this checkout instead (built in place)")
    ap.add_argument(
        "--query",
        help="ask only this query (a cheap one costs one token a request: the limit counts the engine's "
        "CPU time beyond 0.2 ms, so the public queries cost a little more than one on average)",
    )
    args = ap.parse_args()
    tree = Path(args.tree).resolve() if args.tree else REPO
    queries = [args.query] if args.query else [json.loads(line)["q"] for line in open(QUERIES, encoding="utf-8")]
    refused = 0
    for run in range(args.runs):
        for store in args.stores.split(","):
            tmp = Path(tempfile.mkdtemp(prefix="half-rate-"))
            paths = tmp / "paths.txt"
            paths.write_text(
                "".join(f"/v1/address?{urlencode({'country': 'NLD', 'q': q, 'limit': 5})}\n" for q in queries)
            )
            redis = Redis(tmp) if store == "redis" else None
            keystore = redis.url if redis is not None else str(tmp / "keys.sqlite3")
            server = None
            try:
                key = create_key(keystore, name="half", rate=args.rate, tree=tree)
                env = {
                    "ADDRESS_INDEX": args.index,
                    "ADDRESS_KEYSTORE": keystore,
                    "ADDRESS_WORKERS": "2",
                    "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
                }
                server = Gunicorn("uvicorn", None, env, tmp / "gunicorn.log", tree)
                wait_ready(f"{server.base}/readyz", time.monotonic() + 180)
                # each connection asks once every connections / (share x rate) seconds
                pause_ms = max(0.0, 1000.0 * args.connections / (args.rate * args.share) - 1.0)
                paced = tmp / "paced.lua"
                paced.write_text(
                    (HERE / "queries.lua").read_text() + f"\nfunction delay()\n  return {pause_ms:.3f}\nend\n"
                )
                cmd = ["wrk", "-t2", f"-c{args.connections}", f"-d{args.seconds}s", "--timeout", "5s", "-s", str(paced)]
                cmd += [server.base, "--", str(paths), key]
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.seconds + 120, check=True).stdout
                result = json.loads(next(x for x in out.splitlines() if x.startswith("RESULT "))[len("RESULT ") :])
                statuses = answers_by_status(server.base)
                seconds = result["duration_us"] / 1e6
                errors = result["connect_errors"] + result["read_errors"] + result["write_errors"] + result["timeouts"]
                log = (tmp / "gunicorn.log").read_text(errors="replace")
                refused += statuses.get("429", 0)
                asked = result["requests"] / seconds
                print(
                    f"run {run + 1} {store}: key rate {args.rate:g}, {result['requests']:,} requests in "
                    f"{seconds:.0f} s = {asked:.1f}/s ({asked / args.rate:.2f} of the rate); "
                    f"answers by status {dict(sorted(statuses.items()))}; socket errors {errors}; "
                    f"limiter degraded {log.count('the shared quota is unreachable')} times",
                    flush=True,
                )
            finally:
                if server is not None:
                    server.stop()
                if redis is not None:
                    redis.stop()
    print(f"refused (429) in all: {refused}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
