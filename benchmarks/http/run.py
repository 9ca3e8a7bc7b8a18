"""HTTP load test: wrk against gunicorn serving an index, and against a fixed-body app.

    python benchmarks/http/run.py --index indexes/current [--workers uvicorn,gthread,sync]
                                  [--stores sqlite,redis] [--repeat 3] [--duration 6]
                                  [--connections 32] [--limits 1,5,10] [--profile DIR]
                                  [--compare TREE [--compare-index DIR]] [--canned] [--perf]
                                  [--endpoints address,postcode,reverse] [--requests 10000]

For each worker class it starts, under ``server/gunicorn.conf.py`` on free loopback ports, the
service once per key store (keys, rate limits and metrics on, as in production) and a trivial
Falcon app answering a fixed body of the mean size of the real responses (the framework's
ceiling). All of them run at once; wrk then loads one at a time, back to back: for each
repeat and limit, every store's service (real queries of ``../shared/eval/queries-public.jsonl``,
every query in turn, against ``/v1/address``) and the fixed body, so that each ratio compares
runs a few seconds apart on a machine whose speed drifts. It prints req/s, p50 and p99 of
every run, then the medians over the repeats and the median of the per-repeat ratios
service / fixed body; a JSON line per run goes to ``--json`` if given.

``--endpoints`` (default ``address``) names the endpoints loaded, each against a fixed body of
ITS OWN mean response size (a workload: a file of request paths, a fixed-body route, a size):

- ``address``: ``/v1/address`` with the public queries, one workload per limit (``1``, ``5``,
  ``10``: the fixed bodies ``/fixed/1`` ...);
- ``postcode``: ``/v1/address/postcode?country=NLD&postcode=..&number=..`` of ``--requests``
  addresses drawn at random from the index (seed 39; their postcode and house number, as a
  checkout form sends them), one workload ``postcode`` (``/fixed/postcode``);
- ``reverse``: ``/v1/address/reverse?country=NLD&lat=..&lon=..&limit=N`` of ``--requests``
  points, each a random address's point moved by a normal offset of 500 m each way (as
  ``benchmarks/test_questions_latency.py`` draws them), one workload per limit
  (``reverse-5``: ``/fixed/reverse-5``).

The ratio of each workload is its service's req/s over its own fixed body's. ``cpu µs`` is the CPU
time the server's workers used per request during the run (from /proc): unlike req/s it
hardly depends on what else the machine runs, so it shows what a change to the request path
buys even on a busy machine.

Key stores (``--stores``): ``sqlite`` (a file, the default) and ``redis``: a
``redis-server`` of its own on a free loopback port (Debian's ``redis-server``), or
``--redis-url`` to use a running one; ``ADDRESS_KEYSTORE`` is then ``redis://...`` and the
key is created through the same CLI. ``--profile DIR`` records one worker of each server with
py-spy (``pip install -e ".[bench]"``) during its runs, as collapsed stacks
(``DIR/<app>-limit<N>-<round>.txt``, read them with ``benchmarks/http/profile_summary.py``);
the sampling costs throughput, so figures of a profiled run are not comparable, and a line
that makes a syscall (``time.thread_time()``, a socket write) gets more than its share of
samples: check a finding with ``inprocess.py`` before acting on it.

``--perf`` samples the workers of each server with Linux ``perf`` (``perf record -F 999``,
Debian package ``linux-perf``) during each run and splits their CPU time per request by where
it ran: the engine (``engine/_core``), the Python interpreter (``libpython``: our code, Falcon
and uvicorn alike), the kernel (loopback TCP, system calls, context switches), the event loop
and HTTP parser (uvloop, httptools), the C library and the rest. The engine's share under load,
and what is left to the interpreter, are then measured, not inferred.

``--canned`` looks up the answers of ``/v1/address`` only: on the other endpoints it is the
service itself.

``--compare TREE`` serves each store a second time from another checkout (``compared-STORE``:
its ``server/`` and its ``engine/``, built in place), so that a change is measured against the
code before it in the same run, a few seconds apart, with the same fixed body;
``--compare-index DIR`` gives it an index of its own format (default: ``--index``).

Loopback only; every wrk run is bounded by ``--duration``; every process started is stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
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
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE.parent))
from benchlib import drawn_questions  # noqa: E402

from server.config import WORKER_CLASSES  # noqa: E402

QUERIES = REPO.parent / "shared" / "eval" / "queries-public.jsonl"
WORKERS = tuple(WORKER_CLASSES)  # ADDRESS_WORKER's choices
STORES = ("sqlite", "redis")
FIXED = "fixed"
CANNED = "canned"
COMPARED = "compared"  # the service of --compare TREE


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


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Gunicorn:
    """gunicorn with the service's config, on a free loopback port, for one benchmark."""

    def __init__(
        self, worker: str, app: str | None, env: dict[str, str], log: Path, tree: Path = REPO
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "gunicorn", "-c", str(tree / "server" / "gunicorn.conf.py")]
        cmd += ["-b", f"127.0.0.1:{self.port}"]
        if app is not None:
            cmd += ["--pythonpath", str(HERE), app]
        self.log = open(log, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            cmd,
            cwd=tree,  # NOTE: python -m puts the working directory first: that tree's server/engine
            env={**os.environ, **env, "ADDRESS_WORKER": worker},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def workers(self) -> list[int]:
        """The worker processes' ids (Linux)."""
        try:
            text = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def cpu_seconds(self) -> float:
        """CPU time (user + system) its workers have used so far (Linux)."""
        total = 0
        for pid in self.workers():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        stop(self.proc)
        self.log.close()


class Redis:
    """A throwaway ``redis-server`` on a free loopback port: no persistence, its own directory."""

    def __init__(self, tmp: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("--stores redis needs redis-server (Debian package redis-server) or --redis-url")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        work = tmp / "redis"
        work.mkdir()
        self.log = open(tmp / "redis.log", "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(work)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise SystemExit(f"redis-server did not start on port {self.port} (log: {tmp / 'redis.log'})")

    def stop(self) -> None:
        stop(self.proc)
        self.log.close()


def create_key(keystore: str, *, name: str = "bench", rate: float = 1e9, tree: Path = REPO) -> str:
    """A key of ``rate`` requests per second (by default practically unlimited) in ``keystore``
    (a path or a redis:// URL), by the CLI of ``tree``."""
    done = subprocess.run(
        [sys.executable, "-m", "server", "--keystore", keystore, "keys", "create", "--name", name,
         "--rate", str(rate)],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"cannot create a key in {keystore}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.splitlines()[-1]


def wrk(
    url: str, paths: Path, key: str, args: argparse.Namespace, duration: int, script: Path = HERE / "queries.lua"
) -> dict:
    """One run of wrk with ``script`` (queries.lua: each connection sends the paths in turn)."""
    cmd = [
        "wrk",
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{duration}s",
        "--timeout",
        "5s",
        "-s",
        str(script),
        url,
        "--",
        str(paths),
        key,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    result["command"] = " ".join(cmd)
    return result


class Profiler:
    """py-spy recording one worker of a server for the length of one wrk run."""

    def __init__(self, server: Gunicorn, out: Path, duration: int, rate: int = 50) -> None:
        binary = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        pids = server.workers()
        if not pids or not Path(binary).exists():
            raise SystemExit("--profile needs py-spy (pip install -e '.[bench]') and a running worker")
        self.proc = subprocess.Popen(
            [binary, "record", "--pid", str(pids[0]), "--duration", str(duration), "--rate", str(rate),
             "--format", "raw", "--output", str(out), "--nonblocking"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait(self) -> None:
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            stop(self.proc)


#: --perf: a shared object's name (perf's "dso") -> the part of a worker it counts for
PERF_PARTS = (
    ("engine", ("_core.cpython",)),
    ("python", ("libpython", "python3")),
    ("kernel", ("[kernel",)),
    ("loop+http", ("loop.cpython", "parser.cpython", "url_parser.cpython", "_asyncio.cpython")),
    ("libc", ("libc.so", "libm.so", "ld-linux")),
)
PERF_NAMES = [name for name, _ in PERF_PARTS] + ["other"]  # the columns of --perf


class PerfRecorder:
    """``perf record`` of every worker of a server for the length of one wrk run."""

    def __init__(self, server: Gunicorn, out: Path, duration: int) -> None:
        pids = server.workers()
        if shutil.which("perf") is None or not pids:
            raise SystemExit("--perf needs Linux perf (Debian package linux-perf) and running workers")
        self.out = out
        self.proc = subprocess.Popen(
            ["perf", "record", "-q", "-F", "999", "-p", ",".join(map(str, pids)), "-o", str(out), "--",
             "sleep", str(duration)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def shares(self) -> dict[str, float]:
        """Wait for the recording; the share of the samples of each part (``PERF_PARTS``)."""
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            stop(self.proc)
        report = subprocess.run(
            ["perf", "report", "-i", str(self.out), "--sort", "dso", "--stdio", "--percent-limit", "0"],
            capture_output=True, text=True, timeout=120,
        ).stdout
        shares = dict.fromkeys(PERF_NAMES, 0.0)
        for line in report.splitlines():
            fields = line.split()
            if len(fields) < 2 or not fields[0].endswith("%") or line.lstrip().startswith("#"):
                continue
            share, dso = float(fields[0].rstrip("%")) / 100, " ".join(fields[1:])
            part = next((name for name, marks in PERF_PARTS if any(m in dso for m in marks)), "other")
            shares[part] += share
        return shares


def _errors(r: dict) -> int:
    return r["connect_errors"] + r["read_errors"] + r["write_errors"] + r["timeouts"]


def summarize(results: list[dict], stores: list[str], loads: list[str], worker: str) -> list[str]:
    """The medians over the repeats, and the median ratio service / fixed body per repeat, of
    each workload (`workloads`)."""
    lines = []
    mine = [r for r in results if r["worker"] == worker]
    for load in loads:
        fixed = {r["repeat"]: r for r in mine if r["app"] == FIXED and r["load"] == load}
        for app in [*(f"{kind}-{s}" for s in stores for kind in ("service", COMPARED)), CANNED, FIXED]:
            runs = [r for r in mine if r["app"] == app and r["load"] == load]
            if not runs:
                continue
            ratios = [r["rps"] / fixed[r["repeat"]]["rps"] for r in runs if r["repeat"] in fixed and app != FIXED]
            ratio = f"{statistics.median(ratios):.2f}" if ratios else ""
            lines.append(
                f"{worker:<8} {app:<16} {load:>10} {statistics.median(r['rps'] for r in runs):>9.0f} "
                f"{statistics.median(r['p50_us'] for r in runs) / 1e3:>7.2f} "
                f"{statistics.median(r['p99_us'] for r in runs) / 1e3:>7.2f} "
                f"{statistics.median(r['cpu_us'] for r in runs):>6.1f} {ratio:>6} "
                f"{' '.join(f'{x:.2f}' for x in ratios)}"
            )
    return lines


def summarize_perf(results: list[dict], loads: list[str]) -> list[str]:
    """``--perf``: the medians over the repeats of each part's CPU µs per request."""
    lines = [f"{'worker':<8} {'app':<16} {'load':>10} {'cpu µs':>6} " + " ".join(f"{n:>9}" for n in PERF_NAMES)]
    for key in sorted({(r["worker"], r["app"]) for r in results if "perf" in r}):
        for load in loads:
            runs = [r for r in results if (r["worker"], r["app"]) == key and r["load"] == load and "perf" in r]
            if runs:
                parts = [statistics.median(r["cpu_us"] * r["perf"][n] for r in runs) for n in PERF_NAMES]
                cpu = statistics.median(r["cpu_us"] for r in runs)
                cells = " ".join(f"{x:>9.1f}" for x in parts)
                lines.append(f"{key[0]:<8} {key[1]:<16} {load:>10} {cpu:>6.1f} {cells}")
    return lines


ENDPOINTS = ("address", "postcode", "reverse")


def requests(index, endpoints: list[str], limits: list[int], queries: list[str],
             n: int) -> list[tuple[str, str, int, list[str], list[bytes]]]:
    """The requests of ``--endpoints`` (the module's docstring), one tuple per workload: its
    name (``load``), its endpoint, its limit (0: none), its request paths and the bodies the
    index answers them with. ``inprocess.py --endpoint`` asks the same."""
    out = []
    asked, points = drawn_questions(index, n)
    if "address" in endpoints:
        for limit in limits:
            out.append((str(limit), "address", limit,
                        [f"/v1/address?{urlencode({'country': 'NLD', 'q': q, 'limit': limit})}" for q in queries],
                        [index.suggest_json(q, limit=limit) for q in queries]))
    if "postcode" in endpoints:
        out.append(("postcode", "postcode", 0,
                    [f"/v1/address/postcode?{urlencode({'country': 'NLD', 'postcode': p, 'number': k})}"
                     for p, k in asked],
                    [index.lookup_json(p, k) for p, k in asked]))
    if "reverse" in endpoints:
        import numpy as np

        lat, lon = np.round(np.array(points), 6).T.tolist()
        for limit in limits:
            out.append((f"reverse-{limit}", "reverse", limit,
                        [f"/v1/address/reverse?{urlencode({'country': 'NLD', 'lat': y, 'lon': x, 'limit': limit})}"
                         for y, x in zip(lat, lon, strict=True)],
                        [index.reverse_json(y, x, limit=limit) for y, x in zip(lat, lon, strict=True)]))
    return out


def workloads(index, endpoints: list[str], limits: list[int], queries: list[str], n: int, tmp: Path) -> list[dict]:
    """The workloads of ``--endpoints`` (:func:`requests`): each a dict of its name (``load``),
    its endpoint and limit (0: none), its file of request paths, its fixed-body route's file
    and the mean size of its real responses, which that route answers."""
    out = []
    for load, endpoint, limit, paths, bodies in requests(index, endpoints, limits, queries, n):
        (tmp / f"paths-{load}.txt").write_text("".join(f"{p}\n" for p in paths))
        (tmp / f"fixed-{load}.txt").write_text(f"/fixed/{load}\n")
        out.append({"load": load, "endpoint": endpoint, "limit": limit, "paths": tmp / f"paths-{load}.txt",
                    "fixed": tmp / f"fixed-{load}.txt", "bytes": round(sum(map(len, bodies)) / len(bodies))})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/current"))
    ap.add_argument("--workers", default="uvicorn", help=f"comma list of {', '.join(WORKERS)}")
    ap.add_argument("--processes", type=int, default=None, help="gunicorn workers (default: cores)")
    ap.add_argument("--stores", default="sqlite", help=f"comma list of key stores: {', '.join(STORES)}")
    ap.add_argument("--redis-url", help="use this Redis (redis://...) instead of starting one")
    ap.add_argument("--limits", default="1,5,10")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of every (store, limit) and fixed body")
    ap.add_argument("--duration", type=int, default=6, help="seconds per wrk run")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of wrk before the first run of each")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="wrk threads")
    ap.add_argument("--queries", default=str(QUERIES))
    ap.add_argument("--endpoints", default="address",
                    help=f"comma list of {', '.join(ENDPOINTS)}: each against a fixed body of its own mean size")
    ap.add_argument("--requests", type=int, default=10_000,
                    help="distinct requests drawn from the index for postcode and reverse")
    ap.add_argument("--json", help="append one JSON line per run to this file")
    ap.add_argument("--no-trivial", action="store_true", help="skip the fixed-body app")
    ap.add_argument(
        "--canned",
        action="store_true",
        help="also the service with the engine's answers looked up (canned_app.py): the engine's share",
    )
    ap.add_argument(
        "--compare",
        metavar="TREE",
        help="also serve each store from this other checkout (engine built in place), e.g. "
        "`git archive main | tar -x -C TREE`: before and after in the same run",
    )
    ap.add_argument("--compare-index", metavar="DIR", help="the index --compare TREE serves (default: --index)")
    ap.add_argument("--profile", help="record one worker of each service with py-spy into this directory")
    ap.add_argument("--profile-rate", type=int, default=50, help="py-spy samples per second (--profile)")
    ap.add_argument("--perf", action="store_true", help="split the workers' CPU time by where it ran (Linux perf)")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        ap.error("wrk is not installed (Debian package wrk)")
    limits = [int(x) for x in args.limits.split(",")]
    stores = args.stores.split(",")
    if unknown := set(stores) - set(STORES):
        ap.error(f"unknown key store {', '.join(sorted(unknown))}; choose from {', '.join(STORES)}")
    workers = args.workers.split(",")
    if unknown := set(workers) - set(WORKERS):
        ap.error(f"unknown worker {', '.join(sorted(unknown))}; choose from {', '.join(WORKERS)}")
    endpoints = args.endpoints.split(",")
    if unknown := set(endpoints) - set(ENDPOINTS):
        ap.error(f"unknown endpoint {', '.join(sorted(unknown))}; choose from {', '.join(ENDPOINTS)}")

    import engine

    index = engine.AddressIndex.open(os.path.realpath(args.index))
    queries = [json.loads(line)["q"] for line in open(args.queries, encoding="utf-8")]
    tmp = Path(tempfile.mkdtemp(prefix="http-bench-"))
    loads = workloads(index, endpoints, limits, queries, args.requests, tmp)
    sizes = {w["load"]: w["bytes"] for w in loads}
    del index
    (tmp / "queries.txt").write_text("".join(f"{q}\n" for q in queries), encoding="utf-8")
    profile = Path(args.profile) if args.profile else None
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)

    started: list[Gunicorn | Redis] = []
    results = []
    try:
        keystores = {}
        for store in stores:
            if store == "sqlite":
                keystores[store] = str(tmp / "keys.sqlite3")
            elif args.redis_url:
                keystores[store] = args.redis_url
            else:
                redis = Redis(tmp)
                started.append(redis)
                keystores[store] = redis.url
        keys = {store: create_key(keystore) for store, keystore in keystores.items()}
        base_env = {
            "ADDRESS_INDEX": args.index,
            "TRIVIAL_BODY_BYTES": ",".join(f"{k}:{v}" for k, v in sizes.items()),
        }
        if args.processes:
            base_env["ADDRESS_WORKERS"] = str(args.processes)
        print(f"index {os.path.realpath(args.index)}; {len(queries)} queries; mean body bytes {sizes}")
        print(f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s, {args.repeat} rounds; logs in {tmp}")
        print(f"key stores: {', '.join(f'{s} {k}' for s, k in keystores.items())}")
        print(f"load average before the runs: {os.getloadavg()[0]:.2f} (other work skews results)")
        head = ("worker", "app", "load", "req/s", "p50 ms", "p99 ms", "non2xx", "errors", "cpu µs")
        print("{:<8} {:<16} {:>10} {:>9} {:>7} {:>7} {:>6} {:>6} {:>6}".format(*head))
        summary = []
        for worker in workers:
            asgi = WORKER_CLASSES[worker][1]
            # (name, gunicorn app or None for the service, path-file prefix, key)
            targets: list[tuple[str, Gunicorn, str, str]] = []
            for store in stores:
                env = {
                    **base_env,
                    "ADDRESS_KEYSTORE": keystores[store],
                    "PROMETHEUS_MULTIPROC_DIR": str(tmp / f"metrics-{worker}-{store}"),
                }
                server = Gunicorn(worker, None, env, tmp / f"gunicorn-{worker}-{store}.log")
                started.append(server)
                targets.append((f"service-{store}", server, "paths", keys[store]))
                if args.compare:
                    env = {**env, "PROMETHEUS_MULTIPROC_DIR": str(tmp / f"metrics-{worker}-{store}-compare")}
                    if args.compare_index:
                        env["ADDRESS_INDEX"] = args.compare_index
                    log = tmp / f"gunicorn-{worker}-{store}-compare.log"
                    server = Gunicorn(worker, None, env, log, Path(args.compare).resolve())
                    started.append(server)
                    targets.append((f"{COMPARED}-{store}", server, "paths", keys[store]))
            if args.canned:
                app = "canned_app:asgi_app" if asgi else "canned_app:wsgi_app"
                env = {
                    **base_env,
                    "ADDRESS_KEYSTORE": keystores[stores[0]],
                    "PROMETHEUS_MULTIPROC_DIR": str(tmp / f"metrics-{worker}-canned"),
                    "CANNED_QUERIES": str(tmp / "queries.txt"),
                    "CANNED_LIMITS": ",".join(map(str, limits)),
                }
                server = Gunicorn(worker, app, env, tmp / f"gunicorn-{worker}-canned.log")
                started.append(server)
                targets.append((CANNED, server, "paths", keys[stores[0]]))
            if not args.no_trivial:
                app = "trivial_app:asgi_app" if asgi else "trivial_app:wsgi_app"
                env = {**base_env, "PROMETHEUS_MULTIPROC_DIR": str(tmp / f"metrics-{worker}-fixed")}
                server = Gunicorn(worker, app, env, tmp / f"gunicorn-{worker}-fixed.log")
                started.append(server)
                targets.append((FIXED, server, "fixed", keys[stores[0]]))
            for name, server, _, _ in targets:
                ready = "/healthz" if name != FIXED else f"/fixed/{loads[0]['load']}"
                wait_ready(server.base + ready, time.monotonic() + 120)
            for repeat in range(args.repeat):
                for w in loads:
                    load, limit = w["load"], w["limit"]
                    # alternate the order, so that neither side always runs on a warmer machine
                    for name, server, prefix, key in targets if repeat % 2 == 0 else targets[::-1]:
                        paths = w[prefix]
                        if repeat == 0 and args.warmup:
                            wrk(server.base, paths, key, args, args.warmup)
                        profiler = None
                        if profile is not None:
                            out = profile / f"{name.removeprefix('service-')}-{load}-{repeat}.txt"
                            profiler = Profiler(server, out, args.duration, args.profile_rate)
                        recorder = PerfRecorder(server, tmp / "perf.data", args.duration) if args.perf else None
                        cpu = server.cpu_seconds()
                        r = wrk(server.base, paths, key, args, args.duration)
                        r["cpu_us"] = (server.cpu_seconds() - cpu) / max(1, r["requests"]) * 1e6
                        if profiler is not None:
                            profiler.wait()
                        if recorder is not None:
                            r["perf"] = recorder.shares()
                        r.update(worker=worker, app=name, load=load, endpoint=w["endpoint"], limit=limit,
                                 body_bytes=sizes[load], repeat=repeat)
                        r["load_average"] = os.getloadavg()[0]
                        results.append(r)
                        print(
                            f"{worker:<8} {name:<16} {load:>10} {r['rps']:>9.0f} "
                            f"{r['p50_us'] / 1e3:>7.2f} {r['p99_us'] / 1e3:>7.2f} "
                            f"{r['non_2xx']:>6} {_errors(r):>6} {r['cpu_us']:>6.1f}",
                            flush=True,
                        )
            for _, server, _, _ in targets:
                server.stop()
                started.remove(server)
            summary += summarize(results, stores, [w["load"] for w in loads], worker)
        print(f"\nmedians over {args.repeat} rounds; ratio: median of the rounds' service / fixed body req/s")
        print(f"{'worker':<8} {'app':<16} {'load':>10} {'req/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'cpu µs':>6} "
              f"{'ratio':>6} ratios")
        print("\n".join(summary))
        if args.perf:
            print("\nworkers' CPU µs per request by where it ran (perf samples; medians over the rounds)")
            print("\n".join(summarize_perf(results, [w["load"] for w in loads])))
    finally:
        for proc in reversed(started):
            proc.stop()
    if args.json:
        with open(args.json, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    bad = [r for r in results if r["non_2xx"] or r["connect_errors"] or r["timeouts"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
