"""Importing items (services.importing, import_items and create_batch commands).

Every rejected import must name FILE:LINE: field and leave the database untouched.
"""

import io
import json
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.kinds import all_kinds
from annotation.models import Batch, BatchState, Item, Query, Response
from annotation.services import importing
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items
from core.errors import Conflict
from core.tabular import ImportRejected
from tests.files import write_csv, write_jsonl

pytestmark = pytest.mark.django_db

ABSOLUTE_HEADER = ["item_id", "query_id", "query", "category", "response_id", "model", "response"]
PAIRWISE_HEADER = [
    "item_id",
    "query_id",
    "query",
    "category",
    "response_a_id",
    "model_a",
    "response_a",
    "response_b_id",
    "model_b",
    "response_b",
]


# --------------------------------------------------------------------------- helpers


def new_batch(kind="absolute", slug=None, per_item=7):
    return create_batch(slug=slug or f"imp-{kind}", kind=kind, annotations_per_item=per_item)


def absolute_row(i, **changes):
    row = {
        "item_id": f"i{i}",
        "query_id": f"q{i // 2}",
        "query": f"Question {i // 2}?",
        "category": "Open QA",
        "response_id": f"r{i}",
        "model": "model-x",
        "response": f"Answer {i}",
    }
    row.update(changes)
    return {key: value for key, value in row.items() if value is not DROP}


def pairwise_row(i, **changes):
    row = {
        "item_id": f"p{i}",
        "query_id": f"q{i}",
        "query": f"Question {i}?",
        "category": "Coding",
        "response_a_id": f"r{i}-a",
        "model_a": "model-a",
        "response_a": f"Answer {i} A",
        "response_b_id": f"r{i}-b",
        "model_b": "model-b",
        "response_b": f"Answer {i} B",
    }
    row.update(changes)
    return {key: value for key, value in row.items() if value is not DROP}


DROP = object()


def counts():
    return (Query.objects.count(), Response.objects.count(), Item.objects.count())


def rejected(batch, path, **kwargs):
    """Import, expect ImportRejected, check nothing was written; return the problems."""
    before = counts()
    with pytest.raises(ImportRejected) as info:
        import_items(batch, path, **kwargs)
    assert counts() == before
    assert str(info.value) == "\n".join(info.value.problems)
    return info.value.problems


def assert_problem(problems, prefix):
    assert any(problem.startswith(prefix) for problem in problems), (prefix, problems)


# --------------------------------------------------------------------------- good files


def test_good_jsonl_absolute(tmp_path):
    batch = new_batch(per_item=7)
    rows = [absolute_row(i) for i in range(4)]
    rows[1]["gold"] = 4
    rows[2]["gold"] = [1, 2]
    rows[3]["source"] = "dataset-x"
    rows[3]["extra"] = {"turns": 2}
    path = write_jsonl(tmp_path / "items.jsonl", [rows[0], "", "   ", *rows[1:]])

    summary = import_items(batch, path)

    assert (summary.items_created, summary.queries_created, summary.responses_created) == (
        4,
        2,
        4,
    )
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    assert [item.item_id for item in items] == ["i0", "i1", "i2", "i3"]
    assert [item.position for item in items] == [0, 1, 2, 3]
    assert {item.target for item in items} == {7}
    assert [item.gold for item in items] == [None, [4], [1, 2], None]
    assert items[3].metadata == {"source": "dataset-x", "extra": {"turns": 2}}
    assert items[0].metadata == {}
    assert items[0].response.text == "Answer 0"
    assert items[0].response.model == "model-x"
    assert items[0].response_a is None and items[0].response_b is None
    assert items[1].query.query_id == "q0" and items[1].query.text == "Question 0?"
    assert items[1].query.category == "Open QA"
    assert items[2].response.query.query_id == "q1"


def test_good_csv_absolute(tmp_path):
    batch = new_batch(per_item=3)
    header = [*ABSOLUTE_HEADER, "gold", "source"]
    rows = [absolute_row(i, gold="", source=f"s{i}") for i in range(3)]
    rows[0]["gold"] = "4"
    rows[1]["gold"] = "[1, 2]"
    rows[2]["response"] = 'Line one,\nline two "quoted"\n'
    path = write_csv(tmp_path / "items.csv", header, rows)

    summary = import_items(batch, path)

    assert summary.items_created == 3
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    assert [item.gold for item in items] == [[4], [1, 2], None]
    assert [item.metadata for item in items] == [
        {"source": "s0"},
        {"source": "s1"},
        {"source": "s2"},
    ]
    assert [item.position for item in items] == [0, 1, 2]
    assert {item.target for item in items} == {3}
    assert items[2].response.text == 'Line one,\nline two "quoted"\n'


