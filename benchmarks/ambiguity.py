"""How well can any engine do on `street_number` queries? The ceiling set by the register itself.

    python benchmarks/ambiguity.py [--queries QUERIES.jsonl] [--source CSV] [--engine INDEX_DIR]

A query like `Kerkstraat 12` names a street and a number that exist in many places. Every such
address matches the typed words completely and equally well; the target is one of them. This
counts, for each `street_number` query, the addresses with the same street name (folded: case,
diacritics, punctuation), number, letter and addition, and reports:

- what a ranking that cannot tell them apart scores on average (success@k = min(1, k / n),
  reciprocal rank averaged over the n places the target can take);
- the best the whole query set could then score, if every other form were answered perfectly;
- whether the size of the place is a usable prior: the share of ambiguous queries whose target
  lies in the biggest (or smallest) of its candidate places, against chance.

With `--engine`, the engine's own figures on the same queries are printed beside them.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.normalize import fold  # noqa: E402
from engine.source import read_source  # noqa: E402

KS = (1, 5, 10)


def _postcode_code(p: str) -> int:
    p = p.replace(" ", "").upper()
    return int(p[:4]) * 676 + (ord(p[4]) - 65) * 26 + (ord(p[5]) - 65)


def expected(n: int) -> dict[str, float]:
    """Figures of a ranking that puts the target at a uniformly random one of n tied places."""
    out = {f"s@{k}": min(1.0, k / n) for k in KS}
    out["mrr"] = sum(1.0 / r for r in range(1, min(n, 10) + 1)) / n
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "queries-public.jsonl"))
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data" / "nl-addresses.csv.zst"))
    ap.add_argument("--engine", help="an index directory: also score the engine on these queries")
    args = ap.parse_args()

    rows = [json.loads(line) for line in open(args.queries, encoding="utf-8")]
    forms = collections.Counter(r["form"] for r in rows)
    queries = [r for r in rows if r["form"] == "street_number"]
    t = read_source(args.source, progress=False)
    letter_of = [chr(c).upper() if c else "" for c in range(256)]

    # the register row of each target
    want = {}
    for r in queries:
        tg = r["target"]
        want[(_postcode_code(tg["postcode"]), int(tg["number"]), (tg.get("letter") or "").upper(),
              (tg.get("addition") or "").upper())] = r["id"]
    numbers = {key[1] for key in want}
    rows_with_number = np.nonzero(np.isin(t.number, list(numbers)))[0]
    target_row = {}
    for i in rows_with_number.tolist():
        key = (int(t.postcode[i]), int(t.number[i]), letter_of[t.letter[i]], t.additions[t.addition[i]].upper())
        if key in want:
            target_row[want[key]] = i

    # every address with the same folded street name, number, letter and addition
    folded = {}

    def street_key(i: int):
        s = int(t.street[i])
        if s not in folded:
            folded[s] = fold(t.streets[s])
        return (folded[s], int(t.number[i]), int(t.letter[i]), t.additions[t.addition[i]].upper())

    key_of_query = {qid: street_key(i) for qid, i in target_row.items()}
    wanted_keys = set(key_of_query.values())
    places = collections.defaultdict(list)
    for i in rows_with_number.tolist():
        k = street_key(i)
        if k in wanted_keys:
            places[k].append(int(t.locality[i]))
    loc_size = np.bincount(t.locality)

    totals = collections.Counter()
    biggest = smallest = chance = ambiguous = 0
    for qid, k in key_of_query.items():
        n = len(places[k])
        for name, v in expected(n).items():
            totals[name] += v
        if n >= 2:
            sizes = [loc_size[x] for x in places[k]]
            mine = loc_size[t.locality[target_row[qid]]]
            ambiguous += 1
            biggest += mine == max(sizes)
            smallest += mine == min(sizes)
            chance += 1 / n
    found = len(key_of_query)
    print(f"street_number queries: {len(queries)}, targets found in the register: {found}")
    print(f"ambiguous (the same street name and number in 2+ places): {ambiguous}")
    print("expected figures of any ranking that cannot tell the tied places apart:")
    print("  " + "  ".join(f"{name} {v / found:.3f}" for name, v in totals.items()))
    others = len(rows) - forms["street_number"]
    for name in ("s@5", "mrr"):
        best = (others + totals[name]) / len(rows)
        print(f"  best ALL {name} with every other form perfect: {best:.4f}")
    print(f"size of place as a prior: target in the biggest candidate place {biggest / ambiguous:.3f}, "
          f"in the smallest {smallest / ambiguous:.3f}, chance {chance / ambiguous:.3f}")

    if args.engine:
        import engine
        index = engine.AddressIndex.open(args.engine)
        got = collections.Counter()
        for r in queries:
            tg = r["target"]
            target = (tg["postcode"].replace(" ", "").upper(), int(tg["number"]),
                      (tg.get("letter") or "").upper(), (tg.get("addition") or "").upper())
            hits = index.suggest(r["q"], limit=10)["hits"]
            rank = None
            for pos, h in enumerate(hits, 1):
                c = {x["type"]: x["value"] for x in h["components"]}
                key = (str(c.get("NLD_POSTAL_CODE", "")).replace(" ", ""), int(c["NLD_HOUSE_NUMBER"]),
                       str(c.get("NLD_HOUSE_LETTER", "")).upper(),
                       str(c.get("NLD_HOUSE_NUMBER_ADDITION", "")).upper())
                if key == target:
                    rank = pos
                    break
            got["mrr"] += 1 / rank if rank else 0
            for k in KS:
                # success@k with limit k; the limit-10 rank is a close stand-in when spreading
                # does not reorder exact ties (it does not here: they are different places)
                got[f"s@{k}"] += rank is not None and rank <= k
        print("the engine (limit 10 ranks):")
        print("  " + "  ".join(f"{name} {got[name] / len(queries):.3f}" for name in ("s@1", "s@5", "s@10", "mrr")))


if __name__ == "__main__":
    main()
