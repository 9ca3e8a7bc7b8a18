"""Round trip at scale: write an LVBAG extract from our CSV, build from both, compare.

    python benchmarks/lvbag_roundtrip.py [--source CSV] [--work DIR] [--keep]

1. Every address the CSV build accepts is written into an extract in the official layout:
   `lvbag-extract-nl.zip` holding `Leveringsdocument-BAG-Extract.xml`, `GEM-WPL-RELATIE-….zip`
   and one zip per object type (`9999WPL….zip`, `9999OPR…`, `9999NUM…`, `9999VBO…`, `9999LIG…`,
   `9999STA…`, `9999PND…`) of XML files of 10,000 objects each, with the namespaces and element
   paths of the real files (`sl-bag-extract:bagStand / sl:standBestand / sl:stand /
   sl-bag-extract:bagObject / Objecten:<Type>`), RD New coordinates (3 decimals, as the
   Kadaster writes them), the Inactief / InOnderzoek / NietBag zips of zips and the junk of a
   zip made on a Mac (`.DS_Store`, `__MACOSX/`).
2. A share of the objects (`--history`, default 0.1) also holds an older version (voorkomen)
   that ended before the extract's date, with another postcode, number or position: choosing
   the wrong version changes the address. Half of them come before the current version in the
   file, half after. Addresses that share a point with the one before them on the same
   postcode are written as secondary addresses (nevenadressen) of its verblijfsobject. Berths
   and pitches (`type` LIG, STA) get a polygon whose centroid is the address point.
3. Each file also holds records the build must leave out, each for one reason: a withdrawn
   nummeraanduiding, one without a postcode, one on a street that is not in the extract, one
   whose verblijfsobject was never built (no position). Their house numbers (90001+) exist in
   no CSV, so if one is let in the comparison fails.
4. `python -m engine build` runs on the CSV and on the extract (each in its own process, its
   peak memory read from the kernel); the two indexes must hold the same addresses (postcode,
   number, letter, addition) with the same street, place, municipality and province, every
   point within 1 m; the left-out counts must be exactly those written. The extract names
   municipalities by code only, as the real one does: each municipality of the CSV gets a code
   (0001, 0002, ... in name order), and the extract build is given the CSV as its municipality
   reference (`--municipalities`), which names each code by its addresses' woonplaats and postcode.

CI runs it on the sample (`--source ../shared/data/nl-addresses-sample.csv.zst`); the whole
country is the benchmark (the build's time and peak memory are printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import math
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.source import read_source  # noqa: E402

PER_FILE = 10_000
EXTRACT_DATE = dt.date(2026, 11, 8)
JUNK_NUMBER = 90_001          # house numbers of the records that must be left out

NS = (
    'xmlns:DatatypenNEN3610="www.kadaster.nl/schemas/lvbag/imbag/datatypennen3610/v20200601" '
    'xmlns:Objecten="www.kadaster.nl/schemas/lvbag/imbag/objecten/v20200601" '
    'xmlns:gml="http://www.opengis.net/gml/3.2" '
    'xmlns:Historie="www.kadaster.nl/schemas/lvbag/imbag/historie/v20200601" '
    'xmlns:Objecten-ref="www.kadaster.nl/schemas/lvbag/imbag/objecten-ref/v20200601" '
    'xmlns:nen5825="www.kadaster.nl/schemas/lvbag/imbag/nen5825/v20200601" '
    'xmlns:KenmerkInOnderzoek="www.kadaster.nl/schemas/lvbag/imbag/kenmerkinonderzoek/v20200601" '
    'xmlns:selecties-extract="http://www.kadaster.nl/schemas/lvbag/extract-selecties/v20200601" '
    'xmlns:sl-bag-extract="http://www.kadaster.nl/schemas/lvbag/extract-deelbestand-lvc/v20200601" '
    'xmlns:sl="http://www.kadaster.nl/schemas/standlevering-generiek/1.0" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xmlns:xs="http://www.w3.org/2001/XMLSchema"'
)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _head(kind: str, date: str) -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sl-bag-extract:bagStand {NS}>'
        "<sl-bag-extract:bagInfo><selecties-extract:Gebied-Registratief><selecties-extract:Gebied-NLD>"
        "<selecties-extract:GebiedIdentificatie>9999</selecties-extract:GebiedIdentificatie>"
        "</selecties-extract:Gebied-NLD></selecties-extract:Gebied-Registratief>"
        "<selecties-extract:LVC-Extract><selecties-extract:StandTechnischeDatum>"
        f"{date}</selecties-extract:StandTechnischeDatum></selecties-extract:LVC-Extract>"
        "</sl-bag-extract:bagInfo><sl:standBestand><sl:dataset>LVBAG</sl:dataset><sl:inhoud>"
        "<sl:gebied>NLD</sl:gebied><sl:leveringsId>0000000001</sl:leveringsId><sl:objectTypen>"
        f"<sl:objectType>{kind}</sl:objectType></sl:objectTypen></sl:inhoud>\n"
    )


_TAIL = "</sl:standBestand></sl-bag-extract:bagStand>\n"


def _voorkomen(n: int, begin: str, end: str | None) -> str:
    eind = (f"<Historie:eindGeldigheid>{end}</Historie:eindGeldigheid>" if end else "")
    eindreg = (f"<Historie:eindRegistratie>{end}T10:00:00.000</Historie:eindRegistratie>" if end else "")
    return (
        "<Objecten:voorkomen><Historie:Voorkomen>"
        f"<Historie:voorkomenidentificatie>{n}</Historie:voorkomenidentificatie>"
        f"<Historie:beginGeldigheid>{begin}</Historie:beginGeldigheid>{eind}"
        f"<Historie:tijdstipRegistratie>{begin}T10:00:00.000</Historie:tijdstipRegistratie>{eindreg}"
        "<Historie:BeschikbaarLV>"
        f"<Historie:tijdstipRegistratieLV>{begin}T10:05:00.000</Historie:tijdstipRegistratieLV>"
        "</Historie:BeschikbaarLV></Historie:Voorkomen></Objecten:voorkomen>"
    )


def _stand(obj: str) -> str:
    return f"<sl:stand><sl-bag-extract:bagObject>{obj}</sl-bag-extract:bagObject></sl:stand>\n"


def num_xml(nid: str, number: int, letter: str, addition: str, postcode: str, opr: str,
            vk: str, kind: str = "Verblijfsobject", status: str = "Naamgeving uitgegeven",
            ligt_in: str | None = None) -> str:
    parts = [f'<Objecten:Nummeraanduiding><Objecten:identificatie domein="NL.IMBAG.Nummeraanduiding">'
             f"{nid}</Objecten:identificatie><Objecten:huisnummer>{number}</Objecten:huisnummer>"]
    if letter:
        parts.append(f"<Objecten:huisletter>{_esc(letter)}</Objecten:huisletter>")
    if addition:
        parts.append(f"<Objecten:huisnummertoevoeging>{_esc(addition)}</Objecten:huisnummertoevoeging>")
    if postcode:
        parts.append(f"<Objecten:postcode>{postcode}</Objecten:postcode>")
    parts.append(
        f"<Objecten:typeAdresseerbaarObject>{kind}</Objecten:typeAdresseerbaarObject>"
        f"<Objecten:status>{status}</Objecten:status><Objecten:geconstateerd>N</Objecten:geconstateerd>"
        "<Objecten:documentdatum>2010-01-01</Objecten:documentdatum>"
        "<Objecten:documentnummer>RT/2010/1</Objecten:documentnummer>")
    if ligt_in:
        parts.append('<Objecten:ligtIn><Objecten-ref:WoonplaatsRef domein="NL.IMBAG.Woonplaats">'
                     f"{ligt_in}</Objecten-ref:WoonplaatsRef></Objecten:ligtIn>")
    parts.append(vk)
    parts.append('<Objecten:ligtAan><Objecten-ref:OpenbareRuimteRef domein="NL.IMBAG.Openbareruimte">'
                 f"{opr}</Objecten-ref:OpenbareRuimteRef></Objecten:ligtAan></Objecten:Nummeraanduiding>")
    return _stand("".join(parts))


def _addr_refs(main: str, side: list[str]) -> tuple[str, str]:
    hoofd = ('<Objecten:heeftAlsHoofdadres><Objecten-ref:NummeraanduidingRef domein="NL.IMBAG.Nummeraanduiding">'
             f"{main}</Objecten-ref:NummeraanduidingRef></Objecten:heeftAlsHoofdadres>")
    neven = ""
    if side:
        neven = ("<Objecten:heeftAlsNevenadres>" + "".join(
            f'<Objecten-ref:NummeraanduidingRef domein="NL.IMBAG.Nummeraanduiding">{s}'
            "</Objecten-ref:NummeraanduidingRef>" for s in side) + "</Objecten:heeftAlsNevenadres>")
    return hoofd, neven


def vbo_xml(vid: str, main: str, side: list[str], x: float, y: float, vk: str,
            status: str = "Verblijfsobject in gebruik") -> str:
    hoofd, neven = _addr_refs(main, side)
    return _stand(
        f"<Objecten:Verblijfsobject>{hoofd}{vk}{neven}"
        f'<Objecten:identificatie domein="NL.IMBAG.Verblijfsobject">{vid}</Objecten:identificatie>'
        '<Objecten:geometrie><Objecten:punt><gml:Point srsName="urn:ogc:def:crs:EPSG::28992" '
        f'srsDimension="3"><gml:pos>{x:.3f} {y:.3f} 0.0</gml:pos></gml:Point></Objecten:punt>'
        "</Objecten:geometrie><Objecten:gebruiksdoel>woonfunctie</Objecten:gebruiksdoel>"
        f"<Objecten:oppervlakte>80</Objecten:oppervlakte><Objecten:status>{status}</Objecten:status>"
        "<Objecten:geconstateerd>N</Objecten:geconstateerd>"
        "<Objecten:documentdatum>2010-01-01</Objecten:documentdatum>"
        "<Objecten:documentnummer>RT/2010/1</Objecten:documentnummer>"
        '<Objecten:maaktDeelUitVan><Objecten-ref:PandRef domein="NL.IMBAG.Pand">'
        f"{vid[:4]}10{vid[6:]}</Objecten-ref:PandRef></Objecten:maaktDeelUitVan>"
        "</Objecten:Verblijfsobject>")


def polygon_around(x: float, y: float) -> list[tuple[float, float]]:
    """An L-shaped ring (counter-clockwise, closed) whose area centroid is (x, y)."""
    ring = [(0.0, 0.0), (12.0, 0.0), (12.0, 4.0), (4.0, 4.0), (4.0, 9.0), (0.0, 9.0)]
    a = cx = cy = 0.0
    for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1], strict=True):
        c = x0 * y1 - x1 * y0
        a += c
        cx += (x0 + x1) * c
        cy += (y0 + y1) * c
    cx, cy = cx / (3 * a), cy / (3 * a)
    pts = [(x + px - cx, y + py - cy) for px, py in ring]
    return pts + pts[:1]


def plaats_xml(kind: str, pid: str, main: str, side: list[str], x: float, y: float, vk: str) -> str:
    hoofd, neven = _addr_refs(main, side)
    pts = polygon_around(x, y)
    pos = " ".join(f"{px:.3f} {py:.3f}" for px, py in pts)
    return _stand(
        f"<Objecten:{kind}>{hoofd}{vk}{neven}"
        f'<Objecten:identificatie domein="NL.IMBAG.{kind}">{pid}</Objecten:identificatie>'
        "<Objecten:status>Plaats aangewezen</Objecten:status>"
        '<Objecten:geometrie><gml:Polygon srsName="urn:ogc:def:crs:EPSG::28992" srsDimension="2">'
        f'<gml:exterior><gml:LinearRing><gml:posList count="{len(pts)}">{pos}</gml:posList>'
        "</gml:LinearRing></gml:exterior></gml:Polygon></Objecten:geometrie>"
        "<Objecten:geconstateerd>N</Objecten:geconstateerd>"
        "<Objecten:documentdatum>2010-01-01</Objecten:documentdatum>"
        "<Objecten:documentnummer>RT/2010/1</Objecten:documentnummer>"
        f"</Objecten:{kind}>")


def opr_xml(oid: str, name: str, wpl: str, vk: str) -> str:
    return _stand(
        f'<Objecten:OpenbareRuimte><Objecten:identificatie domein="NL.IMBAG.Openbareruimte">{oid}'
        f"</Objecten:identificatie><Objecten:naam>{_esc(name)}</Objecten:naam>"
        "<Objecten:type>Weg</Objecten:type><Objecten:status>Naamgeving uitgegeven</Objecten:status>"
        "<Objecten:geconstateerd>N</Objecten:geconstateerd>"
        "<Objecten:documentdatum>2010-01-01</Objecten:documentdatum>"
        "<Objecten:documentnummer>RT/2010/1</Objecten:documentnummer>"
        '<Objecten:ligtIn><Objecten-ref:WoonplaatsRef domein="NL.IMBAG.Woonplaats">'
        f"{wpl}</Objecten-ref:WoonplaatsRef></Objecten:ligtIn>{vk}</Objecten:OpenbareRuimte>")


def wpl_xml(wid: str, name: str, vk: str) -> str:
    return _stand(
        f'<Objecten:Woonplaats><Objecten:identificatie domein="NL.IMBAG.Woonplaats">{wid}'
        f"</Objecten:identificatie><Objecten:naam>{_esc(name)}</Objecten:naam>"
        "<Objecten:status>Woonplaats aangewezen</Objecten:status>"
        "<Objecten:geconstateerd>N</Objecten:geconstateerd>"
        "<Objecten:documentdatum>2010-01-01</Objecten:documentdatum>"
        "<Objecten:documentnummer>RT/2010/1</Objecten:documentnummer>"
        f"{vk}</Objecten:Woonplaats>")


def gwr_xml(pairs: list[tuple[str, str]], date: str) -> str:
    rels = "".join(
        "<gwr-product:GemeenteWoonplaatsRelatie><gwr-product:tijdvakgeldigheid>"
        "<bagtypes:begindatumTijdvakGeldigheid>2010-01-01</bagtypes:begindatumTijdvakGeldigheid>"
        "</gwr-product:tijdvakgeldigheid><gwr-product:gerelateerdeWoonplaats>"
        f"<gwr-product:identificatie>{w}</gwr-product:identificatie></gwr-product:gerelateerdeWoonplaats>"
        f"<gwr-product:gerelateerdeGemeente><gwr-product:identificatie>{g}</gwr-product:identificatie>"
        "</gwr-product:gerelateerdeGemeente><gwr-product:status>definitief</gwr-product:status>"
        "</gwr-product:GemeenteWoonplaatsRelatie>" for w, g in pairs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<gwr-bestand:BAG-GWR-Deelbestand-LVC '
        'xmlns:gwr-bestand="www.kadaster.nl/schemas/lvbag/gem-wpl-rel/gwr-deelbestand-lvc/v20200601" '
        'xmlns:selecties-extract="http://www.kadaster.nl/schemas/lvbag/extract-selecties/v20200601" '
        'xmlns:bagtypes="www.kadaster.nl/schemas/lvbag/gem-wpl-rel/bag-types/v20200601" '
        'xmlns:gwr-product="www.kadaster.nl/schemas/lvbag/gem-wpl-rel/gwr-producten-lvc/v20200601">'
        "<gwr-bestand:SelectieGegevens><selecties-extract:StandTechnischeDatum>"
        f"{date}</selecties-extract:StandTechnischeDatum></gwr-bestand:SelectieGegevens>"
        f"<gwr-bestand:Product><gwr-product:GemeenteWoonplaatsRelatieProduct>{rels}"
        "</gwr-product:GemeenteWoonplaatsRelatieProduct></gwr-bestand:Product>"
        "</gwr-bestand:BAG-GWR-Deelbestand-LVC>\n")


def leveringsdocument(date: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<xb:BAG-Extract-Levering '
        'xmlns:xb="http://www.kadaster.nl/schemas/lvbag/extract-levering/v20200601" '
        'xmlns:selecties-extract="http://www.kadaster.nl/schemas/lvbag/extract-selecties/v20200601">'
        "<xb:SelectieGegevens><selecties-extract:LVC-Extract><selecties-extract:StandTechnischeDatum>"
        f"{date}</selecties-extract:StandTechnischeDatum></selecties-extract:LVC-Extract>"
        "<selecties-extract:Gebied-Registratief><selecties-extract:Gebied-NLD>"
        "<selecties-extract:GebiedIdentificatie>9999</selecties-extract:GebiedIdentificatie>"
        "</selecties-extract:Gebied-NLD></selecties-extract:Gebied-Registratief></xb:SelectieGegevens>"
        "</xb:BAG-Extract-Levering>\n")


class _TypeZip:
    """One `9999<KIND><date>.zip` written into the outer zip, XML files of PER_FILE objects."""

    def __init__(self, outer: zipfile.ZipFile, kind: str, stamp: str, date: str) -> None:
        # a zip holds one open write handle at a time: each type's zip is written beside the
        # outer one first, then stored into it
        self.kind, self.stamp, self.date, self._outer = kind, stamp, date, outer
        self.name = f"9999{kind}{stamp}.zip"
        self._path = Path(outer.filename).with_name(f".{self.name}")
        self._zip = zipfile.ZipFile(self._path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1,
                                    allowZip64=True)
        self._file = None
        self._buf: list[str] = []
        self._count = 0
        self._files = 0

    def add(self, record: str, *, new_object: bool = True) -> None:
        if new_object and self._count % PER_FILE == 0 and self._count:
            self._close_file()
        if self._file is None:
            self._files += 1
            name = f"9999{self.kind}{self.stamp}-{self._files:06d}.xml"
            self._file = self._zip.open(name, "w", force_zip64=True)
            self._file.write(_head(self.kind, self.date).encode())
        self._buf.append(record)
        self._count += new_object
        if len(self._buf) >= 2000:
            self._file.write("".join(self._buf).encode())
            self._buf.clear()

    def _close_file(self) -> None:
        self._file.write(("".join(self._buf) + _TAIL).encode())
        self._buf.clear()
        self._file.close()
        self._file = None

    def close(self) -> None:
        if self._file is None:          # an empty type still gets one (empty) file
            self.add("", new_object=False)
        self._close_file()
        self._zip.close()
        self._outer.write(self._path, self.name, compress_type=zipfile.ZIP_STORED)
        self._path.unlink()


def _nested_junk(outer: zipfile.ZipFile, prefix: str, stamp: str, date: str) -> None:
    """`9999Inactief….zip` and friends: a zip of per-type zips, each with an empty file."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for kind in ("WPL", "OPR", "NUM", "VBO", "LIG", "STA", "PND"):
            inner = io.BytesIO()
            with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as zi:
                zi.writestr(f"9999{prefix[:2].upper()}{kind}{stamp}-000001.xml", _head(kind, date) + _TAIL)
            z.writestr(f"9999{prefix[:2].upper()}{kind}{stamp}.zip", inner.getvalue())
    outer.writestr(f"9999{prefix}{stamp}.zip", buf.getvalue())


