"""Reading Genie judgment files (JSONL/CSV): records, and the FILE:LINE: field: message errors."""

import csv
import io
import json
from pathlib import Path

import pytest

from diversity.genie.core.scoring import document_scores
from diversity.genie.records import COLUMNS, Judgment, JudgmentFileError, read_judgments

ROW = {
    "prompt_id": "p1",
    "question_id": "q1",
    "feature": "Plot",
    "document_id": "d1",
    "population_id": "e1",
    "target_answer": "a heist",
    "population_answer": "a wedding",
    "similarity": 2,
    "source": "llm",
}


def row(**changes):
    return {**ROW, **changes}


def jsonl(path: Path, *rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def csv_file(path: Path, *rows, columns=COLUMNS) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({key: "" if value is None else value for key, value in r.items()})
    return path


def problems_of(path_or_file, **kwargs) -> list[str]:
    with pytest.raises(JudgmentFileError) as caught:
        read_judgments(path_or_file, **kwargs)
    assert isinstance(caught.value, ValueError)
    return caught.value.problems


ROWS = [
    row(),
    row(population_id="e2", population_answer="a robbery", similarity=3.5, source="human"),
    row(population_id="e2", population_answer="a robbery", similarity=3, source="human"),
    row(population_id="e3", population_answer=None, similarity=None),
    row(question_id="q2", feature="Setting", target_answer="  ", similarity=None),
]


def test_jsonl_and_csv_read_the_same_judgments(tmp_path):
    from_jsonl = read_judgments(jsonl(tmp_path / "judgments.jsonl", *ROWS))
    from_csv = read_judgments(csv_file(tmp_path / "judgments.csv", *ROWS))
    assert from_jsonl == from_csv
    assert from_jsonl[0] == Judgment(
        "p1", "q1", "Plot", "d1", "e1", "a heist", "a wedding", 2.0, "llm"
    )
    # Empty and whitespace-only answers are no answer; their pairs are not usable.
    assert from_jsonl[3].population_answer is None and not from_jsonl[3].usable
    assert from_jsonl[4].target_answer is None and not from_jsonl[4].usable
    assert [j.usable for j in from_jsonl] == [True, True, True, False, False]


def test_read_judgments_score_end_to_end(tmp_path):
    judgments = read_judgments(jsonl(tmp_path / "judgments.jsonl", *ROWS))
    [llm] = document_scores(judgments, "llm")
    assert llm.novelty == pytest.approx(1 - (2 - 1) / 3)  # only (d1, e1) is usable
    [human] = document_scores(judgments, "human")
    assert human.novelty == pytest.approx(1 - (3.25 - 1) / 3)  # mean of 3.5 and 3


def test_open_file_and_extra_columns(tmp_path):
    content = json.dumps({**ROW, "judge": "model-x", "question_id": 7}) + "\n"
    [judgment] = read_judgments(io.BytesIO(content.encode()), name="upload.jsonl")
    assert judgment.question_id == "7"  # a numeric id is an id all the same


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"similarity": 0}, "similarity: must be a number in [1, 4], not 0"),
        ({"similarity": 4.5}, "similarity: must be a number in [1, 4], not 4.5"),
        ({"similarity": "high"}, "similarity: must be a number in [1, 4], not 'high'"),
        ({"similarity": True}, "similarity: must be a number in [1, 4], not True"),
        ({"similarity": None}, "similarity: required when both answers are given"),
        ({"feature": ""}, "feature: required, must be a non-empty string"),
        ({"prompt_id": None}, "prompt_id: required, must be a non-empty string"),
        ({"source": "gpt-4o"}, "source: must be one of llm, human, not 'gpt-4o'"),
        ({"target_answer": 3}, "target_answer: must be a string or null"),
    ],
)
def test_bad_jsonl_value_names_file_line_and_field(tmp_path, changes, expected):
    path = jsonl(tmp_path / "judgments.jsonl", row(population_id="e0"), row(**changes))
    assert problems_of(path) == [f"judgments.jsonl:2: {expected}"]