def test_good_jsonl_pairwise(tmp_path):
    batch = new_batch("pairwise", per_item=5)
    rows = [pairwise_row(i) for i in range(3)]
    rows[0]["gold"] = -2
    rows[1]["gold"] = [0, 1]
    rows[2]["response_id"] = "not-a-pairwise-key"
    path = write_jsonl(tmp_path / "pairs.jsonl", rows)

    summary = import_items(batch, path)

    assert (summary.items_created, summary.queries_created, summary.responses_created) == (
        3,
        3,
        6,
    )
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    assert [item.gold for item in items] == [[-2], [0, 1], None]
    assert items[2].metadata == {"response_id": "not-a-pairwise-key"}
    assert items[0].response is None
    assert items[0].response_a.response_id == "r0-a" and items[0].response_a.model == "model-a"
    assert items[0].response_b.text == "Answer 0 B"
    assert {item.target for item in items} == {5}


def test_good_csv_pairwise_with_bom(tmp_path):
    batch = new_batch("pairwise", per_item=2)
    path = write_csv(
        tmp_path / "pairs.csv",
        [*PAIRWISE_HEADER, "gold", "note"],
        [pairwise_row(i, gold=str(i - 1), note="n") for i in range(3)],
    )
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())

    import_items(batch, path)

    items = list(Item.objects.filter(batch=batch).order_by("position"))
    assert [item.item_id for item in items] == ["p0", "p1", "p2"]
    assert [item.gold for item in items] == [[-1], [0], [1]]
    assert items[0].metadata == {"note": "n"}
    assert items[1].response_b.response_id == "r1-b"


def test_positions_continue_after_existing_items(tmp_path):
    batch = new_batch()
    import_items(batch, write_jsonl(tmp_path / "a.jsonl", [absolute_row(i) for i in range(3)]))
    change_state(batch, "live")
    change_state(batch, "paused")  # a paused batch still accepts items
    import_items(batch, write_jsonl(tmp_path / "b.jsonl", [absolute_row(i) for i in range(3, 5)]))

    positions = dict(Item.objects.filter(batch=batch).values_list("item_id", "position"))
    assert positions == {"i0": 0, "i1": 1, "i2": 2, "i3": 3, "i4": 4}


def test_queries_and_responses_are_reused_across_batches(tmp_path):
    first = new_batch(slug="first")
    second = new_batch(slug="second")
    rows = [absolute_row(i) for i in range(4)]
    import_items(first, write_jsonl(tmp_path / "a.jsonl", rows))
    before = counts()

    summary = import_items(second, write_jsonl(tmp_path / "b.jsonl", rows))

    assert (summary.items_created, summary.queries_created, summary.responses_created) == (
        4,
        0,
        0,
    )
    assert counts() == (before[0], before[1], before[2] + 4)
    assert Item.objects.get(batch=first, item_id="i3").response_id == (
        Item.objects.get(batch=second, item_id="i3").response_id
    )


def test_numbers_are_accepted_as_ids(tmp_path):
    batch = new_batch()
    path = write_jsonl(tmp_path / "n.jsonl", [absolute_row(0, item_id=7, query_id=70)])
    import_items(batch, path)
    item = Item.objects.get(batch=batch)
    assert item.item_id == "7" and item.query.query_id == "70"


def test_file_object_with_filename(tmp_path):
    batch = new_batch()
    data = "".join(json.dumps(absolute_row(i)) + "\n" for i in range(2)).encode()
    summary = import_items(batch, io.BytesIO(data), filename="upload.jsonl")
    assert summary.items_created == 2

    bad = io.BytesIO(b'{"item_id": "x"}\n')
    problems = rejected(batch, bad, filename="upload.jsonl")
    assert_problem(problems, "upload.jsonl:1: query_id: required key is missing")


# --------------------------------------------------------------------------- rejections


def test_required_key_missing(tmp_path):
    batch = new_batch()
    path = write_jsonl(
        tmp_path / "x.jsonl", [absolute_row(0), absolute_row(1, query=DROP), absolute_row(2)]
    )
    problems = rejected(batch, path)
    assert problems == [f"{path}:2: query: required key is missing"]


