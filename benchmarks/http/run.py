"""HTTP load test: wrk against gunicorn serving an index, and against a fixed-body app.

    python benchmarks/http/run.py --index indexes/current [--workers uvicorn,gthread,sync]
                                  [--duration 10] [--connections 32] [--limits 1,5,10]

For each worker class it starts gunicorn with ``server/gunicorn.conf.py`` on a free loopback
port and, for each limit, runs wrk with real queries (``../shared/eval/queries-public.jsonl``,
every query in turn) against ``/v1/address``; then, under the very same gunicorn settings, a
trivial Falcon app answering a fixed body of the mean size of those responses (the
framework's ceiling). It prints req/s, p50 and p99 per run, and a JSON line per run to
``--json`` if given. Loopback only; every run is bounded by ``--duration``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
QUERIES = REPO.parent / "shared" / "eval" / "queries-public.jsonl"
WORKERS = ("uvicorn", "asgi", "gthread", "sync")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"server at {url} did not become ready")


class Gunicorn:
    """gunicorn with the service's config, on a free loopback port, for one benchmark."""

    def __init__(self, worker: str, app: str | None, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "gunicorn", "-c", str(REPO / "server" / "gunicorn.conf.py")]
        cmd += ["-b", f"127.0.0.1:{self.port}"]
        if app is not None:
            cmd += ["--pythonpath", str(HERE), app]
        self.log = open(log, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            env={**os.environ, **env, "ADDRESS_WORKER": worker},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def wrk(url: str, paths: Path, key: str, args: argparse.Namespace, script: Path = HERE / "queries.lua") -> dict:
    cmd = [
        "wrk",
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{args.duration}s",
        "--timeout",
        "5s",
        "-s",
        str(script),
        url,
        "--",
        str(paths),
        key,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 120, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    result["command"] = " ".join(cmd)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/current"))
    ap.add_argument("--workers", default="uvicorn", help=f"comma list of {', '.join(WORKERS)}")
    ap.add_argument("--processes", type=int, default=None, help="gunicorn workers (default: cores)")
    ap.add_argument("--limits", default="1,5,10")
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of wrk before each server")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="wrk threads")
    ap.add_argument("--queries", default=str(QUERIES))
    ap.add_argument("--json", help="append one JSON line per run to this file")
    ap.add_argument("--no-trivial", action="store_true", help="skip the fixed-body app")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        ap.error("wrk is not installed (Debian package wrk)")
    limits = [int(x) for x in args.limits.split(",")]

    sys.path.insert(0, str(REPO))
    import engine

    index = engine.AddressIndex.open(os.path.realpath(args.index))
    queries = [json.loads(line)["q"] for line in open(args.queries, encoding="utf-8")]
    tmp = Path(tempfile.mkdtemp(prefix="http-bench-"))
    sizes = {}
    for limit in limits:
        with open(tmp / f"paths-{limit}.txt", "w") as f:
            for q in queries:
                qs = urlencode({"country": "NLD", "q": q, "limit": limit})
                f.write(f"/v1/address?{qs}\n")
        sizes[limit] = round(sum(len(index.suggest_json(q, limit=limit)) for q in queries) / len(queries))
        (tmp / f"fixed-{limit}.txt").write_text(f"/fixed/{limit}\n")
    del index

    keystore = tmp / "keys.sqlite3"
    key = subprocess.run(
        [
            sys.executable,
            "-m",
            "server",
            "--keystore",
            str(keystore),
            "keys",
            "create",
            "--name",
            "bench",
            "--rate",
            "1e9",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1]
    env = {
        "ADDRESS_INDEX": args.index,
        "ADDRESS_KEYSTORE": str(keystore),
        "TRIVIAL_BODY_BYTES": ",".join(f"{k}:{v}" for k, v in sizes.items()),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
    }
    if args.processes:
        env["ADDRESS_WORKERS"] = str(args.processes)
    print(f"index {os.path.realpath(args.index)}; {len(queries)} queries; mean body bytes {sizes}")
    print(f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s; logs in {tmp}")
    print(f"load average before the runs: {os.getloadavg()[0]:.2f} (other work skews results)")
    print(f"{'worker':<8} {'app':<8} {'limit':>5} {'req/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'non2xx':>6} {'errors':>6}")
    results = []
    for worker in args.workers.split(","):
        asgi = worker in ("uvicorn", "asgi")
        targets = [("service", None, "paths")]
        if not args.no_trivial:
            app = "trivial_app:asgi_app" if asgi else "trivial_app:wsgi_app"
            targets.append(("trivial", app, "fixed"))
        for name, app, prefix in targets:
            server = Gunicorn(worker, app, env, tmp / f"gunicorn-{worker}-{name}.log")
            try:
                wait_ready(
                    f"{server.base}/healthz" if app is None else f"{server.base}/fixed/{limits[0]}",
                    time.monotonic() + 60,
                )
                for limit in limits:
                    paths = tmp / f"{prefix}-{limit}.txt"
                    if args.warmup:
                        warm = argparse.Namespace(**{**vars(args), "duration": args.warmup})
                        wrk(server.base, paths, key, warm)
                    r = wrk(server.base, paths, key, args)
                    r.update(worker=worker, app=name, limit=limit, body_bytes=sizes[limit])
                    results.append(r)
                    errors = r["connect_errors"] + r["read_errors"] + r["write_errors"]
                    errors += r["timeouts"]
                    print(
                        f"{worker:<8} {name:<8} {limit:>5} {r['rps']:>9.0f} "
                        f"{r['p50_us'] / 1e3:>7.2f} {r['p99_us'] / 1e3:>7.2f} "
                        f"{r['non_2xx']:>6} {errors:>6}",
                        flush=True,
                    )
            finally:
                server.stop()
    if args.json:
        with open(args.json, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    bad = [r for r in results if r["non_2xx"] or r["connect_errors"] or r["timeouts"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
