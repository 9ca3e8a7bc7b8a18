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




def test_a_used_key_holds_at_least_one_interval_at_its_full_rate():
    """After a sync, a worker holds at least the credit C (one interval at the key's full rate) of
    a key used in the last interval, not only twice that interval's demand. Before, a worker that
    held little (its credit spent, a costly query charged) and saw a slow interval held 2 x 5 + 1
    tokens: a client of a key of rate 100,000 that then sped up to a few thousand requests a
    second was refused until the next sync (seen over HTTP: 127 refusals in 60,000 requests)."""
    clock = Clock()
    limiter = Limiter(MemoryQuota(clock), sync_seconds=0.1, clock=clock)
    for _ in range(5):
        limiter.throttle("k", 100_000.0)
    limiter.charge("k", limiter.credit(100_000.0))  # what it holds is spent
    clock.now += 0.1
    assert limiter.sync()
    state = limiter._states["k"]
    assert state.tokens >= limiter.credit(100_000.0) and state.owed == 0
    # the quota still bounds it: of a key of rate 50 a worker holds no more than H
    for _ in range(30):
        limiter.throttle("slow", 50.0)
    clock.now += 0.1
    assert limiter.sync()
    assert 0 < limiter._states["slow"].tokens <= limiter.hold_max(50.0)
