"""Genie through the product path: import (all or nothing), the command and the API job,
with scores computed by hand (``tests/diversity/genie_set.py``) and ``None`` answers left
out."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.audit import history
from core.errors import Conflict, InvalidInput
from core.models import Job
from core.tabular import ImportRejected
from diversity.genie.models import GenieJudgment, GenieSet
from diversity.genie.services.analyses import analyse_genie
from diversity.genie.services.imports import import_genie
from tests.diversity import genie_set as hand
from tests.staff import token_client

pytestmark = pytest.mark.django_db


def imported(name: str = "hand") -> GenieSet:
    return import_genie(name, hand.upload(hand.jsonl()), filename="judgments.jsonl")


def check_hand_scores(report: dict) -> None:
    assert (report["n_prompts"], report["n_documents"], report["n_questions"]) == (1, 2, 3)
    assert report["features"] == ["Plot", "Setting"]
    assert (report["n_pairs"], report["n_pairs_without_answer"]) == (17, 5)
    assert report["n_judged_pairs"] == {"llm": 12, "human": 0}
    llm = report["scores"]["llm"]
    documents = {entry["document_id"]: entry["features"] for entry in llm["per_document"]}
    assert documents["d1"] == {"Plot": {"novelty": pytest.approx(hand.D1_PLOT), "n_questions": 2}}
    assert documents["d2"]["Plot"] == {"novelty": pytest.approx(hand.D2_PLOT), "n_questions": 2}
    assert documents["d2"]["Setting"] == {
        "novelty": pytest.approx(hand.D2_SETTING),
        "n_questions": 1,
    }
    plot, setting = llm["per_feature"]["Plot"], llm["per_feature"]["Setting"]
    assert plot["mean"] == pytest.approx(5 / 9) and plot["n_documents"] == 2
    low, high = plot["ci"]
    assert hand.D1_PLOT - 1e-12 <= low <= high <= hand.D2_PLOT + 1e-12
    assert setting == {"mean": 0.5, "ci": [0.5, 0.5], "ci_level": 0.95, "n_documents": 1}
    assert report["scores"]["human"] is None and report["agreement"] is None
    json.dumps(report, allow_nan=False)


def test_import_stores_every_row_with_its_fingerprint():
    genie_set = imported()
    assert genie_set.judgments.count() == 17
    assert genie_set.file_name == "judgments.jsonl" and len(genie_set.file_sha256) == 64
    row = genie_set.judgments.get(question_id="q2", document_id="d1", population_id="e2")
    assert (row.target_answer, row.population_answer, row.similarity) == (
        "d1 answers q2",
        None,
        None,
    )
    assert row.question == "How does the story end?"
    [event] = history(genie_set)
    assert event.action == "genie.import" and event.changes["n_llm"] == 17


def test_scores_by_hand_and_none_answers_left_out():
    check_hand_scores(analyse_genie(imported(), bootstrap=200))


def test_command_end_to_end(tmp_path, capsys):
    path = tmp_path / "judgments.csv"
    header = list(hand.rows()[0])
    lines = [",".join(header)] + [
        ",".join("" if row[key] is None else f'"{row[key]}"' for key in header)
        for row in hand.rows()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    call_command("import_genie", "hand-csv", str(path))
    assert "Imported Genie set hand-csv: 17 judgments (17 llm, 0 human)" in capsys.readouterr().out
    out = tmp_path / "report.json"
    call_command("analyze_genie", "hand-csv", "--json", str(out), "--bootstrap", "300")
    printed = capsys.readouterr().out
    assert "Analysed Genie set hand-csv: 2 documents, 2 features" in printed
    assert "llm Plot: 0.556" in printed
    report = json.loads(out.read_text())
    assert report["settings"] == {
        "bootstrap": 300,
        "seed": 7,
        "ci_level": 0.95,
        "human_batch": None,
        "human_source": None,
        "permutations": 300,
    }
    check_hand_scores(report)
    assert GenieSet.objects.get(name="hand-csv").jobs.get().state == Job.State.SUCCEEDED


def test_api_import_and_job(django_capture_on_commit_callbacks):
    client = token_client("researcher")
    response = client.post("/api/v1/genie/", {"name": "hand", "file": hand.upload(hand.jsonl())})
    assert response.status_code == 201, response.content
    assert response.json()["n_judgments"] == 17
    assert client.get("/api/v1/genie/hand/report").status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/genie/hand/analyses", {"bootstrap": 100}, content_type="application/json"
        )
    assert response.status_code == 202 and response.json()["genieset"] == "hand"
    assert client.get(response.json()["status_url"]).json()["state"] == "succeeded"
    check_hand_scores(client.get("/api/v1/genie/hand/report").json())
    assert [entry["name"] for entry in client.get("/api/v1/genie/").json()] == ["hand"]
    for body, field in [({"bootstrap": 0}, "bootstrap"), ({"human_batch": "nope"}, "human_batch")]:
        response = client.post("/api/v1/genie/hand/analyses", body, content_type="application/json")
        assert response.status_code == 400 and response.json()["field"] == field


# --------------------------------------------------------------------------- refused


def test_bad_rows_reject_the_file_with_file_line_field():
    lines = hand.jsonl().decode().splitlines()
    row = json.loads(lines[3])
    lines[3] = json.dumps({**row, "similarity": 5})
    lines[5] = json.dumps({**json.loads(lines[5]), "feature": "Agent"})
    lines.append("not json")
    with pytest.raises(ImportRejected) as caught:
        import_genie("bad", hand.upload("\n".join(lines).encode()), filename="bad.jsonl")
    assert caught.value.problems == [
        "bad.jsonl:4: similarity: must be a number in [1, 4], not 5",
        "bad.jsonl:6: feature: 'Agent' differs from 'Plot' at bad.jsonl:1",
        "bad.jsonl:18: row: not valid JSON: Expecting value at column 1",
    ]
    assert not GenieSet.objects.exists() and not GenieJudgment.objects.exists()


def test_question_texts_must_agree_and_text_must_be_storable():
    lines = hand.jsonl().decode().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "question": "Something else?"})
    lines[2] = json.dumps({**json.loads(lines[2]), "target_answer": "a\x00b"})
    with pytest.raises(ImportRejected) as caught:
        import_genie("bad", hand.upload("\n".join(lines).encode()), filename="bad.jsonl")
    assert caught.value.problems == [
        "bad.jsonl:2: question: 'Something else?' differs from 'What happens in the story?' "
        "at bad.jsonl:1",
        "bad.jsonl:3: target_answer: contains a NUL character",
    ]


def test_empty_file_name_rules_and_duplicates():
    with pytest.raises(ImportRejected) as caught:
        import_genie("empty", hand.upload(b"\n"), filename="empty.jsonl")
    assert caught.value.problems == ["empty.jsonl:1: file: holds no judgment at all"]
    with pytest.raises(ImportRejected):
        import_genie("txt", hand.upload(b"x"), filename="judgments.txt")
    with pytest.raises(InvalidInput):
        import_genie("No Name", hand.upload(hand.jsonl()), filename="j.jsonl")
    imported("taken")
    with pytest.raises(Conflict):
        imported("taken")


def test_commands_refuse_unknown_sets_and_bad_files(tmp_path):
    with pytest.raises(CommandError, match="Genie set 'nope' does not exist"):
        call_command("analyze_genie", "nope")
    with pytest.raises(CommandError, match="Genie set 'nope' does not exist"):
        call_command("genie_batch", "nope", "slug")
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt_id\np1\n")
    with pytest.raises(CommandError) as caught:
        call_command("import_genie", "bad", str(bad))
    assert "bad.csv:1: question_id: required column is missing from the header" in str(caught.value)
