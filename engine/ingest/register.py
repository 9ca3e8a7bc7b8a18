"""The register's state: what a later mutation delivery needs to join the addresses again.

A build from an LVBAG extract writes it into the index directory, beside the arrays, and names
its files in the manifest (``"register"``); `engine.ingest.update` reads it, applies deliveries to
it, and writes the new index and the new state the same way. It holds:

- of each object type (woonplaats, openbare ruimte, nummeraanduiding, verblijfsobject,
  ligplaats, standplaats) every version that is valid on the register's date or will be later
  (a version that ended, or was marked inactive, can never be chosen again: only a delivery
  can change it, and a delivery carries the whole record), with the fields the join reads
  (`engine.ingest.lvbag.Columns`), and of each verblijfsobject, ligplaats and standplaats its
  point converted to WGS84 once the join has used it (an update converts only the new points):
  ``register-NUM.zst`` ...;
- the GEM-WPL-RELATIE rows (``register-GWR.zst``), the municipality relation on any date;
- the municipality reference as the build read it (``register-reference.json.zst``), so that an
  update names the municipalities exactly as the build did, without the file;
- in the manifest: the register's date, the area (the municipalities a municipality extract
  selects; none: the whole country), the extract it started from and each delivery applied.

The form was chosen by measurement (benchmarks/register_forms.py, see docs/guide/official.md):
numpy arrays, each type's in one zstd-compressed file (`write_arrays`), a text column as the
code of each value and its distinct values (one UTF-8 blob, NUL between them: XML text holds no
NUL). An update reads all of it and writes all of it (the join reads every record): numpy
arrays read and write fastest, and compressed they are as small as Parquet without pyarrow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson
import zstandard

from .lvbag import KINDS, PLACES, LvbagResult, unconverted
from .municipalities import MunicipalityReference
from .texts import TextColumn

__all__ = ["Register", "RegisterError", "STATE_VERSION", "TEXT_COLUMNS"]

#: The layout of the state's files; a state of another version is refused (rebuild from an extract).
#: 2: the VBO, LIG and STA records hold their WGS84 point (`lon`, `lat`; NaN: not converted yet).
STATE_VERSION = 2
#: The versions this engine reads: 1 lacks the WGS84 points (read as not converted yet).
_READS = (1, STATE_VERSION)
#: The columns of each type that hold texts (`engine.ingest.texts.TextColumn` in memory).
TEXT_COLUMNS = {"NUM": ("letter", "addition", "postcode"), "OPR": ("name",), "WPL": ("name",),
                "VBO": (), "LIG": (), "STA": ()}
_REFERENCE_FILE = "register-reference.json.zst"
_RELATION_FILE = "register-GWR.zst"


class RegisterError(ValueError):
    """The index holds no register state, or one that cannot be read."""


def _file(kind: str) -> str:
    return f"register-{kind}.zst"


def write_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` into one zstd-compressed file: an 8-byte length, a JSON header naming each
    array with its dtype and shape, then the bytes of each, in that order.

    PERF: compressed a column at a time as it streams out (no copy of the whole); zstd level 3
    on every core: the sample's state 61 MiB -> 7 MiB."""
    header = orjson.dumps([{"name": k, "dtype": v.dtype.str, "shape": list(v.shape)} for k, v in arrays.items()])
    with open(path, "wb") as f, zstandard.ZstdCompressor(level=3, threads=-1).stream_writer(f) as z:
        z.write(len(header).to_bytes(8, "little") + header)
        for v in arrays.values():
            z.write(memoryview(np.ascontiguousarray(v)).cast("B"))


