"""Read py-spy's collapsed stacks (``run.py --profile DIR``) and say where a worker's time goes.

    python benchmarks/http/profile_summary.py DIR/sqlite-limit5-0.txt [--top 25]

Prints the share of samples inclusive of each part of the request path (our resource with
the engine, the key check, the limiter, parameters, metrics, Falcon, uvicorn's protocol) and
the lines with the most samples of their own (the rest is the event loop: uvloop's C code,
socket reads and writes, and waiting).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter

#: part -> a pattern of the frames that make a sample count for it (py-spy writes a frame as
#: ``Class.function (path:line)``); the engine is compiled, so its time shows as the samples
#: of the line of ``Address.respond`` that calls it
PARTS = {
    "server: Address.respond and below (engine included)": r"^Address\.respond \(",
    "server: key check (authenticate)": r"^Authenticator\.authenticate \(",
    "server: limiter (throttle, charge)": r"^Authenticator\.(throttle|charge) \(",
    "server: parse_query": r"^parse_query \(",
    "server: Finish (metrics, CORS headers)": r"^Finish\.__call__ \(",
    "server: metrics flush (thread)": r"^Metrics\.flush \(",
    "falcon: App.__call__ and below": r"^App\.__call__ \(.*falcon/",
    "uvicorn protocol and below": r"^(HttpToolsProtocol|LimitedProtocol|_DrainingProtocol|RequestResponseCycle)\.",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    stacks: Counter[tuple[str, ...]] = Counter()
    for name in args.files:
        for line in open(name, encoding="utf-8"):
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks[tuple(stack.split(";"))] += int(count)
    total = sum(stacks.values())
    if not total:
        print("no samples")
        return 1
    own: Counter[str] = Counter()
    for frames, n in stacks.items():
        own[frames[-1]] += n
    print(f"{total} samples")
    print("share of samples in (inclusive):")
    for part, pattern in PARTS.items():
        rx = re.compile(pattern)
        n = sum(c for frames, c in stacks.items() if any(rx.search(f) for f in frames))
        print(f"{n / total:6.1%}  {part}")
    print(f"\nfunctions with the most samples of their own (top {args.top})")
    for frame, n in own.most_common(args.top):
        print(f"{n / total:6.1%}  {frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
