"""The Python API's rules for its arguments, and the life of an index: open, use, close."""

from __future__ import annotations

import gc
import os
import pickle
import re
import threading
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from testdata import REPO

import engine

METHODS = ["suggest_json", "suggest", "search_ids"]


def call(index, method, q="damrak 1", **kwargs):
    return getattr(index, method)(q, **kwargs)


# ---- arguments: a wrong type is a TypeError, a wrong value a QueryError (a ValueError)

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("q", [1, None, b"damrak", ["damrak"], 1.5])
def test_q_must_be_a_str(sample_index, method, q):
    with pytest.raises(TypeError, match=r"^q must be a str, not "):
        call(sample_index, method, q)


def test_q_may_be_a_str_subclass(sample_index):
    assert sample_index.suggest_json(np.str_("hooistraat 2")) == sample_index.suggest_json("hooistraat 2")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("limit", ["5", None, 5.9, 5.0, True, False, np.float64(5), Decimal(5), Fraction(5), 1j])
def test_limit_must_be_an_integer(sample_index, method, limit):
    """Regression: "5" and None gave a bare TypeError, 5.9 was silently 5."""
    with pytest.raises(TypeError, match=r"^limit must be an int"):
        call(sample_index, method, limit=limit)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("limit", [0, 11, -1, 2**40, -(2**70), np.int64(11), np.uint64(2**63)])
def test_limit_must_be_from_1_to_10(sample_index, method, limit):
    """Regression: 2**40 gave an OverflowError."""
    with pytest.raises(engine.QueryError, match="limit must be an integer from 1 to 10") as e:
        call(sample_index, method, limit=limit)
    assert e.value.parameter == "limit" and e.value.code == "invalid_parameter"


@pytest.mark.parametrize("limit", [np.int8(3), np.int64(10), np.uint8(1), np.int32(7)])
def test_limit_may_be_any_integral_type(sample_index, limit):
    assert sample_index.suggest_json("kerkstraat", limit=limit) == sample_index.suggest_json(
        "kerkstraat", limit=int(limit))


@pytest.mark.parametrize("method", METHODS)
def test_a_query_of_more_than_128_code_points_is_too_long(sample_index, method):
    with pytest.raises(engine.QueryError) as e:
        call(sample_index, method, "x" * 129)
    assert (e.value.code, e.value.parameter) == ("query_too_long", "q")


@pytest.mark.parametrize("lat", [52.07, 52, np.float64(52.07), np.float32(52.07), np.float16(52.06),
                                 np.int32(52), Decimal("52.07"), Fraction(5207, 100)])
def test_lat_lon_may_be_any_real_number(sample_index, lat):
    """Regression: a numpy.float32 or Decimal latitude was refused while numpy.float64 worked."""
    expected = sample_index.suggest_json("kerkstraat", lat=float(lat), lon=4.3)
    assert sample_index.suggest_json("kerkstraat", lat=lat, lon=4.3) == expected
    assert sample_index.suggest_json("kerkstraat", lat=4.3, lon=lat) == sample_index.suggest_json(
        "kerkstraat", lat=4.3, lon=float(lat))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["lat", "lon"])
@pytest.mark.parametrize("value", ["52.1", True, np.bool_(True), 1j, [52.1], object()])
def test_lat_lon_must_be_real_numbers(sample_index, method, name, value):
    other = "lon" if name == "lat" else "lat"
    with pytest.raises(TypeError, match=rf"^{name} must be a real number"):
        call(sample_index, method, **{name: value, other: 4.3})


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name, value", [
    ("lat", 90.5), ("lat", -91), ("lon", 180.01), ("lon", -200), ("lat", float("nan")),
    ("lon", float("inf")), ("lat", Decimal("NaN")), ("lat", Decimal("sNaN")), ("lon", 10**400),
    ("lat", np.float32("nan")), ("lon", Decimal("1e999")),
])
def test_lat_lon_must_be_within_range(sample_index, method, name, value):
    other = "lon" if name == "lat" else "lat"
    with pytest.raises(engine.QueryError, match=rf"^{name} must be a number from ") as e:
        call(sample_index, method, **{name: value, other: 4.3})
    assert e.value.parameter == name and e.value.code == "invalid_parameter"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("given, absent", [("lat", "lon"), ("lon", "lat")])
def test_lat_and_lon_go_together(sample_index, method, given, absent):
    with pytest.raises(engine.QueryError, match="lat and lon go together") as e:
        call(sample_index, method, **{given: 52.0})
    assert e.value.parameter == absent


def test_arguments_are_keyword_only(sample_index):
    with pytest.raises(TypeError):
        sample_index.suggest_json("damrak", 5)


def test_an_index_is_opened_not_constructed(sample_index_dir):
    """Regression: AddressIndex("dir") gave an unrelated type error about a dict."""
    with pytest.raises(TypeError, match=r"AddressIndex\.open\("):
        engine.AddressIndex(str(sample_index_dir))
    with pytest.raises(TypeError, match=r"AddressIndex\.open\("):
        engine.AddressIndex(sample_index_dir)
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, not int"):
        engine.AddressIndex.open(3)


# ---- close() and the context manager

def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_close_releases_every_file(sample_index_dir):
    """Regression: an index held 56 open file descriptors until garbage collection."""
    gc.collect()
    before = open_fds()
    index = engine.AddressIndex.open(sample_index_dir)
    assert open_fds() > before
    assert index.suggest("hooistraat 2")
    index.close()
    assert open_fds() == before
    index.close()  # again: nothing to do
    assert repr(index) == f"AddressIndex({str(sample_index_dir)!r}, closed)"


