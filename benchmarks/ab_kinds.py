"""Two engine builds against each other, by kind of input, in one process.

    python benchmarks/ab_kinds.py TREE_A INDEX_A TREE_B INDEX_B [--kinds clean,garbage]
                                  [--limit 5] [--repeats 6] [--n 1000] [--seed 1]

TREE_A and TREE_B are source trees with the engine built in place (`python setup.py build_ext
--inplace`); each index must be of its own engine's format (a change of format compares the
old engine on the old index with the new one on the new). Both engines are loaded into this
process (each a copy of its `engine` package under another name), and the passes over each
kind's queries (`input_kinds.py`'s kinds) alternate between them, A then B, then B then A; per
query each keeps the least of its `--repeats` times, cold-ish as in `input_kinds.py` (a pass
goes through all the kind's queries before one comes again). A machine that slows down or
speeds up during the run slows both alike: where two runs of `input_kinds.py` a few minutes
apart differ by 10-30 % on this shared machine, the ratios here hold to a few per cent.

Prints per kind the median, p99, max and mean of each build (µs) and the ratios B / A, then how
each index is mapped: how much of it in 2 MiB pages (engine/__init__.py, ``_HUGEPAGE``). The
same tree on two copies of one index measures the page size alone: a copy made with ``cp -r``
sits in the page cache in small pages, an index just built (or passed through ``python -m server
switch-index``) is read in 2 MiB ones.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_engine(tree: Path, name: str, into: Path):
    """Import the engine built in place in `tree` as package `name` (a copy in `into`)."""
    src = tree / "engine"
    if not any(src.glob("_core.*.so")) and not any(src.glob("_core.*.pyd")):
        raise SystemExit(f"{tree}: no engine built in place (python setup.py build_ext --inplace)")
    shutil.copytree(src, into / name, ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    # a compiled module also enters sys.modules under the name it was compiled as
    # (`engine._core`): put back what `engine.*` was, so that a later `import engine` (the
    # query generators') loads this repository's engine, not this copy's parts
    before = {k: m for k, m in sys.modules.items() if k == "engine" or k.startswith("engine.")}
    module = importlib.import_module(name)
    for k in [k for k in sys.modules if (k == "engine" or k.startswith("engine.")) and k not in before]:
        del sys.modules[k]
    sys.modules.update(before)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree_a")
    ap.add_argument("index_a")
    ap.add_argument("tree_b")
    ap.add_argument("index_b")
    ap.add_argument("--source", default=str(HERE.parent.parent / "shared" / "data" / "nl-addresses.csv.zst"))
    ap.add_argument("--kinds", default="clean,street_two_slips,garbage",
                    help="comma-separated kinds of input_kinds.py")
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--n", type=int, default=1000, help="addresses per messy form, garbage per generator")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    from benchlib import mapped_pages, percentile
    from input_kinds import kinds, least_times

    with tempfile.TemporaryDirectory(prefix="ab-kinds-") as tmp:
        sys.path.insert(0, tmp)
        engine_a = load_engine(Path(args.tree_a).resolve(), "engine_a", Path(tmp))
        engine_b = load_engine(Path(args.tree_b).resolve(), "engine_b", Path(tmp))
        index = {"A": engine_a.AddressIndex.open(args.index_a), "B": engine_b.AddressIndex.open(args.index_b)}
        by_kind = kinds(args.source, args.seed, args.n)
        wanted = args.kinds.split(",")
        unknown = [k for k in wanted if k not in by_kind]
        if unknown:
            print(f"unknown kinds {unknown}; there are {sorted(by_kind)}", file=sys.stderr)
            return 2
        print(f"A: {args.tree_a} on {args.index_a}\nB: {args.tree_b} on {args.index_b}\n"
              f"limit {args.limit}, least of {args.repeats} per query, µs")
        print(f"{'kind':22} {'n':>5}  {'median A':>8} {'B':>6} {'B/A':>5}  {'p99 A':>7} {'B':>7} {'B/A':>5}  "
              f"{'max A':>6} {'B':>6}  {'mean A':>6} {'B':>6}")
        for kind in wanted:
            queries = by_kind[kind]
            best = {"A": [1 << 62] * len(queries), "B": [1 << 62] * len(queries)}
            for r in range(args.repeats):
                for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
                    best[name] = list(map(min, best[name], least_times(index[name], [(queries, args.limit)], 1)[0]))
            fig = {}
            for name in ("A", "B"):
                s = sorted(best[name])
                fig[name] = (percentile(s, 50) / 1e3, percentile(s, 99) / 1e3, s[-1] / 1e3,
                             statistics.fmean(s) / 1e3)
            (ma, pa, xa, mna), (mb, pb, xb, mnb) = fig["A"], fig["B"]
            print(f"{kind:22} {len(queries):5d}  {ma:8.1f} {mb:6.1f} {mb / ma:5.2f}  {pa:7.1f} {pb:7.1f} "
                  f"{pb / pa:5.2f}  {xa:6.0f} {xb:6.0f}  {mna:6.1f} {mnb:6.1f}")
        same = index["A"].path == index["B"].path  # one index: its maps are counted together
        for name, x in index.items():
            if not same or name == "B":
                print(f"{'A and B' if same else name}: {mapped_pages(x.path)}")
            x.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
