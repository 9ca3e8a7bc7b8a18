"""What the latency benchmarks (`test_latency.py`) and `report.py` share: the query workload,
per-call timing, the 1- vs 2-thread run, index open time in fresh processes, and the check that
two processes share the pages of one index.

The workload is the public evaluation set as `../shared/eval/evaluate.py` asks it: every query,
and for every query marked "typing" each prefix `q[:i]` that ends in a non-space character (the
keystroke simulation), in file order, a query's prefixes just before the query itself.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_EVAL_DIR = REPO.parent / "shared" / "eval"
PUBLIC = "queries-public.jsonl"
LIMITS = (1, 5, 10)


class WorkloadError(Exception):
    """The evaluation queries are missing or unreadable."""


def eval_dir() -> Path:
    return Path(os.environ.get("ADDRESS_EVAL_DIR") or DEFAULT_EVAL_DIR)


def load_public(directory: Path | None = None) -> list[dict]:
    path = (directory or eval_dir()) / PUBLIC
    try:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        raise WorkloadError(f"cannot read the public queries {path} (set ADDRESS_EVAL_DIR): "
                            f"{e}") from None
    if not rows:
        raise WorkloadError(f"the public queries {path} are empty")
    return rows


def prefixes(q: str) -> list[str]:
    """The proper prefixes the evaluator's keystroke simulation asks (q itself excluded)."""
    return [q[:i] for i in range(1, len(q)) if q[i - 1] != " "]


def hit_key(hit: dict) -> tuple[str, int, str, str]:
    """What the evaluator matches a target on: (postcode without space, number, letter, addition)."""
    c = {x["type"]: x["value"] for x in hit["components"]}
    return (c["NLD_POSTAL_CODE"].replace(" ", ""), c["NLD_HOUSE_NUMBER"], c.get("NLD_HOUSE_LETTER", "").upper(),
            c.get("NLD_HOUSE_NUMBER_ADDITION", "").upper())


def postcode_text(code: int) -> str:
    """A postcode as the index stores it (digits * 676 + letters) written out: `1234AB`."""
    digits, r = divmod(int(code), 676)
    return f"{digits:04d}{chr(65 + r // 26)}{chr(65 + r % 26)}"


def drawn_questions(index, n: int, seed: int = 39) -> tuple[list[tuple[str, int]], list[tuple[float, float]]]:
    """What the benchmarks of the other questions ask (`test_questions_latency.py`,
    `http/run.py --endpoints`): `n` addresses of `index` drawn at random (`seed`), as
    ([(postcode, number)] a checkout form sends, [(lat, lon)] each one's point moved by a normal
    offset of 500 m each way, where people put pins)."""
    import numpy as np

    a = index.arrays
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(index), n)
    asked = [(postcode_text(p), int(k)) for p, k in zip(a["a_postcode"][rows], a["a_number"][rows], strict=True)]
    cos = np.cos(np.radians(a["a_lat"][rows] / 1e6))
    metres = rng.normal(0, 500, (2, n))
    lat = a["a_lat"][rows] / 1e6 + metres[0] / 111_200
    lon = a["a_lon"][rows] / 1e6 + metres[1] / (111_200 * cos)
    return asked, list(zip(lat.tolist(), lon.tolist(), strict=True))


def keystroke_stream(rows: list[dict]) -> list[str]:
    """Every public query, each "typing" one preceded by its prefixes, in file order."""
    out: list[str] = []
    for r in rows:
        if r.get("typing"):
            out.extend(prefixes(r["q"]))
        out.append(r["q"])
    return out


def typing_prefixes(rows: list[dict]) -> list[str]:
    return [p for r in rows if r.get("typing") for p in prefixes(r["q"])]


def form_queries(rows: list[dict], form: str) -> list[str]:
    return [r["q"] for r in rows if r["form"] == form]


def workloads(rows: list[dict]) -> dict[str, list[str]]:
    """The named query lists: `full` the public queries as typed in full, `prefixes` the
    typing prefixes, `all` both in keystroke order, `typo` the queries of form typo."""
    return {"all": keystroke_stream(rows), "typo": form_queries(rows, "typo"),
            "prefixes": typing_prefixes(rows), "full": [r["q"] for r in rows]}


