# The small rules of a request that the Python path (server.auth, server.limiter,
# server.resources) and the compiled gate (server/_gate.pyx) both call: each is written once,
# here (issue 38). See server/_rules.pyx.

cpdef bint young(double read_at, double now) noexcept
cpdef bint costly(double wall_seconds) noexcept


cdef class KeyState:
    cdef public double rate, tokens, last, stamp
    cdef public long long owed, seen
    cdef public object lock

    cpdef bint spend(self) noexcept
    cpdef bint take(self, double rate, bint degraded) except -1