def _types_by_line(source: Path) -> dict[int, str]:
    """Line number -> `type` column (LIG, STA) for the rows that are not VBO."""
    import zstandard
    out: dict[int, str] = {}
    with open(source, "rb") as raw:
        stream = zstandard.ZstdDecompressor().stream_reader(raw) if source.suffix == ".zst" else raw
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        header = text.readline().rstrip("\r\n").split(";")
        ti = header.index("type")
        for line, row in enumerate(text, start=2):
            if ";LIG;" in row or ";STA;" in row:
                kind = row.split(";")[ti]
                if kind in ("LIG", "STA"):
                    out[line] = kind
    return out


def write_extract(source: Path, out: Path, *, history: float = 0.1, seed: int = 7,
                  date: dt.date = EXTRACT_DATE) -> dict:
    """Write the extract of every address of `source` that its CSV build accepts into `out`
    (a zip); return what was written that the build must leave out, by reason."""
    from pyproj import Transformer

    t = read_source(source, progress=False, max_bad_share=1.0)
    kinds = _types_by_line(source)
    n = len(t)
    to_rd = Transformer.from_crs("EPSG:4326", "EPSG:28992", always_xy=True)
    xs, ys = to_rd.transform(t.lon / 1e6, t.lat / 1e6)
    rng = np.random.default_rng(seed)
    with_history = rng.random(n) < history
    history_first = rng.random(n) < 0.5
    iso, stamp = date.isoformat(), date.strftime("%d%m%Y")
    old_begin, old_end, begin = "2005-03-01", "2012-07-01", "2012-07-01"
    # a municipality code for each municipality of the CSV: the extract names only codes
    mun = {name: f"{i + 1:04d}" for i, name in enumerate(sorted(t.municipalities))}

    # woonplaatsen per (name, municipality); streets per (name, woonplaats)
    wpl_ids: dict[tuple[int, int], str] = {}
    opr_ids: dict[tuple[int, str], str] = {}
    expected = {"history": 0, "status": 0, "no_postcode": 0, "dangling_reference": 0, "no_position": 0}

    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as outer:
        outer.writestr("Leveringsdocument-BAG-Extract.xml", leveringsdocument(iso))
        outer.writestr(".DS_Store", b"\0\0\0\1Bud1" + bytes(64))
        outer.writestr(f"__MACOSX/._9999NUM{stamp}.zip", b"\0\5\26\7" + bytes(60))
        zips = {k: _TypeZip(outer, k, stamp, iso) for k in ("NUM", "VBO", "LIG", "STA")}
        pcs = t.postcode
        last_point = (None, None, -1)         # (x, y, postcode) of the last VBO written
        pending: tuple | None = None          # the VBO being written: (id, main, side, x, y, hist)
        seq = 0

        def flush_vbo() -> None:
            nonlocal pending
            if pending is None:
                return
            vid, main, side, x, y, hist, first = pending
            cur = vbo_xml(vid, main, side, x, y, _voorkomen(2 if hist else 1, begin, None))
            if hist:
                old = vbo_xml(vid, main, side, x + 400.0, y - 300.0, _voorkomen(1, old_begin, old_end))
                zips["VBO"].add(old + cur if first else cur + old)
                expected["history"] += 1
            else:
                zips["VBO"].add(cur)
            pending = None

        for i in range(n):
            gem = mun[t.municipalities[t.municipality[i]]]
            wkey = (int(t.locality[i]), int(t.municipality[i]))
            wid = wpl_ids.setdefault(wkey, str(1000 + len(wpl_ids)))
            okey = (int(t.street[i]), wid)
            oid = opr_ids.setdefault(okey, f"{gem}30{len(opr_ids):010d}")
            seq += 1
            nid = f"{gem}20{seq:010d}"
            pc = int(pcs[i])
            postcode = f"{pc // 676:04d}{chr(65 + pc % 676 // 26)}{chr(65 + pc % 26)}"
            letter = chr(t.letter[i]) if t.letter[i] else ""
            addition = t.additions[t.addition[i]]
            number = int(t.number[i])
            kind = kinds.get(int(t.line[i]), "VBO")
            objtype = {"VBO": "Verblijfsobject", "LIG": "Ligplaats", "STA": "Standplaats"}[kind]
            x, y = float(xs[i]), float(ys[i])
            hist, first = bool(with_history[i]), bool(history_first[i])
            cur = num_xml(nid, number, letter, addition, postcode, oid,
                          _voorkomen(2 if hist else 1, begin, None), objtype)
            if hist:   # the old version: another postcode and number
                old = num_xml(nid, number + 1, letter, addition, "9999ZZ", oid,
                              _voorkomen(1, old_begin, old_end), objtype)
                zips["NUM"].add(old + cur if first else cur + old)
                expected["history"] += 1
            else:
                zips["NUM"].add(cur)

            if kind == "VBO":
                same = pending is not None and (round(x, 3), round(y, 3), pc) == last_point
                if same:
                    pending[2].append(nid)
                else:
                    flush_vbo()
                    pending = (f"{gem}01{seq:010d}", nid, [], x, y, hist, first)
                    last_point = (round(x, 3), round(y, 3), pc)
            else:
                pid = f"{gem}{'02' if kind == 'LIG' else '03'}{seq:010d}"
                zips[kind].add(plaats_xml(objtype, pid, nid, [], x, y, _voorkomen(1, begin, None)))

            if seq % PER_FILE == 0:
                # the records that must be left out, one of each reason per file
                flush_vbo()
                j = seq // PER_FILE

                def junk(code: str, r: int, gem=gem, j=j) -> str:
                    return f"{gem}{code}{9_000_000_000 + 10 * j + r:010d}"

                vk = _voorkomen(1, begin, None)
                bad = [
                    ("status", num_xml(junk("20", 1), JUNK_NUMBER, "", "", postcode, oid, vk,
                                       status="Naamgeving ingetrokken")),
                    ("no_postcode", num_xml(junk("20", 2), JUNK_NUMBER + 1, "", "", "", oid, vk)),
                    ("dangling_reference", num_xml(junk("20", 3), JUNK_NUMBER + 2, "", "", postcode,
                                                   junk("30", 3), vk)),
                    ("no_position", num_xml(junk("20", 4), JUNK_NUMBER + 3, "", "", postcode, oid, vk)),
                ]
                for reason, rec in bad:
                    zips["NUM"].add(rec)
                    expected[reason] += 1
                # the withdrawn one and the one without postcode have a verblijfsobject in use;
                # the one without a position has one that was never built
                zips["VBO"].add(vbo_xml(junk("01", 1), junk("20", 1), [], x, y, vk))
                zips["VBO"].add(vbo_xml(junk("01", 2), junk("20", 2), [], x, y, vk))
                zips["VBO"].add(vbo_xml(junk("01", 4), junk("20", 4), [], x, y, vk,
                                        status="Niet gerealiseerd verblijfsobject"))
                expected["status"] += 1    # the unbuilt verblijfsobject itself
        flush_vbo()
        for z in zips.values():
            z.close()

        opr = _TypeZip(outer, "OPR", stamp, iso)
        for (sid, wid), oid in opr_ids.items():
            opr.add(opr_xml(oid, t.streets[sid], wid, _voorkomen(1, begin, None)))
        opr.close()
        wpl = _TypeZip(outer, "WPL", stamp, iso)
        pairs = []
        for (lid, mid), wid in wpl_ids.items():
            wpl.add(wpl_xml(wid, t.localities[lid], _voorkomen(1, begin, None)))
            pairs.append((wid, mun[t.municipalities[mid]]))
        wpl.close()
        _TypeZip(outer, "PND", stamp, iso).close()
        gwr = io.BytesIO()
        with zipfile.ZipFile(gwr, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"GEM-WPL-RELATIE-{stamp}-000001.xml", gwr_xml(pairs, iso))
        outer.writestr(f"GEM-WPL-RELATIE-{stamp}.zip", gwr.getvalue())
        for prefix in ("Inactief", "InOnderzoek", "NietBag"):
            _nested_junk(outer, prefix, stamp, iso)
    return {"addresses": n, "left_out": expected}