# -- per-call timing -------------------------------------------------------------------------

def percentile(sorted_values, p: float):
    """Nearest-rank percentile of an ascending sequence (p in 0..100)."""
    if not sorted_values:
        raise ValueError("no values")
    k = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[k - 1]


def summarize_ns(ns: list[int]) -> dict:
    """p50 / p90 / p99 / max / mean in µs of per-call durations in ns."""
    s = sorted(ns)
    return {"calls": len(s), "p50_us": percentile(s, 50) / 1e3, "p90_us": percentile(s, 90) / 1e3,
            "p99_us": percentile(s, 99) / 1e3, "max_us": s[-1] / 1e3,
            "mean_us": sum(s) / len(s) / 1e3}


def time_calls(index, queries: list[str], limit: int) -> list[int]:
    """perf_counter_ns around each single suggest_json call, in list order."""
    call = index.suggest_json
    clock = time.perf_counter_ns
    out = [0] * len(queries)
    for i, q in enumerate(queries):
        t0 = clock()
        call(q, limit=limit)
        out[i] = clock() - t0
    return out


def warm(index, queries: list[str], limits=LIMITS) -> None:
    """Fault in the index pages the workload reads, so the figures are of a warm index."""
    for limit in limits:
        for q in queries:
            index.suggest_json(q, limit=limit)


# -- GIL: the same batch in 1 thread or split over 2 ------------------------------------------

def _split(work, items: list, threads: int) -> tuple[float, float]:
    """(wall s, process CPU s) to run `work(part)` on `items` dealt round-robin over `threads`
    threads (1 thread = the whole list in one worker thread, so both cases pay the same thread
    start-up). CPU / wall near `threads` means the threads really ran at the same time."""
    workers = [threading.Thread(target=work, args=(items[i::threads],)) for i in range(threads)]
    c0, t0 = time.process_time(), time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - t0, time.process_time() - c0


def run_split(index, batch: list[str], threads: int, limit: int = 5) -> tuple[float, float]:
    """(wall s, CPU s) to answer every query of `batch` with `threads` threads."""
    call = index.suggest_json

    def work(part):
        for q in part:
            call(q, limit=limit)

    return _split(work, batch, threads)


CONTROL_UNIT = 400


def run_split_control(n: int, threads: int) -> tuple[float, float]:
    """The same for a GIL-bound control: `n` calls of `sum(range(CONTROL_UNIT))`, a C call that
    holds the GIL. Its speed-up from 2 threads is <= 1 whatever the cores; measured beside
    `run_split` it shows what the machine would give a function that keeps the GIL."""
    def work(part):
        for _ in part:
            sum(range(CONTROL_UNIT))

    return _split(work, list(range(n)), threads)


# -- the index on disk, and opening it in fresh processes ------------------------------------

def index_size(index_dir: str | os.PathLike) -> dict:
    files = [p for p in Path(index_dir).iterdir() if p.is_file()]
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files),
            "disk_bytes": sum(p.stat().st_blocks * 512 for p in files)}


def mapped_pages(index_dir: str | os.PathLike) -> str:
    """How this process maps the index in `index_dir` (Linux): its bytes resident in the maps,
    and how many of them in 2 MiB pages (engine/__init__.py, ``_HUGEPAGE``); "" elsewhere."""
    if not os.path.exists("/proc/self/smaps"):
        return ""
    m = smaps(os.getpid(), index_dir)
    rss, pmd = m["index_rss_kb"] / 1024, m["index_pmd_kb"] / 1024
    share = f" ({pmd / rss:.0%})" if rss else ""
    return f"{os.path.realpath(index_dir)}: {rss:,.0f} MiB mapped in, {pmd:,.0f} MiB of it in 2 MiB pages{share}"


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


_OPEN_CHILD = """
import sys, time
import engine
t0 = time.perf_counter_ns()
index = engine.AddressIndex.open(sys.argv[1])
t1 = time.perf_counter_ns()
index.suggest_json("damrak 1 amsterdam", limit=5)
t2 = time.perf_counter_ns()
print(t1 - t0, t2 - t1)
"""