@pytest.mark.parametrize("value", ["", "   ", "\t\n", None])
def test_required_value_empty(tmp_path, value):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0, response=value)])
    problems = rejected(batch, path)
    assert problems == [f"{path}:1: response: must not be empty"]


def test_csv_required_column_missing(tmp_path):
    batch = new_batch()
    header = [c for c in ABSOLUTE_HEADER if c != "response"]
    path = write_csv(tmp_path / "x.csv", header, [absolute_row(0), absolute_row(1)])
    problems = rejected(batch, path)
    assert problems == [f"{path}:1: response: required column is missing from the header"]


@pytest.mark.parametrize("kind", sorted(all_kinds()))
def test_csv_header_needs_the_kinds_import_columns(tmp_path, kind):
    """The batch page lists the kind's import_columns; the importer requires those, in order."""
    batch = new_batch(kind, slug=f"cols-{kind.replace('_', '-')}")
    path = write_csv(tmp_path / "x.csv", ["notes"], [["a"]])
    assert rejected(batch, path) == [
        f"{path}:1: {column}: required column is missing from the header"
        for column in batch.task_kind.import_columns
    ]


def test_csv_with_bare_cr_line_endings_says_so_in_plain_words(tmp_path):
    batch = new_batch()
    lines = [",".join(ABSOLUTE_HEADER)] + [
        ",".join(absolute_row(i)[column] for column in ABSOLUTE_HEADER) for i in range(2)
    ]
    path = tmp_path / "mac.csv"
    path.write_bytes("\r".join(lines).encode() + b"\r")  # classic Mac line endings
    problems = rejected(batch, path)
    assert problems[0].startswith(f"{path}:1: row: not valid CSV: a line break (CR) inside")
    assert "universal-newline" not in "\n".join(problems)


def test_csv_empty_cell(tmp_path):
    batch = new_batch()
    path = write_csv(
        tmp_path / "x.csv", ABSOLUTE_HEADER, [absolute_row(0), absolute_row(1, query=" ")]
    )
    problems = rejected(batch, path)
    assert problems == [f"{path}:3: query: must not be empty"]


def test_item_id_repeated_in_file(tmp_path):
    batch = new_batch()
    path = write_jsonl(
        tmp_path / "x.jsonl", [absolute_row(0), absolute_row(1), absolute_row(2, item_id="i0")]
    )
    problems = rejected(batch, path)
    assert problems == [f"{path}:3: item_id: 'i0' already appears on line 1"]


def test_item_id_already_in_batch(tmp_path):
    batch = new_batch()
    import_items(batch, write_jsonl(tmp_path / "a.jsonl", [absolute_row(0)]))
    path = write_jsonl(tmp_path / "b.jsonl", [absolute_row(5), absolute_row(0)])
    problems = rejected(batch, path)
    assert problems == [f"{path}:2: item_id: 'i0' already exists in batch {batch.slug}"]


def test_response_id_with_two_texts_in_file(tmp_path):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0), absolute_row(1, response_id="r0")])
    problems = rejected(batch, path)
    assert problems == [f"{path}:2: response_id: 'r0' has a different response text on line 1"]


def test_query_id_with_two_texts_in_file(tmp_path):
    batch = new_batch()
    path = write_jsonl(
        tmp_path / "x.jsonl", [absolute_row(0), absolute_row(1, query="Another question")]
    )
    problems = rejected(batch, path)
    assert problems == [f"{path}:2: query_id: 'q0' has a different query text on line 1"]


def test_response_id_with_another_query_in_file(tmp_path):
    batch = new_batch()
    path = write_jsonl(
        tmp_path / "x.jsonl",
        [absolute_row(0), absolute_row(2, response_id="r0", response="Answer 0")],
    )
    problems = rejected(batch, path)
    assert problems == [f"{path}:2: response_id: 'r0' answers query 'q0' on line 1, not 'q1'"]


def test_query_id_with_another_text_in_database(tmp_path):
    batch = new_batch()
    Query.objects.create(query_id="q1", text="Stored text")
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0), absolute_row(2), absolute_row(3)])
    problems = rejected(batch, path)
    assert problems == [
        f"{path}:2: query_id: 'q1' already exists in the database with a different text"
    ]


