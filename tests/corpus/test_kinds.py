"""The field contract (``corpus.kinds``): what each kind of field takes, how the first build learns kinds,
and that a recorded kind never changes."""

from __future__ import annotations

import math

import pytest

from embedsearch.corpus import check_id
from embedsearch.corpus.kinds import FieldKinds, combine, fits, stored, value_kind


@pytest.mark.parametrize("kind, value, ok", [
    ("number", 2021, True), ("number", 2021.5, True), ("number", "2021", True), ("number", None, True),
    ("number", "", True), ("number", math.nan, True), ("number", [2019, 2020], False), ("number", "twenty", False),
    ("number", True, False), ("text", "NeurIPS", True), ("text", 3, True), ("text", ["a"], False),
    ("list of text", ["a", "b"], True), ("list of text", "a", True), ("list of text", [1], False),
    ("list of numbers", [2019, 2020.5], True), ("list of numbers", 2019, True), ("list of numbers", ["x"], False),
    ("boolean", False, True), ("boolean", 0, False), ("list of numbers", [], True),
])
def test_what_each_kind_takes(kind, value, ok):
    assert fits(kind, value) is ok


@pytest.mark.parametrize("value, phrase", [
    (2 ** 64, "beyond 64-bit integers"), (-(2 ** 63) - 1, "beyond 64-bit integers"), (math.inf, "not a finite"),
    (-math.inf, "not a finite"), ([1, "a"], "mixes numbers and text"), ([1, None], "holds null"),
    ([[1], [2]], "nested"),
])
def test_values_no_field_can_hold(value, phrase):
    with pytest.raises(ValueError, match=phrase):
        value_kind(value)
    problem = FieldKinds({"x": "number"}).admit({"x": value}, "f.jsonl:3")
    assert problem.startswith("field 'x': ") and phrase in problem


def test_edge_integers_fit():
    assert fits("number", 2 ** 63 - 1) and fits("number", -(2 ** 63))


def test_the_first_value_sets_a_kind_and_later_records_must_fit():
    kinds = FieldKinds()
    assert kinds.admit({"year": 2020, "venue": "ICML"}, "a.jsonl:1") is None
    assert kinds.admit({"year": None}, "a.jsonl:2") is None
    problem = kinds.admit({"year": [2019, 2020], "venue": "NeurIPS"}, "a.jsonl:3")
    assert "field 'year' holds numbers in this corpus (since a.jsonl:1)" in problem and "[2019, 2020]" in problem
    assert kinds.kinds == {"year": "number", "venue": "text"}


def test_a_refused_record_teaches_nothing():
    kinds = FieldKinds({"year": "number"})
    assert kinds.admit({"new": "x", "year": "soon"}) is not None
    assert kinds.kinds == {"year": "number"}


def test_numeric_text_becomes_text_while_first_read_but_never_once_recorded():
    first = FieldKinds()
    for row in ({"pages": "12"}, {"pages": "1-10"}, {"pages": "13"}):
        assert first.admit(row) is None
    assert first.kinds == {"pages": "text"}
    typed = FieldKinds()
    assert typed.admit({"year": 2020}) is None
    assert "holds numbers" in typed.admit({"year": "n/a"})
    recorded = FieldKinds({"pages": "number"})
    assert "holds numbers in this index" in recorded.admit({"pages": "1-10"})


def test_segments_that_disagree_only_by_numeric_text_combine_as_text():
    assert combine([{"pages": "number", "year": "number"}, {"pages": "text", "year": "number"}]) == \
        {"pages": "text", "year": "number"}


def test_values_are_stored_as_their_kind():
    assert stored("number", "2021") == 2021 and stored("number", "2.5") == 2.5 and stored("number", "") is None
    assert stored("text", 3) == "3" and stored("list of text", "a") == ["a"] and stored("number", math.nan) is None


@pytest.mark.parametrize("value, expected", [("p1", "p1"), (7, "7"), (-3, "-3"), ("0704.0001", "0704.0001")])
def test_ids_are_text_or_whole_numbers(value, expected):
    assert check_id(value) == expected


@pytest.mark.parametrize("value, phrase", [
    (["a", "b"], "is a list"), ({"a": 1}, "is an object"), (True, "is a boolean"), (1.5, "is a decimal number"),
    (None, "empty id"), ("", "empty id"), (" p1", "spaces around it"), ("a\nb", "line break"),
])
def test_other_ids_are_refused_naming_the_field(value, phrase):
    with pytest.raises(ValueError, match=phrase) as caught:
        check_id(value, "paper_id")
    assert "'paper_id'" in str(caught.value)