def read_index(path: Path) -> dict[tuple, tuple]:
    """(postcode, number, letter upper, addition upper) -> (street, place, municipality,
    province, lat, lon) of every address of a built index."""
    a = {name: np.load(path / f"{name}.npy") for name in (
        "a_group", "a_number", "a_letter", "a_addition", "a_postcode", "a_lat", "a_lon",
        "g_street", "g_locality", "g_municipality", "g_province", "s_blob", "s_off",
        "add_blob", "add_off")}
    names = [json.loads(b'"' + a["s_blob"][a["s_off"][i]:a["s_off"][i + 1]].tobytes() + b'"')
             for i in range(len(a["s_off"]) - 1)]
    adds = [a["add_blob"][a["add_off"][i]:a["add_off"][i + 1]].tobytes().decode()
            for i in range(len(a["add_off"]) - 1)]
    g = a["a_group"]
    out = {}
    for i in range(len(g)):
        gi = g[i]
        key = (int(a["a_postcode"][i]), int(a["a_number"][i]), chr(a["a_letter"][i]).upper() if a["a_letter"][i]
               else "", adds[a["a_addition"][i]].upper())
        out[key] = (names[a["g_street"][gi]], names[a["g_locality"][gi]], names[a["g_municipality"][gi]],
                    names[a["g_province"][gi]], int(a["a_lat"][i]), int(a["a_lon"][i]))
    return out


