"""Type stub of the compiled core (engine/_core.pyx)."""

from types import TracebackType
from typing import Any, Self, SupportsFloat

import numpy as np
from typing_extensions import disjoint_base

from .words import ADDRESSEE_WORDS as ADDRESSEE_WORDS
from .words import COUNTRY_WORDS as COUNTRY_WORDS
from .words import FLOOR_WORDS as FLOOR_WORDS
from .words import GLUE_PARTICLES as GLUE_PARTICLES
from .words import LABEL_WORDS as LABEL_WORDS
from .words import LINE_BREAKS as LINE_BREAKS
from .words import NOTE_CLOSE as NOTE_CLOSE
from .words import NOTE_OPEN as NOTE_OPEN
from .words import NUMBER_WORDS as NUMBER_WORDS
from .words import ORDINALS as ORDINALS
from .words import REGION_PROVINCE as REGION_PROVINCE
from .words import REGION_WORDS as REGION_WORDS
from .words import SOUND_RULES as SOUND_RULES
from .words import SOUND_SPELLINGS as SOUND_SPELLINGS
from .words import SOUND_VOWELS as SOUND_VOWELS
from .words import STREET_SUFFIXES as STREET_SUFFIXES

ARRAYS: dict[str, type]          # array name -> numpy dtype of the index files
SIZES: dict[str, int]            # the fixed sizes of a search (MAXT, POOL, SCAN_BUDGET, ...)
BITS: dict[str, int]             # token kinds (K_*) and a posting's meta bits (META_*), _core.pxd

class QueryError(ValueError):
    code: str                    # "invalid_parameter" | "query_too_long"
    parameter: str               # "q" | "limit" | "lat" | "lon"
    def __init__(self, message: str, *, code: str = ..., parameter: str = ...) -> None: ...

class IndexClosedError(ValueError): ...

_Limit = int | np.integer[Any]                # numbers.Integral, not bool; 1..10
_Coordinate = SupportsFloat | None            # numbers.Real or Decimal, not bool
_Names = str | list[str] | tuple[str, ...] | None   # area names (commas between several)
_Box = str | tuple[float, float, float, float] | list[float] | None   # minlon, minlat, maxlon, maxlat

@disjoint_base
class AreaSpec:
    """A restriction of the answers to an area, resolved against one index (`Index.area`)."""
    @property
    def key(self) -> tuple[Any, ...]: ...

AREA_PARAMETERS: tuple[str, ...]                # the area arguments' names
COORDINATE_BOUNDS: dict[str, float]             # the bound of |lat| and |lon|

