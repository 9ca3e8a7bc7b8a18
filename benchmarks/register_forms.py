"""Which form for the register's state (engine/ingest/register.py): numpy arrays, SQLite or Parquet.

    python benchmarks/register_forms.py INDEX_DIR [--work DIR]

Reads the state of an index built from an LVBAG extract (the whole country's: build the round
trip's extract, benchmarks/lvbag_roundtrip.py --keep) and writes the same tables in each form,
then reads them back into what the join takes (numpy columns, lists of texts), and changes 5,000
versions as a delivery does. An update reads the whole state (the join reads every record),
changes a few thousand versions and writes the whole state beside the new index; so what counts
is reading all and writing all, and the size on disk. Each figure is the least of `--repeat`
runs (this machine is shared).

- numpy: what engine/ingest/register.py writes (uncompressed .npz, texts as codes + distinct values).
- sqlite: the standard library's sqlite3, one table per type, a row per version (texts as TEXT;
  a verblijfsobject's secondary addresses as one text of identifications); the changes are
  DELETE + INSERT in place (that is its strength).
- parquet: pyarrow (not a dependency: install it to run this form), one file per type, zstd,
  texts dictionary-encoded.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.ingest.lvbag import KINDS  # noqa: E402
from engine.ingest.register import TEXT_COLUMNS, Register  # noqa: E402
from engine.ingest.texts import TextColumn  # noqa: E402

CHANGES = 5_000


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


# ------------------------------------------------------------------ numpy (engine/ingest/register.py)

def numpy_write(reg: Register, out: Path) -> None:
    out.mkdir()
    reg.save(out)


def numpy_read(out: Path, meta: dict) -> dict:
    return Register.load(out, {"register": meta}).tables


# ------------------------------------------------------------------ sqlite

def _side_texts(t: dict) -> list[str]:
    start = np.concatenate([[0], np.cumsum(t["side_n"])]).tolist()
    side = t["side"].tolist()
    return [",".join(map(str, side[a:b])) for a, b in zip(start[:-1], start[1:], strict=True)]


def sqlite_write(reg: Register, out: Path) -> None:
    con = sqlite3.connect(out)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    for kind in KINDS:
        t = reg.tables[kind]
        cols = [k for k in t if k not in ("side", "side_n")]
        if "side" in t:
            cols.append("side")
        con.execute(f"CREATE TABLE {kind} ({', '.join(cols)})")
        data = [t[k].tolist() for k in cols if k != "side"]
        if "side" in t:
            data.append(_side_texts(t))
        con.executemany(f"INSERT INTO {kind} VALUES ({', '.join('?' * len(cols))})", zip(*data, strict=True))
        con.execute(f"CREATE INDEX {kind}_key ON {kind} (id, vk)")
    con.commit()
    con.close()


def sqlite_read(out: Path) -> dict:
    con = sqlite3.connect(out)
    tables = {}
    for kind in KINDS:
        cur = con.execute(f"SELECT * FROM {kind}")
        names = [d[0] for d in cur.description]
        cols = list(zip(*cur.fetchall(), strict=True)) or [()] * len(names)
        t = {}
        for name, col in zip(names, cols, strict=True):
            if name in TEXT_COLUMNS[kind]:
                t[name] = TextColumn.of(list(col))
            elif name == "side":
                parts = [s.split(",") if s else [] for s in col]
                t["side_n"] = np.array([len(p) for p in parts], dtype=np.int32)
                t["side"] = np.array([int(x) for p in parts for x in p], dtype=np.int64)
            else:
                t[name] = np.array(col)
        tables[kind] = t
    con.close()
    return tables


def sqlite_change(out: Path, keys: list[tuple[int, int]]) -> None:
    con = sqlite3.connect(out)
    con.executemany("UPDATE VBO SET x = x + 1 WHERE id = ? AND vk = ?", keys)
    con.commit()
    con.close()


# ------------------------------------------------------------------ parquet

def parquet_write(reg: Register, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    out.mkdir()
    for kind in KINDS:
        t = reg.tables[kind]
        cols = {}
        for k, v in t.items():
            if k == "side":
                start = np.concatenate([[0], np.cumsum(t["side_n"])]).astype(np.int64)
                cols[k] = pa.LargeListArray.from_arrays(pa.array(start), pa.array(v))
            elif k == "side_n":
                continue
            elif isinstance(v, TextColumn):
                cols[k] = pa.DictionaryArray.from_arrays(pa.array(v.codes), pa.array(v.values, type=pa.string()))
            else:
                cols[k] = pa.array(v)
        pq.write_table(pa.table(cols), out / f"{kind}.parquet", compression="zstd")


def parquet_read(out: Path) -> dict:
    import pyarrow.parquet as pq
    tables = {}
    for kind in KINDS:
        table = pq.read_table(out / f"{kind}.parquet")
        t = {}
        for name in table.column_names:
            col = table.column(name).combine_chunks()
            if name in TEXT_COLUMNS[kind]:
                t[name] = TextColumn(col.indices.to_numpy(zero_copy_only=False).astype(np.int32),
                                     col.dictionary.to_pylist())
            elif name == "side":
                offsets = col.offsets.to_numpy()
                t["side_n"] = np.diff(offsets).astype(np.int32)
                t["side"] = col.values.to_numpy()
            else:
                t[name] = col.to_numpy(zero_copy_only=False)
        tables[kind] = t
    return tables


# ------------------------------------------------------------------

def _least(f, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index", type=Path)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--forms", default="numpy,sqlite,parquet")
    args = ap.parse_args(argv)
    forms = args.forms.split(",")
    unknown = set(forms) - {"numpy", "sqlite", "parquet"}
    if unknown:
        ap.error(f"--forms: no such form {', '.join(sorted(unknown))} (numpy, sqlite, parquet)")
    if "parquet" in forms and importlib.util.find_spec("pyarrow") is None:
        ap.error("the parquet form needs pyarrow, which is not installed (pip install pyarrow), "
                 "or leave it out: --forms numpy,sqlite")
    manifest = json.loads((args.index / "manifest.json").read_text())
    reg = Register.load(args.index, manifest)
    rows = {k: len(reg.tables[k]["id"]) for k in KINDS}
    print(f"state of {args.index}: {rows}", flush=True)
    vbo = reg.tables["VBO"]
    keys = list(zip(vbo["id"][:: max(1, len(vbo["id"]) // CHANGES)][:CHANGES].tolist(),
                    vbo["vk"][:: max(1, len(vbo["id"]) // CHANGES)][:CHANGES].tolist(), strict=True))
    work = args.work or Path(tempfile.mkdtemp(prefix="register-forms-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        for form in forms:
            out = work / form
            write = {"numpy": numpy_write, "sqlite": sqlite_write, "parquet": parquet_write}[form]

            def do_write(write=write, out=out):
                if out.is_dir():
                    shutil.rmtree(out)
                elif out.exists():
                    out.unlink()
                write(reg, out)

            w, _ = _least(do_write, args.repeat)
            read = {"numpy": lambda out=out: numpy_read(out, manifest["register"]),
                    "sqlite": lambda out=out: sqlite_read(out), "parquet": lambda out=out: parquet_read(out)}[form]
            r, tables = _least(read, args.repeat)
            assert {k: len(tables[k]["id"]) for k in KINDS} == rows
            line = f"{form:8} size {_size(out) / 2**20:8,.0f} MiB  write all {w:6.1f} s  read all {r:6.1f} s"
            if form == "sqlite":
                c, _ = _least(lambda out=out: sqlite_change(out, keys), 1)
                line += f"  change {len(keys):,} versions in place {c:5.1f} s"
            print(line, flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
