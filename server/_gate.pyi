"""Stub of the compiled ``server._gate`` (server/_gate.pyx)."""

from collections.abc import Callable
from typing import Any

from typing_extensions import disjoint_base

@disjoint_base
class Gate:
    """The usual answer of ``/v1/address`` for one app; the key's checks of the other gates."""

    def __init__(
        self, auth: Any, slot: Any, finish: Callable[[Any, Any], None], query_error: Callable[[Exception], Exception]
    ) -> None: ...
    def answer(self, req: Any, resp: Any, raw_query: bytes) -> bool:
        """Answer ``req`` and return True, or return False having changed nothing."""

@disjoint_base
class QuestionGate(Gate):
    """The usual answer of another question of issue 39 (``/v1/address/postcode``, ``/reverse``)."""

    def __init__(
        self,
        auth: Any,
        slot: Any,
        finish: Callable[[Any, Any], None],
        query_error: Callable[[Exception], Exception],
        parse: Callable[[bytes], Any],
        ask: Callable[[Any, Any], bytes],
    ) -> None: ...