def test_non_finite_similarity_is_rejected(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_text(json.dumps(ROW).replace('"similarity": 2', '"similarity": NaN') + "\n")
    assert problems_of(path) == [
        "judgments.jsonl:1: similarity: must be a number in [1, 4], not nan"
    ]
    csv_path = csv_file(tmp_path / "judgments.csv", row(similarity="inf"))
    assert problems_of(csv_path) == [
        "judgments.csv:2: similarity: must be a number in [1, 4], not 'inf'"
    ]


def test_missing_answer_key_and_bad_json_lines(tmp_path):
    without_answer = {key: value for key, value in ROW.items() if key != "population_answer"}
    path = tmp_path / "judgments.jsonl"
    path.write_text(f"{json.dumps(without_answer)}\n\n{{oops\n[1, 2]\n", "utf-8")
    assert problems_of(path) == [
        "judgments.jsonl:1: population_answer: missing (use null or an empty value for none)",
        "judgments.jsonl:3: row: not valid JSON: Expecting property name enclosed in double "
        "quotes at column 2",
        "judgments.jsonl:4: row: not a JSON object (found a list)",
    ]


def test_csv_missing_column_and_wrong_field_count(tmp_path):
    columns = [c for c in COLUMNS if c != "source"]
    assert problems_of(csv_file(tmp_path / "a.csv", row(), columns=columns)) == [
        "a.csv:1: source: required column is missing from the header"
    ]
    empty = tmp_path / "empty.csv"
    empty.write_text("", "utf-8")
    assert problems_of(empty) == ["empty.csv:1: file: empty (a header row is required)"]
    path = tmp_path / "b.csv"
    path.write_text(",".join(COLUMNS) + "\np1,q1,Plot,d1,e1,x,y,2\n", "utf-8")
    assert problems_of(path) == ["b.csv:2: row: expected 9 fields as in the header, found 8"]


def test_one_feature_per_question(tmp_path):
    path = jsonl(tmp_path / "j.jsonl", row(), row(population_id="e2", feature="Agent"))
    assert problems_of(path) == ["j.jsonl:2: feature: 'Agent' differs from 'Plot' at j.jsonl:1"]


def test_one_answer_per_document_and_question(tmp_path):
    path = jsonl(
        tmp_path / "j.jsonl",
        row(),
        row(population_id="e2", target_answer="a chase"),
        row(document_id="d2", population_answer="a funeral"),
    )
    assert problems_of(path) == [
        "j.jsonl:2: target_answer: 'a chase' differs from 'a heist' at j.jsonl:1",
        "j.jsonl:3: population_answer: 'a funeral' differs from 'a wedding' at j.jsonl:1",
    ]


def test_llm_judges_a_pair_once_humans_many_times(tmp_path):
    humans = jsonl(tmp_path / "h.jsonl", row(source="human"), row(source="human", similarity=4))
    assert len(read_judgments(humans)) == 2
    twice = jsonl(tmp_path / "j.jsonl", row(), row(similarity=3))
    assert problems_of(twice) == [
        "j.jsonl:2: source: a second llm judgment of this pair (first at j.jsonl:1)"
    ]


def test_every_problem_is_reported_and_nothing_is_returned(tmp_path):
    path = jsonl(tmp_path / "j.jsonl", row(similarity=9), row(), row(source=""))
    problems = problems_of(path)
    assert [problem.split(": ")[0] for problem in problems] == ["j.jsonl:1", "j.jsonl:3"]


def test_unsupported_extension_and_non_utf8(tmp_path):
    assert problems_of(tmp_path / "j.txt") == [
        "j.txt:1: file: unsupported file type ('.txt'); use .jsonl, .json or .csv"
    ]
    path = tmp_path / "j.jsonl"
    path.write_bytes(json.dumps(ROW).encode() + b"\n\xff\n")
    assert problems_of(path) == [
        "j.jsonl:2: encoding: not valid UTF-8 (byte 0xff at byte 1 of the line); "
        "save the file as UTF-8"
    ]


def test_an_answer_longer_than_text_max_chars_is_refused_with_its_place(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text(
        json.dumps(row()) + "\n" + json.dumps(row(target_answer="y" * 41, document_id="d9")) + "\n"
    )
    with pytest.raises(JudgmentFileError) as refused:
        read_judgments(path, text_max=40)
    assert refused.value.problems == [
        "long.jsonl:2: target_answer: the text is 41 characters; at most TEXT_MAX_CHARS (40) "
        "are accepted"
    ]
