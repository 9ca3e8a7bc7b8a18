"""Read a PDOK GeoPackage of BAG addresses into the records of the CSV reader.

Two layouts are recognised by their tables and columns:

- today's `bag-light.gpkg`: tables `verblijfsobject`, `ligplaats`, `standplaats` with
  `openbare_ruimte_naam`, `huisnummer`, `huisletter`, `toevoeging`, `postcode`,
  `woonplaats_naam`;
- the older flat layout (PDOK's sample): tables `verblijfsobjecten`, `ligplaatsen`,
  `standplaatsen` with `straatnaam`, `huisnummer`, `huisletter`, `toevoeging`, `woonplaats`,
  `postcode`, `nummer_id`, `status`, `datum_eind`.

A GeoPackage holds main addresses only (no nevenadressen) and names no municipality: it is
found through the reference given to the build (`engine.ingest.municipalities`): an address list
places each address by its woonplaats and postcode (else by the majority of its code's
addresses), CBS's list by the code, read from a `gemeentecode` column when the table has one,
else from the first four digits of the nummeraanduiding's identification (the code of the
municipality that issued it: an address issued before a merger has a code CBS no longer
lists). An address the reference cannot place is counted as a dangling reference. Points are
RD New (EPSG:28992); a polygon gives its centroid.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

import numpy as np

from .lvbag import _HEADER, LEFT_OUT_REASONS, NUM_OK, PLAATS_OK, VBO_OK, LvbagResult, _centroid, _quote
from .municipalities import MunicipalityReference, former_name, load_reference

__all__ = ["GpkgError", "read_gpkg"]

LAYOUTS = {
    "bag-light": {"tables": ("verblijfsobject", "ligplaats", "standplaats"),
                  "street": "openbare_ruimte_naam", "place": "woonplaats_naam"},
    "flat": {"tables": ("verblijfsobjecten", "ligplaatsen", "standplaatsen"),
             "street": "straatnaam", "place": "woonplaats"},
}
_ID_COLUMNS = ("nummeraanduiding_hoofdadres_identificatie", "hoofdadres_identificatie", "nummer_id",
               "identificatie")


_STATUS_OK = NUM_OK | VBO_OK | PLAATS_OK


class GpkgError(ValueError):
    """The GeoPackage is not one of the known BAG layouts."""


def _xy(blob: bytes | None) -> tuple[float, float]:
    """The point of a GeoPackage geometry blob (a point, or a polygon's centroid)."""
    if not blob or blob[:2] != b"GP":
        return np.nan, np.nan
    flags = blob[3]
    env = (flags >> 1) & 7
    off = 8 + {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}.get(env, 0)
    wkb = blob[off:]
    bo = "<" if wkb[0] == 1 else ">"
    gtype = struct.unpack(bo + "I", wkb[1:5])[0]
    base, dims = gtype % 1000, (3 if 1000 <= gtype < 3000 else 4 if gtype >= 3000 else 2)
    if gtype & 0x80000000:                    # EWKB-style Z flag
        base, dims = gtype & 0xFF, 3
    if base == 1:
        x, y = struct.unpack(bo + "dd", wkb[5:21])
        return x, y
    if base == 3:
        nrings = struct.unpack(bo + "I", wkb[5:9])[0]
        if not nrings:
            return np.nan, np.nan
        npts = struct.unpack(bo + "I", wkb[9:13])[0]
        pts = np.frombuffer(wkb[13:13 + 8 * dims * npts], dtype=bo + "f8").reshape(-1, dims)[:, :2]
        return _centroid(pts)
    return np.nan, np.nan


def read_gpkg(path: str | Path,
              municipalities: str | os.PathLike | MunicipalityReference | None = None) -> LvbagResult:
    """Read the address tables of a PDOK GeoPackage (see the module docstring); `municipalities`
    is the reference that names the municipalities (a file, a loaded one, None: the default)."""
    path = Path(path)
    ref = (municipalities if isinstance(municipalities, MunicipalityReference)
           else load_reference(municipalities))
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM gpkg_contents")}
    except sqlite3.DatabaseError as e:
        con.close()
        raise GpkgError(f"not a GeoPackage: {e}") from None
    try:
        return _read_tables(con, tables, ref)
    except sqlite3.DatabaseError as e:
        # NOTE: a page damaged in the tables is found only when a row on it is read ("database
        # disk image is malformed", a name that is not UTF-8); it was a traceback (issue 37)
        raise GpkgError(f"the GeoPackage is damaged: {e} (SQLite); download it again") from None
    finally:
        con.close()


def _read_tables(con: sqlite3.Connection, tables: set[str], ref: MunicipalityReference) -> LvbagResult:
    """The addresses of the BAG tables of the open GeoPackage `con` (see `read_gpkg`)."""
    layout = next((k for k, v in LAYOUTS.items() if set(v["tables"]) & tables), None)
    if layout is None:
        raise GpkgError(f"none of the BAG tables ({', '.join(LAYOUTS['bag-light']['tables'])}) in {sorted(tables)}")
    spec = LAYOUTS[layout]
    counts = {r: 0 for r in LEFT_OUT_REASONS}
    by_type: dict[str, dict[str, int]] = {}
    examples: dict[str, list[str]] = {r: [] for r in LEFT_OUT_REASONS}
    rows: list[tuple] = []
    for name in spec["tables"]:
        if name not in tables:
            continue
        srs = con.execute("SELECT srs_id, column_name FROM gpkg_geometry_columns WHERE table_name = ?",
                          (name,)).fetchone()
        if srs is None:
            raise GpkgError(f"table {name} has no geometry column")
        if srs[0] != 28992:
            raise GpkgError(f"table {name} is in EPSG:{srs[0]}, not RD New (EPSG:28992)")
        cols = {r[1] for r in con.execute(f'PRAGMA table_info("{name}")')}
        need = {spec["street"], "huisnummer", "postcode", spec["place"]}
        if not need <= cols:
            raise GpkgError(f"table {name} lacks the columns {sorted(need - cols)}")
        id_col = next((c for c in _ID_COLUMNS if c in cols), None)
        gem_col = next((c for c in ("gemeentecode", "gemeente_code") if c in cols), None)

        def col(c, cols=cols):
            return f'"{c}"' if c in cols else "NULL"

        sql = (f'SELECT {col(spec["street"])}, huisnummer, {col("huisletter")}, {col("toevoeging")}, '
               f'postcode, {col(spec["place"])}, {col(id_col) if id_col else "NULL"}, '
               f'{col(gem_col) if gem_col else "NULL"}, {col("status")}, {col("datum_eind")}, '
               f'"{srs[1]}" FROM "{name}" ORDER BY rowid')
        per = by_type[name] = {r: 0 for r in LEFT_OUT_REASONS}
        for street, number, letter, addition, postcode, place, ident, gem, status, end, geom in con.execute(sql):
            def out(reason, why, per=per, ident=ident, name=name):
                per[reason] += 1
                if len(examples[reason]) < 5:
                    examples[reason].append(f"{name} {ident}: {why}")
            if end and str(end).strip():
                out("history", f"ended {end}")
                continue
            # the flat layout's status is the nummeraanduiding's, bag-light's the object's
            if status and status not in _STATUS_OK:
                out("status", status)
                continue
            code = f"{int(gem):04d}" if gem not in (None, "") else (str(ident)[:4] if ident else "")
            if not postcode or not str(postcode).strip():
                out("no_postcode", "no postcode")
                continue
            x, y = _xy(geom)
            if not np.isfinite(x):
                out("no_position", "no geometry")
                continue
            rows.append((street or "", number, letter or "", addition or "", str(postcode), place or "", code,
                         x, y, int(ident) if ident and str(ident).isdigit() else 0, name))
    # the municipality of each address: its own place in the reference, else its code's
    placed = []
    found, unknown = ref.each([(r[6], r[5], r[4]) for r in rows])
    n_codes = len({r[6] for r, m in zip(rows, found, strict=True) if m >= 0})
    for r, m in zip(rows, found, strict=True):
        if m < 0:
            by_type[r[10]]["dangling_reference"] += 1
            if len(examples["dangling_reference"]) < 5:
                examples["dangling_reference"].append(f"{r[10]} {r[9]:016d}: {ref.why_not(r[6], r[5], r[4])}")
            continue
        placed.append((*r[:6], ref.munis[m], *r[7:10]))
    rows = placed
    for per in by_type.values():
        for r, n in per.items():
            counts[r] += n
    from pyproj import Transformer
    xs = np.array([r[7] for r in rows], dtype=np.float64)
    ys = np.array([r[8] for r in rows], dtype=np.float64)
    lon, lat = Transformer.from_crs("EPSG:28992", "EPSG:4326", always_xy=True).transform(xs, ys)
    lines = [_HEADER]
    for r, la, lo in zip(rows, lat.tolist(), lon.tolist(), strict=True):
        m = r[6]
        former = former_name(r[9], m.name) if r[9] else ""
        lines.append(f"{_quote(r[0])};{r[1]};{_quote(r[2])};{_quote(r[3])};{_quote(r[4])};{_quote(r[5])};"
                     f"{_quote(m.name)};{_quote(m.province)};{la:.6f};{lo:.6f};{_quote(former)}\n".encode())
    # the file's date: the newest change PDOK recorded in gpkg_contents
    stamp = con.execute("SELECT max(last_change) FROM gpkg_contents").fetchone()[0]
    return LvbagResult(csv=iter([b"".join(lines)]), line_ids=np.array([r[9] for r in rows], dtype=np.int64),
                       extract_date=(stamp or "")[:10] or None, left_out=counts, left_out_by_type=by_type,
                       skipped=[f"{layout} layout: main addresses only (a GeoPackage holds no nevenadressen)"],
                       examples=examples, files=1,
                       note=ref.describe_use(n_codes, unknown))