def test_response_id_with_another_text_in_database(tmp_path):
    batch = new_batch()
    query = Query.objects.create(query_id="q0", text="Question 0?")
    Response.objects.create(response_id="r1", query=query, text="Stored answer")
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0), absolute_row(1)])
    problems = rejected(batch, path)
    assert problems == [
        f"{path}:2: response_id: 'r1' already exists in the database with a different text"
    ]


def test_response_id_with_another_query_in_database(tmp_path):
    batch = new_batch()
    other = Query.objects.create(query_id="elsewhere", text="Other question")
    Response.objects.create(response_id="r0", query=other, text="Answer 0")
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0)])
    problems = rejected(batch, path)
    assert problems == [
        f"{path}:1: response_id: 'r0' already exists in the database as an answer to query "
        "'elsewhere', not 'q0'"
    ]


def test_pairwise_response_b_with_another_text_in_database(tmp_path):
    batch = new_batch("pairwise")
    query = Query.objects.create(query_id="q1", text="Question 1?")
    Response.objects.create(response_id="r1-b", query=query, text="Stored")
    path = write_jsonl(tmp_path / "x.jsonl", [pairwise_row(0), pairwise_row(1)])
    problems = rejected(batch, path)
    assert problems == [
        f"{path}:2: response_b_id: 'r1-b' already exists in the database with a different text"
    ]


def test_pairwise_same_response_twice(tmp_path):
    batch = new_batch("pairwise")
    path = write_jsonl(
        tmp_path / "x.jsonl", [pairwise_row(0, response_b_id="r0-a", response_b="Answer 0 A")]
    )
    problems = rejected(batch, path)
    assert problems == [f"{path}:1: response_b_id: 'r0-a' is the same as response_a_id"]


def test_pairwise_missing_response_b(tmp_path):
    batch = new_batch("pairwise")
    path = write_jsonl(tmp_path / "x.jsonl", [pairwise_row(0, response_b=DROP)])
    assert rejected(batch, path) == [f"{path}:1: response_b: required key is missing"]


@pytest.mark.parametrize(
    ("kind", "gold", "message"),
    [
        ("absolute", 6, "6 is not in the label set 1..5"),
        ("absolute", 0, "0 is not in the label set 1..5"),
        ("absolute", [1, 9], "9 is not in the label set 1..5"),
        ("absolute", 4.5, "4.5 is not an integer (the label set is 1..5)"),
        ("absolute", True, "True is not an integer (the label set is 1..5)"),
        ("absolute", ["4"], "'4' is not an integer (the label set is 1..5)"),
        ("absolute", [], "must not be an empty list"),
        ("absolute", "four", "'four' is not an integer or a list of integers"),
        ("pairwise", 3, "3 is not in the label set -2..2"),
        ("pairwise", -3, "-3 is not in the label set -2..2"),
    ],
)
def test_gold_out_of_label_set_jsonl(tmp_path, kind, gold, message):
    batch = new_batch(kind)
    row = (absolute_row if kind == "absolute" else pairwise_row)(0, gold=gold)
    path = write_jsonl(tmp_path / "x.jsonl", [row])
    assert rejected(batch, path) == [f"{path}:1: gold: {message}"]


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ("6", "6 is not in the label set 1..5"),
        ("[1, 7]", "7 is not in the label set 1..5"),
        ("4.0", "4.0 is not an integer (the label set is 1..5)"),
        ("abc", "'abc' is not an integer or a list of integers"),
        ("{}", "{} is not an integer (the label set is 1..5)"),
    ],
)
def test_gold_invalid_csv(tmp_path, gold, message):
    batch = new_batch()
    path = write_csv(
        tmp_path / "x.csv",
        [*ABSOLUTE_HEADER, "gold"],
        [absolute_row(0, gold="1"), absolute_row(1, gold=gold)],
    )
    assert rejected(batch, path) == [f"{path}:3: gold: {message}"]


def test_row_not_an_object(tmp_path):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0), "[1, 2]", '"text"'])
    problems = rejected(batch, path)
    assert problems == [
        f"{path}:2: row: not a JSON object (found a list)",
        f"{path}:3: row: not a JSON object (found a string)",
    ]


def test_line_not_valid_json(tmp_path):
    batch = new_batch()
    path = write_jsonl(
        tmp_path / "x.jsonl",
        [absolute_row(0), absolute_row(1), '{"item_id": "i9", ', '{"gold": NaN}'],
    )
    problems = rejected(batch, path)
    assert len(problems) == 2
    assert problems[0].startswith(f"{path}:3: row: not valid JSON: ")
    assert problems[1] == f"{path}:4: row: not valid JSON: NaN is not allowed"


