"""Print the speed figures of the engine on an index as one compact table (for closing notes).

    python benchmarks/report.py INDEX_DIR [--open-runs 7] [--gil-repeats 3] [--json OUT.json]

Per `suggest_json` call (perf_counter_ns around each single call, index warm): p50 / p90 / p99
/ max in µs at limit 1, 5 and 10 over every public query plus the typing prefixes of the
evaluator's keystroke simulation, and separately over the `typo` queries and the prefixes alone.
Then the index size on disk, `AddressIndex.open` in fresh processes, the throughput of the same
batch in 1 thread vs 2 threads (the GIL-free path), and the shared-pages check of two processes.
Queries come from $ADDRESS_EVAL_DIR/queries-public.jsonl (default ../shared/eval).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from benchlib import (  # noqa: E402
    LIMITS,
    WorkloadError,
    index_size,
    load_public,
    open_times,
    run_split,
    run_split_control,
    shared_pages,
    summarize_ns,
    time_calls,
    warm,
    workloads,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index_dir")
    ap.add_argument("--open-runs", type=int, default=7)
    ap.add_argument("--gil-repeats", type=int, default=3)
    ap.add_argument("--json", help="also write every figure here")
    args = ap.parse_args()

    import engine

    try:
        rows = load_public()
    except WorkloadError as e:
        sys.exit(f"report: {e}")
    lists = workloads(rows)
    out: dict = {"index": os.path.abspath(args.index_dir), "python": platform.python_version(),
                 "cpus": os.cpu_count(), "load_avg_before": os.getloadavg()}

    # memory first, before this process maps the index, so the children's Pss is theirs alone
    try:
        mem = shared_pages(args.index_dir)
    except RuntimeError as e:
        sys.exit(f"report: {e}")
    out["memory"] = mem
    out["open"] = open_times(args.index_dir, args.open_runs)
    out["size"] = index_size(args.index_dir)

    try:
        index = engine.AddressIndex.open(args.index_dir)
    except engine.IndexOpenError as e:
        sys.exit(f"report: {e}")
    warm(index, lists["all"])

    lat = {}
    for label, limits in (("all", LIMITS), ("typo", LIMITS), ("prefixes", (5,))):
        for limit in limits:
            lat[f"{label}@{limit}"] = summarize_ns(time_calls(index, lists[label], limit))
    out["latency"] = lat

    batch = lists["all"]
    runs: dict[str, list] = {"t1": [], "t2": [], "c1": [], "c2": []}
    for _ in range(args.gil_repeats):  # interleaved, so all see the same machine noise
        runs["t1"].append(run_split(index, batch, 1, 5))
        runs["t2"].append(run_split(index, batch, 2, 5))
        runs["c1"].append(run_split_control(len(batch), 1))
        runs["c2"].append(run_split_control(len(batch), 2))
    med = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    t1, t2 = med["t1"], med["t2"]
    out["gil"] = {"batch": len(batch), "limit": 5, "repeats": args.gil_repeats,
                  "threads_1_s": t1, "threads_2_s": t2, "threads_1_qps": len(batch) / t1,
                  "threads_2_qps": len(batch) / t2, "speedup": t1 / t2,
                  "cpu_per_wall_2_threads": statistics.median(c / w for w, c in runs["t2"]),
                  "gil_bound_control_speedup": med["c1"] / med["c2"]}
    out["load_avg_after"] = os.getloadavg()

    m = index.manifest
    print(f"index {out['index']}: {len(index):,} addresses, format {m.get('format_version')}, "
          f"built {m.get('built_at', '?')}")
    print(f"python {out['python']}, {out['cpus']} cpus, load avg {out['load_avg_before'][0]:.2f} "
          f"before / {out['load_avg_after'][0]:.2f} after")
    print()
    print("suggest_json, µs per call     calls     p50     p90     p99      max    mean")
    names = {"all": "public + prefixes", "typo": "typo queries", "prefixes": "typing prefixes"}
    for key, s in lat.items():
        label, limit = key.split("@")
        print(f"{names[label]:18} limit {int(limit):>2} {s['calls']:7d} {s['p50_us']:7.1f} "
              f"{s['p90_us']:7.1f} {s['p99_us']:7.1f} {s['max_us']:8.1f} {s['mean_us']:7.1f}")
    print()
    size, op, g = out["size"], out["open"], out["gil"]
    print(f"index size       {size['bytes'] / 2**20:.1f} MiB in {size['files']} files "
          f"({size['disk_bytes'] / 2**20:.1f} MiB allocated)")
    print(f"open             median {op['open_ms_median']:.1f} ms (min {op['open_ms_min']:.1f}, "
          f"max {op['open_ms_max']:.1f}) in {op['runs']} fresh processes; first query after "
          f"open {op['first_query_ms_median']:.2f} ms")
    print(f"GIL-free path    {g['batch']} calls at limit 5: 1 thread {g['threads_1_qps']:,.0f}/s "
          f"({g['threads_1_s']:.2f} s), 2 threads {g['threads_2_qps']:,.0f}/s "
          f"({g['threads_2_s']:.2f} s), speed-up {g['speedup']:.2f}x, CPU/wall "
          f"{g['cpu_per_wall_2_threads']:.2f}; GIL-bound control "
          f"{g['gil_bound_control_speedup']:.2f}x (median of {g['repeats']})")
    a, b, alone = mem["a"], mem["b"], mem["alone"]

    def mib(kb):
        return f"{kb / 1024:.0f}"

    print(f"shared pages     index mappings, MiB: child A alone Rss {mib(alone['index_rss_kb'])} "
          f"Pss {mib(alone['index_pss_kb'])}; A+B up: A Rss {mib(a['index_rss_kb'])} "
          f"Pss {mib(a['index_pss_kb'])}, B Rss {mib(b['index_rss_kb'])} "
          f"Pss {mib(b['index_pss_kb'])} (whole processes: A Rss {mib(a['total_rss_kb'])} "
          f"Pss {mib(a['total_pss_kb'])}, B Rss {mib(b['total_rss_kb'])} "
          f"Pss {mib(b['total_pss_kb'])})")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    rc = main()
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    sys.exit(rc)
