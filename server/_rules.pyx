"""The small rules of a request that the Python path and the compiled gate both call (issue 38).

``server.auth``, ``server.limiter`` and ``server.resources`` call them as Python functions;
``server/_gate.pyx`` cimports them (``server/_rules.pxd``) and calls them in C, so a rule
changes here, once, and the gate cannot drift from the Python path:

- :func:`young`: a key table read in the last ``MAX_KEY_REFRESH_SECONDS`` is never stale
  (``Authenticator._stale`` says when an older one is not either);
- :func:`costly`: whether engine work took long enough to charge its CPU time
  (``Authenticator.charge``; ``COST_UNIT_SECONDS``);
- :class:`KeyState`: one key at one worker of ``server.limiter``, and taking a token of it.
"""

import threading

from server.config import MAX_KEY_REFRESH_SECONDS as _MAX_KEY_REFRESH_SECONDS

#: A request costs one token more per this much engine CPU time (issue 11).
COST_UNIT_SECONDS = 0.0002

cdef double _MAX_AGE = _MAX_KEY_REFRESH_SECONDS
cdef double _COST_UNIT = COST_UNIT_SECONDS


cpdef bint young(double read_at, double now) noexcept:
    """Whether a key table read at ``read_at`` was read in the last ``MAX_KEY_REFRESH_SECONDS``."""
    return read_at + _MAX_AGE > now


cpdef bint costly(double wall_seconds) noexcept:
    """Whether work of ``wall_seconds`` may cost a token more (``Authenticator.charge``).

    PERF: CPU time is at most the wall time, so work shorter than a cost unit (nearly all)
    costs no extra token: no CPU clock read after it (``time.thread_time()``: 0.6 us), no call.
    """
    return wall_seconds >= _COST_UNIT


cdef class KeyState:
    """One key at one worker: the tokens it holds, what it owes the quota, its demand
    (``server.limiter``, whose docstring says how they are used)."""

    def __init__(self, double rate, double now, long long credit):
        self.rate = rate
        self.tokens = credit
        self.owed = credit
        self.seen = 0  # requests since the last sync (served or refused)
        self.last = now  # when it was made, then the last sync that found it used
        self.stamp = now  # of the local refill, while degraded
        self.lock = threading.Lock()

    cpdef bint spend(self) noexcept:
        """Spend one token held, if there is one (under ``lock``)."""
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    cpdef bint take(self, double rate, bint degraded) except -1:
        """Take one token held for a request of a key of ``rate``, counting the request, if the
        limits are not ``degraded``, the state is this rate's and no thread holds ``lock`` (the
        sync's); otherwise return False having changed nothing (``Limiter.take_held``)."""
        if degraded or self.rate != rate or not self.lock.acquire(False):
            return False
        try:
            if self.spend():
                self.seen += 1
                return True
            return False
        finally:
            self.lock.release()