def test_csv_row_with_wrong_number_of_fields(tmp_path):
    batch = new_batch()
    row = list(absolute_row(1).values())
    path = write_csv(tmp_path / "x.csv", ABSOLUTE_HEADER, [absolute_row(0), row[:-1], row + ["x"]])
    problems = rejected(batch, path)
    assert problems == [
        f"{path}:3: row: expected 7 fields as in the header, found 6",
        f"{path}:4: row: expected 7 fields as in the header, found 8",
    ]


def test_csv_line_numbers_count_physical_lines(tmp_path):
    batch = new_batch()
    path = write_csv(
        tmp_path / "x.csv",
        ABSOLUTE_HEADER,
        [absolute_row(0, response="one\ntwo\nthree"), absolute_row(1, query_id="")],
    )
    # header = line 1, the first record spans lines 2-4, the second starts on line 5
    assert rejected(batch, path) == [f"{path}:5: query_id: must not be empty"]


def test_jsonl_not_utf8(tmp_path):
    batch = new_batch()
    path = tmp_path / "x.jsonl"
    good = json.dumps(absolute_row(0)).encode()
    bad = json.dumps(absolute_row(1), ensure_ascii=False).encode().replace(b"Answer", b"Ans\xe9wer")
    path.write_bytes(good + b"\n" + bad + b"\n")
    problems = rejected(batch, path)
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}:2: encoding: not valid UTF-8 (byte 0xe9")


def test_csv_not_utf8(tmp_path):
    batch = new_batch()
    path = write_csv(tmp_path / "x.csv", ABSOLUTE_HEADER, [absolute_row(i) for i in range(3)])
    path.write_bytes(path.read_bytes().replace(b"Answer 1", b"Answer \xff1"))
    problems = rejected(batch, path)
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}:3: encoding: not valid UTF-8 (byte 0xff")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("x.jsonl", b""),
        ("x.jsonl", b"\n  \n\n"),
        ("x.csv", b""),
        ("x.csv", ",".join(ABSOLUTE_HEADER).encode() + b"\r\n"),
    ],
)
def test_empty_file(tmp_path, name, content):
    batch = new_batch()
    path = tmp_path / name
    path.write_bytes(content)
    problems = rejected(batch, path)
    assert_problem(problems, f"{path}:1: file: contains no items")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("item_id", {"a": 1}, "must be a string, not an object"),
        ("query_id", [1], "must be a string, not a list"),
        ("response_id", True, "must be a string, not a boolean"),
        ("query", ["text"], "must be a string, not a list"),
        ("response", 42, "must be a string, not a number"),
        ("category", {"x": 1}, "must be a string, not an object"),
        ("item_id", "x" * 201, "is longer than 200 characters"),
        ("response", "nul\x00byte", "contains a NUL character"),
    ],
)
def test_non_string_values(tmp_path, field, value, message):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0, **{field: value})])
    assert rejected(batch, path) == [f"{path}:1: {field}: {message}"]


def test_unstorable_text_is_rejected(tmp_path):
    batch = new_batch()
    path = tmp_path / "x.jsonl"
    path.write_text(
        json.dumps(absolute_row(0, response="lone \ud800 surrogate"))
        + "\n"
        + json.dumps(absolute_row(1, notes={"deep": ["ok", "nul\x00"]}))
        + "\n",
        encoding="utf-8",
    )
    problems = rejected(batch, path)
    assert problems[0].startswith(f"{path}:1: response: contains an unpaired surrogate")
    assert problems[1] == f"{path}:2: notes: contains a NUL character"


def test_backslash_sequences_are_plain_text(tmp_path):
    batch = new_batch()
    text = "Escape NUL in JSON as \\u0000."
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0, response=text, note=text)])
    import_items(batch, path)
    item = Item.objects.get(batch=batch)
    assert item.response.text == text and item.metadata == {"note": text}


def test_file_with_only_a_bad_line(tmp_path):
    batch = new_batch()
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\xff\xfe\n")
    problems = rejected(batch, path)
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}:1: encoding: not valid UTF-8 (byte 0xff at byte 1")


def test_unsupported_extension(tmp_path):
    batch = new_batch()
    path = tmp_path / "items.txt"
    path.write_text(json.dumps(absolute_row(0)) + "\n")
    assert rejected(batch, path) == [
        f"{path}:1: file: unsupported file type ('.txt'); use .jsonl or .csv"
    ]


def test_closed_batch_is_a_conflict(tmp_path):
    batch = new_batch()
    change_state(batch, "closed")
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0)])
    before = counts()
    with pytest.raises(Conflict):
        import_items(batch, path)
    assert counts() == before


