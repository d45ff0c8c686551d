"""GENIE's shape out: genie.jsonl and q_genie.jsonl equal what GENIE's compute_genie writes
from the same similarity file, through the command, the page and the API; the page shows
the models and methods."""

import json

import pandas as pd
import pytest
from django.core.management import call_command

from tests.diversity import genie_native_set as genie
from tests.diversity.test_genie_native import compute_genie_reference
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db


def same_records(found: list[dict], expected: pd.DataFrame, score: str) -> None:
    # GENIE's values before save_df's to_json rounds them to 10 decimals
    expected = expected.to_dict(orient="records")
    assert len(found) == len(expected)
    for mine, theirs in zip(found, expected, strict=True):
        assert list(mine) == list(theirs)
        assert {k: v for k, v in mine.items() if k != score} == {
            k: v for k, v in theirs.items() if k != score
        }
        assert abs(mine[score] - theirs[score]) <= 1e-12


def exports_equal_compute_genie(name: str, path, tmp_path) -> None:
    """``export_genie``'s genie.jsonl and q_genie.jsonl of set ``name`` (analysed) are what
    ``compute_genie`` gives from the file at ``path``: the same rows, keys and order, scores
    to 1e-12."""
    expected, expected_q = compute_genie_reference(path)
    out, q_out = tmp_path / f"{name}-genie.jsonl", tmp_path / f"{name}-q_genie.jsonl"
    call_command("export_genie", name, "--genie", str(out), "--q-genie", str(q_out))
    read = lambda p: [json.loads(line) for line in p.read_text("utf-8").splitlines()]  # noqa: E731
    same_records(read(out), expected, "GENIE")
    same_records(read(q_out), expected_q, "Q_GENIE")


def test_genie_and_q_genie_exports_match_compute_genie(tmp_path):
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(genie.rows()), "utf-8")
    call_command("import_genie", "native", str(path))
    call_command("analyze_genie", "native", "--bootstrap", "100")
    exports_equal_compute_genie("native", path, tmp_path)
    expected, _ = compute_genie_reference(path)

    page = staff_client("researcher")
    html = page.get("/manage/genie/native/").content.decode()
    assert 'id="comparisons-table"' in html and "Differences between models" in html
    assert 'data-by="method"' in html and 'data-group="(none)"' in html and "persona" in html
    for url in ("/manage/genie/native/genie.jsonl", "/api/v1/genie/native/genie.jsonl"):
        client = page if url.startswith("/manage") else token_client("researcher")
        response = client.get(url)
        assert response.status_code == 200
        lines = b"".join(response.streaming_content).decode().splitlines()
        same_records([json.loads(line) for line in lines], expected, "GENIE")
    # no human scores in this report: said, not an empty file named like the LLM one
    human = token_client("researcher").get("/api/v1/genie/native/genie.jsonl?source=human")
    assert human.status_code == 400 and human.json()["field"] == "source"
    questions = page.get("/manage/genie/native/questions.csv")
    assert (
        b"".join(questions.streaming_content)
        .decode()
        .startswith(
            "source,prompt_id,document_id,question_id,feature,question,target_answer,q_genie,n_pairs"
        )
    )
    comparisons = page.get("/manage/genie/native/comparisons.csv")
    assert b"gpt-4o,llama-3" in b"".join(comparisons.streaming_content)


def test_a_file_with_repeated_pairs_imports_counts_them_and_exports_what_genie_writes(
    tmp_path, capsys
):
    records, repeated = genie.with_repeats(genie.rows())
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(records), "utf-8")
    call_command("import_genie", "again", str(path))
    said = capsys.readouterr().out
    assert f"; {repeated} rows judge a pair judged before (each judgment counts" in said
    call_command("analyze_genie", "again", "--bootstrap", "50")
    exports_equal_compute_genie("again", path, tmp_path)

    api = token_client("researcher")
    report = api.get("/api/v1/genie/again/report").json()
    assert report["repeated_pairs"] == repeated
    assert report["n_judgments"]["llm"] == len(records)
    listed = {entry["name"]: entry for entry in api.get("/api/v1/genie/").json()}
    assert listed["again"]["repeated_pairs"] == repeated
    assert listed["again"]["layout"] == "genie-similarity"
    assert listed["again"]["left_out"]["zero"] > 0
    html = staff_client("researcher").get("/manage/genie/again/").content.decode()
    assert f'<span data-summary="repeated_pairs">{repeated}</span> rows judge a pair' in html


def test_texts_keep_their_spaces_so_the_exports_have_genies_keys(tmp_path):
    """GENIE groups by the exact Prompt, Question and Answer_1: a trailing space or newline
    is part of the key, in its file and in the platform's exports."""
    records = genie.rows()
    for row in records:
        if row["Prompt"] == genie.PROMPTS[1]:
            row["Prompt"] += "\n"
        if row["Model_1"] == "llama-3" and row["Answer_1"] not in genie.EXCLUDED:
            row["Answer_1"] += " "
        row["Question"] = row["Question"].replace("end?", "end? ")
    path = tmp_path / "spaces.jsonl"
    path.write_text(genie.jsonl(records), "utf-8")
    call_command("import_genie", "spaces", str(path))
    call_command("analyze_genie", "spaces", "--bootstrap", "20")
    assert compute_genie_reference(path)[1]["Answer_1"].str.endswith(" ").any()
    exports_equal_compute_genie("spaces", path, tmp_path)


def test_a_whole_number_doc_id_past_64_bits_is_written_as_text():
    # pandas refused the whole file ("Value is too big!") for one such DocID
    import io

    from diversity.genie.core.exports import genie_records

    entry = {"prompt": "P", "prompt_id": "p", "model": "m", "features": {"f": {"novelty": 0.5}}}
    report = {"scores": {"llm": {"per_document": [
        {**entry, "source_document_id": "10000000000000000000000000", "document_id": "m|x"},
        {**entry, "source_document_id": "7", "document_id": "m|7"},
    ]}}}  # fmt: skip
    records = genie_records(report)
    assert [record["DocID_1"] for record in records] == [7, "10000000000000000000000000"]
    lines = "\n".join(json.dumps(record) for record in records)
    assert len(pd.read_json(io.StringIO(lines), lines=True)) == 2
