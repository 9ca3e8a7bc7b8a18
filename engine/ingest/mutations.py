"""Read the Kadaster's mutation deliveries (BAG 2.0, daily or monthly) and apply them to the
register's state.

    delivery = read_delivery("BAGNLDM-13112021-14112021.zip")   # or its unpacked directory
    counts = apply(register, delivery)                            # engine.ingest.register.Register

A delivery holds `Leveringsdocument-BAG-Extract.xml` (a `MUT-Extract`: its
`StandTechnischeDatum` and the period `MutatiedatumVanaf` .. `MutatiedatumTot`), the mutation
files `9999MUT<from>-<to>-NNNNNN.xml` (in a zip of that name), the in-onderzoek marks
(`9999IOMUT…`, not read: no part of an address) and a whole `GEM-WPL-RELATIE` file. A mutation
file is `mlm:bagMutaties / ml:mutatieGroep*`; each group holds `ml:wijziging` (`ml:was` +
`ml:wordt`), `ml:toevoeging` (`ml:wordt`) and `ml:verwijdering` (`ml:was`), each wrapping
`mlm:bagObject / Objecten:<Type>`, read by the extract's own reader (`engine.ingest.lvbag.ObjectReader`).

The Kadaster's rules, applied to the versions (voorkomens) of each object, in the order of the
file: a `toevoeging` adds the version it carries (a new object, or the next version of one); a
`wijziging` replaces the version of its `was` by its `wordt` (closing it: `eindGeldigheid`,
or marking it inactive: `tijdstipInactief`); a `verwijdering` removes the version of its `was`.
Which version is current is then decided as for an extract (`engine.ingest.lvbag._current`) on the
delivery's `StandTechnischeDatum`. Panden hold no address: counted, not kept.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from ..files import sha256_of
from .lvbag import (
    KINDS,
    MUTATION_FILE,
    TAGS,
    Columns,
    LvbagError,
    ObjectReader,
    _concat,
    _list,
    _open_chain,
    _texts,
    relation_rows,
)

__all__ = ["Delivery", "DeliveryError", "read_delivery", "apply", "OPERATIONS"]

OPERATIONS = ("toevoeging", "wijziging", "verwijdering")
_KIND_OF_TAG = {tag: kind for kind, tag in TAGS.items()}
_NO_ADDRESS = {"Pand": "PND"}    # object types a delivery carries that no address reads
_IN_ONDERZOEK = re.compile(r"\d{4}IOMUT\d{8}-\d{8}", re.I)


class DeliveryError(ValueError):
    """The file is not a readable mutation delivery."""


@dataclass
class Delivery:
    """One mutation delivery, read: its dates and, per object type, the versions it puts and removes."""

    path: Path
    date: str                 # StandTechnischeDatum (YYYY-MM-DD)
    start: str                # MutatiedatumVanaf
    end: str                  # MutatiedatumTot
    sha256: str
    # per type, in the order of the file, the last operation on each version:
    # (identificatie, voorkomen) -> the record to put (ObjectReader.read), or None to remove it
    versions: dict[str, dict[tuple[int, int], tuple | None]] = field(default_factory=dict)
    delivered: dict[str, Counter] = field(default_factory=dict)   # per type: operations as delivered
    relation: dict | None = None       # its GEM-WPL-RELATIE rows, if it has that file
    skipped: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name

    def describe(self) -> str:
        return f"{self.name} ({self.start} to {self.end})"


def _find(root: Path) -> tuple[tuple | None, list[tuple], list[tuple], list[str]]:
    """The delivery document, the mutation files, the GEM-WPL-RELATIE files and what is skipped."""
    doc, muts, gwr, skipped = None, [], [], []

    def classify(chain: tuple[str, ...], shown: str) -> None:
        base = chain[-1].replace("\\", "/").rsplit("/", 1)[-1]
        low = base.lower()
        nonlocal doc
        if not base or "__MACOSX/" in chain[-1] or base.startswith("."):
            skipped.append(f"{shown} (junk)")
        elif low.startswith("leveringsdocument") and low.endswith(".xml"):
            doc = chain
        elif _IN_ONDERZOEK.search(base):
            skipped.append(f"{shown} (in-onderzoek marks: no part of an address)")
        elif low.startswith("gem-wpl-relatie") and low.endswith(".xml"):
            gwr.append(chain)
        elif MUTATION_FILE.search(base) and low.endswith(".xml"):
            muts.append(chain)
        elif low.endswith(".zip"):
            for inner, _ in _list(chain):
                classify(chain + (inner,), f"{shown}/{inner}")
        else:
            skipped.append(f"{shown} (not part of a mutation delivery)")

    if root.is_dir():
        for p in sorted(q for q in root.rglob("*") if q.is_file()):
            classify((str(p),), p.relative_to(root).as_posix())
    else:
        for name, _ in _list((str(root),)):
            classify((str(root), name), name)
    return doc, sorted(muts), gwr, skipped


def _iso(text: str, what: str, where: Path) -> str:
    import datetime as dt
    try:
        return dt.date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        raise DeliveryError(f"{where}: unreadable {what} {text!r}") from None


def read_delivery(path: str | os.PathLike) -> Delivery:
    """Read a mutation delivery (zip, zip of zips, or its unpacked directory); DeliveryError
    when it is none or cannot be read."""
    root = Path(path)
    if not root.exists():
        raise DeliveryError(f"{root}: no such file or directory")
    try:
        return _read(root)
    except (zipfile.BadZipFile, OSError, LvbagError) as e:
        raise DeliveryError(f"{root}: {e}") from None
    except etree.LxmlError as e:
        raise DeliveryError(f"{root}: broken XML: {e}") from None


def _read(root: Path) -> Delivery:
    if root.is_file():
        with open(root, "rb") as f:
            if f.read(4) != b"PK\x03\x04":
                raise DeliveryError(f"{root}: not a zip or a directory: a mutation delivery is a zip "
                                    "(BAGNLDM-DDMMYYYY-DDMMYYYY.zip) or the directory it unpacks to")
    doc, muts, gwr, skipped = _find(root)
    if not muts:
        raise DeliveryError(f"{root}: no mutation files (9999MUT…-…-NNNNNN.xml): not a mutation delivery"
                            + (" (an extract? build it with python -m engine build)" if doc else ""))
    source = doc or muts[0]   # without a delivery document, the bagInfo of the mutation file
    dates = _texts(source, "StandTechnischeDatum")
    starts = _texts(source, "MutatiedatumVanaf")
    ends = _texts(source, "MutatiedatumTot")
    if not (dates and starts and ends):
        raise DeliveryError(f"{root}: its delivery document names no StandTechnischeDatum and mutation period "
                            "(MutatiedatumVanaf, MutatiedatumTot): not a mutation delivery")
    d = Delivery(path=root, date=_iso(dates[0], "StandTechnischeDatum", root),
                 start=_iso(starts[0], "MutatiedatumVanaf", root), end=_iso(ends[0], "MutatiedatumTot", root),
                 sha256=sha256_of(root)[0], skipped=skipped)
    if d.start > d.end or d.date < d.end:
        raise DeliveryError(f"{root}: its period {d.start} to {d.end} and date {d.date} do not fit together")
    d.versions = {k: {} for k in KINDS}
    d.delivered = {k: Counter() for k in (*KINDS, "PND")}
    reader = ObjectReader()
    for chain in muts:
        _read_file(chain, reader, d)
    if gwr:
        d.relation = relation_rows(gwr)
    return d


def _read_file(chain: tuple[str, ...], reader: ObjectReader, d: Delivery) -> None:
    """The groups of one mutation file into `d` (PERF: each group cleared once read)."""
    with _open_chain(chain[0], chain[1:]) as f:
        for _, group in etree.iterparse(f, events=("end",), tag="{*}mutatieGroep", huge_tree=True):
            for op_el in group:
                op = etree.QName(op_el).localname
                if op not in OPERATIONS:
                    raise DeliveryError(f"{chain[-1]}: a mutatieGroep holds {op!r}, not one of {', '.join(OPERATIONS)}")
                parts = {etree.QName(p).localname: p for p in op_el}
                was, wordt = _object(parts.get("was")), _object(parts.get("wordt"))
                if (op == "toevoeging" and wordt is None) or (op == "verwijdering" and was is None) \
                        or (op == "wijziging" and (was is None or wordt is None)):
                    missing = "was and wordt" if op == "wijziging" else "wordt" if wordt is None else "was"
                    raise DeliveryError(f"{chain[-1]}: a {op} without its {missing}")
                tag = etree.QName(wordt if wordt is not None else was).localname
                if tag in _NO_ADDRESS:
                    d.delivered["PND"][op] += 1
                    continue
                kind = _KIND_OF_TAG.get(tag)
                if kind is None:
                    raise DeliveryError(f"{chain[-1]}: a {op} of an object of type {tag!r}, which the BAG has not")
                d.delivered[kind][op] += 1
                versions = d.versions[kind]
                if was is not None:
                    rec = reader.read(was)
                    key = _key(rec, chain)
                    if op != "wijziging" or key not in versions:
                        versions[key] = None      # removed (a wijziging's was: replaced below)
                if wordt is not None:
                    rec = reader.read(wordt)
                    key = _key(rec, chain)
                    versions.pop(key, None)       # the last operation on a version is the one kept
                    versions[key] = rec
            group.clear()
            parent = group.getparent()
            if parent is not None:
                while group.getprevious() is not None:
                    del parent[0]


def _object(part):
    """The `Objecten:<Type>` element inside an `ml:was` / `ml:wordt` (its `mlm:bagObject`)."""
    if part is None or not len(part) or not len(part[0]):
        return None
    return part[0][0]


def _key(rec: tuple, chain: tuple[str, ...]) -> tuple[int, int]:
    ident, vk = rec[0], rec[1]
    if not ident.isdigit():
        raise DeliveryError(f"{chain[-1]}: an object whose identificatie is {ident!r}")
    return int(ident), vk


def among(values: np.ndarray, few: np.ndarray) -> np.ndarray:
    """Whether each of `values` is one of `few`.

    PERF: `np.isin` sorts (or hashes) both; the state's whole-country columns (9 million
    records) are only searched here, in the few thousand identifications a delivery names."""
    few = np.unique(few)
    if len(few) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.minimum(np.searchsorted(few, values), len(few) - 1)
    return few[pos] == values


def in_area(kind: str, ids: np.ndarray, held: np.ndarray, area: list[str], relation: dict) -> np.ndarray:
    """Whether each object (`ids`) is the state's business: the whole country (no `area`); else
    an object the state holds (`held`: those of `ids` it holds), one whose identification starts
    with a municipality code of the area (the municipality that issued it), or a woonplaats
    GEM-WPL-RELATIE puts in one."""
    if not area:
        return np.ones(len(ids), dtype=bool)
    codes = np.array([int(c) for c in area], dtype=np.int64)
    inside = np.isin(ids, held) | np.isin(ids // 10**12, codes)
    if kind == "WPL":
        inside |= np.isin(ids, relation["wpl"][np.isin(relation["gem"], codes)])
    return inside


def apply(tables: dict[str, dict], d: Delivery, *, area: list[str], relation: dict) -> dict[str, dict[str, int]]:
    """Apply the versions of delivery `d` to `tables` (the register's state, changed in place);
    return what was done, per object type: the objects it names (``objects``), of which outside
    the state's area (``outside_area``, not applied); versions added (``added``), of which of
    new objects (``new_objects``: the objects), versions replaced (``changed``), removed
    (``removed``); and the operations as delivered (``toevoeging``, ``wijziging``,
    ``verwijdering``).

    PERF: a version replaced or removed is marked (identificatie -1, which no rule reads and the
    state does not keep) instead of being cut out of the whole-country columns."""
    out: dict[str, dict[str, int]] = {}
    for kind in (*KINDS, "PND"):
        counts = dict.fromkeys(("objects", "outside_area", "added", "new_objects", "changed", "removed"), 0)
        counts.update({op: d.delivered[kind][op] for op in OPERATIONS})
        out[kind] = counts
        if kind == "PND":
            continue
        versions = d.versions[kind]
        if not versions:
            continue
        t = tables[kind]
        keys = np.array(list(versions), dtype=np.int64).reshape(-1, 2)
        counts["objects"] = len(np.unique(keys[:, 0]))
        rows = np.nonzero(among(t["id"], keys[:, 0]))[0]     # every version held of the objects named
        held_ids = np.unique(t["id"][rows])
        inside = in_area(kind, keys[:, 0], held_ids, area, relation)
        outside = {int(i) for i in keys[~inside, 0]}
        counts["outside_area"] = len(outside)
        keys = keys[inside]
        held_before = np.isin(keys[:, 0], held_ids)
        # the versions held that the delivery names: replaced or removed
        named = {(int(i), int(v)) for i, v in keys.tolist()}
        rows = np.array([r for r in rows.tolist() if (int(t["id"][r]), int(t["vk"][r])) in named], dtype=np.int64)
        held = {(int(t["id"][r]), int(t["vk"][r])) for r in rows.tolist()}
        t["id"][rows] = -1
        cols = Columns(kind)
        new_objects = set()
        for (ident, vk), new_obj in zip(keys.tolist(), (~held_before).tolist(), strict=True):
            rec = versions[ident, vk]
            if rec is None:
                counts["removed"] += (ident, vk) in held
                continue
            cols.add(rec)
            if (ident, vk) in held:
                counts["changed"] += 1
            else:
                counts["added"] += 1
                if new_obj:
                    new_objects.add(ident)
        counts["new_objects"] = len(new_objects)
        if len(cols):
            tables[kind] = _concat([t, cols.arrays()])
    return out
