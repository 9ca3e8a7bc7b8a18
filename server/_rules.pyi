"""Stub of the compiled ``server._rules`` (server/_rules.pyx)."""

import threading

from typing_extensions import disjoint_base

COST_UNIT_SECONDS: float

def young(read_at: float, now: float) -> bool:
    """Whether a key table read at ``read_at`` was read in the last ``MAX_KEY_REFRESH_SECONDS``."""

def costly(wall_seconds: float) -> bool:
    """Whether work of ``wall_seconds`` may cost a token more (``Authenticator.charge``)."""

@disjoint_base
class KeyState:
    """One key at one worker: the tokens it holds, what it owes the quota, its demand."""

    rate: float
    tokens: float
    last: float
    stamp: float
    owed: int
    seen: int
    lock: threading.Lock
    def __init__(self, rate: float, now: float, credit: int) -> None: ...
    def spend(self) -> bool:
        """Spend one token held, if there is one (under ``lock``)."""
    def take(self, rate: float, degraded: bool) -> bool:
        """Take one token held for a request of a key of ``rate``, counting the request."""
