"""Soak: wrk at about 80 % of the measured maximum for a long time, memory of every process.

    python benchmarks/soak.py --index indexes/nl [--minutes 30] [--share 0.8] [--limit 5]

Starts gunicorn (the default worker, one per core) on a free loopback port, measures the
maximum throughput with wrk for ``--probe`` seconds (real queries of
``../shared/eval/queries-public.jsonl``, every one in turn, as ``benchmarks/http/run.py``),
then runs wrk for ``--minutes`` with each connection pacing itself (wrk's ``delay()``) to
``--share`` of that maximum. Meanwhile it samples, every ``--sample`` seconds, the RSS and the
private memory (``/proc/PID/smaps_rollup``) of the master and of every worker. It prints the
requests, errors, non-2xx answers, p50/p99/max latency, and the memory of each process at
the start, at the end and at its highest. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "http"))
from run import QUERIES, REPO, Gunicorn, wait_ready, wrk  # noqa: E402


def memory_kib(pid: int) -> tuple[int, int] | None:
    """(RSS, private) of a process in KiB, or None if it is gone."""
    try:
        rss = private = 0
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name == "Rss":
                    rss = int(rest.split()[0])
                elif name in ("Private_Clean", "Private_Dirty"):
                    private += int(rest.split()[0])
        return rss, private
    except (OSError, ValueError):
        return None


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Sampler(threading.Thread):
    """Samples the memory of the master and its workers until stopped."""

    def __init__(self, master: int, every: float) -> None:
        super().__init__(daemon=True)
        self.master, self.every = master, every
        self.samples: dict[int, list[tuple[float, int, int]]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set():
            for pid in [self.master, *children(self.master)]:
                mem = memory_kib(pid)
                if mem is not None:
                    self.samples.setdefault(pid, []).append((time.monotonic() - start, *mem))
            self.stop.wait(self.every)


def answers_by_status(base: str) -> dict[str, int]:
    """The service's own count of its answers to /v1/address by status (after the workers'
    last flush of their metrics), so that a non-2xx that wrk counts is named."""
    time.sleep(2.0)
    with urllib.request.urlopen(f"{base}/metrics", timeout=30) as response:
        text = response.read().decode()
    counts: dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("address_http_requests_total{") and 'route="/v1/address"' in line:
            labels, _, value = line.rpartition(" ")
            code = labels.split('status="', 1)[1].split('"', 1)[0]
            counts[code] = counts.get(code, 0) + int(float(value))
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.environ.get("ADDRESS_INDEX", "indexes/current"))
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--share", type=float, default=0.8, help="of the measured maximum req/s")
    ap.add_argument("--probe", type=int, default=15, help="seconds of wrk to measure the maximum")
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
    ap.add_argument("--json", help="write the figures to this file as JSON")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        ap.error("wrk is not installed (Debian package wrk)")

    tmp = Path(tempfile.mkdtemp(prefix="soak-"))
    queries = [json.loads(line)["q"] for line in open(QUERIES, encoding="utf-8")]
    paths = tmp / "paths.txt"
    paths.write_text(
        "".join(f"/v1/address?{urlencode({'country': 'NLD', 'q': q, 'limit': args.limit})}\n" for q in queries)
    )
    keystore = tmp / "keys.sqlite3"
    sys.path.insert(0, str(REPO))
    from server.keys import KeyStore

    key = KeyStore(str(keystore)).create("soak", 1e9)
    env = {"ADDRESS_INDEX": args.index, "ADDRESS_KEYSTORE": str(keystore), "PROMETHEUS_MULTIPROC_DIR": str(tmp / "m")}
    server = Gunicorn("uvicorn", None, env, tmp / "gunicorn.log")
    try:
        wait_ready(f"{server.base}/readyz", time.monotonic() + 120)
        probe = wrk(server.base, paths, key, args, args.probe)
        target = probe["rps"] * args.share
        # each connection sends one request every connections/target seconds: wrk's delay() runs
        # after the answer, so the pause is that period less the median answer time of the probe
        paced = tmp / "paced.lua"
        pause_ms = max(0.0, 1000.0 * args.connections / target - probe["p50_us"] / 1e3)
        pacing = f"\nfunction delay()\n  return {pause_ms:.3f}\nend\n"
        paced.write_text((HERE / "http" / "queries.lua").read_text() + pacing)
        print(f"maximum {probe['rps']:.0f} req/s (p99 {probe['p99_us'] / 1e3:.2f} ms); soaking at "
              f"{args.share:.0%} = {target:.0f} req/s for {args.minutes:g} min; logs in {tmp}", flush=True)
        sampler = Sampler(server.proc.pid, args.sample)
        sampler.start()
        try:
            result = wrk(server.base, paths, key, args, round(args.minutes * 60), script=paced)
        finally:
            sampler.stop.set()
            sampler.join()
        statuses = answers_by_status(server.base)
        errors = result["connect_errors"] + result["read_errors"] + result["write_errors"] + result["timeouts"]
        print(f"{result['requests']:,} requests in {result['duration_us'] / 1e6:.0f} s = {result['rps']:.0f} req/s; "
              f"errors {errors}, non-2xx {result['non_2xx']}; p50 {result['p50_us'] / 1e3:.2f} ms, "
              f"p99 {result['p99_us'] / 1e3:.2f} ms, max {result['max_us'] / 1e3:.1f} ms")
        print("answers by status (the service's /metrics, probe included): "
              + ", ".join(f"{code} {count:,}" for code, count in sorted(statuses.items())))
        print(f"{'process':<14} {'samples':>7} {'RSS start':>10} {'RSS end':>9} {'RSS max':>9} "
              f"{'private start':>13} {'private end':>11} {'private max':>11}  (MiB)")
        memory = {}
        for pid, rows in sampler.samples.items():
            role = "master" if pid == server.proc.pid else f"worker {pid}"
            first, last = rows[0], rows[-1]
            figures = {
                "samples": len(rows),
                "rss_start": first[1] / 1024, "rss_end": last[1] / 1024, "rss_max": max(r[1] for r in rows) / 1024,
                "private_start": first[2] / 1024, "private_end": last[2] / 1024,
                "private_max": max(r[2] for r in rows) / 1024,
            }
            # the private memory at each tenth of the soak: a leak climbs steadily, a warm-up
            # (allocator arenas, caches filling) levels off
            figures["private_tenths"] = [
                rows[min(len(rows) - 1, round(i * (len(rows) - 1) / 10))][2] / 1024 for i in range(11)
            ]
            memory[role] = figures
            print(f"{role:<14} {len(rows):>7} {figures['rss_start']:>10.1f} {figures['rss_end']:>9.1f} "
                  f"{figures['rss_max']:>9.1f} {figures['private_start']:>13.1f} {figures['private_end']:>11.1f} "
                  f"{figures['private_max']:>11.1f}")
        for role, figures in memory.items():
            print(f"{role:<14} private MiB at each tenth: "
                  + " ".join(f"{v:.1f}" for v in figures["private_tenths"]))
        log = (tmp / "gunicorn.log").read_text()
        print(f"gunicorn log: {log.count('Traceback')} tracebacks, {log.count('WORKER TIMEOUT')} worker timeouts")
        if args.json:
            Path(args.json).write_text(json.dumps(
                {"probe": probe, "soak": result, "statuses": statuses, "memory": memory}, indent=1))
        return 1 if errors or result["non_2xx"] else 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
