"""A worker forgets a key nobody used for ``IDLE_SECONDS`` (its memory stays bounded), and only
such a key: requests do not read the clock (issue 15, item 6), so a sync dates a key's last use
by the requests it counted since the sync before."""

from __future__ import annotations

from server.limiter import IDLE_SECONDS, Limiter, MemoryQuota


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_key_idle_for_the_idle_time_is_forgotten_and_a_used_one_is_kept():
    clock = Clock()
    limiter = Limiter(MemoryQuota(clock), sync_seconds=0.1, clock=clock)
    for _ in range(3):
        limiter.throttle("busy", 100.0)
        limiter.throttle("idle", 100.0)
    assert limiter.sync()  # pays the credit back: neither owes anything now
    assert set(limiter._states) == {"busy", "idle"}
    clock.now += IDLE_SECONDS - 1
    limiter.throttle("busy", 100.0)  # used just before the next sync
    clock.now += 2  # IDLE_SECONDS + 1 after the last use of "idle"
    assert limiter.sync()
    assert set(limiter._states) == {"busy"}
    clock.now += IDLE_SECONDS - 1  # "busy" was last counted by the sync above, 59 s ago
    assert limiter.sync()
    assert set(limiter._states) == {"busy"}
    clock.now += 2
    assert limiter.sync()
    assert limiter._states == {}

