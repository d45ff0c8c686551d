"""One CSV reader, one wording: the items importer, the census and Genie readers find the
same problems in a CSV file and word them the same way (core/tabular.py)."""

import io

import pytest

from core.tabular import MISSING_COLUMN, ProblemList, csv_text_rows, field_count_problem
from diversity.census.transcripts import CensusInputError, read_flat
from diversity.genie.rows import read_rows
from tests.factories import make_batch


def _census_problems(text: str) -> list[str]:
    with pytest.raises(CensusInputError) as caught:
        read_flat(io.BytesIO(text.encode()), "replies.csv")
    return caught.value.problems


def _genie_problems(text: str) -> tuple[object, list[str]]:
    problems: list[str] = []
    return read_rows(io.BytesIO(text.encode()), "answers.csv", problems), problems


@pytest.mark.django_db
def test_a_missing_column_is_worded_alike_by_the_items_importer_and_the_census_reader():
    from annotation.services.importing import import_items
    from core.tabular import ImportRejected

    batch = make_batch(n_items=0)
    with pytest.raises(ImportRejected) as items:
        import_items(batch, io.BytesIO(b"query_id,query\nq1,Hello\n"), filename="items.csv")
    census = _census_problems("model,category,run\nm,color,0\n")
    assert any(line.endswith(f": {MISSING_COLUMN}") for line in items.value.problems)
    assert census == [f"replies.csv:1: reply: {MISSING_COLUMN}"]


def test_a_repeated_column_is_refused_at_the_header():
    census = _census_problems("model,category,run,reply,reply\nm,color,0,red,blue\n")
    assert census == ["replies.csv:1: header: column 'reply' appears more than once"]
    found, problems = _genie_problems("question_id,answer,answer\nq,a,b\n")
    assert found is None
    assert problems == ["answers.csv:1: header: column 'answer' appears more than once"]


def test_records_keep_their_first_line_across_quoted_line_breaks_and_carriage_returns():
    text = 'a,b\n"one\r\ntwo",x\n\n"three\rfour",y\nonly-one-field\n,\n5,z\n'
    problems: list[str] = []
    table = csv_text_rows(text, ProblemList("f.csv", problems), ["a", "b"])
    assert table is not None and table.columns == ["a", "b"]
    assert table.rows == [
        (2, {"a": "one\r\ntwo", "b": "x"}),
        (5, {"a": "three\rfour", "b": "y"}),
        (8, {"a": "5", "b": "z"}),  # line 7, all cells blank, is left out
    ]
    assert problems == [f"f.csv:6: row: {field_count_problem(2, 1)}"]


def test_an_empty_file_asks_for_a_header():
    problems: list[str] = []
    assert csv_text_rows("", ProblemList("f.csv", problems), ["a"]) is None
    assert problems == ["f.csv:1: file: empty (a header row is required)"]
    found, genie = _genie_problems("\n\n")
    assert found is None
    assert genie == ["answers.csv:1: file: empty (a header row is required)"]
