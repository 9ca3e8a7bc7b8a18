"""How well can any engine do? The ceilings the register itself sets on the public query set.

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

The keystroke figure has a ceiling of the same kind. The targets are drawn evenly from the
register (their numbers, letters and additions are spread as the register's are), so after a
typed prefix p every address whose own text in that form starts with p is as likely as the
target; call their number |C(p)|. No list of 5 holds the target at p with a probability above
h(p) = min(1, 5 / |C(p)|). This reports, per typing form, the expected share of characters
typed before the target shows (the evaluator's `keystrokes`):

- for any ranking at all, even one that shows other addresses at every keystroke: the union
  bound P(shown by prefix i) <= sum of h over the checked prefixes up to i gives a floor;
- for a ranking in a fixed order (one that, like the contract's lowest-number-first, shows the
  same address for every prefix that still matches it): the sets C(p) shrink as p grows, so
  P(shown by prefix i) = h(prefix i) exactly.

With `--engine`, the engine's own figures on the same queries are printed beside them.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(REPO))

from benchlib import hit_key, postcode_text, prefixes  # noqa: E402

from engine.ingest.source import read_source  # noqa: E402
from engine.normalize import FOLD_LIMIT, fold, fold_table  # noqa: E402

KS = (1, 5, 10)
_FOLD = fold_table()
TYPING_LIMIT = 5  # the evaluator's keystroke simulation asks with limit 5


def _postcode_code(p: str) -> int:
    p = p.replace(" ", "").upper()
    return int(p[:4]) * 676 + (ord(p[4]) - 65) * 26 + (ord(p[5]) - 65)


def expected(n: int) -> dict[str, float]:
    """Figures of a ranking that puts the target at a uniformly random one of n tied places."""
    out = {f"s@{k}": min(1.0, k / n) for k in KS}
    out["mrr"] = sum(1.0 / r for r in range(1, min(n, 10) + 1)) / n
    return out


def _compact(text: str) -> str:
    """`text` folded as the engine folds each character (case, diacritics, punctuation), with no
    spaces: what a typed prefix is compared on. `ij` stays two letters here (the engine reads it
    as `y`), so that a prefix ending in the `i` of `ij` still starts the words it starts."""
    return "".join(_FOLD[ord(c)] if ord(c) < FOLD_LIMIT else " " for c in text).replace(" ", "")


def rendered_texts(t) -> dict[str, list[str]]:
    """Each address once, written in each typing form, folded and sorted (for prefix counts)."""
    key = np.rec.fromarrays([t.postcode, t.number, t.letter, t.addition])
    _, first = np.unique(key, return_index=True)
    streets = [_compact(x) for x in t.streets]
    places = [_compact(x) for x in t.localities]
    additions = [_compact(x) for x in t.additions]
    out = {"street_number": [], "street_number_city": [], "postcode_number": []}
    for i in first.tolist():
        pc = t.postcode[i]
        letter = chr(t.letter[i]).lower() if t.letter[i] else ""
        tail = f"{t.number[i]}{letter}{additions[t.addition[i]]}"
        street = streets[t.street[i]] + tail
        out["street_number"].append(street)
        out["street_number_city"].append(street + places[t.locality[i]])
        out["postcode_number"].append(postcode_text(pc).lower() + tail)
    for texts in out.values():
        texts.sort()
    return out


def keystroke_ceiling(q: str, texts: list[str]) -> tuple[float, float]:
    """(floor for any ranking, expectation for a fixed-order ranking) of typed/len(q) for `q`."""
    union = best = 0.0
    floor = fixed = 0.0
    for i in range(1, len(q) + 1):
        # P(first shown at a prefix >= i) against what the prefixes before i can have shown
        floor += max(0.0, 1.0 - union)
        fixed += 1.0 - best
        if q[i - 1] != " ":  # the evaluator checks no prefix that ends in a space
            p = _compact(q[:i])
            n = bisect.bisect_left(texts, p + "\x7f") - bisect.bisect_left(texts, p)
            h = min(1.0, TYPING_LIMIT / n) if n else 0.0
            union += h
            best = max(best, h)
    return floor / len(q), fixed / len(q)


def engine_keystrokes(index, q: str, target: tuple) -> float:
    """typed/len(q) as the evaluator counts it for the engine: the first prefix showing `target`."""
    for p in [*prefixes(q), q]:
        if _rank(index, p, TYPING_LIMIT, target):
            return len(p) / len(q)
    return 1.0


def _target(r: dict) -> tuple:
    tg = r["target"]
    return (tg["postcode"].replace(" ", "").upper(), int(tg["number"]), (tg.get("letter") or "").upper(),
            (tg.get("addition") or "").upper())


def _rank(index, q: str, limit: int, target: tuple) -> int | None:
    for pos, h in enumerate([h.to_dict() for h in index.suggest(q, limit=limit)], 1):
        if hit_key(h) == target:
            return pos
    return None


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
    for name in ("s@5", "s@10", "mrr"):
        best = (others + totals[name]) / len(rows)
        print(f"  best ALL {name} with every other form perfect: {best:.4f}")
    print(f"size of place as a prior: target in the biggest candidate place {biggest / ambiguous:.3f}, "
          f"in the smallest {smallest / ambiguous:.3f}, chance {chance / ambiguous:.3f}")

    index = None
    if args.engine:
        import engine
        index = engine.AddressIndex.open(args.engine)
        got = collections.Counter()
        for r in queries:
            # success@k with limit k; the limit-10 rank is a close stand-in when spreading
            # does not reorder exact ties (it does not here: they are different places)
            rank = _rank(index, r["q"], 10, _target(r))
            got["mrr"] += 1 / rank if rank else 0
            for k in KS:
                got[f"s@{k}"] += rank is not None and rank <= k
        print("the engine (limit 10 ranks):")
        print("  " + "  ".join(f"{name} {got[name] / len(queries):.3f}" for name in ("s@1", "s@5", "s@10", "mrr")))

    # the bound assumes targets drawn evenly from the register: compare how both are spread
    targets = {_target(r) for r in rows}
    tnum = np.array([k[1] for k in targets])
    shares = [("letter", np.mean([bool(k[2]) for k in targets]), np.mean(t.letter != 0)),
              ("addition", np.mean([bool(k[3]) for k in targets]), np.mean(t.addition != 0)),
              ("number < 10", np.mean(tnum < 10), np.mean(t.number < 10)),
              ("number >= 100", np.mean(tnum >= 100), np.mean(t.number >= 100))]
    print(f"the {len(targets)} targets against the register's {len(t)} rows (share with):")
    print("  " + "  ".join(f"{name} {a:.3f} / {b:.3f}" for name, a, b in shares))

    texts = rendered_texts(t)
    typing = [r for r in rows if r.get("typing")]
    per_form = collections.defaultdict(collections.Counter)
    for r in typing:
        if r["form"] not in texts:
            print(f"  (no rendering for typing form {r['form']!r}; left out)")
            continue
        c = per_form[r["form"]]
        floor, fixed = keystroke_ceiling(r["q"], texts[r["form"]])
        c["n"] += 1
        c["floor"] += floor
        c["fixed"] += fixed
        if index is not None:
            c["engine"] += engine_keystrokes(index, r["q"], _target(r))
    per_form["ALL"] = sum(per_form.values(), collections.Counter())
    print(f"keystrokes (share of the query typed before the target shows at limit {TYPING_LIMIT}; lower is better):")
    print(f"  {'form':20} {'n':>5} {'any ranking >=':>15} {'fixed order':>12}" + (f" {'engine':>7}" if index else ""))
    for form, c in per_form.items():
        line = f"  {form:20} {c['n']:5d} {c['floor'] / c['n']:15.3f} {c['fixed'] / c['n']:12.3f}"
        print(line + (f" {c['engine'] / c['n']:7.3f}" if index else ""))

if __name__ == "__main__":
    main()
