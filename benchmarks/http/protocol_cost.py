"""CPU µs per request of the default worker's HTTP protocol (server/protocol.py), without network.

    python benchmarks/http/protocol_cost.py [--compare TREE] [--requests 20000] [--repeat 9]

Feeds ``--requests`` keep-alive requests, one per read as a back end sends them (the head of a
real ``GET /v1/address`` with a key), to ``LimitedProtocol`` on a transport that only counts
what it is given, in front of an ASGI app that answers a fixed body at once; uvloop runs it.
So it measures what the protocol (uvicorn's httptools protocol and our limits on it) costs a
request, the one part of the request path that ``inprocess.py`` leaves out. With ``--compare
TREE`` (another checkout, e.g. ``git archive main | tar -x -C TREE``) it measures that tree's
``server/protocol.py`` too, in turns, in the same process, and prints both medians and their
difference: the machine's load moves both alike. Process CPU time, best and median of the
rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import uvloop
from uvicorn.config import Config
from uvicorn.server import ServerState

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

REQUEST = (
    b"GET /v1/address?country=NLD&q=kerkstraat%201%20amsterdam&limit=5 HTTP/1.1\r\n"
    b"Host: 127.0.0.1:8000\r\nAuthorization: Bearer nlk_0123456789abcdef_"
    + b"x" * 43
    + b"\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"
)
BODY = b'{"hits":[],"limit":5}'


async def app(scope, receive, send) -> None:  # noqa: ANN001
    """A fixed answer, as soon as the request is there (Falcon waits for its first event too)."""
    if scope["type"] != "http":
        return
    await receive()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


class Transport:
    """Takes what the protocol writes; an answer is done when its body has been written."""

    def __init__(self) -> None:
        self.answered = asyncio.Event()
        self.closing = False

    def write(self, data: bytes) -> None:
        if data.endswith(BODY):
            self.answered.set()

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: object = None) -> object:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8000)}.get(name, default)


def protocol_class(tree: Path) -> type:
    """``LimitedProtocol`` of ``tree``'s server/protocol.py (its own module, this tree's imports)."""
    name = f"protocol_{abs(hash(tree))}"
    spec = importlib.util.spec_from_file_location(name, tree / "server" / "protocol.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LimitedProtocol


async def run(cls: type, requests: int) -> float:
    """Process CPU seconds for ``requests`` requests through one connection of ``cls``."""
    config = Config(app=app, http="httptools", ws="none", lifespan="off", log_config=None)
    config.load()
    protocol = cls(config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop())
    transport = Transport()
    protocol.connection_made(transport)
    answered = transport.answered
    started = time.process_time()
    for _ in range(requests):
        protocol.data_received(REQUEST)
        await answered.wait()
        answered.clear()
    spent = time.process_time() - started
    protocol.connection_lost(None)
    return spent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", help="also this checkout's server/protocol.py")
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    classes = {"this tree": protocol_class(REPO)}
    if args.compare:
        classes["compared"] = protocol_class(Path(args.compare).resolve())
    rounds: dict[str, list[float]] = {name: [] for name in classes}
    for _ in range(args.repeat):
        for name, cls in classes.items():
            seconds = uvloop.run(run(cls, args.requests))
            rounds[name].append(seconds / args.requests * 1e6)
    print(
        f"{'protocol':<10} {'best µs':>8} {'median µs':>10}  "
        f"(CPU per request, {args.repeat} rounds of {args.requests:,})"
    )
    for name, values in rounds.items():
        print(f"{name:<10} {min(values):>8.2f} {statistics.median(values):>10.2f}")
    if args.compare:
        diff = statistics.median(a - b for a, b in zip(rounds["this tree"], rounds["compared"], strict=True))
        print(f"this tree - compared, median of the rounds' differences: {diff:+.2f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