def read_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays `write_arrays` wrote; ValueError when the file is cut short or damaged."""
    out = {}
    with open(path, "rb") as f, zstandard.ZstdDecompressor().stream_reader(f) as z:
        def fill(buf: memoryview) -> None:
            got = 0
            while got < len(buf):
                n = z.readinto(buf[got:])
                if not n:
                    raise ValueError(f"{path.name} is cut short")
                got += n

        head = bytearray(8)
        fill(memoryview(head))
        header = bytearray(int.from_bytes(head, "little"))
        if len(header) > 1 << 20:
            raise ValueError(f"{path.name} is not a register file")
        fill(memoryview(header))
        for spec in orjson.loads(bytes(header)):
            arr = np.empty(spec["shape"], dtype=np.dtype(spec["dtype"]))
            if arr.nbytes:
                fill(memoryview(arr).cast("B"))
            out[spec["name"]] = arr
        if z.read(1):
            raise ValueError(f"{path.name} holds more than its header says")
    return out


def day_of(date: str) -> int:
    """YYYY-MM-DD as the integer YYYYMMDD the tables hold."""
    return int(date.replace("-", ""))


def take(table: dict, rows: np.ndarray) -> dict:
    """The records `rows` (indices, in that order) of a table; the secondary addresses of a
    verblijfsobject, ligplaats or standplaats (`side`, `side_n` of each) go with their records."""
    out = {}
    for k, v in table.items():
        if k != "side":
            out[k] = v.take(rows) if isinstance(v, TextColumn) else v[rows]
    if "side" in table:
        start = np.concatenate([[0], np.cumsum(table["side_n"])])
        n = table["side_n"][rows]
        first = np.repeat(start[rows] - np.concatenate([[0], np.cumsum(n)[:-1]]), n)
        out["side"] = table["side"][np.arange(int(n.sum()), dtype=np.int64) + first]
    return out


def live(table: dict, day: int) -> np.ndarray:
    """The rows of `table` that are valid on `day` or later: what the state keeps."""
    return np.nonzero((table["end"] > day) & ~table["inactive"] & (table["id"] >= 0))[0]


@dataclass
class Register:
    """The register's state (see the module's docstring)."""

    date: str                                  # YYYY-MM-DD: the extract's or the last delivery's
    tables: dict[str, dict]                    # per type: the columns of `engine.ingest.lvbag.Columns`
    relation: dict[str, np.ndarray]            # GEM-WPL-RELATIE rows (`engine.ingest.lvbag.relation_rows`)
    area: list[str]                            # municipality codes selected; [] = the whole country
    reference: MunicipalityReference
    extract: dict = field(default_factory=dict)      # name, date, sha256 of the extract it began with
    deliveries: list[dict] = field(default_factory=list)  # each applied: name, from, to, date, sha256

    @classmethod
    def from_result(cls, res: LvbagResult, *, name: str, sha256: str) -> Register:
        """The state of an extract just read (`engine.ingest.lvbag.read_lvbag`)."""
        assert res.tables is not None and res.relation is not None and res.reference is not None
        return cls(date=res.extract_date, tables=res.tables, relation=res.relation, area=list(res.area),
                   reference=res.reference, extract={"name": name, "date": res.extract_date, "sha256": sha256})

    # ------------------------------------------------------------------ on disk

    def save(self, directory: str | os.PathLike) -> dict:
        """Write the state's files into `directory`; return the manifest's ``"register"``.

        Only the versions valid on the date or later are written (`live`)."""
        directory = Path(directory)
        day = day_of(self.date)
        rows = {}
        for kind in KINDS:
            t = self.tables[kind]
            keep = live(t, day)
            if len(keep) < len(t["id"]):
                t = take(t, keep)
            arrays = {k: v for k, v in t.items() if not isinstance(v, TextColumn)}
            for col in TEXT_COLUMNS[kind]:
                texts = t[col].compact()    # the values some record holds, no others
                arrays[col] = texts.codes
                arrays[f"{col}_values"] = _blob(texts.values, kind, col)
            write_arrays(directory / _file(kind), arrays)
            rows[kind] = len(arrays["id"])
        write_arrays(directory / _RELATION_FILE, self.relation)
        (directory / _REFERENCE_FILE).write_bytes(
            zstandard.ZstdCompressor(level=3).compress(orjson.dumps(self.reference.to_dict())))
        return {"version": STATE_VERSION, "date": self.date, "area": self.area, "extract": self.extract,
                "deliveries": self.deliveries, "rows": rows, "relation_rows": len(self.relation["wpl"]),
                "reference": self.reference.describe(),
                "files": sorted([_file(k) for k in KINDS] + [_RELATION_FILE, _REFERENCE_FILE])}

    @classmethod
    def load(cls, index_dir: str | os.PathLike, manifest: dict) -> Register:
        """Read the state of the index in `index_dir` (its `manifest`); RegisterError when it
        holds none or one this engine cannot read."""
        index_dir = Path(index_dir)
        meta = manifest.get("register")
        if not isinstance(meta, dict):
            fmt = manifest.get("source_format", "csv")
            raise RegisterError(
                f"{index_dir} was built from {manifest.get('source_name', '?')} ({fmt}) and holds no register "
                "state: only an index built from the Kadaster's LVBAG extract can take mutation deliveries; "
                "build one with python -m engine build lvbag-extract-nl.zip INDEX_DIR")
        version = meta.get("version")
        if version not in _READS:
            raise RegisterError(f"{index_dir}: its register state has version {version!r}, this engine reads "
                                f"versions {', '.join(map(str, _READS))}: build it again from an LVBAG extract")
        try:
            tables = {}
            for kind in KINDS:
                t = read_arrays(index_dir / _file(kind))
                for col in TEXT_COLUMNS[kind]:
                    t[col] = TextColumn(t[col], _values(t.pop(f"{col}_values"), len(t[col])))
                    t[col].check()
                if version == 1 and kind in PLACES:
                    t.update(unconverted(len(t["id"])))
                tables[kind] = t
            relation = read_arrays(index_dir / _RELATION_FILE)
            reference = MunicipalityReference.from_dict(orjson.loads(
                zstandard.ZstdDecompressor().decompress((index_dir / _REFERENCE_FILE).read_bytes())))
        except (OSError, ValueError, KeyError, zstandard.ZstdError) as e:
            raise RegisterError(f"{index_dir}: its register state cannot be read ({e}): build it again from an "
                                "LVBAG extract") from None
        return cls(date=meta["date"], tables=tables, relation=relation, area=list(meta.get("area", [])),
                   reference=reference, extract=meta.get("extract", {}), deliveries=list(meta.get("deliveries", [])))


def _blob(values: list[str], kind: str, col: str) -> np.ndarray:
    """Distinct texts as one UTF-8 blob, NUL between them."""
    text = "\0".join(values)
    if text.count("\0") != max(len(values) - 1, 0):
        raise RegisterError(f"a {kind} {col} holds a NUL character, which XML cannot carry")
    return np.frombuffer(text.encode(), dtype=np.uint8)


def _values(blob: np.ndarray, n: int) -> list[str]:
    """The distinct texts `_blob` wrote (none for a column of no records)."""
    return blob.tobytes().decode().split("\0") if n else []
