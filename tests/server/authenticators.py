"""An ``Authenticator`` as the tests make one: the limits of this process alone, on the test's
clock (``server.app.shared_state`` wires a service's from its ``Config``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from server.auth import Authenticator
from server.limiter import ClientBuckets, Limiter, MemoryQuota


def authenticator(store: Any, *, clock: Callable[[], float] = time.monotonic, **options: Any) -> Authenticator:
    """``Authenticator(store, **options)`` with a limiter and client buckets of its own on ``clock``."""
    return Authenticator(
        store,
        limiter=Limiter(MemoryQuota(clock), clock=clock),
        clients=ClientBuckets(clock=clock),
        clock=clock,
        **options,
    )
