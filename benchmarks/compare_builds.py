"""Do two builds of the engine give the same answers? Dump one build's bodies, then compare.

    python benchmarks/compare_builds.py dump INDEX_DIR OUT [--engine-root DIR] [--seeds 1 2]
    python benchmarks/compare_builds.py compare A B

`dump` writes the `suggest_json` body of every query below, one line each (the query as JSON,
the limit, the focus point if any, the body), in a fixed order:

* the public eval queries (../shared/eval/queries-public.jsonl) and every typing prefix of
  each (its first 1, 2, ... characters), at limits 1, 5 and 10;
* the same whole queries at limit 5 with a focus point (two fixed points);
* the synthetic sets of `benchmarks/synthetic_quality.py` for each seed, at limits 1, 5, 10.

`--engine-root` is a source tree whose `engine` package is built in place (`python setup.py
build_ext --inplace`); without it, the repository holding this script. `compare` says whether
two dumps are byte for byte the same and, if not, prints the first differing queries; its exit
status is 0 only when they are. A refactoring of the engine must leave the dump unchanged:

    git archive BEFORE | tar -x -C /tmp/before && (cd /tmp/before && python setup.py -q build_ext --inplace)
    python benchmarks/compare_builds.py dump /work/idx/nl /tmp/before.dump --engine-root /tmp/before
    python benchmarks/compare_builds.py dump /work/idx/nl /tmp/after.dump
    python benchmarks/compare_builds.py compare /tmp/before.dump /tmp/after.dump
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LIMITS = (1, 5, 10)
FOCUS = ((52.3731, 4.8925), (53.2194, 6.5665))   # Amsterdam, Groningen


def _public_queries(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["q"] for line in f if line.strip()]


def _with_prefixes(queries: list[str]) -> list[str]:
    """Every query and each of its typing prefixes, once, in first-seen order."""
    seen: dict[str, None] = {}
    for q in queries:
        for k in range(1, len(q) + 1):
            seen.setdefault(q[:k], None)
    return list(seen)


def dump(args: argparse.Namespace) -> int:
    root = Path(args.engine_root).resolve() if args.engine_root else REPO
    sys.path.insert(0, str(root))
    import engine  # the build under test, before synthetic_quality puts this repository first

    if Path(engine.__file__).resolve().parent != root / "engine":
        print(f"engine imported from {engine.__file__}, not {root}", file=sys.stderr)
        return 2
    sys.path.insert(1, str(HERE))
    from synthetic_quality import synthetic_queries

    from engine.ingest.source import read_source

    index = engine.AddressIndex.open(args.index)
    public = _public_queries(Path(args.queries))
    t0 = time.perf_counter()
    digest = hashlib.sha256()
    n = 0
    with open(args.out, "wb") as out:
        def put(q: str, limit: int, lat: float | None = None, lon: float | None = None) -> None:
            nonlocal n
            body = index.suggest_json(q, limit=limit, lat=lat, lon=lon)
            focus = "" if lat is None else f"{lat},{lon}"
            line = b"%s\t%d\t%s\t%s\n" % (json.dumps(q).encode(), limit, focus.encode(), body)
            out.write(line)
            digest.update(line)
            n += 1

        for q in _with_prefixes(public):
            for limit in LIMITS:
                put(q, limit)
        for lat, lon in FOCUS:
            for q in public:
                put(q, 5, lat, lon)
        if args.seeds:
            t = read_source(args.source, progress=False)
            for seed in args.seeds:
                for _target, forms in synthetic_queries(t, seed, args.n):
                    for q in forms.values():
                        for limit in LIMITS:
                            put(q, limit)
    print(f"{n} bodies from {engine.__file__} in {time.perf_counter() - t0:.0f} s; "
          f"sha256 {digest.hexdigest()}")
    return 0


def _lines(path: str):
    with open(path, "rb") as f:
        yield from f


def compare(args: argparse.Namespace) -> int:
    shown = total = 0
    for k, (a, b) in enumerate(zip(_lines(args.a), _lines(args.b), strict=False)):
        total += 1
        if a != b:
            shown += 1
            if shown <= args.show:
                print(f"line {k + 1}:\n  {a.decode()[:400]!s}\n  {b.decode()[:400]!s}")
    size_a, size_b = Path(args.a).stat().st_size, Path(args.b).stat().st_size
    if shown == 0 and size_a == size_b:
        print(f"identical: {total} bodies, {size_a} bytes")
        return 0
    print(f"different: {shown} of {total} lines differ; {size_a} vs {size_b} bytes")
    return 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write one build's bodies")
    d.add_argument("index")
    d.add_argument("out")
    d.add_argument("--engine-root", help="a source tree with the engine built in place")
    d.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "queries-public.jsonl"))
    d.add_argument("--source", default=str(REPO.parent / "shared" / "data" / "nl-addresses.csv.zst"))
    d.add_argument("--seeds", type=int, nargs="*", default=[1, 2])
    d.add_argument("--n", type=int, default=1500, help="addresses per synthetic set")
    c = sub.add_parser("compare", help="are two dumps the same, byte for byte?")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--show", type=int, default=5, help="differing lines to print")
    args = ap.parse_args()
    return dump(args) if args.command == "dump" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
