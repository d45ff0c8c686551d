"""Importing a census through the service and the command: both reply formats, norms, and
bad files rejected whole with FILE:LINE or file + JSON-path problems (nothing stored)."""

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.audit import Actor, history
from core.errors import Conflict, InvalidInput
from core.tabular import ImportRejected
from diversity.census.models import Census, CensusAnswer, CensusFile, CensusNorm
from diversity.census.services.imports import CensusUpload, import_census, uploads_of_paths

pytestmark = pytest.mark.django_db

SHIPPED = Path(__file__).resolve().parents[2] / "diversity/demo/one-word-census"


def transcript(model: str, scenes: dict) -> bytes:
    """A transcript JSON: ``scenes`` maps a category to its replies, one run each."""
    return json.dumps(
        {
            "model": model,
            "scenes": {
                category: {
                    "runs": [[{"u": f"Name a {category}.", "reply": reply}] for reply in replies]
                }
                for category, replies in scenes.items()
            },
        }
    ).encode()


def upload(name: str, content: bytes) -> CensusUpload:
    return CensusUpload(io.BytesIO(content), name)


def stored(census: Census) -> list[tuple]:
    return list(
        census.answers.order_by("answerer", "category", "run").values_list(
            "answerer", "category", "run", "reply"
        )
    )


def rejected(*args, **kwargs) -> list[str]:
    with pytest.raises(ImportRejected) as caught:
        import_census(*args, **kwargs)
    assert not Census.objects.exists() and not CensusAnswer.objects.exists()
    return caught.value.problems


# --------------------------------------------------------------------------- accepted


def test_shipped_transcripts_and_norms_are_stored_with_their_fingerprints():
    census = import_census(
        "one-word-census",
        uploads_of_paths([SHIPPED / "transcripts"]),
        norms=CensusUpload(SHIPPED / "humannorms.json", "humannorms.json"),
        actor=Actor.command_line(),
    )
    assert census.answers.count() == 5456
    assert census.answers.values("answerer").distinct().count() == 44
    assert census.norms.count() == 20
    assert census.norms_source.startswith("Van Overschelde")
    tree = census.norms.get(category="tree")
    assert (tree.human_modal, tree.human_share, tree.human_n_ge5) == ("oak", 0.31, 5)
    assert (tree.model_modal, tree.model_share, tree.wording_mismatch) == ("oak", 0.937, False)
    assert census.norms.get(category="tool").wording_mismatch is True

    files = list(census.files.order_by("position"))
    assert len(files) == 45 and files[-1].role == CensusFile.Role.NORMS
    first = SHIPPED / "transcripts" / files[0].name
    assert files[0].sha256 == hashlib.sha256(first.read_bytes()).hexdigest()
    assert files[0].size_bytes == first.stat().st_size
    assert sum(f.n_rows for f in files if f.role == CensusFile.Role.TRANSCRIPT) == 5456

    [event] = history(census)
    assert event.action == "census.import" and event.actor_name == "command line"
    assert event.changes["n_replies"] == 5456 and event.changes["n_models"] == 44
    assert event.changes["files"][0]["sha256"] == files[0].sha256


def test_replies_are_stored_verbatim_with_missing_ones_as_null():
    census = import_census(
        "tiny",
        [
            upload(
                "m.json", transcript("m", {"color": ["Blue.", "  A common color is blue. ", None]})
            )
        ],
    )
    assert stored(census) == [
        ("m", "color", 0, "Blue."),
        ("m", "color", 1, "  A common color is blue. "),
        ("m", "color", 2, None),
    ]


