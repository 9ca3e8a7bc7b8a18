"""Address autocomplete for the Netherlands: the public Python API of the engine.

    >>> import engine
    >>> index = engine.AddressIndex.open("indexes/nl")
    >>> index.suggest_json("damrak 1 amsterdam", limit=5)   # the HTTP response body, as bytes
    >>> index.suggest("1012lg 1")                            # the same, as Python objects

An index is a directory written by ``python -m engine build SOURCE OUT_DIR``; opening it
memory-maps its arrays (no copy), so every process that opens the same index shares its pages.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import orjson

from ._core import ARRAYS, Index, QueryError

__all__ = ["AddressIndex", "IndexOpenError", "QueryError", "FORMAT_VERSION"]

FORMAT_VERSION = 7


class IndexOpenError(Exception):
    """The index directory is missing, truncated, of another format version, or inconsistent."""


class AddressIndex(Index):
    """A memory-mapped address index; see :meth:`open`."""

    path: str
    manifest: dict

    @classmethod
    def open(cls, path: str | os.PathLike) -> AddressIndex:
        """Memory-map the index in directory `path`; raise IndexOpenError if it is unusable."""
        path = Path(path)
        manifest_path = path / "manifest.json"
        try:
            manifest = json.loads(manifest_path.read_text())
        except FileNotFoundError:
            raise IndexOpenError(f"no index at {path}: {manifest_path} is missing") from None
        except (OSError, ValueError) as e:
            raise IndexOpenError(f"unreadable index manifest {manifest_path}: {e}") from None
        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if version != FORMAT_VERSION:
            raise IndexOpenError(
                f"index {path} has format version {version!r}; this engine reads version "
                f"{FORMAT_VERSION}: rebuild it with `python -m engine build`")
        arrays = {}
        for name, dtype in ARRAYS.items():
            spec = manifest.get("arrays", {}).get(name)
            file = path / f"{name}.npy"
            try:
                arr = np.load(file, mmap_mode="r", allow_pickle=False)
            except FileNotFoundError:
                raise IndexOpenError(f"index {path} is incomplete: {file.name} is missing") from None
            except (OSError, ValueError) as e:
                raise IndexOpenError(f"index {path} is damaged: {file.name}: {e}") from None
            if spec is None or arr.dtype != np.dtype(dtype) or list(arr.shape) != spec["shape"]:
                raise IndexOpenError(
                    f"index {path} is damaged: {file.name} is {arr.dtype}{list(arr.shape)}, "
                    f"the manifest says {spec}")
            arrays[name] = arr
        try:
            index = cls(arrays)
        except ValueError as e:
            raise IndexOpenError(f"index {path} is inconsistent: {e}") from None
        index.path = str(path)
        index.manifest = manifest
        return index

    def suggest(self, q: str, *, limit: int = 5, lat: float | None = None,
                lon: float | None = None) -> dict:
        """Return the response of the contract for `q` as Python objects."""
        return orjson.loads(self.suggest_json(q, limit=limit, lat=lat, lon=lon))

    def __reduce__(self):
        # NOTE: pickling re-opens the same directory, so a forked or spawned worker maps the
        # same files (shared pages) instead of copying arrays through a pipe.
        return (type(self).open, (self.path,))

    def __repr__(self) -> str:
        return f"AddressIndex({self.path!r}, {len(self):,} addresses)"