def near_tree(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rv_addr, rv_lat, rv_lon, rv_box): the spatial index of the address points (build time)."""
def distance_metres(d2: float) -> float:
    """Metres of a squared distance in the spatial index's units (for the tests' twin)."""

@disjoint_base
class Index:
    """The compiled index over a dict of 1-d numpy arrays (usually memory-mapped)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None: ...
    # e.g. arrays["a_number"]: np.ndarray  # const int32_t[::1]; see ARRAYS for every dtype
    @property
    def arrays(self) -> dict[str, np.ndarray]: ...
    def __len__(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...
    def _release(self) -> None: ...
    def area(self, *, municipality: _Names = None, locality: _Names = None, province: _Names = None,
             postcode: _Names = None, bbox: _Box = None) -> AreaSpec | None: ...
    def suggest_json(self, q: str, *, limit: _Limit = 5, lat: _Coordinate = None,
                     lon: _Coordinate = None, highlight: bool = False, municipality: _Names = None,
                     locality: _Names = None, province: _Names = None, postcode: _Names = None,
                     bbox: _Box = None) -> bytes: ...
    def search_ids(self, q: str, *, limit: _Limit = 5, lat: _Coordinate = None,
                   lon: _Coordinate = None, area: AreaSpec | None = None) -> list[int]: ...
    def lookup_ids(self, postcode: str, number: int, *, letter: str | None = None,
                   addition: str | None = None) -> list[int]: ...
    def lookup_json(self, postcode: str, number: int, *, letter: str | None = None,
                    addition: str | None = None) -> bytes: ...
    def reverse_ids(self, lat: _Coordinate, lon: _Coordinate, *, limit: _Limit = 5,
                    radius: SupportsFloat | None = None,
                    area: AreaSpec | None = None) -> list[tuple[int, float]]: ...
    def reverse_json(self, lat: _Coordinate, lon: _Coordinate, *, limit: _Limit = 5,
                     radius: SupportsFloat | None = None, municipality: _Names = None,
                     locality: _Names = None, province: _Names = None, postcode: _Names = None,
                     bbox: _Box = None) -> bytes: ...
    def trace(self, q: str, *, limit: _Limit = 5, lat: _Coordinate = None,
              lon: _Coordinate = None, area: AreaSpec | None = None) -> dict[str, Any]:
        """{"ids", "stored", "tokens", "readings": [per reading: "stage", "mode", "tokens",
        "values", "interps", "focus", "pc_strict", "near_number", "province", "max_pass",
        "passes", "deferred", "found", "spent", "dropped", "added"], "lost"}"""

STAGES: dict[int, str]           # the step that made a reading of a trace ("typed", "respaced", ...)
SPENT: dict[int, str]            # the budgets a trace names when they ran out ("scan", "work", ...)
MIRRORED: tuple[str, ...]        # ... those the Python twin cuts the same way

def read_plain_query(raw: bytes) -> tuple[str, int] | None:
    """(q, limit) of `country=NLD&q=...[&limit=N]` as the service's clients spell it, else None."""

def read_plain_lookup(raw: bytes) -> tuple[str, int] | None:
    """(postcode, number) of `country=NLD&postcode=...&number=N` in the plain spelling, else None."""

def read_plain_reverse(raw: bytes) -> tuple[float, float, int] | None:
    """(lat, lon, limit) of `country=NLD&lat=Y&lon=X[&limit=N]` in the plain spelling, else None."""

def read_house_number(raw: bytes) -> int:
    """The house number (1 to 99999) `raw` writes in canonical digits; 0 if none."""

def _token_changes(typed: list[str], tokens: list[str]) -> tuple[list[str], list[str]]: ...
def query_tokens(q: str) -> list[str]:
    """The tokens the search reads in q (folded, ij as y, digits cut from letters before them)."""

def deletion_index(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(hashes uint64, token ids int32) of every token with up to 1 (2 for 7+ letters) deleted."""

def _form_hashes(w: bytes) -> list[int]:
    """The typo table's hashes of w, w with letter i left out, w with letters i < j left out."""

def deletion_table(hashes: np.ndarray, toks: np.ndarray) -> np.ndarray:
    """The typo table (uint64 slots, linear probing) of `deletion_index`'s hashes and tokens."""

def slip_lists(index: Index) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(slip_start, slip_tok, slip_dist, slip_work): what the search looks up for each token typed
    whole, within one slip and within two, on an index that stores none yet."""

def sound_key(word: str, *, whole: bool = True) -> str:
    """The sound key of a folded word (words.SOUND_RULES): words that sound alike share it."""
def sound_start(word: str) -> tuple[str, str]:
    """(key, letters next) of a folded word still being typed."""
def _init_sounds() -> None: ...
def sig_bit(word: str) -> int:
    """The signature bit of a token (build time)."""
def first_bit(word: str) -> int:
    """The first-letter bit of a folded token (build.py: v_post_first)."""
def xsig_bit(word: str) -> int:
    """The whole-token signature bit of a folded token (build.py: v_post_xsig)."""
def _set_work_budget(budget: int) -> None: ...
def _may_start_word(index: Index, w: bytes) -> bool:
    """False when no token of the index starts with the folded word w (the filter of starts)."""
def _number_lower_bound(index: Index, lo: int, hi: int, number: int, is_pc: bool = False) -> int:
    """The first position of the run [lo, hi) of house numbers not below `number` (hi if none)."""
def check_arguments(q: Any, limit: Any, lat: Any, lon: Any) -> tuple[int, float | None, float | None]: ...

# --- engine/_batch.pxi: what engine/hits.py and engine/match.py use ---------------------------
FOUND_HOW: dict[int, str]        # how a search found its hits: "none", "typed", "slip", "retry"
MATCH_FOUND: int                 # the status of each text of a batch (_match_chunk)
MATCH_NONE: int
MATCH_EMPTY: int
MATCH_TOO_LONG: int
MATCH_NOT_TEXT: int

def _search_scored(index: Index, q: str, limit: int, lat: float | None,
                   lon: float | None, area: AreaSpec | None = None) -> tuple[list[tuple[int, float]], str]: ...
KINDS: tuple[str, ...]           # how a typed word matched, as engine.explain names it (_explain.pxi)
FIELDS: tuple[str | None, ...]   # ... and what of the hit (None: left out)
def _explain_address(index: Index, q: str, address: int
                     ) -> tuple[list[tuple[int, int, str, str | None, int | None, tuple[int, int] | None]],
                                list[list[tuple[int, int]]]]: ...
def _address_fields(index: Index, a: int) -> tuple[str, int, str, str, str, str, str, str, float, float]: ...
def _match_chunk(index: Index, texts: list[Any], ids: np.ndarray, scores: np.ndarray,
                 status: np.ndarray, hows: np.ndarray) -> None:
    """ids: int32[::1], scores: float32[::1], status and hows: uint8[::1], each >= len(texts)."""
def _csv_fields(index: Index, ids: list[int], sep: str) -> list[str | None]: ...
def _join_named(parts: list[str], known: dict[str, Any]) -> list[str]: ...