def test_flat_jsonl_csv_and_transcripts_store_the_same_answers():
    scenes_a = {"color": ["Blue", "Red"], "tree": ["Oak"]}
    scenes_b = {"color": ["Green", ""], "tree": ["Pine, of course"]}
    from_transcripts = import_census(
        "from-transcripts",
        [upload("a.json", transcript("a", scenes_a)), upload("b.json", transcript("b", scenes_b))],
    )
    rows = [
        {"model": model, "category": category, "run": run, "reply": reply}
        for model, scenes in (("a", scenes_a), ("b", scenes_b))
        for category, replies in scenes.items()
        for run, reply in enumerate(replies)
    ]
    jsonl = "\n".join(json.dumps(row) for row in rows).encode()
    csv_text = "model,category,run,reply\n" + "".join(
        f'{row["model"]},{row["category"]},{row["run"]},"{row["reply"]}"\n' for row in rows
    )
    from_jsonl = import_census("from-jsonl", [upload("replies.jsonl", jsonl)])
    from_csv = import_census("from-csv", [upload("replies.csv", csv_text.encode())])
    # an empty reply is no reply, whichever format carried it
    expected = [(m, c, r, reply or None) for m, c, r, reply in stored(from_transcripts)]
    assert stored(from_jsonl) == stored(from_csv) == expected
    assert ("b", "color", 1, None) in expected


def test_command_reads_directories_and_files_and_prints_a_summary(tmp_path, capsys):
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "a.json").write_bytes(transcript("a", {"color": ["Blue"]}))
    (folder / "notes.txt").write_text("ignored")
    flat = tmp_path / "more.jsonl"
    flat.write_text(json.dumps({"model": "b", "category": "color", "run": 0, "reply": "Red"}))
    call_command("import_census", "mixed", str(folder), str(flat))
    assert "Imported census mixed: 2 replies of 2 models from 2 files" in capsys.readouterr().out
    census = Census.objects.get(name="mixed")
    assert [f.role for f in census.files.order_by("position")] == ["transcript", "flat"]


# --------------------------------------------------------------------------- rejected


def test_a_bad_transcript_rejects_the_whole_import_naming_file_and_json_path():
    good = upload("good.json", transcript("good", {"color": ["Blue"]}))
    bad = upload(
        "bad.json",
        json.dumps({"model": "bad", "scenes": {"color": {"runs": [[], "Blue"]}}}).encode(),
    )
    problems = rejected("c", [good, bad])
    assert problems == ["bad.json: scenes.color.runs[1]: must be a list of turns, not string"]


def test_a_bad_flat_file_names_file_line_and_field():
    content = b'{"model": "a", "category": "color", "run": 0, "reply": "Blue"}\n' + (
        b'{"model": "a", "category": "color", "run": -1, "reply": "Red"}\n'
    )
    assert rejected("c", [upload("replies.jsonl", content)]) == [
        "replies.jsonl:2: run: must be an integer from 0 to 2,147,483,647, not -1"
    ]
    for huge in (b"2147483648", b"9223372036854775808"):  # past the column: was a 500
        line = b'{"model": "a", "category": "color", "run": ' + huge + b', "reply": "Red"}\n'
        assert rejected("c", [upload("replies.jsonl", line)]) == [
            f"replies.jsonl:1: run: must be an integer from 0 to 2,147,483,647, not {huge.decode()}"
        ]
    csv_content = b"model,category,reply\na,color,Blue\n"
    assert rejected("c", [upload("replies.csv", csv_content)]) == [
        "replies.csv:1: run: required column is missing from the header"
    ]


def test_the_same_cell_in_two_files_is_rejected_with_both_places():
    first = upload("a.json", transcript("a", {"color": ["Blue"]}))
    second = upload(
        "more.jsonl", b'{"model": "a", "category": "color", "run": 0, "reply": "Red"}\n'
    )
    [problem] = rejected("c", [first, second])
    assert problem == (
        "more.jsonl:1: run: model 'a', category 'color', run 0 already read at "
        "a.json: scenes.color.runs[0]"
    )


