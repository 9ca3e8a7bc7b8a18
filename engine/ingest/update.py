"""Apply the Kadaster's mutation deliveries to an index built from an LVBAG extract.

    python -m engine update INDEX_DIR BAGNLDM-13112021-14112021.zip [MORE ...] [--out NEW_DIR]

The register's state the build wrote beside the index (`engine.ingest.register`) takes the
deliveries in date order (`engine.ingest.mutations`), the addresses are joined again on the last
delivery's date by the extract build's own join (`engine.ingest.lvbag.join`), and the new index and
state are written by the build's own writer (`engine.ingest.build.write_index`): into a temporary
sibling, then renamed into place, so a running service picks the new index up with its usual
reload. The rules of the dates:

- a delivery follows the state when it starts on the state's date (`MutatiedatumVanaf` ==
  the register's date); the state then takes its `StandTechnischeDatum`;
- one the state has taken already (the same file, or the same period) is skipped, and so the
  same delivery applied twice changes nothing;
- one that leaves a gap, overlaps the state's period or is older is refused with a message
  naming both dates, unless `out_of_order` (``--out-of-order``); then it is applied, and the
  register's date becomes the later of the two.

The report says what each delivery added, changed and removed, by object type, and which
addresses appeared, changed or disappeared (the old index against the new one, by postcode,
number, letter and addition); it is printed and kept in the manifest (``"update"``).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from .build import check_target, write_index
from .lvbag import join
from .municipalities import load_reference
from .mutations import OPERATIONS, Delivery, apply, read_delivery
from .register import Register
from .source import check_bad_share, table_of

__all__ = ["UpdateError", "update", "address_changes"]

#: How many addresses of each kind (appeared, changed, disappeared) the report names.
EXAMPLES = 10


class UpdateError(ValueError):
    """A delivery cannot be applied to this index (its dates, or the index)."""


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _order(register: Register, deliveries: list[Delivery], out_of_order: bool, where: Path) -> list[Delivery]:
    """The deliveries to apply, in date order; skip those applied already; refuse one that
    does not follow (unless `out_of_order`)."""
    done_sha = {d.get("sha256") for d in register.deliveries}
    done_period = {(d.get("from"), d.get("to")) for d in register.deliveries}
    date = register.date
    todo, seen = [], set()
    for d in sorted(deliveries, key=lambda d: (d.start, d.end, d.date, d.name)):
        if d.sha256 in done_sha or (d.start, d.end) in done_period or d.sha256 in seen:
            _log(f"{d.describe()}: applied already (the register in {where} is of {date}); skipped")
            continue
        if d.start != date:
            if d.start > date:
                why = (f"it starts on {d.start}, but the register in {where} is of {date}: the deliveries "
                       f"from {date} to {d.start} are missing (a gap)")
            elif d.end <= date:
                why = (f"it ends on {d.end}, but the register in {where} is of {date} already: it is older "
                       "than the register")
            else:
                why = (f"it starts on {d.start}, but the register in {where} is of {date}: it overlaps what "
                       "the register holds")
            if not out_of_order:
                raise UpdateError(f"refusing {d.describe()}: {why}; give the deliveries in order from {date}, "
                                  "or --out-of-order to apply it anyway")
            _log(f"applying {d.describe()} out of order: {why}")
        todo.append(d)
        seen.add(d.sha256)
        date = max(date, d.date)
    return todo


def update(index_dir: str | os.PathLike, deliveries: list[str | os.PathLike], *,
           out_dir: str | os.PathLike | None = None, out_of_order: bool = False, force: bool = False,
           municipalities: str | os.PathLike | None = None, max_bad_share: float = 0.001) -> dict | None:
    """Apply the mutation `deliveries` to the index in `index_dir`; write the new index into
    `out_dir` (default: `index_dir` itself, replaced atomically); return its manifest, or None
    when every delivery was applied already (nothing is written then).

    `municipalities` gives another municipality reference (`engine.ingest.municipalities`); by
    default the one the build read, kept in the state. `force` replaces an `out_dir` that is
    not an index (`engine.ingest.build.check_target`)."""
    t0 = time.perf_counter()
    index_dir = Path(index_dir)
    out = Path(out_dir) if out_dir is not None else index_dir
    try:
        manifest = json.loads((index_dir / "manifest.json").read_text())
    except FileNotFoundError:
        raise UpdateError(f"no index at {index_dir}: {index_dir / 'manifest.json'} is missing") from None
    except (OSError, ValueError) as e:
        raise UpdateError(f"unreadable index manifest {index_dir / 'manifest.json'}: {e}") from None
    if not force:
        check_target(out)
    register = Register.load(index_dir, manifest)
    if not deliveries:
        raise UpdateError("no delivery given")
    read = []
    for p in deliveries:
        d = read_delivery(p)
        ops = ", ".join(f"{k} {sum(c.values()):,}" for k, c in d.delivered.items() if sum(c.values()))
        _log(f"read {d.describe()}: register date {d.date}; operations: {ops or 'none'}")
        read.append(d)
    todo = _order(register, read, out_of_order, index_dir)
    if not todo:
        _log(f"nothing to do: {index_dir} holds the register of {register.date}")
        return None
    t1 = time.perf_counter()
    report = []
    for d in todo:
        counts = apply(register.tables, d, area=register.area, relation=register.relation)
        if d.relation is not None:
            register.relation = d.relation
        register.date = max(register.date, d.date)
        entry = {"name": d.name, "from": d.start, "to": d.end, "date": d.date, "sha256": d.sha256,
                 "objects": {k: v for k, v in counts.items() if any(v.values())}, "skipped": d.skipped}
        register.deliveries.append({k: entry[k] for k in ("name", "from", "to", "date", "sha256")})
        report.append(entry)
        _report_objects(entry, register.area)
    if municipalities is not None:
        register.reference = load_reference(municipalities)
    t2 = time.perf_counter()
    res = join(register.tables, register.relation, register.date, register.reference, area=register.area,
               where=str(index_dir))
    table = table_of(res, name=manifest.get("source_name", index_dir.name),
                     sha256=manifest.get("source_sha256", ""), size=0, source_format="lvbag-xml")
    table.extract_date = register.extract.get("date", manifest.get("extract_date"))
    table.register_date = register.date
    table.skipped = [f"{d['name']}: {s}" for d in report for s in d["skipped"]]
    check_bad_share(table, res, max_bad_share, index_dir.name)
    table.register = register
    del register, res       # PERF: the writer lets the state go once it is written
    t3 = time.perf_counter()

    def extra(arrays: dict) -> dict:
        changes = address_changes(index_dir, arrays)
        _report_addresses(changes)
        return {"update": {"deliveries": report, "addresses": changes,
                           "seconds": {"read_and_apply": round(t2 - t0, 1), "join": round(t3 - t2, 1)}}}

    _log(f"applied {len(todo)} deliveries in {t2 - t1:.1f} s (read with the state: {t1 - t0:.1f} s); "
         f"joined in {t3 - t2:.1f} s")
    return write_index(table, out, force=force, started=t0, manifest_extra=extra)


def _report_objects(entry: dict, area: list[str]) -> None:
    """Say what a delivery did, per object type."""
    _log(f"{entry['name']} ({entry['from']} to {entry['to']}):")
    where = f"the area ({', '.join(area)})" if area else "the country"
    for kind, c in entry["objects"].items():
        delivered = ", ".join(f"{op} {c[op]:,}" for op in OPERATIONS if c[op])
        if kind == "PND":
            _log(f"  PND: {delivered}: panden hold no address, not kept")
            continue
        outside = f", {c['outside_area']:,} of them outside {where} (not kept)" if c["outside_area"] else ""
        _log(f"  {kind}: {delivered}: {c['objects']:,} objects{outside}; versions added {c['added']:,} "
             f"(new objects {c['new_objects']:,}), changed {c['changed']:,}, removed {c['removed']:,}")


def _report_addresses(changes: dict) -> None:
    _log(f"addresses: {changes['appeared']:,} appeared, {changes['changed']:,} changed, "
         f"{changes['disappeared']:,} disappeared")
    for what in ("appeared", "changed", "disappeared"):
        for e in changes["examples"][what]:
            _log(f"  {what}: {e}")


# ------------------------------------------------------------------ the addresses, old and new

_COLUMNS = ("a_group", "a_number", "a_letter", "a_addition", "a_postcode", "a_lat", "a_lon", "g_street",
            "g_locality", "g_municipality", "g_province", "s_blob", "s_off", "add_blob", "add_off", "pc_addr")


def _texts(blob: np.ndarray, off: np.ndarray) -> list[str]:
    data = np.asarray(blob).tobytes()
    return [data[off[i]:off[i + 1]].decode() for i in range(len(off) - 1)]


class _Addresses:
    """The addresses of one index as integers: a key per address (postcode, number, letter
    and addition, case-insensitive: the index holds each key once), the keys' order, and what
    each says: its group's street, place, municipality and province (`group_says`), its lat,
    lon, letter and addition as registered, the texts numbered in `vocab`, which two indexes
    share."""

    def __init__(self, a: dict, vocab: dict[str, int], add_keys: dict[str, int]) -> None:
        names = np.array([vocab.setdefault(json.loads(f'"{s}"'), len(vocab)) for s in _texts(a["s_blob"], a["s_off"])],
                         dtype=np.int32)
        adds = _texts(a["add_blob"], a["add_off"])
        add_id = np.array([vocab.setdefault(x, len(vocab)) for x in adds], dtype=np.int32)
        add_key = np.array([add_keys.setdefault(x.upper(), len(add_keys)) for x in adds], dtype=np.int64)
        self.group = np.asarray(a["a_group"])
        self.letter = np.asarray(a["a_letter"])
        upper = np.where((self.letter >= 97) & (self.letter <= 122), self.letter - 32, self.letter)
        addition = np.asarray(a["a_addition"])
        # PERF: one 64-bit key (postcode < 2**23, number < 2**17, letter < 2**8, addition < 2**16)
        if len(add_keys) >= 1 << 16:
            raise ValueError("too many distinct additions to compare two indexes")
        u = np.uint64
        self.postcode, self.number = np.asarray(a["a_postcode"]), np.asarray(a["a_number"])
        self.key = ((self.postcode.astype(u) << u(41)) | (self.number.astype(u) << u(24))
                    | (upper.astype(u) << u(16)) | add_key[addition].astype(u))
        # PERF: the addresses in the postcode index's order (by postcode and number) are nearly
        # in the keys' order: a stable sort (a merge of runs) finishes them in a few passes
        pc_addr = np.asarray(a["pc_addr"])
        self.order = pc_addr[np.argsort(self.key[pc_addr], kind="stable")]
        self.group_says = np.stack([names[np.asarray(a["g_street"])], names[np.asarray(a["g_locality"])],
                                    names[np.asarray(a["g_municipality"])], names[np.asarray(a["g_province"])]],
                                   axis=1)
        self.lat, self.lon, self.addition = np.asarray(a["a_lat"]), np.asarray(a["a_lon"]), add_id[addition]

    def says(self, i: int) -> list[int]:
        """What address `i` says: street, place, municipality, province, lat, lon, letter, addition."""
        return [*self.group_says[self.group[i]].tolist(), int(self.lat[i]), int(self.lon[i]), int(self.letter[i]),
                int(self.addition[i])]

    def differences(self, i: int, other: _Addresses, j: int, text: list[str]) -> str:
        """What address `j` of `other` says otherwise than address `i` of this index."""
        was, now = self.says(i), other.says(j)
        out = [f"{what} {text[a]!r} -> {text[b]!r}" for what, a, b in zip(
            ("street", "place", "municipality", "province"), was[:4], now[:4], strict=True) if a != b]
        if was[4:6] != now[4:6]:
            dy = (now[4] - was[4]) / 1e6 * 111_195.0
            dx = (now[5] - was[5]) / 1e6 * 111_195.0 * math.cos(math.radians(was[4] / 1e6))
            out.append(f"moved {math.hypot(dx, dy):,.0f} m")
        if was[6:] != now[6:]:
            out.append("letter or addition spelt otherwise")
        return ", ".join(out)

    def label(self, i: int, text: list[str]) -> str:
        """'Kosterstraat 4, 6981CH Doesburg' for address `i`."""
        street, place, _, _, _, _, letter, addition = self.says(i)
        pc = int(self.postcode[i])
        suffix = (chr(letter) if letter else "") + (f"-{text[addition]}" if text[addition] else "")
        return (f"{text[street]} {self.number[i]}{suffix}, {pc // 676:04d}{chr(65 + pc % 676 // 26)}"
                f"{chr(65 + pc % 26)} {text[place]}")


def _common(a: _Addresses, b: _Addresses) -> tuple[np.ndarray, np.ndarray]:
    """The positions in `a` and in `b` of the keys both hold (each holds a key once), in the
    order of the keys: `np.intersect1d(a.key, b.key, assume_unique=True, return_indices=True)[1:]`.

    PERF: each in its keys' order (`_Addresses.order`), merged by a search, not the two sorted
    together."""
    oa, ob = a.order, b.order
    sa, sb = a.key[oa], b.key[ob]
    pos = np.minimum(np.searchsorted(sa, sb), max(len(sa) - 1, 0))
    both = (sa[pos] == sb) if len(sa) else np.zeros(len(sb), dtype=bool)
    return oa[pos[both]], ob[both]


def _others(taken: np.ndarray, n: int) -> np.ndarray:
    """0 .. n - 1 but `taken`, in order."""
    mask = np.ones(n, dtype=bool)
    mask[taken] = False
    return np.flatnonzero(mask)


def address_changes(old_dir: Path, new: dict) -> dict:
    """Which addresses of the index in `old_dir` are not in the arrays `new` (disappeared),
    which are new (appeared) and which say something else (changed: street, place,
    municipality, province, point, the letter's or addition's spelling): counts and examples."""
    vocab: dict[str, int] = {}
    add_keys: dict[str, int] = {}
    old = _Addresses({k: np.load(old_dir / f"{k}.npy", mmap_mode="r") for k in _COLUMNS}, vocab, add_keys)
    now = _Addresses({k: new[k] for k in _COLUMNS}, vocab, add_keys)
    text = list(vocab)
    io, inn = _common(old, now)
    gone = _others(io, len(old.key))
    came = _others(inn, len(now.key))
    # PERF: the groups' four texts compared as one number per distinct four, a column at a time
    _, says_id = np.unique(np.concatenate([old.group_says, now.group_says]), axis=0, return_inverse=True)
    says_id = says_id.ravel()
    differ = says_id[old.group[io]] != says_id[len(old.group_says) + now.group[inn]]
    for a_col, b_col in ((old.lat, now.lat), (old.lon, now.lon), (old.letter, now.letter),
                         (old.addition, now.addition)):
        differ |= a_col[io] != b_col[inn]
    a, b = io[differ], inn[differ]
    examples = {
        "appeared": [now.label(int(i), text) for i in came[:EXAMPLES]],
        "changed": [f"{old.label(int(i), text)}: {old.differences(int(i), now, int(j), text)}"
                    for i, j in zip(a[:EXAMPLES], b[:EXAMPLES], strict=True)],
        "disappeared": [old.label(int(i), text) for i in gone[:EXAMPLES]],
    }
    return {"appeared": int(len(came)), "changed": int(len(a)), "disappeared": int(len(gone)),
            "examples": examples}
