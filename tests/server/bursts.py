"""Asking a rate-limited key until it refuses, for the tests of its burst."""

from __future__ import annotations

from collections.abc import Callable


def statuses_until_429(send: Callable[[], int], most: int) -> list[int]:
    """The statuses of `send()` (one request, its status) until the first 429, or `most` of them.

    A request costs a token, and one more per 0.2 ms of engine CPU (server.auth's
    ``COST_UNIT_SECONDS``): a cold or preempted answer may use up a key's burst sooner than its
    count of requests says, never later. The caller asserts that the 429 came within the burst.
    """
    statuses: list[int] = []
    while len(statuses) < most and 429 not in statuses:
        statuses.append(send())
    return statuses
