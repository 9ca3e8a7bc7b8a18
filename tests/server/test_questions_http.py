"""The other questions of the address API (issue 39), as a person would check them over HTTP:
``/v1/address/postcode``, ``/v1/address/reverse`` and the area parameters of ``/v1/address``,
behind the same keys, limits, errors, CORS and metrics (WSGI and ASGI in turn)."""

from __future__ import annotations

import json

import pytest
from test_contract import assert_problem

from server.keys import PUBLISHABLE

POSTCODE = "/v1/address/postcode"
REVERSE = "/v1/address/reverse"
SHOP = "https://shop.example"
CANAL = "lat=53.2207&lon=6.5607"   # the Noorderhaven, Groningen: in the water


def component(hit: dict, kind: str) -> object:
    return next(c["value"] for c in hit["components"] if c["type"] == kind)


def lines(resp) -> list[str]:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "application/json"
    return [h["lines"][0] for h in json.loads(resp.content)["hits"]]


# ---- postcode + house number ------------------------------------------------------------------


def test_postcode_and_number_answer_every_address_there_in_register_order(get, index):
    resp = get("country=NLD&postcode=9745CC&number=1", path=POSTCODE)
    assert lines(resp) == ["Kerkstraat 1", "Kerkstraat 1-1", "Kerkstraat 1-2", "Kerkstraat 1-3", "Kerkstraat 1a"]
    assert resp.content == index.lookup_json("9745CC", 1)


@pytest.mark.parametrize("postcode", ["9745cc", "9745+CC", "9745%20cc", "+9745CC+"])
def test_the_postcode_in_any_form_people_type(get, postcode):
    assert len(lines(get(f"country=NLD&postcode={postcode}&number=1", path=POSTCODE))) == 5


def test_a_block_of_flats(get):
    got = lines(get("country=NLD&postcode=9746TN&number=3", path=POSTCODE))
    assert len(got) == 467 and got[:3] == ["Hoogeweg 3", "Hoogeweg 3-1", "Hoogeweg 3-2"]


def test_narrowed_by_letter_and_addition(get):
    assert lines(get("country=NLD&postcode=9745CC&number=1&letter=a", path=POSTCODE)) == ["Kerkstraat 1a"]
    assert lines(get("country=NLD&postcode=9746TN&number=3&addition=10", path=POSTCODE)) == ["Hoogeweg 3-10"]


def test_none_there_is_200_with_no_hits(get):
    resp = get("country=NLD&postcode=9745CC&number=99999", path=POSTCODE)
    assert resp.status_code == 200 and resp.content == b'{"hits":[]}'


@pytest.mark.parametrize(("query", "code", "parameter"), [
    ("postcode=9745CC&number=1", "missing_parameter", "country"),
    ("country=NLD&number=1", "missing_parameter", "postcode"),
    ("country=NLD&postcode=9745CC", "missing_parameter", "number"),
    ("country=BEL&postcode=9745CC&number=1", "unsupported_country", "country"),
    ("country=NLD&postcode=9745C&number=1", "invalid_parameter", "postcode"),
    ("country=NLD&postcode=CC9745&number=1", "invalid_parameter", "postcode"),
    ("country=NLD&postcode=0745CC&number=1", "invalid_parameter", "postcode"),
    ("country=NLD&postcode=%ff&number=1", "invalid_parameter", "postcode"),
    ("country=NLD&postcode=9745CC&number=0", "invalid_parameter", "number"),
    ("country=NLD&postcode=9745CC&number=01", "invalid_parameter", "number"),
    ("country=NLD&postcode=9745CC&number=1a", "invalid_parameter", "number"),
    ("country=NLD&postcode=9745CC&number=100000", "invalid_parameter", "number"),
    ("country=NLD&postcode=9745CC&number=", "invalid_parameter", "number"),
    ("country=NLD&postcode=9745CC&number=1&number=2", "invalid_parameter", "number"),
    ("country=NLD&postcode=9745CC&number=1&letter=ab", "invalid_parameter", "letter"),
    ("country=NLD&postcode=9745CC&number=1&addition=a-b", "invalid_parameter", "addition"),
])
def test_every_bad_parameter_of_the_postcode_route_is_a_400_naming_it(get, query, code, parameter):
    assert_problem(get(query, path=POSTCODE), 400, code, parameter)


# ---- the address at a location ----------------------------------------------------------------