def test_unstorable_text_is_a_problem_not_a_crash():
    long_name = "x" * 201
    problems = rejected(
        "c",
        [
            upload("nul.json", transcript("nul", {"color": ["Bl\x00ue"]})),
            upload("long.json", transcript(long_name, {"color": ["Blue"]})),
            upload("deep.json", b"[" * 100_000 + b"]" * 100_000),
        ],
    )
    assert problems == [
        "nul.json: scenes.color.runs[0][0].reply: contains a NUL character",
        "long.json: model: longer than 200 characters",
        "deep.json:1: file: not valid JSON: nested deeper than 32 levels (JSON_MAX_DEPTH) "
        "at column 33",
    ]


def test_bad_norms_reject_the_replies_too():
    norms = {"per_category": [{"category": "tree", "human_modal": "oak"}]}
    problems = rejected(
        "c",
        [upload("a.json", transcript("a", {"tree": ["Oak"]}))],
        norms=upload("norms.json", json.dumps(norms).encode()),
    )
    assert problems[0] == (
        "norms.json: per_category[0].human_modal_first: must be a number in [0, 1], not None"
    )
    assert not CensusNorm.objects.exists()


def test_empty_files_and_unsupported_types_are_problems():
    assert rejected("c", [upload("a.json", b'{"model": "a", "scenes": {}}')]) == [
        "a.json: file: holds no reply at all"
    ]
    only_empty = b"model,category,run,reply\nx,color,0,\nx,color,1,\n"  # cells, no reply
    assert rejected("c", [upload("e.csv", only_empty)]) == ["e.csv: file: holds no reply at all"]
    assert rejected("c", [upload("a.txt", b"Blue")]) == [
        "a.txt:1: file: unsupported file type ('.txt'); use .json, .jsonl or .csv"
    ]
    assert rejected(
        "c", [upload("a.json", transcript("a", {"x": ["y"]}))], norms=upload("n.csv", b"")
    ) == ["n.csv:1: file: norms must be a .json file"]


def test_many_problems_are_listed_up_to_50_then_counted():
    lines = b"\n".join(
        b'{"model": "a", "category": "c", "run": "x", "reply": "y"}' for _ in range(60)
    )
    problems = rejected("c", [upload("r.jsonl", lines)])
    assert len(problems) == 51 and problems[-1] == "... and 10 more problems"


def test_name_rules_and_duplicates():
    files = [upload("a.json", transcript("a", {"color": ["Blue"]}))]
    with pytest.raises(InvalidInput) as caught:
        import_census("Not A Slug", files)
    assert caught.value.field == "name"
    import_census("taken", files)
    with pytest.raises(Conflict):
        import_census("taken", [upload("a.json", transcript("a", {"color": ["Blue"]}))])
    with pytest.raises(InvalidInput) as caught:
        import_census("empty", [])
    assert caught.value.field == "files"


def test_command_lists_every_problem_and_imports_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "a", "category": "", "run": 0, "reply": "x"}\nnot json\n')
    with pytest.raises(CommandError) as caught:
        call_command("import_census", "c", str(bad))
    message = str(caught.value)
    assert "was rejected, nothing was imported" in message
    assert "bad.jsonl:1: category: must be a non-empty string (missing or empty)" in message
    assert "bad.jsonl:2: row: not valid JSON" in message
    assert not Census.objects.exists()
    with pytest.raises(CommandError, match="no such file or directory"):
        call_command("import_census", "c", str(tmp_path / "missing.json"))


def test_a_reply_longer_than_text_max_chars_is_refused_with_its_place(tmp_path, settings):
    from diversity.census.sources import CensusInputError
    from diversity.census.transcripts import read_each_file

    path = tmp_path / "replies.jsonl"
    path.write_text(
        '{"model": "m", "category": "color", "run": 0, "reply": "blue"}\n'
        '{"model": "m", "category": "color", "run": 1, "reply": "' + "x" * 51 + '"}\n'
    )
    with pytest.raises(CensusInputError) as refused:
        read_each_file([(path, "replies.jsonl")], text_max=50)
    assert refused.value.problems == [
        "replies.jsonl:2: reply: the text is 51 characters; at most TEXT_MAX_CHARS (50) are "
        "accepted"
    ]
