"""Fuzz the engine: crashes, exceptions and the slowest queries (issue 11).

    python benchmarks/fuzz.py INDEX [--queries 1000000] [--seed 11] [--top 20]

Runs a mix of queries against ``engine.AddressIndex.suggest_json`` at limits 1, 5 and 10:

- random: characters drawn from letters, digits, spaces, punctuation and other scripts, of
  every length up to the contract's 128 code points;
- slipped: long real words (of the public queries), each with one or two slips, several
  different ones in one query: the most slip look-ups a query can ask for;
- mutated real: queries of ``../shared/eval/queries-public.jsonl`` with characters inserted,
  removed or replaced, words repeated, cut, swapped, and one-letter words and numbers added;
- climbing: mutations of the slowest queries found so far, kept when slower, so the search
  walks towards the worst case (``d b br br 1 o b b 9288 b br`` was found this way).

``--climb SECONDS`` runs a hill climb alone instead, at one limit (``--limit``), of the search
alone or with the highlights of its hits as ``highlight=true`` computes them (``--highlight``):
from ``--start`` (by default the slowest query of issue 37's 4-minute climb), each round mutates
the slowest queries found so far word by word (a word replaced by a short one, a word of the
query, a number or an edit of itself; a word inserted or deleted; a character changed), times
each child (best of 3) and keeps the slowest 20; at the end the slowest are timed again (best of
20) and printed::

    python benchmarks/fuzz.py INDEX --climb 300 --limit 10 [--highlight] [--seed 37]

The engine runs in a child process: a crash (a signal) is reported with the query that caused
it, found by running the batch again one query at a time, and the fuzzing goes on. A
``QueryError`` is a refusal (expected for some input); any other exception is a defect. At
the end the slowest queries are timed again (best of 20 runs each) and printed.
"""

from __future__ import annotations

import argparse
import heapq
import json
import multiprocessing as mp
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PUBLIC = REPO.parent / "shared" / "eval" / "queries-public.jsonl"
LIMITS = (1, 5, 10)
BATCH = 2000
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyz" * 4 + "0123456789" * 3 + " " * 12 + "-.,'/&()#" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    + "éëèïöüâçñ" + "ĳß" + "αβγдж中文" + "\u200b\u00a0\t" + "😀"
)
SHORT_WORDS = ["d", "b", "br", "o", "a", "s", "de", "van", "1", "2", "12", "9288", "1e", "st", "v", "n", "h"]


ISSUE_37 = ("van van v vany van 1 van van van van van van van vayn van van vayn vany van v van van van 9288 van "
            "van van van van van")


def _child(conn, index_dir: str, highlight: bool = False) -> None:
    """Answer batches of (q, limit) with (seconds, error or None) per query; with `highlight`,
    the seconds include the highlights of every hit (what the service adds for highlight=true:
    server.resources `Address._highlighted`)."""
    import orjson

    import engine
    from engine.explain import aliases_from_manifest, highlights

    index = engine.AddressIndex.open(index_dir)
    index.warm()
    aliases = aliases_from_manifest(index.manifest)
    perf = time.perf_counter
    while True:
        batch = conn.recv()
        if batch is None:
            return
        out = []
        for q, limit in batch:
            start = perf()
            try:
                body = index.suggest_json(q, limit=limit)
                if highlight:
                    for hit in orjson.loads(body)["hits"]:
                        highlights(q, hit, aliases=aliases)
                error = None
            except engine.QueryError:
                error = "refused"
            except Exception as exc:  # a defect: reported with the query
                error = f"{type(exc).__name__}: {exc}"
            out.append((perf() - start, error))
        conn.send(out)


class Engine:
    """The child process; restarted after a crash."""

    def __init__(self, index_dir: str, highlight: bool = False) -> None:
        self.index_dir = index_dir
        self.highlight = highlight
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child_conn = ctx.Pipe()
        self.proc = ctx.Process(target=_child, args=(child_conn, self.index_dir, self.highlight), daemon=True)
        self.proc.start()

    def run(self, batch: list[tuple[str, int]]) -> list[tuple[float, str | None]] | None:
        """The results, or None if the child died on this batch (it is restarted)."""
        try:
            self.conn.send(batch)
            return self.conn.recv()
        except (EOFError, ConnectionError, BrokenPipeError):
            self.proc.join(5)
            self._start()
            return None

    def close(self) -> None:
        try:
            self.conn.send(None)
        except (BrokenPipeError, ConnectionError):
            pass
        self.proc.join(10)


def random_query(rng: random.Random) -> str:
    n = rng.choice((1, 2, 3, 5, 8, 13, 20, 40, 80, 128))
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, n)))