@pytest.mark.parametrize("use", [
    lambda i: i.suggest_json("damrak"), lambda i: i.suggest("damrak"), lambda i: i.search_ids("damrak"),
    lambda i: len(i), lambda i: i.arrays, lambda i: pickle.dumps(i), lambda i: i.__enter__(),
])
def test_a_closed_index_says_so(sample_index_dir, use):
    index = engine.AddressIndex.open(sample_index_dir)
    index.close()
    with pytest.raises(engine.IndexClosedError, match="closed"):
        use(index)


def test_the_context_manager_closes(sample_index_dir):
    gc.collect()
    before = open_fds()
    with engine.AddressIndex.open(sample_index_dir) as index:
        assert index.suggest("hooistraat 2")
    assert open_fds() == before
    with pytest.raises(engine.IndexClosedError):
        index.suggest("hooistraat 2")
    with pytest.raises(ZeroDivisionError), engine.AddressIndex.open(sample_index_dir) as index:
        1 / 0  # noqa: B018
    assert open_fds() == before


@pytest.mark.parametrize("round", range(5))
def test_close_while_threads_search(sample_index_dir, round):
    """No search reads an unmapped page (a crash): close() leaves the files to the last running
    search to release; every later call gets IndexClosedError."""
    q = "zzzzzzzzzz qqqqqqqq xxxxxxx"  # PERF: ~0.2 ms in the search, so close() comes mid-search
    gc.collect()
    before = open_fds()
    index = engine.AddressIndex.open(sample_index_dir)
    expected = index.suggest_json(q)
    started, stop = threading.Barrier(5), threading.Event()
    answers, errors = set(), []
    count = [0] * 4

    def work(k):
        started.wait()
        try:
            while not stop.is_set():
                answers.add(index.suggest_json(q))
                count[k] += 1
        except engine.IndexClosedError as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    try:
        started.wait()
        while min(count) < 5:
            time.sleep(0.0005)
        index.close()
        for t in threads:
            t.join(timeout=60)
    finally:
        stop.set()
    assert len(errors) == 4 and answers == {expected}
    assert open_fds() == before


def test_arrays_taken_from_an_index_outlive_close(sample_index_dir):
    gc.collect()
    before = open_fds()
    index = engine.AddressIndex.open(sample_index_dir)
    numbers = index.arrays["a_number"]
    total = int(numbers.sum())
    index.close()
    assert int(numbers.sum()) == total  # still mapped: the array holds its file
    del numbers
    gc.collect()
    assert open_fds() == before


def test_a_failed_open_closes_what_it_mapped(sample_index_dir, tmp_path):
    import shutil

    from engine._core import ARRAYS

    broken = tmp_path / "broken"
    shutil.copytree(sample_index_dir, broken)
    (broken / f"{list(ARRAYS)[-1]}.npy").unlink()  # every array before it is mapped first
    gc.collect()
    before = open_fds()
    with pytest.raises(engine.IndexOpenError, match="is incomplete") as failure:
        engine.AddressIndex.open(broken)
    assert open_fds() == before, "closed at once, not when the exception and its frames go"
    assert failure.value.__traceback__ is not None


def test_pickle_stores_an_absolute_path(sample_index_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(sample_index_dir.parent)
    index = engine.AddressIndex.open(sample_index_dir.name)  # relative
    assert index.path == str(sample_index_dir)
    data = pickle.dumps(index)
    monkeypatch.chdir(tmp_path)
    clone = pickle.loads(data)
    assert clone.path == str(sample_index_dir)
    assert clone.suggest_json("hooistraat 2") == index.suggest_json("hooistraat 2")
    clone.close()
    index.close()


def test_the_version_comes_from_the_package_metadata():
    import tomllib

    pyproject = REPO / "pyproject.toml"
    assert engine.__version__ == tomllib.loads(pyproject.read_text())["project"]["version"]


def test_the_limits_the_manual_states_are_the_engines():
    """docs/guide/embedding.md writes each limit as `engine.NAME` (value): the value is the one
    the engine holds, and the package exports every one named."""
    text = (REPO / "docs" / "guide" / "embedding.md").read_text(encoding="utf-8")
    stated = dict(re.findall(r"`engine\.([A-Z_]+)` \((\d+)", text))
    assert set(stated) >= {"MAX_HOUSE_NUMBER", "MAX_ADDITION_LENGTH", "MAX_LIMIT", "DEFAULT_LIMIT",
                           "MAX_QUERY_LENGTH"}
    assert {name: int(value) for name, value in stated.items()} == {name: getattr(engine, name) for name in stated}
    assert set(stated) <= set(engine.__all__)


def test_the_defaults_are_the_stated_ones(sample_index):
    assert sample_index.suggest_json("kerkstraat").endswith(b'"limit":%d}' % engine.DEFAULT_LIMIT)
    with pytest.raises(engine.QueryError, match=f"from 1 to {engine.MAX_HOUSE_NUMBER}$"):
        sample_index.lookup("1012 LG", engine.MAX_HOUSE_NUMBER + 1)
    assert sample_index.lookup("1012 LG", engine.MAX_HOUSE_NUMBER) == []
    with pytest.raises(engine.QueryError, match=f"1 to {engine.MAX_ADDITION_LENGTH} letters"):
        sample_index.lookup("1012 LG", 1, addition="a" * (engine.MAX_ADDITION_LENGTH + 1))