def test_a_pin_in_a_canal_answers_the_houses_on_its_bank_with_their_distance(get, index):
    resp = get(f"country=NLD&{CANAL}&limit=3", path=REVERSE)
    hits = json.loads(resp.content)["hits"]
    assert [component(h, "NLD_PUBLIC_SPACE") for h in hits] == ["Noorderhaven"] * 3
    assert [h["distance"] for h in hits] == sorted(h["distance"] for h in hits)
    assert all(10 < h["distance"] < 30 for h in hits)
    assert resp.content == index.reverse_json(53.2207, 6.5607, limit=3)
    assert json.loads(resp.content)["limit"] == 3


def test_radius_and_a_point_outside_the_country(get):
    near = json.loads(get(f"country=NLD&{CANAL}&limit=10&radius=20", path=REVERSE).content)["hits"]
    assert near and all(h["distance"] <= 20 for h in near)
    resp = get("country=NLD&lat=48.8566&lon=2.3522", path=REVERSE)   # Paris
    assert resp.status_code == 200 and resp.content == b'{"hits":[],"limit":5}'


def test_reverse_inside_an_area(get):
    resp = get(f"country=NLD&{CANAL}&limit=10&postcode=9711", path=REVERSE)
    hits = json.loads(resp.content)["hits"]
    assert hits and {component(h, "NLD_POSTAL_CODE")[:4] for h in hits} == {"9711"}


@pytest.mark.parametrize(("query", "code", "parameter"), [
    ("lat=52&lon=5", "missing_parameter", "country"),
    ("country=NLD&lon=5", "missing_parameter", "lat"),
    ("country=NLD&lat=52", "missing_parameter", "lon"),
    ("country=NLD&lat=91&lon=5", "invalid_parameter", "lat"),
    ("country=NLD&lat=52&lon=181", "invalid_parameter", "lon"),
    ("country=NLD&lat=abc&lon=5", "invalid_parameter", "lat"),
    ("country=NLD&lat=nan&lon=5", "invalid_parameter", "lat"),
    ("country=NLD&lat=52&lon=5&limit=11", "invalid_parameter", "limit"),
    ("country=NLD&lat=52&lon=5&radius=0", "invalid_parameter", "radius"),
    ("country=NLD&lat=52&lon=5&radius=-1", "invalid_parameter", "radius"),
    ("country=NLD&lat=52&lon=5&radius=1e999", "invalid_parameter", "radius"),
    ("country=NLD&lat=52&lon=5&radius=far", "invalid_parameter", "radius"),
    ("country=NLD&lat=52&lon=5&municipality=Atlantis", "invalid_parameter", "municipality"),
    ("country=NLD&lat=52&lon=5&bbox=1,2,3", "invalid_parameter", "bbox"),
])
def test_every_bad_parameter_of_the_reverse_route_is_a_400_naming_it(get, query, code, parameter):
    assert_problem(get(query, path=REVERSE), 400, code, parameter)


# ---- answers kept inside an area --------------------------------------------------------------


def test_kerkstraat_1_restricted_to_a_municipality(get, index):
    resp = get("country=NLD&q=kerkstraat+1&limit=10&municipality=S%C3%BAdwest-Frysl%C3%A2n")
    hits = json.loads(resp.content)["hits"]
    assert hits and {component(h, "NLD_MUNICIPALITY") for h in hits} == {"Súdwest-Fryslân"}
    # any case, without diacritics: the same answer
    assert get("country=NLD&q=kerkstraat+1&limit=10&municipality=sudwest-fryslan").content == resp.content
    assert resp.content == index.suggest_json("kerkstraat 1", limit=10, municipality="sudwest-fryslan")


def test_restricted_inside_the_search_answers_more_than_filtering_afterwards(get):
    top = json.loads(get("country=NLD&q=kerkstraat&limit=10").content)["hits"]
    filtered = [h for h in top if component(h, "NLD_MUNICIPALITY") == "'s-Hertogenbosch"]
    inside = json.loads(get("country=NLD&q=kerkstraat&limit=10&municipality='s-Hertogenbosch").content)["hits"]
    assert len(filtered) < len(inside) == 10


@pytest.mark.parametrize("area", ["locality=Haren+Gn", "province=groningen", "postcode=9745",
                                  "postcode=9745+CC", "bbox=6.4,53.1,6.7,53.3", "municipality=Maastricht,Groningen"])
def test_each_area_parameter_is_served(get, index, area):
    resp = get(f"country=NLD&q=kerkstraat&limit=10&{area}")
    assert resp.status_code == 200 and json.loads(resp.content)["hits"]


