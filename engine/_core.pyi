"""Type stub of the compiled core (engine/_core.pyx)."""

from typing import Any

import numpy as np

ARRAYS: dict[str, type]          # array name -> numpy dtype of the index files
SIZES: dict[str, int]            # the fixed sizes of a search (MAXT, POOL, SCAN_BUDGET, ...)

class QueryError(ValueError):
    code: str                    # "invalid_parameter" | "query_too_long"
    parameter: str               # "q" | "limit" | "lat" | "lon"
    def __init__(self, message: str, *, code: str = ..., parameter: str = ...) -> None: ...

class Index:
    """The compiled index over a dict of 1-d numpy arrays (usually memory-mapped)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None: ...
    # e.g. arrays["a_number"]: np.ndarray  # const int32_t[::1]; see ARRAYS for every dtype
    @property
    def arrays(self) -> dict[str, np.ndarray]: ...
    def __len__(self) -> int: ...
    def suggest_json(self, q: str, *, limit: int = 5, lat: float | None = None,
                     lon: float | None = None) -> bytes: ...
    def search_ids(self, q: str, *, limit: int = 5, lat: float | None = None,
                   lon: float | None = None) -> list[int]: ...

def deletion_index(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(hashes uint64, token ids int32) of every token with up to 1 (2 for 7+ letters) deleted."""

def sig_bit(word: str) -> int: ...
def _set_param(name: str, value: float) -> None: ...
def _coordinate(value: Any, name: str, bound: float) -> float: ...

# --- engine/_batch.pxi: what engine/hits.py and engine/match.py use ---------------------------
FOUND_HOW: dict[int, str]        # how a search found its hits: "none", "typed", "slip", "retry"
MATCH_FOUND: int                 # the status of each text of a batch (_match_chunk)
MATCH_NONE: int
MATCH_EMPTY: int
MATCH_TOO_LONG: int
MATCH_NOT_TEXT: int

def _search_scored(index: Index, q: str, limit: int, lat: float | None,
                   lon: float | None) -> tuple[list[tuple[int, float]], str]: ...
def _address_fields(index: Index, a: int) -> tuple[str, int, str, str, str, str, str, str, float, float]: ...
def _match_chunk(index: Index, texts: list[Any], ids: np.ndarray, scores: np.ndarray,
                 status: np.ndarray, hows: np.ndarray) -> None:
    """ids: int32[::1], scores: float32[::1], status and hows: uint8[::1], each >= len(texts)."""
def _csv_fields(index: Index, ids: list[int], sep: str) -> list[str | None]: ...
