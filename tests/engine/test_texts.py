"""The register's text columns as codes (engine/ingest/texts.py): the texts come back as given."""

import numpy as np
import pytest

from engine.ingest.texts import TextColumn


def test_a_column_gives_back_each_records_text():
    col = TextColumn.of(["6981CH", "", "6981CH", "1012SJ"])
    assert len(col) == 4
    assert col.tolist() == ["6981CH", "", "6981CH", "1012SJ"]
    assert col[2] == "6981CH"
    assert col.values == ["6981CH", "", "1012SJ"]      # each text once, first met first


def test_concatenated_columns_keep_their_texts_and_share_one_value_list():
    """Guards the delivery's records appended to the state (mutations.apply via lvbag._concat)."""
    a = TextColumn.of(["A", "B", "A"])
    b = TextColumn.of(["C", "A", ""])
    both = TextColumn.concat([a, b])
    assert both.tolist() == ["A", "B", "A", "C", "A", ""]
    assert sorted(both.values) == ["", "A", "B", "C"]
    assert both.codes.dtype == np.int32


def test_taken_rows_and_their_distinct_texts():
    col = TextColumn.of(["x", "y", "z", "y", "x"])
    assert col.take(np.array([3, 0])).tolist() == ["y", "x"]
    codes, texts = col.distinct(np.array([3, 1, 4]))
    assert [texts[c] for c in codes] == ["y", "y", "x"]
    assert sorted(texts) == ["x", "y"]                  # z is held by no row asked for


def test_compact_drops_the_texts_no_record_holds():
    col = TextColumn.of(["keep", "gone", "keep"]).take(np.array([0, 2]))
    small = col.compact()
    assert small.values == ["keep"] and small.tolist() == ["keep", "keep"]
    assert small.codes.dtype == np.int32


def test_codes_that_do_not_fit_the_values_are_refused():
    with pytest.raises(ValueError, match="codes do not fit"):
        TextColumn(np.array([0, 2], dtype=np.int32), ["a", "b"]).check()
