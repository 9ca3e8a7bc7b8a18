"""The service with its engine taken out: what the request path costs without the search.

gunicorn loads ``canned_app:asgi_app`` (or ``wsgi_app``) from ``run.py --canned``: the real
service of ``server.app`` (keys, rate limits, metrics, parameters, CORS, the gunicorn hooks),
whose index answers the benchmark's queries from a table made once, in the master before it
forks, by the real engine (``CANNED_QUERIES``: a file of one query per line; ``CANNED_LIMITS``:
``1,5,10``). A query not in the table is searched as usual. The gap between this and the
real service under the same load is the engine's share; the gap between this and the
fixed-body app is ours.
"""

from __future__ import annotations

import os

import server.app as service


class CannedIndex:
    """An index whose ``suggest_json`` looks the benchmark's queries up instead of searching."""

    def __init__(self, index: service.Index, queries: list[str], limits: list[int]) -> None:
        self._index = index
        self.manifest = index.manifest
        self._answers = {(q, limit): index.suggest_json(q, limit=limit) for q in queries for limit in limits}

    def suggest_json(self, q: str, *, limit: int = 5, lat: float | None = None, lon: float | None = None,
                     highlight: bool = False) -> bytes:
        if lat is None and not highlight:
            answer = self._answers.get((q, limit))
            if answer is not None:
                return answer
        return self._index.suggest_json(q, limit=limit, lat=lat, lon=lon, highlight=highlight)

    def suggest(self, q: str, **kw: object) -> object:
        return self._index.suggest(q, **kw)


_real_resolve = service.resolve_index
_canned: dict[str, CannedIndex] = {}


def _resolve_canned(path: str) -> tuple[str, CannedIndex]:
    # NOTE: the master fills the table; the workers it forks find it here and share its pages
    directory, index = _real_resolve(path)
    if directory not in _canned:
        with open(os.environ["CANNED_QUERIES"], encoding="utf-8") as f:
            queries = [line.rstrip("\n") for line in f]
        limits = [int(x) for x in os.environ.get("CANNED_LIMITS", "1,5,10").split(",")]
        _canned[directory] = CannedIndex(index, queries, limits)
    return directory, _canned[directory]


service.resolve_index = _resolve_canned


def __getattr__(name: str) -> object:
    # the app is built on first use, so that a run without CANNED_QUERIES can import the module
    if name == "asgi_app":
        return service.get_asgi_app()
    if name == "wsgi_app":
        return service.get_app()
    raise AttributeError(name)
