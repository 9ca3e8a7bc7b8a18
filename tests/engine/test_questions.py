"""The questions besides autocomplete (issue 39), on the sample index: postcode and house number
(`lookup`), the addresses at a location (`reverse`, against a brute-force numpy twin) and the
answers kept inside an area (`suggest(..., municipality=...)`), each with its bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

import engine

# ---- postcode + house number ------------------------------------------------------------------


def _rows_of(index, code, number):
    """The rows of a postcode (digits * 676 + letters) and number, by brute force."""
    a = index.arrays
    return np.flatnonzero((a["a_postcode"] == code) & (a["a_number"] == number)).tolist()


def _code(postcode: str) -> int:
    t = postcode.replace(" ", "").upper()
    return int(t[:4]) * 676 + (ord(t[4]) - 65) * 26 + ord(t[5]) - 65


def test_a_block_of_flats_answers_every_addition_in_register_order(sample_index):
    # Hoogeweg 3, Groningen: 467 addresses under one postcode and number
    hits = sample_index.lookup("9746TN", 3)
    assert len(hits) == 467
    assert [h.address_id for h in hits] == _rows_of(sample_index, _code("9746 TN"), 3)
    assert [h.lines[0] for h in hits[:4]] == ["Hoogeweg 3", "Hoogeweg 3-1", "Hoogeweg 3-2", "Hoogeweg 3-3"]
    assert hits[9].addition == "9" and hits[10].addition == "10"   # 3-10 after 3-9, not after 3-1
    assert {(h.street, h.postcode, h.locality) for h in hits} == {("Hoogeweg", "9746 TN", "Groningen")}
    assert {h.found for h in hits} == {"lookup"}


def test_no_letter_first_then_the_letters(sample_index):
    hits = sample_index.lookup("9745 CC", 1)
    assert [h.lines[0] for h in hits] == ["Kerkstraat 1", "Kerkstraat 1-1", "Kerkstraat 1-2",
                                          "Kerkstraat 1-3", "Kerkstraat 1a"]


@pytest.mark.parametrize("postcode", ["9745CC", "9745 cc", " 9745  Cc ", "9745cc"])
def test_a_postcode_in_any_form_people_type(sample_index, postcode):
    assert [h.address_id for h in sample_index.lookup(postcode, 1)] == _rows_of(sample_index, _code("9745CC"), 1)


def test_narrowed_by_letter_and_addition_in_any_case(sample_index):
    ix = sample_index
    assert [h.lines[0] for h in ix.lookup("9745CC", 1, letter="A")] == ["Kerkstraat 1a"]
    assert [h.lines[0] for h in ix.lookup("9745CC", 1, letter="a")] == ["Kerkstraat 1a"]
    assert [h.lines[0] for h in ix.lookup("9746TN", 3, addition="10")] == ["Hoogeweg 3-10"]
    assert ix.lookup("9745CC", 1, letter="b") == []


def test_none_there_is_an_empty_list(sample_index):
    assert sample_index.lookup("9745CC", 99999) == []
    assert sample_index.lookup("1000AA", 1) == []     # a postcode the sample does not hold
    assert sample_index.lookup_json("9745CC", 99999) == b'{"hits":[]}'


def test_lookup_json_is_the_hits_of_lookup(sample_index):
    body = sample_index.lookup_json("9745 CC", 1)
    assert body == b'{"hits":[' + b",".join(h.to_json() for h in sample_index.lookup("9745CC", 1)) + b"]}"


@pytest.mark.parametrize(("args", "kwargs", "parameter"), [
    (("9745C", 1), {}, "postcode"), (("09745CC", 1), {}, "postcode"), (("0745CC", 1), {}, "postcode"),
    (("9745", 1), {}, "postcode"), (("CC9745", 1), {}, "postcode"), (("9745CÇ", 1), {}, "postcode"),
    (("", 1), {}, "postcode"), (("9745CC", 0), {}, "number"), (("9745CC", -1), {}, "number"),
    (("9745CC", 100000), {}, "number"), (("9745CC", 1), {"letter": "AB"}, "letter"),
    (("9745CC", 1), {"letter": "1"}, "letter"), (("9745CC", 1), {"letter": ""}, "letter"),
    (("9745CC", 1), {"addition": ""}, "addition"), (("9745CC", 1), {"addition": "12345"}, "addition"),
    (("9745CC", 1), {"addition": "a-1"}, "addition"),
])
def test_a_malformed_argument_names_its_parameter(sample_index, args, kwargs, parameter):
    for method in (sample_index.lookup, sample_index.lookup_json, sample_index.lookup_ids):
        with pytest.raises(engine.QueryError) as e:
            method(*args, **kwargs)
        assert e.value.parameter == parameter


@pytest.mark.parametrize(("args", "kwargs"), [
    ((9745, 1), {}), (("9745CC", "1"), {}), (("9745CC", 1.0), {}), (("9745CC", True), {}),
    (("9745CC", 1), {"letter": 1}), (("9745CC", 1), {"addition": 1}),
])
def test_a_wrong_type_is_a_type_error(sample_index, args, kwargs):
    with pytest.raises(TypeError):
        sample_index.lookup(*args, **kwargs)


# ---- the addresses at a location --------------------------------------------------------------

M_PER_UDEG = engine.params.KM_PER_DEGREE * 1000 * engine.params.MICRODEGREE


def _brute_nearest(index, lat, lon, limit, radius=None, keep=None):
    """[(row, metres)] of the `limit` addresses nearest to (lat, lon), by (distance, row)."""
    a = index.arrays
    y, x = lat * 1e6, lon * 1e6
    dy = a["a_lat"].astype(np.float64) - y
    dx = (a["a_lon"].astype(np.float64) - x) * np.cos(np.radians(lat))
    d2 = dy * dy + dx * dx
    rows = np.arange(len(d2))
    if keep is not None:
        d2, rows = d2[keep], rows[keep]
    if radius is not None:
        inside = np.sqrt(d2) * M_PER_UDEG <= radius
        d2, rows = d2[inside], rows[inside]
    if len(d2) > limit:  # only the `limit` nearest and their ties need sorting
        near = d2 <= np.partition(d2, limit - 1)[limit - 1]
        d2, rows = d2[near], rows[near]
    order = np.lexsort((rows, d2))[:limit]
    return [(int(rows[i]), round(float(np.sqrt(d2[i])) * M_PER_UDEG, 1)) for i in order]


def test_reverse_is_the_brute_force_search(sample_index):
    a = sample_index.arrays
    rng = np.random.default_rng(39)
    # points near addresses (where people put pins) and anywhere in the sample's box
    picks = rng.integers(0, len(sample_index), 300)
    points = [(a["a_lat"][i] / 1e6 + rng.normal(0, 0.002), a["a_lon"][i] / 1e6 + rng.normal(0, 0.002))
              for i in picks]
    lo_lat, hi_lat = a["a_lat"].min() / 1e6, a["a_lat"].max() / 1e6
    lo_lon, hi_lon = a["a_lon"].min() / 1e6, a["a_lon"].max() / 1e6
    points += list(zip(rng.uniform(lo_lat, hi_lat, 100), rng.uniform(lo_lon, hi_lon, 100), strict=True))
    for k, (lat, lon) in enumerate(points):
        limit = 1 + k % 10
        got = sample_index.reverse_ids(float(lat), float(lon), limit=limit)
        want = _brute_nearest(sample_index, lat, lon, limit)
        assert [r for r, _ in got] == [r for r, _ in want], (lat, lon, limit)
        assert [m for _, m in got] == pytest.approx([m for _, m in want], abs=0.051)


def test_a_pin_in_a_canal_answers_the_houses_on_its_bank(sample_index):
    # the Noorderhaven in Groningen: a canal between quays of the same name (Noorderhaven 1 on
    # the north bank, 2 on the south), its houseboats moored along them (numbers from 1001)
    hits = sample_index.reverse(53.2207, 6.5607, limit=5)   # in the water, between 1 and 2
    assert {h.street for h in hits} == {"Noorderhaven"}
    assert all(10 < h.distance < 30 for h in hits)
    assert [h.distance for h in hits] == sorted(h.distance for h in hits)
    assert {h.found for h in hits} == {"reverse"}


def test_radius_and_the_country_box(sample_index):
    near = sample_index.reverse(53.2207, 6.5607, limit=10, radius=15)
    assert near and all(h.distance <= 15 for h in near)
    assert sample_index.reverse(53.2207, 6.5607, limit=10, radius=1) == []
    assert sample_index.reverse(48.8566, 2.3522) == []      # Paris
    assert sample_index.reverse(0, 0) == []
    assert sample_index.reverse_json(0, 0, limit=3) == b'{"hits":[],"limit":3}'


def test_reverse_json_is_the_hits_with_their_distance(sample_index):
    hits = sample_index.reverse(53.2207, 6.5607, limit=3)
    body = sample_index.reverse_json(53.2207, 6.5607, limit=3)
    assert body == b'{"hits":[' + b",".join(h.to_json() for h in hits) + b'],"limit":3}'
    assert hits[0].to_json().endswith(f',"distance":{hits[0].distance:.1f}}}'.encode())


@pytest.mark.parametrize(("kwargs", "parameter"), [
    ({"lat": 91, "lon": 5}, "lat"), ({"lat": 52, "lon": -181}, "lon"), ({"lat": float("nan"), "lon": 5}, "lat"),
    ({"lat": 52, "lon": 5, "limit": 0}, "limit"), ({"lat": 52, "lon": 5, "limit": 11}, "limit"),
    ({"lat": 52, "lon": 5, "radius": 0}, "radius"), ({"lat": 52, "lon": 5, "radius": -5}, "radius"),
    ({"lat": 52, "lon": 5, "radius": float("inf")}, "radius"),
])
def test_a_bad_reverse_argument_names_its_parameter(sample_index, kwargs, parameter):
    with pytest.raises(engine.QueryError) as e:
        sample_index.reverse(**kwargs)
    assert e.value.parameter == parameter


def test_reverse_inside_an_area(sample_index):
    a = sample_index.arrays
    lat, lon = 53.2207, 6.5607
    spec = sample_index.area(postcode="9711")
    rows = np.flatnonzero((a["a_postcode"] >= 9711 * 676) & (a["a_postcode"] < 9712 * 676))
    keep = np.zeros(len(sample_index), dtype=bool)
    keep[rows] = True
    got = sample_index.reverse_ids(lat, lon, limit=10, area=spec)
    assert [r for r, _ in got] == [r for r, _ in _brute_nearest(sample_index, lat, lon, 10, keep=keep)]
    assert {h.postcode[:4] for h in sample_index.reverse(lat, lon, limit=10, postcode="9711")} == {"9711"}


# ---- answers kept inside an area --------------------------------------------------------------


def test_kerkstraat_restricted_to_a_municipality(sample_index):
    # unrestricted, the country's Kerkstraten 1 (Groningen's first); restricted to Súdwest-Fryslân
    # (any case, no diacritics), its own: its Kerkstraten 1 first, then its other Kerkstraten
    assert sample_index.suggest("kerkstraat 1", limit=1)[0].municipality == "Groningen"
    hits = sample_index.suggest("kerkstraat 1", limit=10, municipality="sudwest-fryslan")
    assert hits and {h.municipality for h in hits} == {"Súdwest-Fryslân"}
    assert hits[0].lines[0] == "Kerkstraat 1"
    assert all(h.street.endswith("Kerkstraat") for h in hits)


def test_restricted_inside_the_search_not_filtered_afterwards(sample_index):
    # the unrestricted top 10 of "kerkstraat" holds few of 's-Hertogenbosch's; the area search
    # answers 10 of them
    q = "kerkstraat"
    top = sample_index.suggest(q, limit=10)
    filtered = [h for h in top if h.municipality == "'s-Hertogenbosch"]
    inside = sample_index.suggest(q, limit=10, municipality="'s-hertogenbosch")
    assert len(filtered) < 10
    assert len(inside) == 10 and {h.municipality for h in inside} == {"'s-Hertogenbosch"}


@pytest.mark.parametrize("kwargs", [
    {"municipality": "Groningen"}, {"locality": "Haren Gn"}, {"province": "groningen"},
    {"postcode": "9745"}, {"postcode": "9745 c"}, {"bbox": "6.4,53.1,6.7,53.3"},
    {"municipality": ["Maastricht", "Groningen"]},
])
def test_every_hit_is_inside_the_area(sample_index, kwargs):
    for q in ["kerkstraat 1", "hoofdstraat", "1", "k", "station"]:
        for h in sample_index.suggest(q, limit=10, **kwargs):
            if "municipality" in kwargs:
                names = kwargs["municipality"]
                names = [names] if isinstance(names, str) else names
                assert h.municipality.lower() in {n.lower() for n in names}
            if "locality" in kwargs:
                assert h.locality == "Haren Gn"
            if "province" in kwargs:
                assert h.province == "Groningen"
            if "postcode" in kwargs:
                assert h.postcode.replace(" ", "").startswith(kwargs["postcode"].replace(" ", "").upper())
            if "bbox" in kwargs:
                assert 6.4 <= h.longitude <= 6.7 and 53.1 <= h.latitude <= 53.3


def test_a_short_word_finds_the_area_own_streets(sample_index):
    # "k" alone reads the country's best streets starting with k; restricted, the area's
    hits = sample_index.suggest("k", limit=10, locality="haren gn")
    assert len(hits) == 10 and {h.locality for h in hits} == {"Haren Gn"}


def test_a_name_that_holds_a_comma_is_read_whole(sample_index):
    # names are separated by commas, yet "Nuenen, Gerwen en Nederwetten" is one municipality
    # (not in the sample: a fabricated table of names stands for the register's)
    known = {"nuenen gerwen en nederwetten": [1], "groningen": [2], "nuenen": [3]}
    assert engine._core._join_named(["Nuenen", " Gerwen en Nederwetten", "Groningen"], known) == [
        "Nuenen, Gerwen en Nederwetten", "Groningen"]
    assert engine._core._join_named(["Nuenen", "Groningen"], known) == ["Nuenen", "Groningen"]
    assert engine._core._join_named(["Atlantis", "Groningen"], known) == ["Atlantis", "Groningen"]
    assert engine._core._join_named(["Groningen", ""], known) == ["Groningen", ""]   # an empty name
    assert [h.municipality for h in sample_index.suggest("kerkstraat", municipality="Groningen,Maastricht")]


def test_json_of_a_restricted_search_is_its_hits(sample_index):
    hits = sample_index.suggest("kerkstraat 1", limit=3, municipality="Groningen")
    body = sample_index.suggest_json("kerkstraat 1", limit=3, municipality="Groningen")
    assert body == b'{"hits":[' + b",".join(h.to_json() for h in hits) + b'],"limit":3}'


def test_without_area_arguments_the_answer_is_unchanged(sample_index):
    for q in ["kerkstraat 1", "k", "1012lg 1", "hoogeweg 3 groningen"]:
        assert sample_index.suggest_json(q, limit=10, municipality=None) == sample_index.suggest_json(q, limit=10)
        assert sample_index.area() is None


@pytest.mark.parametrize(("kwargs", "parameter", "value"), [
    ({"municipality": "Atlantis"}, "municipality", "Atlantis"),
    ({"municipality": "Groningen,Atlantis"}, "municipality", "Atlantis"),
    ({"locality": "Nergenshuizen"}, "locality", "Nergenshuizen"),
    ({"province": "Vlaanderen"}, "province", "Vlaanderen"),
    ({"municipality": "Groningen,"}, "municipality", None),
    ({"postcode": "12"}, "postcode", "12"),
    ({"postcode": "0123"}, "postcode", "0123"),
    ({"postcode": "1000"}, "postcode", "1000"),   # no address of the sample there
    ({"bbox": "1,2,3"}, "bbox", None),
    ({"bbox": "6,53,5,54"}, "bbox", None),
    ({"bbox": "a,b,c,d"}, "bbox", None),
])
def test_a_bad_area_names_the_parameter_and_the_value(sample_index, kwargs, parameter, value):
    with pytest.raises(engine.QueryError) as e:
        sample_index.suggest_json("kerkstraat", **kwargs)
    assert e.value.parameter == parameter
    if value is not None:
        assert repr(value) in str(e.value)
