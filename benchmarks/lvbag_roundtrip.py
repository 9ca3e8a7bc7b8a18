"""Round trip at scale: write an LVBAG extract from our CSV, build from both, compare; then the
next day's extract and the delivery between them: day 0 + delivery must equal day 1.

    python benchmarks/lvbag_roundtrip.py [--source CSV] [--work DIR] [--keep] [--changes N]

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

5. The day after (`--changes N`, default 5,000; 0: none): the same writer also writes the extract
   of the next day and the Kadaster's mutation delivery between the two (`write_delivery`;
   each object's versions of both days compared: a new version is a toevoeging, one written
   otherwise a wijziging, one gone a verwijdering), about N objects changed: points moved,
   addresses withdrawn and added, streets renamed, new woonplaatsen with a street and
   addresses, versions with tijdstipInactief, a version removed. `python -m engine update`
   applies the delivery to day 0's index; the result must equal the build of day 1's extract,
   every address and every array byte for byte. Its time and peak memory are printed against
   the bars of issue 41 (whole country: 90 s end to end, 6 GB).

CI runs it on the sample (`--source ../shared/data/nl-addresses-sample.csv.zst`); the whole
country is the benchmark (the build's time and peak memory are printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import math
import os
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

from engine.ingest.source import read_source  # noqa: E402

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


def voorkomen(n: int, begin: str, end: str | None, inactive: str | None = None) -> str:
    eind = (f"<Historie:eindGeldigheid>{end}</Historie:eindGeldigheid>" if end else "")
    eindreg = (f"<Historie:eindRegistratie>{end}T10:00:00.000</Historie:eindRegistratie>" if end else "")
    inactief = (f"<Historie:tijdstipInactief>{inactive}T11:00:00.000</Historie:tijdstipInactief>"
                if inactive else "")
    return (
        "<Objecten:voorkomen><Historie:Voorkomen>"
        f"<Historie:voorkomenidentificatie>{n}</Historie:voorkomenidentificatie>"
        f"<Historie:beginGeldigheid>{begin}</Historie:beginGeldigheid>{eind}"
        f"<Historie:tijdstipRegistratie>{begin}T10:00:00.000</Historie:tijdstipRegistratie>{eindreg}{inactief}"
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
    return "".join(parts)


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
    return (
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
    return (
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
    return (
        f'<Objecten:OpenbareRuimte><Objecten:identificatie domein="NL.IMBAG.Openbareruimte">{oid}'
        f"</Objecten:identificatie><Objecten:naam>{_esc(name)}</Objecten:naam>"
        "<Objecten:type>Weg</Objecten:type><Objecten:status>Naamgeving uitgegeven</Objecten:status>"
        "<Objecten:geconstateerd>N</Objecten:geconstateerd>"
        "<Objecten:documentdatum>2010-01-01</Objecten:documentdatum>"
        "<Objecten:documentnummer>RT/2010/1</Objecten:documentnummer>"
        '<Objecten:ligtIn><Objecten-ref:WoonplaatsRef domein="NL.IMBAG.Woonplaats">'
        f"{wpl}</Objecten-ref:WoonplaatsRef></Objecten:ligtIn>{vk}</Objecten:OpenbareRuimte>")


def wpl_xml(wid: str, name: str, vk: str) -> str:
    return (
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

    def add(self, *versions: str) -> None:
        """Add one object: its versions, each in a stand of its own (none: an empty file)."""
        if versions and self._count % PER_FILE == 0 and self._count:
            self._close_file()
        if self._file is None:
            self._files += 1
            name = f"9999{self.kind}{self.stamp}-{self._files:06d}.xml"
            self._file = self._zip.open(name, "w", force_zip64=True)
            self._file.write(_head(self.kind, self.date).encode())
        self._buf.extend(_stand(v) for v in versions)
        self._count += bool(versions)
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
            self.add()
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


# ------------------------------------------------------------------ a mutation delivery

MUT_NS = (
    'xmlns:ml="http://www.kadaster.nl/schemas/mutatielevering-generiek/1.0" '
    'xmlns:mlm="http://www.kadaster.nl/schemas/lvbag/extract-deelbestand-mutaties-lvc/v20200601" '
    'xmlns:selecties-extract="http://www.kadaster.nl/schemas/lvbag/extract-selecties/v20200601" '
    'xmlns:Objecten="www.kadaster.nl/schemas/lvbag/imbag/objecten/v20200601" '
    'xmlns:Objecten-ref="www.kadaster.nl/schemas/lvbag/imbag/objecten-ref/v20200601" '
    'xmlns:Historie="www.kadaster.nl/schemas/lvbag/imbag/historie/v20200601" '
    'xmlns:gml="http://www.opengis.net/gml/3.2"'
)


def mutation_group(ops: list[tuple[str, str | None, str | None]]) -> str:
    """One `ml:mutatieGroep` of (operation, was, wordt) objects, as the Kadaster writes them."""
    def obj(part: str, o: str | None) -> str:
        return f"<ml:{part}><mlm:bagObject>{o}</mlm:bagObject></ml:{part}>" if o is not None else ""
    return "<ml:mutatieGroep>" + "".join(
        f"<ml:{op}>{obj('was', was)}{obj('wordt', wordt)}</ml:{op}>" for op, was, wordt in ops) + "</ml:mutatieGroep>"


def mutation_ops(day0: list[tuple[int, str]], day1: list[tuple[int, str]]) -> list[tuple[str, str | None, str | None]]:
    """What turns an object's versions (voorkomen, record) of one day into those of the next:
    a new version is a toevoeging, a version written otherwise a wijziging, a version gone a
    verwijdering."""
    a, b = dict(day0), dict(day1)
    ops = []
    for vk in sorted(set(a) | set(b)):
        if vk not in b:
            ops.append(("verwijdering", a[vk], None))
        elif vk not in a:
            ops.append(("toevoeging", None, b[vk]))
        elif a[vk] != b[vk]:
            ops.append(("wijziging", a[vk], b[vk]))
    return ops


def _mut_info(start: str, end: str) -> str:
    return ("<mlm:bagInfo><selecties-extract:Gebied-Registratief><selecties-extract:Gebied-NLD/>"
            "</selecties-extract:Gebied-Registratief><selecties-extract:MUT-Extract>"
            f"<selecties-extract:StandTechnischeDatum>{end}</selecties-extract:StandTechnischeDatum>"
            "<selecties-extract:Mutatieperiode>"
            f"<selecties-extract:MutatiedatumVanaf>{start}</selecties-extract:MutatiedatumVanaf>"
            f"<selecties-extract:MutatiedatumTot>{end}</selecties-extract:MutatiedatumTot>"
            "</selecties-extract:Mutatieperiode></selecties-extract:MUT-Extract></mlm:bagInfo>")


def write_delivery(out: Path, groups: list[str], start: dt.date, end: dt.date,
                   gwr_pairs: list[tuple[str, str]] | None = None) -> Path:
    """Write a daily (or monthly) mutation delivery of `groups` (`mutation_group`) for the period
    `start` .. `end` into the directory `out`, in the Kadaster's layout: BAGNLDM-<from>-<to>.zip
    holding the delivery document, 9999MUT<from>-<to>.zip (a file with the header only, a file
    with the groups), the in-onderzoek marks (an empty file) and GEM-WPL-RELATIE (`gwr_pairs`,
    if given). Return the zip's path."""
    s, e = start.strftime("%d%m%Y"), end.strftime("%d%m%Y")
    iso0, iso1 = start.isoformat(), end.isoformat()
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<mlm:bagMutaties {MUT_NS}>{_mut_info(iso0, iso1)}'
    bericht = ("<ml:mutatieBericht><ml:dataset>LVBAG</ml:dataset><ml:inhoud><ml:gebied>NEDERLAND</ml:gebied>"
               "<ml:leveringsId>0000000001</ml:leveringsId><ml:objectTypen/></ml:inhoud>")
    doc = ('<?xml version="1.0" encoding="UTF-8"?>\n<xb:BAG-Extract-Levering '
           'xmlns:xb="http://www.kadaster.nl/schemas/lvbag/extract-levering/v20200601" '
           'xmlns:selecties-extract="http://www.kadaster.nl/schemas/lvbag/extract-selecties/v20200601">'
           "<xb:SelectieGegevens><selecties-extract:MUT-Extract>"
           f"<selecties-extract:StandTechnischeDatum>{iso1}</selecties-extract:StandTechnischeDatum>"
           "<selecties-extract:Mutatieperiode>"
           f"<selecties-extract:MutatiedatumVanaf>{iso0}</selecties-extract:MutatiedatumVanaf>"
           f"<selecties-extract:MutatiedatumTot>{iso1}</selecties-extract:MutatiedatumTot>"
           "</selecties-extract:Mutatieperiode></selecties-extract:MUT-Extract>"
           "<selecties-extract:Gebied-Registratief><selecties-extract:Gebied-NLD/>"
           "</selecties-extract:Gebied-Registratief></xb:SelectieGegevens></xb:BAG-Extract-Levering>\n")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"BAGNLDM-{s}-{e}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as outer:
        outer.writestr("Leveringsdocument-BAG-Extract.xml", doc)
        mut = io.BytesIO()
        with zipfile.ZipFile(mut, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"9999MUT{s}-{e}-000001.xml", head + bericht + "</ml:mutatieBericht></mlm:bagMutaties>\n")
            z.writestr(f"9999MUT{s}-{e}-000002.xml",
                       head + bericht + "".join(groups) + "</ml:mutatieBericht></mlm:bagMutaties>\n")
        outer.writestr(f"9999MUT{s}-{e}.zip", mut.getvalue())
        io_zip = io.BytesIO()
        with zipfile.ZipFile(io_zip, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"9999IOMUT{s}-{e}-000001.xml", head + bericht + "</ml:mutatieBericht></mlm:bagMutaties>\n")
        outer.writestr(f"9999IOMUT{s}-{e}.zip", io_zip.getvalue())
        if gwr_pairs is not None:
            gwr = io.BytesIO()
            with zipfile.ZipFile(gwr, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr(f"GEM-WPL-RELATIE-{e}-000001.xml", gwr_xml(gwr_pairs, iso1))
            outer.writestr(f"GEM-WPL-RELATIE-{e}.zip", gwr.getvalue())
    return path


#: The kinds of change the delivery of the round trip makes, with the objects each touches.
CHANGES = {"move": 1, "withdraw": 1, "inactive": 1, "remove": 1, "new": 2, "rename": 1, "new_place": 8}


class _Days:
    """The extract of day 0 and, when asked, of day 1 and the delivery between them. Each
    object is given with its versions on each day; the delivery holds what differs."""

    def __init__(self, outers: list[zipfile.ZipFile], stamps: list[str], isos: list[str]) -> None:
        self.outers, self.stamps, self.isos = outers, stamps, isos
        self.zips = [{k: _TypeZip(o, k, st, iso) for k in ("NUM", "VBO", "LIG", "STA")}
                     for o, st, iso in zip(outers, stamps, isos, strict=True)]
        self.groups: list[str] = []
        self.objects = 0           # objects the delivery changes

    def open(self, kind: str) -> None:
        for zips, o, st, iso in zip(self.zips, self.outers, self.stamps, self.isos, strict=True):
            zips[kind] = _TypeZip(o, kind, st, iso)

    def add(self, kind: str, day0: list[tuple[int, str]], day1: list[tuple[int, str]] | None = None) -> None:
        self.zips[0][kind].add(*(x for _, x in day0))
        if len(self.zips) == 1:
            return
        day1 = day0 if day1 is None else day1
        self.zips[1][kind].add(*(x for _, x in day1))
        if day1 is not day0 and (ops := mutation_ops(day0, day1)):
            self.groups.append(mutation_group(ops))
            self.objects += 1

    def close(self, kind: str) -> None:
        for zips in self.zips:
            zips[kind].close()


def _letters(k: int) -> str:
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(65 + r) + out
    return out


def write_extract(source: Path, out: Path, *, history: float = 0.1, seed: int = 7,
                  date: dt.date = EXTRACT_DATE, day1: Path | None = None, delivery: Path | None = None,
                  changes: int = 0) -> dict:
    """Write the extract of every address of `source` that its CSV build accepts into `out`
    (a zip); return what was written that the build must leave out, by reason.

    With `day1` (a zip) and `delivery` (a directory), also the extract of the next day and the
    delivery between the two, which changes about `changes` objects, spread evenly over the
    kinds of `CHANGES`: points moved (a verblijfsobject's version closed, the next one added),
    addresses withdrawn (a nummeraanduiding's next version "Naamgeving ingetrokken"), a version
    with tijdstipInactief added (not current: nothing changes), a version removed (a
    verwijdering of a version that would be current on day 1), addresses added on existing
    streets, streets renamed, and new woonplaatsen with a new street and three addresses."""
    from pyproj import Transformer

    t = read_source(source, progress=False, max_bad_share=1.0)
    kinds = _types_by_line(source)
    n = len(t)
    to_rd = Transformer.from_crs("EPSG:4326", "EPSG:28992", always_xy=True)
    xs, ys = to_rd.transform(t.lon / 1e6, t.lat / 1e6)
    rng = np.random.default_rng(seed)
    with_history = rng.random(n) < history
    history_first = rng.random(n) < 0.5
    # the change of each row (with day1): one of CHANGES, or none
    change = np.full(n, -1, dtype=np.int8)
    if day1 is not None and changes:
        per_kind = max(1, changes // sum(CHANGES.values()))
        rows = rng.choice(n, size=min(n, per_kind * len(CHANGES)), replace=False)
        change[rows] = np.arange(len(rows)) % len(CHANGES)
    change_names = list(CHANGES)
    next_day = date + dt.timedelta(days=1)
    iso, stamp = date.isoformat(), date.strftime("%d%m%Y")
    iso1 = next_day.isoformat()
    old_begin, old_end, begin = "2005-03-01", "2012-07-01", "2012-07-01"
    # a municipality code for each municipality of the CSV: the extract names only codes
    mun = {name: f"{i + 1:04d}" for i, name in enumerate(sorted(t.municipalities))}

    # woonplaatsen per (name, municipality); streets per (name, woonplaats)
    wpl_ids: dict[tuple[int, int], str] = {}
    opr_ids: dict[tuple[int, str], str] = {}
    renamed: set[str] = set()
    new_places: list[tuple[str, str, str, str]] = []     # (wpl id, name, gem, opr id)
    expected = {"history": 0, "status": 0, "no_postcode": 0, "dangling_reference": 0, "no_position": 0}
    made = dict.fromkeys(CHANGES, 0)

    out.parent.mkdir(parents=True, exist_ok=True)
    outers = [zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True)]
    stamps, isos = [stamp], [iso]
    if day1 is not None:
        outers.append(zipfile.ZipFile(day1, "w", compression=zipfile.ZIP_STORED, allowZip64=True))
        stamps.append(next_day.strftime("%d%m%Y"))
        isos.append(iso1)
    for outer, st, d in zip(outers, stamps, isos, strict=True):
        outer.writestr("Leveringsdocument-BAG-Extract.xml", leveringsdocument(d))
        outer.writestr(".DS_Store", b"\0\0\0\1Bud1" + bytes(64))
        outer.writestr(f"__MACOSX/._9999NUM{st}.zip", b"\0\5\26\7" + bytes(60))
    days = _Days(outers, stamps, isos)
    pcs = t.postcode
    last_point = (None, None, -1)         # (x, y, postcode) of the last VBO written
    pending: tuple | None = None          # the VBO being written: (id, main, side, x, y, hist, first, change)
    seq = 0

    def flush_vbo() -> None:
        nonlocal pending
        if pending is None:
            return
        vid, main, side, x, y, hist, first, what = pending
        nv = 2 if hist else 1
        cur = vbo_xml(vid, main, side, x, y, voorkomen(nv, begin, None))
        versions = [(nv, cur)]
        if hist:
            old = vbo_xml(vid, main, side, x + 400.0, y - 300.0, voorkomen(1, old_begin, old_end))
            versions = [(1, old), (nv, cur)] if first else [(nv, cur), (1, old)]
            expected["history"] += 1
        day1_versions = None
        if what == "move":           # closed on day 1; the next version has another point
            day1_versions = [v for v in versions if v[0] != nv] + [
                (nv, vbo_xml(vid, main, side, x, y, voorkomen(nv, begin, iso1))),
                (nv + 1, vbo_xml(vid, main, side, x + 30.0, y - 20.0, voorkomen(nv + 1, iso1, None)))]
        elif what == "inactive":     # a next version marked inactive: never current
            day1_versions = versions + [
                (nv + 1, vbo_xml(vid, main, side, x + 50.0, y + 50.0, voorkomen(nv + 1, iso1, None, inactive=iso1)))]
        elif what == "remove":       # day 0 holds a version from day 1 on; the delivery removes it
            day1_versions = versions
            versions = versions + [
                (nv + 1, vbo_xml(vid, main, side, x - 60.0, y + 10.0, voorkomen(nv + 1, iso1, None)))]
        if what == "remove":         # on day 0 a version to come: not current, counted as history
            expected["history"] += 1
        if what in ("move", "inactive", "remove"):
            made[what] += 1
        days.add("VBO", versions, day1_versions)
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
        what = change_names[change[i]] if change[i] >= 0 else None
        nv = 2 if hist else 1
        cur = num_xml(nid, number, letter, addition, postcode, oid, voorkomen(nv, begin, None), objtype)
        versions = [(nv, cur)]
        if hist:   # the old version: another postcode and number
            old = num_xml(nid, number + 1, letter, addition, "9999ZZ", oid,
                          voorkomen(1, old_begin, old_end), objtype)
            versions = [(1, old), (nv, cur)] if first else [(nv, cur), (1, old)]
            expected["history"] += 1
        day1_versions = None
        if what == "withdraw":
            day1_versions = [v for v in versions if v[0] != nv] + [
                (nv, num_xml(nid, number, letter, addition, postcode, oid, voorkomen(nv, begin, iso1), objtype)),
                (nv + 1, num_xml(nid, number, letter, addition, postcode, oid, voorkomen(nv + 1, iso1, None),
                                 objtype, status="Naamgeving ingetrokken"))]
            made[what] += 1
        days.add("NUM", versions, day1_versions)
        if what == "rename":
            renamed.add(oid)
            made[what] += 1

        if kind == "VBO":
            same = pending is not None and (round(x, 3), round(y, 3), pc) == last_point
            if same:
                pending[2].append(nid)
            else:
                flush_vbo()
                vbo_change = what if what in ("move", "inactive", "remove") else None
                pending = (f"{gem}01{seq:010d}", nid, [], x, y, hist, first, vbo_change)
                last_point = (round(x, 3), round(y, 3), pc)
        else:
            pid = f"{gem}{'02' if kind == 'LIG' else '03'}{seq:010d}"
            days.add(kind, [(1, plaats_xml(objtype, pid, nid, [], x, y, voorkomen(1, begin, None)))])

        if what == "new":        # a new address on this street: its nummeraanduiding and verblijfsobject
            k = made[what]
            new_id = f"{gem}20{8_000_000_000 + k:010d}"
            days.add("NUM", [], [(1, num_xml(new_id, 70_000 + k, "", "", postcode, oid,
                                             voorkomen(1, iso1, None)))])
            flush_vbo()
            days.add("VBO", [], [(1, vbo_xml(f"{gem}01{8_000_000_000 + k:010d}", new_id, [], x + 15.0, y + 15.0,
                                             voorkomen(1, iso1, None)))])
            made[what] += 1
        elif what == "new_place":   # a new woonplaats with a new street and three addresses
            k = made[what]
            new_wid, new_oid = str(9000 + k), f"{gem}30{9_800_000_000 + k:010d}"
            new_places.append((new_wid, f"Nieuwe Hoef {_letters(k)}", gem, new_oid))
            flush_vbo()
            for j in range(3):
                new_id = f"{gem}20{8_500_000_000 + 3 * k + j:010d}"
                days.add("NUM", [], [(1, num_xml(new_id, 60_000 + 3 * k + j, "", "", postcode, new_oid,
                                                 voorkomen(1, iso1, None)))])
                days.add("VBO", [], [(1, vbo_xml(f"{gem}01{8_500_000_000 + 3 * k + j:010d}", new_id, [],
                                                 x + 100.0 + 10 * j, y, voorkomen(1, iso1, None)))])
            made[what] += 1

        if seq % PER_FILE == 0:
            # the records that must be left out, one of each reason per file
            flush_vbo()
            j = seq // PER_FILE

            def junk(code: str, r: int, gem=gem, j=j) -> str:
                return f"{gem}{code}{9_000_000_000 + 10 * j + r:010d}"

            vk = voorkomen(1, begin, None)
            bad = [
                ("status", num_xml(junk("20", 1), JUNK_NUMBER, "", "", postcode, oid, vk,
                                   status="Naamgeving ingetrokken")),
                ("no_postcode", num_xml(junk("20", 2), JUNK_NUMBER + 1, "", "", "", oid, vk)),
                ("dangling_reference", num_xml(junk("20", 3), JUNK_NUMBER + 2, "", "", postcode,
                                               junk("30", 3), vk)),
                ("no_position", num_xml(junk("20", 4), JUNK_NUMBER + 3, "", "", postcode, oid, vk)),
            ]
            for reason, rec in bad:
                days.add("NUM", [(1, rec)])
                expected[reason] += 1
            # the withdrawn one and the one without postcode have a verblijfsobject in use;
            # the one without a position has one that was never built
            days.add("VBO", [(1, vbo_xml(junk("01", 1), junk("20", 1), [], x, y, vk))])
            days.add("VBO", [(1, vbo_xml(junk("01", 2), junk("20", 2), [], x, y, vk))])
            days.add("VBO", [(1, vbo_xml(junk("01", 4), junk("20", 4), [], x, y, vk,
                                         status="Niet gerealiseerd verblijfsobject"))])
            expected["status"] += 1    # the unbuilt verblijfsobject itself
    flush_vbo()
    for k in ("NUM", "VBO", "LIG", "STA"):
        days.close(k)

    days.open("OPR")
    for (sid, wid), oid in opr_ids.items():
        name = t.streets[sid]
        rec = opr_xml(oid, name, wid, voorkomen(1, begin, None))
        if oid in renamed:
            days.add("OPR", [(1, rec)], [(1, opr_xml(oid, name, wid, voorkomen(1, begin, iso1))),
                                         (2, opr_xml(oid, f"{name} Oost", wid, voorkomen(2, iso1, None)))])
        else:
            days.add("OPR", [(1, rec)])
    for wid, _, _, oid in new_places:
        days.add("OPR", [], [(1, opr_xml(oid, "Nieuwe Laan", wid, voorkomen(1, iso1, None)))])
    days.close("OPR")
    days.open("WPL")
    pairs = []
    for (lid, mid), wid in wpl_ids.items():
        days.add("WPL", [(1, wpl_xml(wid, t.localities[lid], voorkomen(1, begin, None)))])
        pairs.append((wid, mun[t.municipalities[mid]]))
    pairs1 = list(pairs)
    for wid, name, gem, _ in new_places:
        days.add("WPL", [], [(1, wpl_xml(wid, name, voorkomen(1, iso1, None)))])
        pairs1.append((wid, gem))
    days.close("WPL")
    days.open("PND")
    days.close("PND")
    for outer, st, d, prs in zip(outers, stamps, isos, (pairs, pairs1), strict=False):
        gwr = io.BytesIO()
        with zipfile.ZipFile(gwr, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"GEM-WPL-RELATIE-{st}-000001.xml", gwr_xml(prs, d))
        outer.writestr(f"GEM-WPL-RELATIE-{st}.zip", gwr.getvalue())
        for prefix in ("Inactief", "InOnderzoek", "NietBag"):
            _nested_junk(outer, prefix, st, d)
        outer.close()
    written = {"addresses": n, "left_out": expected, "duplicates": duplicate_keys(t)}
    if day1 is not None and delivery is not None:
        written["delivery"] = write_delivery(delivery, days.groups, date, next_day, pairs1)
        written["changes"] = made
        written["objects_changed"] = days.objects
    return written


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


def duplicate_keys(t) -> dict[tuple, list[tuple]]:
    """The keys (postcode, number, letter, addition; as `read_index` gives them) that several
    rows of the CSV table `t` share, with what each of those rows says (street, place,
    municipality, province, lat, lon). An index holds one of them: the CSV build the first line,
    the extract build the lowest nummeraanduiding (docs/guide/official.md, rule 5), and the
    generated identifications begin with a municipality code, not in the CSV's order."""
    letter = t.letter.astype(np.int64)
    upper = np.where((letter >= 97) & (letter <= 122), letter - 32, letter)
    adds_upper = [a.upper() for a in t.additions]
    _, add_id = np.unique(np.array(adds_upper, dtype=object).astype(str), return_inverse=True)
    key = ((t.postcode.astype(np.int64) << 41) | (t.number.astype(np.int64) << 24) | (upper << 16)
           | add_id.ravel()[t.addition].astype(np.int64))
    values, counts = np.unique(key, return_counts=True)
    rows = np.nonzero(np.isin(key, values[counts > 1]))[0]
    out: dict[tuple, list[tuple]] = {}
    for i in rows.tolist():
        k = (int(t.postcode[i]), int(t.number[i]), chr(upper[i]) if upper[i] else "", adds_upper[t.addition[i]])
        out.setdefault(k, []).append((t.streets[t.street[i]], t.localities[t.locality[i]],
                                      t.municipalities[t.municipality[i]], t.provinces[t.province[i]],
                                      int(t.lat[i]), int(t.lon[i])))
    return out


def compare(csv_index: Path, bag_index: Path, tolerance_m: float = 1.0,
            duplicates: dict[tuple, list[tuple]] | None = None) -> dict:
    """What differs between two indexes: keys only in one, other names, points too far apart.
    A key several rows share (`duplicates`) may hold any of them in the extract's index."""
    a, b = read_index(csv_index), read_index(bag_index)
    duplicates = duplicates or {}
    only_csv = sorted(set(a) - set(b))
    only_bag = sorted(set(b) - set(a))
    names, far, worst, either = [], [], 0.0, 0
    for k in set(a) & set(b):
        x, y = a[k], b[k]
        d = metres(x[4], x[5], y[4], y[5])
        if (x[:4] != y[:4] or d > tolerance_m) and any(
                c[:4] == y[:4] and metres(c[4], c[5], y[4], y[5]) <= tolerance_m for c in duplicates.get(k, ())):
            either += 1      # another of the rows that share the key: as right as the CSV build's
            continue
        if x[:4] != y[:4]:
            names.append((k, x[:4], y[:4]))
        worst = max(worst, d)
        if d > tolerance_m:
            far.append((k, d))
    return {"csv": len(a), "bag": len(b), "only_csv": only_csv, "only_bag": only_bag,
            "other_names": names, "too_far": far, "max_m": worst, "other_duplicate": either,
            "duplicates": len(duplicates)}


def _run(args: list[str]) -> tuple[float, float, float]:
    """Run `python -m engine ARGS` in a child process; return (seconds, CPU seconds of it and
    its workers, its own peak RSS in GB: the largest of it and its workers)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "engine", *args], cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args)
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20


def _run_build(source: Path, out: Path, extra: list[str]) -> tuple[float, float, float, dict]:
    """Build in a child process; return (seconds, CPU seconds, peak RSS in GB, manifest)."""
    seconds, cpu, gb = _run(["build", str(source), str(out), *extra])
    return seconds, cpu, gb, json.loads((out / "manifest.json").read_text())


def same_arrays(a: Path, b: Path) -> list[str]:
    """The arrays of index `a` whose bytes differ from those of index `b`."""
    names = json.loads((a / "manifest.json").read_text())["arrays"]
    return [k for k in names if (a / f"{k}.npy").read_bytes() != (b / f"{k}.npy").read_bytes()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=REPO.parent / "shared" / "data" / "nl-addresses.csv.zst")
    ap.add_argument("--work", type=Path, help="where the extract and indexes go (default: a temp dir)")
    ap.add_argument("--history", type=float, default=0.1, help="share of objects with an old version")
    ap.add_argument("--changes", type=int, default=5000,
                    help="objects the delivery from day 0 to day 1 changes (default 5000; 0: no day 1)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="lvbag-roundtrip-"))
    work.mkdir(parents=True, exist_ok=True)
    extract = work / "lvbag-extract-nl.zip"
    extract1 = work / "lvbag-extract-nl-day1.zip"
    prog = ["--no-progress"] if args.no_progress else []
    try:
        t0 = time.perf_counter()
        written = write_extract(args.source, extract, history=args.history,
                                day1=extract1 if args.changes else None,
                                delivery=work / "mutations" if args.changes else None, changes=args.changes)
        print(f"wrote {extract} ({extract.stat().st_size / 2**20:,.0f} MiB) in "
              f"{time.perf_counter() - t0:.0f} s: {written['addresses']:,} addresses; "
              f"left out on purpose: {written['left_out']}", flush=True)
        if args.changes:
            print(f"and {extract1.name}, and the delivery between them, {written['delivery'].name}: "
                  f"{written['objects_changed']:,} objects changed ({written['changes']})", flush=True)
        csv_s, csv_cpu, csv_gb, _ = _run_build(args.source, work / "idx-csv", prog)
        ref = ["--municipalities", str(args.source)]
        bag_s, bag_cpu, bag_gb, manifest = _run_build(extract, work / "idx-bag", [*prog, *ref])
        result = compare(work / "idx-csv", work / "idx-bag", duplicates=written["duplicates"])
        got = {k: manifest["left_out"].get(k, 0) for k in written["left_out"]}
        print(f"CSV build {csv_s:.0f} s ({csv_cpu:.0f} CPU s), peak {csv_gb:.2f} GB; extract build "
              f"{bag_s:.0f} s ({bag_cpu:.0f} CPU s, workers included), peak {bag_gb:.2f} GB (ru_maxrss)")
        print(f"addresses: CSV {result['csv']:,}, extract {result['bag']:,}; only in CSV "
              f"{len(result['only_csv'])}, only in extract {len(result['only_bag'])}; other names "
              f"{len(result['other_names'])}; farther than 1 m {len(result['too_far'])} "
              f"(max {result['max_m']:.3f} m); of {result['duplicates']:,} keys several rows share, "
              f"{result['other_duplicate']:,} hold another of those rows than the CSV build")
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
        if args.changes:
            ok = _day1(work, extract1, written["delivery"], prog, ref) and ok
        return 0 if ok else 1
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


def _day1(work: Path, extract1: Path, delivery: Path, prog: list[str], ref: list[str]) -> bool:
    """Day 0's index + the delivery (python -m engine update) against a build of day 1's extract."""
    b1_s, b1_cpu, b1_gb, _ = _run_build(extract1, work / "idx-bag1", [*prog, *ref])
    print(f"extract build of day 1 {b1_s:.0f} s ({b1_cpu:.0f} CPU s), peak {b1_gb:.2f} GB", flush=True)
    up_s, up_cpu, up_gb = _run(["update", str(work / "idx-bag"), str(delivery), "--out", str(work / "idx-upd")])
    manifest = json.loads((work / "idx-upd" / "manifest.json").read_text())
    changes = manifest["update"]["addresses"]
    print(f"update of day 0's index with {delivery.name}: {up_s:.1f} s end to end ({up_cpu:.1f} CPU s), "
          f"peak {up_gb:.2f} GB; addresses {changes['appeared']:,} appeared, {changes['changed']:,} changed, "
          f"{changes['disappeared']:,} disappeared; register date {manifest['register_date']}")
    # the bars of issue 41 (whole country, about 5,000 objects): 90 s end to end, 6 GB
    print(f"bars: {up_s:.1f} s <= 90 s {'met' if up_s <= 90 else 'NOT MET'}; peak {up_gb:.2f} GB <= 6 GB "
          f"{'met' if up_gb <= 6 else 'NOT MET'}", flush=True)
    a, b = read_index(work / "idx-upd"), read_index(work / "idx-bag1")
    only_upd, only_day1 = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    other = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    arrays = same_arrays(work / "idx-upd", work / "idx-bag1")
    print(f"day 0 + delivery: {len(a):,} addresses, day 1 built: {len(b):,}; only after the update "
          f"{len(only_upd)}, only in day 1 {len(only_day1)}, other values (names, point to the micro-degree) "
          f"{len(other)}; arrays that differ: {arrays or 'none'}")
    for what, items in (("only_update", only_upd), ("only_day1", only_day1), ("other", other)):
        for k in items[:5]:
            print(f"  {what}: {k}: {a.get(k)} / {b.get(k)}")
    ok = not (only_upd or only_day1 or other or arrays)
    print("day 0 + delivery == day 1: " + ("same addresses, byte for byte" if ok else "DIFFERENT"))
    return ok


if __name__ == "__main__":
    sys.exit(main())
