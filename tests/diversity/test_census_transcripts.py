"""Reading census replies: transcript JSON and flat JSONL/CSV, and their error messages."""

import io
import json
from pathlib import Path

import pytest

from diversity.census.sources import CensusInputError
from diversity.census.transcripts import CensusRecord, read_census, read_flat, read_transcript

SHIPPED = Path(__file__).resolve().parents[2] / "diversity/demo/one-word-census/transcripts"


def transcript(model="claude", **scenes):
    """A transcript document; each scene is given as its list of runs."""
    return {"model": model, "scenes": {name: {"runs": runs} for name, runs in scenes.items()}}


def turn(reply):
    return {"u": "Name a color. Reply with one word only.", "reply": reply}


def write(path: Path, content) -> Path:
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


def problems_of(read, *args, **kwargs) -> list[str]:
    with pytest.raises(CensusInputError) as caught:
        read(*args, **kwargs)
    assert isinstance(caught.value, ValueError)
    return caught.value.problems


# --------------------------------------------------------------------------- transcript JSON


def test_transcript_reply_is_the_first_turns_reply(tmp_path):
    document = transcript(
        color=[[turn("Blue."), turn("later turn")], [turn("Red")]], tree=[[turn("Oak")]]
    )
    records = read_transcript(write(tmp_path / "claude.json", document))
    assert records == [
        CensusRecord("claude", "color", 0, "Blue."),
        CensusRecord("claude", "color", 1, "Red"),
        CensusRecord("claude", "tree", 0, "Oak"),
    ]


def test_empty_run_and_missing_reply_are_failed_cells_not_errors(tmp_path):
    document = transcript(color=[[], [{"u": "Name a color."}], [turn(None)], [turn("Blue")]])
    records = read_transcript(write(tmp_path / "claude.json", document))
    assert [record.reply for record in records] == [None, None, None, "Blue"]
    assert [record.run for record in records] == [0, 1, 2, 3]


def test_transcript_from_an_open_file_is_named_after_it():
    handle = io.BytesIO(json.dumps(transcript(color=[[turn("Blue")]])).encode())
    assert read_transcript(handle, name="upload.json")[0].reply == "Blue"
    handle = io.BytesIO(b"{")
    assert problems_of(read_transcript, handle, name="upload.json")[0].startswith("upload.json:")


def test_bad_json_names_the_file_and_line(tmp_path):
    path = write(tmp_path / "claude.json", '{\n  "model": "claude",\n  "scenes": {,}\n}')
    [problem] = problems_of(read_transcript, path)
    assert problem.startswith("claude.json:3: file: not valid JSON")


def test_missing_scenes_is_named(tmp_path):
    path = write(tmp_path / "claude.json", {"model": "claude"})
    assert problems_of(read_transcript, path) == ["claude.json: scenes: missing"]


def test_run_that_is_not_a_list_is_named_by_its_json_path(tmp_path):
    document = transcript(color=[[turn("Blue")], [turn("Red")], {"reply": "Green"}])
    [problem] = problems_of(read_transcript, write(tmp_path / "claude.json", document))
    assert problem == "claude.json: scenes.color.runs[2]: must be a list of turns, not object"


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([1, 2], "claude.json: (top level): must be an object, not list"),
        ({"scenes": {}}, "claude.json: model: missing or not a non-empty string"),
        ({"model": "c", "scenes": []}, "claude.json: scenes: must be an object, not list"),
        ({"model": "c", "scenes": {"color": []}}, "claude.json: scenes.color: must be an object"),
        ({"model": "c", "scenes": {"color": {}}}, "claude.json: scenes.color.runs: must be a list"),
        (transcript(color=[["Blue"]]), "claude.json: scenes.color.runs[0][0]: a turn must be"),
        (transcript(color=[[turn(3)]]), "claude.json: scenes.color.runs[0][0].reply: must be a"),
    ],
)
def test_malformed_transcript_problems_name_the_place(tmp_path, document, expected):
    [problem] = problems_of(read_transcript, write(tmp_path / "claude.json", document))
    assert problem.startswith(expected)


def test_every_problem_of_a_transcript_is_reported(tmp_path):
    document = transcript(color=[7, [turn("Blue")]], tree=[[turn(False)]])
    problems = problems_of(read_transcript, write(tmp_path / "claude.json", document))
    assert [problem.split(":")[1].strip() for problem in problems] == [
        "scenes.color.runs[0]",
        "scenes.tree.runs[0][0].reply",
    ]


def test_non_utf8_file_names_the_line(tmp_path):
    path = tmp_path / "claude.json"
    content = b'{"model": "claude",\n "scenes": {"color": "\xff"}}'
    path.write_bytes(content)
    column = content.index(b"\xff") - content.index(b"\n")  # its byte within line 2
    assert problems_of(read_transcript, path) == [
        f"claude.json:2: encoding: not valid UTF-8 (byte 0xff at byte {column} of the line); "
        "save the file as UTF-8"  # the wording of every reader (FORMATS.md)
    ]


# --------------------------------------------------------------------------- directories


def test_directory_reads_every_transcript_in_name_order(tmp_path):
    write(tmp_path / "b.json", transcript("model-b", color=[[turn("Red")]]))
    write(tmp_path / "a.json", transcript("model-a", color=[[turn("Blue")]]))
    write(tmp_path / "notes.txt", "ignored")
    assert [record.model for record in read_census(tmp_path)] == ["model-a", "model-b"]