def open_times(index_dir: str | os.PathLike, runs: int = 7) -> dict:
    """`AddressIndex.open` (and the first query after it) in `runs` fresh interpreters, each
    after `import engine`; page cache warm, as when a server worker starts."""
    opens, firsts = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _OPEN_CHILD, str(index_dir)], cwd=REPO,
                             env=_child_env(), capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"opening {index_dir} in a child failed:\n{out.stderr}")
        a, b = out.stdout.split()
        opens.append(int(a) / 1e6)
        firsts.append(int(b) / 1e6)
    opens.sort()
    firsts.sort()
    return {"runs": runs, "open_ms_median": percentile(opens, 50), "open_ms_min": opens[0],
            "open_ms_max": opens[-1], "first_query_ms_median": percentile(firsts, 50)}


# -- shared pages: two processes that open the same index ------------------------------------

# The child opens the index with the engine, then reads one byte of every page of the engine's
# own mappings of the index files (found in /proc/self/maps, read through a numpy view of that
# address range, so no second mapping is made), says "ready" and waits for stdin to close.
_TOUCH_CHILD = """
import ctypes, os, sys
import numpy as np
import engine
d = os.path.realpath(sys.argv[1])
index = engine.AddressIndex.open(d)
index.suggest_json("damrak 1 amsterdam", limit=5)
maps = pages = 0
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and os.path.dirname(parts[5].strip()) == d:
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            view = np.frombuffer((ctypes.c_uint8 * (hi - lo)).from_address(lo), dtype=np.uint8)
            view[::4096].sum()
            maps += 1
            pages += (hi - lo + 4095) // 4096
print("ready", maps, pages, flush=True)
sys.stdin.read()
"""


def smaps(pid: int, index_dir: str | os.PathLike) -> dict:
    """kB of Rss / Pss of the whole process (smaps_rollup) and of its mappings of index files
    (and how much of those in 2 MiB pages: FilePmdMapped)."""
    d = os.path.realpath(index_dir)
    total = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss"):
                total[key] = int(rest.split()[0])
    idx = {"Rss": 0, "Pss": 0, "Shared_Clean": 0, "Private_Clean": 0, "FilePmdMapped": 0, "maps": 0}
    inside = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(maxsplit=5)
            if head and "-" in head[0] and ":" not in head[0]:  # a mapping header line
                inside = len(head) == 6 and os.path.dirname(head[5].strip()) == d
                idx["maps"] += inside
            elif inside:
                key, _, rest = line.partition(":")
                if key in idx:
                    idx[key] += int(rest.split()[0])
    return {"total_rss_kb": total["Rss"], "total_pss_kb": total["Pss"],
            "index_rss_kb": idx["Rss"], "index_pss_kb": idx["Pss"],
            "index_shared_kb": idx["Shared_Clean"], "index_private_kb": idx["Private_Clean"],
            "index_pmd_kb": idx["FilePmdMapped"], "index_maps": idx["maps"]}


def shared_pages(index_dir: str | os.PathLike) -> dict:
    """Start child A (open + touch every page), measure it alone; start child B likewise and
    measure both. Sharing shows as each child's index Pss ~ Rss / 2 once both are up (lower
    still if this process or others have touched the same pages)."""
    def start():
        p = subprocess.Popen([sys.executable, "-c", _TOUCH_CHILD, str(index_dir)], cwd=REPO,
                             env=_child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline().split()
        if not line or line[0] != "ready":
            p.kill()
            _, err = p.communicate()
            raise RuntimeError(f"the page-touching child failed:\n{err}")
        return p, int(line[1]), int(line[2])

    procs = []
    try:
        a, maps, pages = start()
        procs.append(a)
        alone = smaps(a.pid, index_dir)
        b, _, _ = start()
        procs.append(b)
        both = [smaps(a.pid, index_dir), smaps(b.pid, index_dir)]
    finally:
        for p in procs:
            p.stdin.close()
        for p in procs:
            p.wait(timeout=30)
            p.stdout.close()
            p.stderr.close()
    return {"touched_maps": maps, "touched_pages": pages, "alone": alone, "a": both[0],
            "b": both[1]}