def test_every_problem_is_listed_in_line_order(tmp_path):
    batch = new_batch()
    Query.objects.create(query_id="q2", text="Stored")
    path = write_jsonl(
        tmp_path / "x.jsonl",
        [
            absolute_row(0, gold=9),
            "not json",
            absolute_row(1, item_id="i0"),
            absolute_row(4),
            absolute_row(5, response=""),
        ],
    )
    problems = rejected(batch, path)
    assert [problem.split(": ")[0:2] for problem in problems] == [
        [f"{path}:1", "gold"],
        [f"{path}:2", "row"],
        [f"{path}:3", "item_id"],
        [f"{path}:4", "query_id"],
        [f"{path}:5", "response"],
    ]


def test_problem_list_is_capped_at_fifty(tmp_path):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(i, query=DROP) for i in range(120)])
    problems = rejected(batch, path)
    assert len(problems) == 51
    assert problems[0] == f"{path}:1: query: required key is missing"
    assert problems[49] == f"{path}:50: query: required key is missing"
    assert problems[50] == "... and 70 more problems"


def test_problem_cap_keeps_the_earliest_lines_across_passes(tmp_path):
    batch = new_batch()
    Query.objects.create(query_id="q0", text="Stored")  # found after the file is read
    rows = [absolute_row(0)] + [absolute_row(i, query=DROP) for i in range(2, 62)]
    path = write_jsonl(tmp_path / "x.jsonl", rows)
    problems = rejected(batch, path)
    assert problems[0].startswith(f"{path}:1: query_id: 'q0' already exists")
    assert problems[-1] == "... and 11 more problems"


# --------------------------------------------------------------------------- concurrency
# Another import may write between this import's validation and its transaction.


def validated(batch, path):
    with open(path, "rb") as handle:
        return importing._validate(batch, handle, str(path), "jsonl")


def test_query_created_meanwhile_with_same_text_is_reused(tmp_path):
    batch = new_batch()
    plan = validated(batch, write_jsonl(tmp_path / "x.jsonl", [absolute_row(i) for i in range(2)]))
    query = Query.objects.create(query_id="q0", text="Question 0?")
    other = Query.objects.create(query_id="elsewhere", text="Other")
    Response.objects.create(response_id="r1", query=query, text="Answer 1")

    importing._write(batch, plan)

    items = list(Item.objects.filter(batch=batch).order_by("position"))
    assert [item.query_id for item in items] == [query.pk, query.pk]
    assert items[1].response.response_id == "r1"
    assert other.pk not in {item.query_id for item in items}


@pytest.mark.parametrize(
    "make",
    [
        lambda: Query.objects.create(query_id="q0", text="Changed"),
        lambda: Response.objects.create(
            response_id="r1",
            query=Query.objects.create(query_id="q0", text="Question 0?"),
            text="Changed",
        ),
        lambda: Response.objects.create(
            response_id="r1",
            query=Query.objects.create(query_id="zz", text="Question 0?"),
            text="Answer 1",
        ),
    ],
)
def test_row_created_meanwhile_with_other_text_rejects(tmp_path, make):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(i) for i in range(2)])
    plan = validated(batch, path)
    make()
    before = counts()
    with pytest.raises(ImportRejected, match="concurrent import") as info:
        importing._write(batch, plan)
    assert info.value.problems[0].startswith(f"{path}:")
    assert counts() == before


def test_item_created_meanwhile_rejects(tmp_path):
    batch = new_batch()
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(i) for i in range(2)])
    plan = validated(batch, path)
    import_items(batch, write_jsonl(tmp_path / "y.jsonl", [absolute_row(1)]))
    before = counts()
    with pytest.raises(ImportRejected, match="concurrent import"):
        importing._write(batch, plan)
    assert counts() == before


def test_batch_closed_meanwhile_is_a_conflict(tmp_path):
    batch = new_batch()
    plan = validated(batch, write_jsonl(tmp_path / "x.jsonl", [absolute_row(0)]))
    change_state(batch, "closed")
    before = counts()
    with pytest.raises(Conflict):
        importing._write(batch, plan)
    assert counts() == before