def test_same_model_in_two_files_is_reported_with_both_places(tmp_path):
    write(tmp_path / "a.json", transcript("claude", color=[[turn("Blue")]]))
    write(tmp_path / "b.json", transcript("claude", color=[[turn("Red")]]))
    assert problems_of(read_census, tmp_path) == [
        "b.json: scenes.color.runs[0]: run: model 'claude', category 'color', run 0 already "
        "read at a.json: scenes.color.runs[0]"
    ]


def test_problems_of_all_files_of_a_directory_are_reported_together(tmp_path):
    write(tmp_path / "a.json", {"model": "a"})
    write(tmp_path / "b.jsonl", '{"model": "b"}\n')
    problems = problems_of(read_census, tmp_path)
    assert problems[0] == "a.json: scenes: missing"
    assert all(problem.startswith("b.jsonl:1: ") for problem in problems[1:])


def test_empty_directory_is_an_error(tmp_path):
    assert problems_of(read_census, tmp_path)[0].endswith(
        "directory: no .json, .jsonl or .csv file"
    )


def test_shipped_transcripts_read_whole():
    records = read_census(SHIPPED)
    assert len(records) == 44 * 31 * 4  # models x categories x runs
    assert len({record.model for record in records}) == 44
    assert len({record.category for record in records}) == 31


# --------------------------------------------------------------------------- flat JSONL / CSV


def test_flat_jsonl_and_csv_give_the_same_records(tmp_path):
    jsonl = write(
        tmp_path / "replies.jsonl",
        '{"model": "m", "category": "color", "run": 1, "reply": "Blue"}\n'
        "\n"
        '{"model": "m", "category": "color", "run": 0, "reply": null}\n',
    )
    csv_file = write(
        tmp_path / "replies.csv",
        "reply,run,category,model\nBlue,1,color,m\n,0,color,m\n",
    )
    expected = [CensusRecord("m", "color", 1, "Blue"), CensusRecord("m", "color", 0, None)]
    assert read_flat(jsonl) == expected
    assert read_flat(csv_file) == expected
    assert read_census(csv_file) == expected


def test_csv_reply_with_a_newline_keeps_later_line_numbers_right(tmp_path):
    path = write(
        tmp_path / "replies.csv",
        'model,category,run,reply\nm,color,0,"Blue\nis my answer"\nm,color,x,Red\n',
    )
    assert problems_of(read_flat, path) == [
        "replies.csv:4: run: must be an integer from 0 to 2,147,483,647, not 'x'"
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"model": "m", "category": "color", "run": -1, "reply": "Blue"}', "run: must be an"),
        ('{"model": "m", "category": "color", "run": true, "reply": "x"}', "run: must be an"),
        ('{"model": "", "category": "color", "run": 0, "reply": "Blue"}', "model: must be a"),
        ('{"model": "m", "run": 0, "reply": "Blue"}', "category: must be a non-empty string"),
        ('{"model": "m", "category": "color", "run": 0}', "reply: missing"),
        ('{"model": "m", "category": "color", "run": 0, "reply": 5}', "reply: must be a string"),
        ('{"model": "m", "category": "color", "run": 0, "reply": "x"', "row: not valid JSON"),
        ('["m", "color", 0, "Blue"]', "row: not a JSON object (found a list)"),
    ],
)
def test_bad_jsonl_line_names_file_line_and_field(tmp_path, line, expected):
    good = '{"model": "m", "category": "color", "run": 0, "reply": "Red"}'
    path = write(tmp_path / "replies.jsonl", f"{good}\n{line.replace(': 0', ': 1')}\n")
    [problem] = problems_of(read_flat, path)
    assert problem.startswith(f"replies.jsonl:2: {expected}")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "model,category,run\nm,color,0\n",
            "replies.csv:1: reply: required column is missing from the header",
        ),
        (
            "model,category,run,reply\nm,color,0\n",
            "replies.csv:2: row: expected 4 fields as in the header, found 3",
        ),
        ("model,category,run,reply\nm,,0,Blue\n", "replies.csv:2: category: must be a"),
        ("model,category,run,reply\nm,color,1.5,Blue\n", "replies.csv:2: run: must be an"),
        ("", "replies.csv:1: file: empty"),
    ],
)
def test_bad_csv_line_names_file_line_and_field(tmp_path, content, expected):
    [problem] = problems_of(read_flat, write(tmp_path / "replies.csv", content))
    assert problem.startswith(expected)


def test_repeated_cell_in_a_flat_file_names_both_lines(tmp_path):
    path = write(
        tmp_path / "replies.csv",
        "model,category,run,reply\nm,color,0,Blue\nm,color,1,Red\nm,color,0,Green\n",
    )
    assert problems_of(read_flat, path) == [
        "replies.csv:4: run: model 'm', category 'color', run 0 already read at replies.csv:2"
    ]


def test_unsupported_extension_is_rejected(tmp_path):
    path = write(tmp_path / "replies.tsv", "model\tcategory\n")
    assert problems_of(read_flat, path)[0].startswith("replies.tsv:1: file: unsupported")


def test_problem_list_is_capped_in_the_message(tmp_path):
    lines = "".join(f'{{"model": "m", "category": "c", "run": -{i}}}\n' for i in range(1, 61))
    with pytest.raises(CensusInputError) as caught:
        read_flat(write(tmp_path / "replies.jsonl", lines))
    assert len(caught.value.problems) == 120  # a bad run and a missing reply per line
    assert str(caught.value).splitlines()[-1] == "... and 70 more problems"