def slipped_words(words: list[str], rng: random.Random) -> str:
    """Long real words, each with one or two slips, several different ones in one query: the
    most slip look-ups a query can ask for (each word is looked up once per query)."""
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < rng.choice((40, 80, 128)):
        w = rng.choice(words)
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(1, len(w) - 1)
            w = w[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz") + w[i + rng.randint(0, 1):]
        out.append(w)
        if rng.random() < 0.3:
            out.append(rng.choice(SHORT_WORDS))
    return " ".join(out)[:128]


def mutate(q: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        words = q.split()
        kind = rng.randrange(9)
        if kind == 0 and q:  # replace a character
            i = rng.randrange(len(q))
            q = q[:i] + rng.choice(ALPHABET) + q[i + 1 :]
        elif kind == 1:  # insert one
            i = rng.randint(0, len(q))
            q = q[:i] + rng.choice(ALPHABET) + q[i:]
        elif kind == 2 and q:  # remove one
            i = rng.randrange(len(q))
            q = q[:i] + q[i + 1 :]
        elif kind == 3 and words:  # repeat a word
            words.insert(rng.randint(0, len(words)), rng.choice(words))
            q = " ".join(words)
        elif kind == 4 and len(words) > 1:  # swap two words
            i, j = rng.randrange(len(words)), rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
            q = " ".join(words)
        elif kind == 5 and words:  # cut a word to its start
            i = rng.randrange(len(words))
            words[i] = words[i][: rng.randint(1, max(1, len(words[i])))]
            q = " ".join(words)
        elif kind == 6:  # a short word or number somewhere
            words.insert(rng.randint(0, len(words)), rng.choice(SHORT_WORDS))
            q = " ".join(words)
        elif kind == 7 and len(words) > 1:  # drop a word
            del words[rng.randrange(len(words))]
            q = " ".join(words)
        else:  # a random number
            words.insert(rng.randint(0, len(words)), str(rng.choice((rng.randint(1, 99), rng.randint(1000, 9999)))))
            q = " ".join(words)
    return q[:128]


def climb_word(words: list[str], rng: random.Random) -> str:
    """A word for the climb to put somewhere: a short one, one of the query, a number, or an
    edit of one of the query's (a letter inserted, removed or changed)."""
    kind = rng.randrange(4)
    if kind == 0 or not words:
        return rng.choice(SHORT_WORDS)
    if kind == 1:
        return rng.choice(words)
    if kind == 2:
        return str(rng.choice((rng.randint(1, 99), rng.randint(100, 999), rng.randint(1000, 9999))))
    w = rng.choice(words)
    i = rng.randint(0, len(w))
    c = rng.choice("abcdefghijklmnopqrstuvwxyz0123456789")
    return rng.choice((w[:i] + c + w[i:], w[:i] + w[i + 1:] or c, w[:i] + c + w[i + 1:]))


def climb_mutate(q: str, rng: random.Random) -> str:
    """One to three word-level changes of q: a word replaced, inserted or deleted, two words
    swapped, or a character changed; at most 128 code points."""
    for _ in range(rng.randint(1, 3)):
        words = q.split()
        kind = rng.randrange(5)
        if kind == 0 and words:
            words[rng.randrange(len(words))] = climb_word(words, rng)
        elif kind == 1:
            words.insert(rng.randint(0, len(words)), climb_word(words, rng))
        elif kind == 2 and len(words) > 1:
            del words[rng.randrange(len(words))]
        elif kind == 3 and len(words) > 1:
            i, j = rng.randrange(len(words)), rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        else:
            q = mutate(q, rng)
            continue
        q = " ".join(words)
    while len(q) > 128:  # drop words until it fits
        words = q.split()
        del words[rng.randrange(len(words))]
        q = " ".join(words)
    return q


def climb(args: argparse.Namespace) -> int:
    """The hill climb of ``--climb`` (see the module's docstring)."""
    rng = random.Random(args.seed)
    eng = Engine(args.index, highlight=args.highlight)
    limit = args.limit

    def timed(queries: list[str]) -> list[float]:
        """Best of 3 per query (a crash counts as infinitely slow and is reported)."""
        results = eng.run([(q, limit) for q in queries for _ in range(3)])
        if results is None:
            for q in queries:
                if eng.run([(q, limit)]) is None:
                    print(f"CRASH: {q!r} limit {limit}", flush=True)
            return [0.0] * len(queries)
        return [min(r[0] for r in results[3 * k:3 * k + 3]) for k in range(len(queries))]

    pool: list[tuple[float, str]] = [(timed([args.start])[0], args.start)]
    seen = {args.start}
    tried = 0
    t0 = time.perf_counter()
    next_report = 30.0
    while time.perf_counter() - t0 < args.climb:
        children = []
        for _ in range(50):
            child = climb_mutate(rng.choice(pool)[1], rng)
            if child and child not in seen:
                seen.add(child)
                children.append(child)
        tried += len(children)
        for seconds, q in zip(timed(children), children, strict=True):
            if len(pool) < 20:
                heapq.heappush(pool, (seconds, q))
            elif seconds > pool[0][0]:
                heapq.heapreplace(pool, (seconds, q))
        if time.perf_counter() - t0 >= next_report:
            worst = max(pool)
            print(f"{time.perf_counter() - t0:5.0f} s, {tried:,} queries; slowest {worst[0] * 1e3:.3f} ms "
                  f"{worst[1]!r}", flush=True)
            next_report += 30.0
    retimed = []
    for _, q in pool:
        best = min(r[0] for r in eng.run([(q, limit)] * 20))
        retimed.append((best, q))
    retimed.sort(reverse=True)
    eng.close()
    what = "search and highlights" if args.highlight else "search"
    print(f"\nclimb of {args.climb:.0f} s from {args.start!r}, limit {limit}, {what}: {tried:,} queries; "
          f"slowest (best of 20 runs each):")
    for seconds, q in retimed[: args.top]:
        print(f"  {seconds * 1e3:7.3f} ms  {q!r}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("index")
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--public", default=str(PUBLIC))
    ap.add_argument("--climb", type=float, metavar="SECONDS", help="run a hill climb alone for this long")
    ap.add_argument("--start", default=ISSUE_37, help="the climb's first query (default: issue 37's)")
    ap.add_argument("--limit", type=int, default=10, choices=LIMITS, help="the climb's limit")
    ap.add_argument("--highlight", action="store_true", help="time the highlights of the hits too")
    args = ap.parse_args(argv)
    if args.climb is not None:
        return climb(args)

    rng = random.Random(args.seed)
    real = [json.loads(line)["q"] for line in open(args.public, encoding="utf-8")]
    seeds = ["d b br br 1 o b b 9288 b br", "a b c d e f g h i j", "s", "de ha", "van der k 1",
             "noensstjaat 95 oensstraat 29 oensstraat 320 3248 amsterda oensstraat"]
    long_words = sorted({w for q in real for w in q.lower().split() if len(w) >= 9 and w.isalpha()})
    eng = Engine(args.index)
    slow: list[tuple[float, str, int]] = []  # a heap of the slowest (seconds, q, limit)
    kinds = {"random": 0, "slipped": 0, "mutated": 0, "climbing": 0}
    refused = 0
    exceptions: dict[str, str] = {}
    crashes: list[tuple[str, int]] = []
    done = 0
    t0 = time.perf_counter()
    while done < args.queries:
        batch = []
        for _ in range(min(BATCH, args.queries - done)):
            r = rng.random()
            if r < 0.25:
                q, kind = random_query(rng), "random"
            elif r < 0.35:
                q, kind = slipped_words(long_words, rng), "slipped"
            elif r < 0.65 or len(slow) < 10:
                q, kind = mutate(rng.choice(real) if rng.random() < 0.9 else rng.choice(seeds), rng), "mutated"
            else:  # climb from one of the slowest so far
                q, kind = mutate(rng.choice(slow)[1], rng), "climbing"
            kinds[kind] += 1
            batch.append((q, rng.choice(LIMITS)))
        results = eng.run(batch)
        if results is None:  # a crash: find the query, one at a time
            results = []
            for item in batch:
                one = eng.run([item])
                if one is None:
                    crashes.append(item)
                    one = [(0.0, "crash")]
                results += one
        for (q, limit), (seconds, error) in zip(batch, results, strict=True):
            if error == "refused":
                refused += 1
            elif error is not None and error != "crash":
                exceptions.setdefault(error, q)
            entry = (seconds, q, limit)
            if len(slow) < 200:
                heapq.heappush(slow, entry)
            elif seconds > slow[0][0]:
                heapq.heapreplace(slow, entry)
        done += len(batch)
        if done % 100_000 < BATCH:
            worst = max(slow)
            print(f"{done:>9,} queries, {time.perf_counter() - t0:6.0f} s; slowest so far "
                  f"{worst[0] * 1e3:.2f} ms ({worst[1]!r}, limit {worst[2]})", flush=True)
    # time the slowest again, best of 20, so that a pause of the machine is not counted
    candidates = sorted({(q, limit) for _, q, limit in slow})
    retimed = []
    for q, limit in candidates:
        best = min(eng.run([(q, limit)] * 20), key=lambda r: r[0])[0]
        retimed.append((best, q, limit))
    retimed.sort(reverse=True)
    eng.close()
    print(f"\n{done:,} queries in {time.perf_counter() - t0:.0f} s: {kinds['random']:,} random, "
          f"{kinds['slipped']:,} slipped, {kinds['mutated']:,} mutated, {kinds['climbing']:,} climbing; "
          f"{refused:,} refused (QueryError)")
    print(f"crashes: {len(crashes)}" + "".join(f"\n  {q!r} limit {limit}" for q, limit in crashes))
    print(f"other exceptions: {len(exceptions)}" + "".join(f"\n  {e}: {q!r}" for e, q in exceptions.items()))
    print(f"slowest {args.top} (best of 20 runs each):")
    for seconds, q, limit in retimed[: args.top]:
        print(f"  {seconds * 1e3:7.3f} ms  limit {limit:>2}  {q!r}")
    return 1 if crashes or exceptions else 0


if __name__ == "__main__":
    sys.exit(main())