# --------------------------------------------------------------------------- commands


def test_command_import_items(tmp_path):
    call_command(
        "create_batch", "demo", "--kind", "absolute", "--per-item", "4", stdout=io.StringIO()
    )
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(i) for i in range(4)])
    out = io.StringIO()
    call_command("import_items", "demo", str(path), stdout=out)
    assert out.getvalue().strip() == "Imported 4 items into demo (2 queries, 4 responses new)"
    assert Item.objects.filter(batch__slug="demo", target=4).count() == 4


def test_command_import_items_rejects_bad_file(tmp_path):
    new_batch(slug="demo")
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0, query=DROP), "oops"])
    before = counts()
    with pytest.raises(CommandError) as info:
        call_command("import_items", "demo", str(path))
    message = str(info.value)
    assert f"{path}:1: query: required key is missing" in message
    assert f"{path}:2: row: not valid JSON" in message
    assert counts() == before


def test_command_import_items_unknown_batch(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [absolute_row(0)])
    with pytest.raises(CommandError, match="batch 'nope' does not exist"):
        call_command("import_items", "nope", str(path))


def test_command_import_items_missing_file(tmp_path):
    new_batch(slug="demo")
    with pytest.raises(CommandError, match="cannot open"):
        call_command("import_items", "demo", str(tmp_path / "absent.jsonl"))


def test_command_create_batch_with_options(tmp_path):
    instructions = tmp_path / "instructions.md"
    instructions.write_text("Rate **carefully**.", encoding="utf-8")
    out = io.StringIO()
    call_command(
        "create_batch",
        "pairs",
        "--kind",
        "pairwise",
        "--per-item",
        "10",
        "--title",
        "Pairs",
        "--instructions",
        str(instructions),
        "--lease-seconds",
        "120",
        "--quota",
        "30",
        "--completion-url",
        "https://example.org/done",
        "--completion-code",
        "C0DE",
        stdout=out,
    )
    batch = Batch.objects.get(slug="pairs")
    assert (batch.kind, batch.title, batch.annotations_per_item) == ("pairwise", "Pairs", 10)
    assert batch.instructions == "Rate **carefully**."
    assert (batch.lease_seconds, batch.quota_per_annotator) == (120, 30)
    assert (batch.completion_url, batch.completion_code) == ("https://example.org/done", "C0DE")
    assert batch.state == BatchState.DRAFT
    assert "pairs" in out.getvalue() and out.getvalue().count("\n") == 1


def test_command_create_batch_errors():
    call_command("create_batch", "demo", "--kind", "absolute", stdout=io.StringIO())
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_batch", "demo", "--kind", "absolute")
    with pytest.raises(CommandError, match="slug"):
        call_command("create_batch", "Bad Slug", "--kind", "absolute")
    with pytest.raises(CommandError, match="annotations_per_item"):
        call_command("create_batch", "zero", "--kind", "absolute", "--per-item", "0")
    with pytest.raises(CommandError):
        call_command("create_batch", "other", "--kind", "ranking")


def test_command_create_batch_live_without_items():
    with pytest.raises(CommandError) as info:
        call_command("create_batch", "empty", "--kind", "absolute", "--live")
    assert "created as a draft but not published" in str(info.value)
    assert "without items cannot be published" in str(info.value)
    assert Batch.objects.get(slug="empty").state == BatchState.DRAFT


# --------------------------------------------------------------------------- large


@pytest.mark.slow
@pytest.mark.both_databases  # the SQLite insert path (executemany) differs
def test_import_100k_rows(tmp_path):
    batch = new_batch(slug="big")
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(100_000):
            row = absolute_row(i, query_id=f"q{i // 10}", query=f"Question {i // 10}?")
            row["response"] = f"Answer {i}: " + "lorem ipsum " * 20
            handle.write(json.dumps(row) + "\n")

    started = time.perf_counter()
    summary = import_items(batch, path)
    elapsed = time.perf_counter() - started

    print(f"\nimported 100,000 items in {elapsed:.1f} s")
    assert summary.items_created == 100_000
    assert summary.queries_created == 10_000
    assert summary.responses_created == 100_000
    assert Item.objects.filter(batch=batch).count() == 100_000
    last = Item.objects.get(batch=batch, item_id="i99999")
    assert last.position == 99_999
    assert last.response.text.startswith("Answer 99999: ")