def metres(lat1: int, lon1: int, lat2: int, lon2: int) -> float:
    """Distance in metres between two points given in micro-degrees (equirectangular)."""
    phi = math.radians(lat1 / 1e6)
    dy = (lat2 - lat1) / 1e6 * 111_195.0
    dx = (lon2 - lon1) / 1e6 * 111_195.0 * math.cos(phi)
    return math.hypot(dx, dy)


def compare(csv_index: Path, bag_index: Path, tolerance_m: float = 1.0) -> dict:
    """What differs between two indexes: keys only in one, other names, points too far apart."""
    a, b = read_index(csv_index), read_index(bag_index)
    only_csv = sorted(set(a) - set(b))
    only_bag = sorted(set(b) - set(a))
    names, far, worst = [], [], 0.0
    for k in set(a) & set(b):
        x, y = a[k], b[k]
        if x[:4] != y[:4]:
            names.append((k, x[:4], y[:4]))
        d = metres(x[4], x[5], y[4], y[5])
        worst = max(worst, d)
        if d > tolerance_m:
            far.append((k, d))
    return {"csv": len(a), "bag": len(b), "only_csv": only_csv, "only_bag": only_bag,
            "other_names": names, "too_far": far, "max_m": worst}


def _run_build(source: Path, out: Path, extra: list[str]) -> tuple[float, float, float, dict]:
    """Build in a child process; return (seconds, CPU seconds of it and its workers, peak RSS
    in GB of the largest process so far, manifest)."""
    t0 = time.perf_counter()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "engine", "build", str(source), str(out), *extra],
                   check=True, cwd=REPO)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    # ru_maxrss of children is the largest single process so far (not a sum over the workers)
    return (time.perf_counter() - t0, cpu, ru1.ru_maxrss / 2**20,
            json.loads((out / "manifest.json").read_text()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=REPO.parent / "shared" / "data" / "nl-addresses.csv.zst")
    ap.add_argument("--work", type=Path, help="where the extract and indexes go (default: a temp dir)")
    ap.add_argument("--history", type=float, default=0.1, help="share of objects with an old version")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="lvbag-roundtrip-"))
    work.mkdir(parents=True, exist_ok=True)
    extract = work / "lvbag-extract-nl.zip"
    prog = ["--no-progress"] if args.no_progress else []
    try:
        t0 = time.perf_counter()
        written = write_extract(args.source, extract, history=args.history)
        print(f"wrote {extract} ({extract.stat().st_size / 2**20:,.0f} MiB) in "
              f"{time.perf_counter() - t0:.0f} s: {written['addresses']:,} addresses; "
              f"left out on purpose: {written['left_out']}", flush=True)
        csv_s, csv_cpu, csv_gb, _ = _run_build(args.source, work / "idx-csv", prog)
        bag_s, bag_cpu, bag_gb, manifest = _run_build(extract, work / "idx-bag",
                                                      [*prog, "--municipalities", str(args.source)])
        result = compare(work / "idx-csv", work / "idx-bag")
        got = {k: manifest["left_out"].get(k, 0) for k in written["left_out"]}
        print(f"CSV build {csv_s:.0f} s ({csv_cpu:.0f} CPU s), peak {csv_gb:.2f} GB; extract build "
              f"{bag_s:.0f} s ({bag_cpu:.0f} CPU s, workers included), largest process so far "
              f"{bag_gb:.2f} GB (ru_maxrss)")
        print(f"addresses: CSV {result['csv']:,}, extract {result['bag']:,}; only in CSV "
              f"{len(result['only_csv'])}, only in extract {len(result['only_bag'])}; other names "
              f"{len(result['other_names'])}; farther than 1 m {len(result['too_far'])} "
              f"(max {result['max_m']:.3f} m)")
        print(f"left out (manifest): {manifest['left_out']}; source {manifest.get('source_format')} "
              f"of {manifest.get('extract_date')}")
        ok = (not result["only_csv"] and not result["only_bag"] and not result["other_names"]
              and not result["too_far"] and got == written["left_out"])
        for what in ("only_csv", "only_bag", "other_names", "too_far"):
            for item in result[what][:5]:
                print(f"  {what}: {item}")
        if got != written["left_out"]:
            print(f"  left-out counts differ: written {written['left_out']}, manifest {got}")
        print("round trip: " + ("same addresses" if ok else "DIFFERENT"))
        return 0 if ok else 1
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