@pytest.mark.parametrize(("area", "parameter", "value"), [
    ("municipality=Atlantis", "municipality", "Atlantis"),
    ("locality=Nergenshuizen", "locality", "Nergenshuizen"),
    ("province=Vlaanderen", "province", "Vlaanderen"),
    ("postcode=12", "postcode", "12"),
    ("postcode=1000", "postcode", "1000"),
    ("bbox=6,53,5,54", "bbox", None),
    ("municipality=Groningen&municipality=Haren", "municipality", None),
    ("municipality=%ff", "municipality", None),
])
def test_an_unknown_area_is_a_400_naming_the_parameter_and_the_value(get, area, parameter, value):
    body = assert_problem(get(f"country=NLD&q=kerkstraat&{area}"), 400, "invalid_parameter", parameter)
    if value is not None:
        assert repr(value) in body["detail"]


@pytest.mark.parametrize("query", ["country=NLD&q=kerkstraat+1", "country=NLD&q=kerkstraat+1&limit=10&lat=52&lon=5",
                                   "country=NLD&q=k&number=1&radius=5"])
def test_without_the_new_parameters_the_answer_is_the_same(get, index, query):
    resp = get(query)
    q = "kerkstraat 1" if "kerk" in query else "k"
    limit = 10 if "limit=10" in query else 5
    focus = {"lat": 52, "lon": 5} if "lat" in query else {}
    assert resp.content == index.suggest_json(q, limit=limit, **focus)


# ---- the same keys, limits, CORS and metrics --------------------------------------------------


@pytest.mark.parametrize("path", [POSTCODE, REVERSE])
def test_the_new_routes_need_a_key_first(client, path):
    resp = client.simulate_get(path, query_string="country=NLD")   # no key, bad parameters
    assert_problem(resp, 401, "unauthorized")


@pytest.mark.parametrize(("path", "query"), [(POSTCODE, "country=NLD&postcode=9745CC&number=1"),
                                             (REVERSE, f"country=NLD&{CANAL}")])
def test_the_new_routes_share_the_key_rate_limit(app_factory, keys, flavour, path, query):
    key = keys.store.create(f"one-a-while{path.replace('/', '.')}-{flavour}", 1)
    client = app_factory(key_refresh_seconds=0)
    headers = {"Authorization": f"Bearer {key}"}
    statuses = [client.simulate_get(path, query_string=query, headers=headers).status_code for _ in range(4)]
    assert statuses[0] == 200 and 429 in statuses


@pytest.mark.parametrize(("path", "query"), [(POSTCODE, "country=NLD&postcode=9745CC&number=1"),
                                             (REVERSE, f"country=NLD&{CANAL}")])
def test_a_web_page_of_the_key_origin_reads_the_new_routes(app_factory, keys, flavour, path, query):
    key = keys.store.create(f"shop{path.replace('/', '.')}-{flavour}", 1e6, kind=PUBLISHABLE, origins=[SHOP])
    client = app_factory(key_refresh_seconds=0)
    resp = client.simulate_get(path, query_string=query, headers={"Authorization": f"Bearer {key}", "Origin": SHOP})
    assert resp.status_code == 200
    assert resp.headers["access-control-allow-origin"] == SHOP and resp.headers["vary"] == "Origin"
    pre = client.simulate_options(path, headers={"Origin": SHOP, "Access-Control-Request-Method": "GET",
                                                 "Access-Control-Request-Headers": "authorization"})
    assert pre.status_code == 204 and pre.headers["access-control-allow-origin"] == SHOP
    other = client.simulate_get(path, query_string=query,
                                headers={"Authorization": f"Bearer {key}", "Origin": "https://evil.example"})
    assert_problem(other, 403, "origin_not_allowed")


def test_the_new_routes_are_counted_in_the_metrics(client, get):
    get("country=NLD&postcode=9745CC&number=1", path=POSTCODE)
    get("country=NLD&lat=1000&lon=5", path=REVERSE)
    text = client.simulate_get("/metrics").text
    assert 'route="/v1/address/postcode"' in text and 'status="200"' in text
    assert any('route="/v1/address/reverse"' in line and 'status="400"' in line for line in text.splitlines())


@pytest.mark.parametrize("path", [POSTCODE, REVERSE])
def test_the_new_routes_allow_get_and_head_only(client, auth, path):
    resp = client.simulate_post(path, headers=auth)
    assert_problem(resp, 405, "method_not_allowed")
