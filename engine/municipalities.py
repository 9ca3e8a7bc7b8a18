"""The municipality table: CBS municipality code -> name and province.

The BAG names no municipality: the LVBAG extract links each woonplaats to a municipality code
(its `GEM-WPL-RELATIE` file), and PDOK's GeoPackage names only the woonplaats. The names and
provinces come from `engine/data/municipalities.csv` (code;name;province, one row per
municipality of the current layout), shipped with the package. It is reference metadata, not
address data, and is derived from public data:

- the codes and names from CBS's yearly list of municipalities ("Gemeenten alfabetisch",
  columns `GemeentecodeGM` or `Gemeentecode`, and `Gemeentenaam`; `Provincienaam` when it has
  it), and
- the provinces (when the CBS file has none) from an address CSV of our layout, which names
  the province of every municipality; its municipality names must match the CBS names.

Regenerate it after a municipal merger (1 January of most years):

    python -m engine.municipalities gemeenten-alfabetisch-2025.csv \\
        --provinces ../shared/data/nl-addresses.csv.zst > engine/data/municipalities.csv
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from functools import cache
from importlib import resources

__all__ = ["Municipality", "municipalities", "by_name"]

TABLE = "municipalities.csv"


class Municipality(tuple):
    """(code, name, province); `code` is the four-digit CBS code as text (`0221`)."""

    __slots__ = ()

    def __new__(cls, code: str, name: str, province: str):
        return super().__new__(cls, (code, name, province))

    code = property(lambda self: self[0])
    name = property(lambda self: self[1])
    province = property(lambda self: self[2])


@cache
def municipalities() -> dict[str, Municipality]:
    """The shipped table, by four-digit code."""
    text = resources.files("engine").joinpath("data", TABLE).read_text(encoding="utf-8")
    rows = csv.reader(io.StringIO(text), delimiter=";")
    header = next(rows)
    if header != ["code", "name", "province"]:
        raise ValueError(f"engine/data/{TABLE}: unexpected header {header}")
    return {r[0]: Municipality(*r) for r in rows if r}


@cache
def by_name() -> dict[str, Municipality]:
    """The shipped table, by municipality name."""
    return {m.name: m for m in municipalities().values()}


def _read_cbs(path: str) -> list[tuple[str, str, str]]:
    """(code, name, province or '') from a CBS municipality list (`;` or `,` separated)."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        text = f.read()
    dialect = csv.Sniffer().sniff(text.splitlines()[0], delimiters=";,\t")
    rows = list(csv.DictReader(io.StringIO(text), dialect=dialect))
    out = []
    for r in rows:
        r = {k.strip(): (v or "").strip() for k, v in r.items() if k}
        code = r.get("GemeentecodeGM") or r.get("Gemeentecode") or ""
        code = code.removeprefix("GM").zfill(4)
        name = r.get("Gemeentenaam", "")
        if not code.isdigit() or len(code) != 4 or not name:
            raise SystemExit(f"{path}: a row without a four-digit code and a name: {r}")
        out.append((code, name, r.get("Provincienaam", "")))
    return out


def _provinces_from_csv(path: str) -> dict[str, str]:
    """Municipality name -> province, from an address CSV of our layout (.csv or .csv.zst)."""
    import zstandard

    raw = open(path, "rb")
    stream = zstandard.ZstdDecompressor().stream_reader(raw) if path.endswith(".zst") else raw
    with raw, io.TextIOWrapper(stream, encoding="utf-8", newline="") as text:
        header = text.readline().rstrip("\r\n").split(";")
        gi, pi = header.index("gemeente"), header.index("provincie")
        seen: dict[str, str] = {}
        for line in text:
            parts = line.split(";")
            seen.setdefault(parts[gi], parts[pi])
    return seen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.municipalities", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cbs", help="CBS 'Gemeenten alfabetisch' list (CSV)")
    ap.add_argument("--provinces", help="address CSV of our layout naming each municipality's province")
    args = ap.parse_args(argv)
    rows = _read_cbs(args.cbs)
    if args.provinces:
        prov = _provinces_from_csv(args.provinces)
        names = {name for _, name, _ in rows}
        unknown = sorted(set(prov) - names)
        if unknown:
            raise SystemExit(f"municipalities in {args.provinces} not in {args.cbs}: {unknown}")
        rows = [(c, n, p or prov.get(n, "")) for c, n, p in rows]
    missing = [n for _, n, p in rows if not p]
    if missing:
        raise SystemExit(f"no province for {missing}: give --provinces")
    out = csv.writer(sys.stdout, delimiter=";", lineterminator="\n")
    out.writerow(["code", "name", "province"])
    out.writerows(sorted(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
