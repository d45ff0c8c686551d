"""The row values both importers read (core.row_fields): one wording per problem, and the two
differences between the formats (a number as an id, control characters) kept as options."""

import pytest

from core.row_fields import RowFields, unstorable, unstorable_json
from core.tabular import ProblemList


def fields(**options) -> tuple[RowFields, list[str]]:
    found: list[str] = []
    options = {"csv_header": False, "id_max": 5, "label_max": 5, "text_max": 20, **options}
    return RowFields(ProblemList("f.jsonl", found), **options), found


def test_an_identifier_is_stripped_and_a_number_becomes_a_string():
    reader, found = fields()
    assert reader.identifier(1, {"id": " a1 "}, "id") == "a1"
    assert reader.identifier(2, {"id": 7}, "id") == "7"
    assert found == []


@pytest.mark.parametrize(
    "value, problem",
    [
        (True, "must be a string, not a boolean"),
        (["a"], "must be a string, not a list"),
        ("abcdef", "is longer than 5 characters"),
        ("", "must not be empty"),
        ("a\x01", "contains the control character U+0001 at position 2"),
    ],
)
def test_a_bad_identifier_is_none_with_its_problem(value, problem):
    reader, found = fields()
    assert reader.identifier(3, {"id": value}, "id") is None
    assert found == [f"f.jsonl:3: id: {problem}"]


def test_a_float_id_and_control_characters_are_options():
    strict, strict_found = fields()
    assert strict.identifier(1, {"id": 1.5}, "id") is None
    assert strict_found == ["f.jsonl:1: id: must be a string, not a number"]
    lenient, lenient_found = fields(number_ids=(int, float), control_characters=True)
    assert lenient.identifier(1, {"id": 1.5}, "id") == "1.5"
    assert lenient.label(2, {"c": "a\x01"}, "c") == "a\x01"
    # what no database stores is refused either way
    assert lenient.identifier(3, {"id": "a\x00"}, "id") is None
    assert lenient_found == ["f.jsonl:3: id: contains a NUL character"]


def test_a_label_is_optional_and_a_text_kept_as_given():
    reader, found = fields()
    assert reader.label(1, {}, "category") == ""
    assert reader.label(1, {"category": None}, "category") == ""
    assert reader.text(1, {"query": " two\nlines "}, "query") == " two\nlines "
    assert reader.text(2, {"query": "x" * 21}, "query") is None
    assert found == [
        "f.jsonl:2: query: the text is 21 characters; at most TEXT_MAX_CHARS (20) are accepted"
    ]


def test_a_missing_key_is_reported_unless_the_csv_header_did():
    reader, found = fields()
    assert reader.text(4, {}, "query") is None
    csv_reader, csv_found = fields(csv_header=True)
    assert csv_reader.text(4, {}, "query") is None
    assert found == ["f.jsonl:4: query: required key is missing"] and csv_found == []


def test_a_subcategory_needs_its_category():
    reader, found = fields()
    reader.check_taxonomy(1, "poems", "odes")
    reader.check_taxonomy(2, "", "")
    reader.check_taxonomy(3, None, "odes")  # the category was refused: said already
    reader.check_taxonomy(4, "", "odes")
    assert found == ["f.jsonl:4: subcategory: a sub-category needs its category: give category too"]


def test_unstorable_text_and_json():
    assert unstorable("plain") is None and unstorable("é") is None
    assert unstorable("a\x00") == "contains a NUL character"
    assert "unpaired surrogate" in unstorable("a\ud800")
    assert unstorable_json({"k": ["fine", {"x\x00": 1}]}) == "contains a NUL character"
    assert unstorable_json({"k": [1, None, "fine"]}) is None
