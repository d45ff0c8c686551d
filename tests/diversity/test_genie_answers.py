"""GENIE's answers files as its authors have them (``answer.py``'s ``Prompt, DocID, Model,
Question, Answer``, with the population's answers and ``configs/questions.json``): imported
by the command, the page and the API alike, then made into a ``similarity`` batch by
``genie_batch`` so that people judge the pairs GENIE's judge would."""

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Batch
from diversity.genie.models import GenieSet
from tests.files import named_upload
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

PROMPT = "Write a story about the sea."
QUESTIONS = [("Who is the hero?", "Agent"), ("Where does it happen?", "Setting")]
TARGET_ANSWERS = {0: ["a whale", "a lighthouse"], 1: ["a sailor", "N/A"]}
POPULATION_ANSWERS = {0: ["a gull", "a harbour"], 1: ["a whale", "the open sea"], 2: ["", "a bay"]}


def answers(model: str, by_document: dict[int, list[str]]) -> str:
    """An answers file in JSON lines, as GENIE's ``save_df`` writes it."""
    rows = [
        {"Prompt": PROMPT, "DocID": doc, "Model": model, "Question": question, "Answer": answer}
        for doc, answered in by_document.items()
        for (question, _), answer in zip(QUESTIONS, answered, strict=True)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def questions() -> str:
    """``configs/questions.json``: pandas' column-oriented layout."""
    table = {"Prompt": {}, "Question": {}, "Feature": {}}
    for index, (question, feature) in enumerate(QUESTIONS):
        for column, value in (("Prompt", PROMPT), ("Question", question), ("Feature", feature)):
            table[column][str(index)] = value
    return json.dumps(table)


def upload(text: str, name: str) -> io.BytesIO:
    return named_upload(name, text)


def uploads() -> dict:
    return {
        "file": upload(answers("gpt-4o+persona", TARGET_ANSWERS), "targets.jsonl"),
        "population": upload(answers("population", POPULATION_ANSWERS), "population.jsonl"),
        "questions": upload(questions(), "questions.json"),
    }


# 2 target documents x 2 questions x 3 population documents
N_PAIRS = 12


def judgeable_pairs() -> int:
    """The pairs with both answers given ("N/A" is no answer, as in GENIE's pipeline)."""
    count = 0
    for target in TARGET_ANSWERS.values():
        for population in POPULATION_ANSWERS.values():
            for mine, theirs in zip(target, population, strict=True):
                count += mine not in ("", "N/A") and theirs not in ("", "N/A")
    return count


def test_answers_files_go_through_genie_batch_into_a_similarity_batch(tmp_path):
    paths = {}
    for key, handle in uploads().items():
        paths[key] = tmp_path / handle.name
        paths[key].write_bytes(handle.getvalue())
    call_command(
        "import_genie",
        "sea",
        str(paths["file"]),
        "--population",
        str(paths["population"]),
        "--questions",
        str(paths["questions"]),
    )
    genie_set = GenieSet.objects.get(name="sea")
    assert genie_set.layout == "genie-answers"
    assert genie_set.judgments.count() == N_PAIRS
    assert set(genie_set.judgments.values_list("similarity", flat=True)) == {None}

    out = io.StringIO()
    call_command("genie_batch", "sea", "sea-people", "--per-item", "3", stdout=out)
    batch = Batch.objects.get(slug="sea-people")
    assert batch.kind == "similarity" and batch.annotations_per_item == 3
    assert GenieSet.objects.get(name="sea").human_batch == batch
    items = list(batch.items.select_related("query"))
    assert len(items) == judgeable_pairs()
    assert f"with {judgeable_pairs()} pairs of sea" in out.getvalue()
    # each item asks the question of its pair, with the two answers GENIE's judge would see
    found = {
        (item.query.text, item.metadata["feature"], item.content["reference"]) for item in items
    }
    assert ("Who is the hero?", "Agent", "a whale") in found
    assert ("Where does it happen?", "Setting", "a lighthouse") in found
    assert all(item.content["reference"] != "N/A" for item in items)


def test_answers_files_are_taken_by_the_page_as_by_the_command():
    client = staff_client("researcher")
    response = client.post("/manage/genie/new", {"name": "sea", **uploads()})
    assert response.status_code == 302, response.content.decode()[:2000]
    genie_set = GenieSet.objects.get(name="sea")
    assert (genie_set.layout, genie_set.judgments.count()) == ("genie-answers", N_PAIRS)
    # without the population's answers the file is refused, on the list page
    lone = {"name": "lone", "file": uploads()["file"]}
    response = client.post("/manage/genie/new", lone)
    assert response.status_code == 400
    assert "give the population&#x27;s answers file too" in response.content.decode()


def test_answers_files_are_taken_by_the_api_as_by_the_command():
    client = token_client("researcher")
    response = client.post("/api/v1/genie/", {"name": "sea", **uploads()})
    assert response.status_code == 201, response.content
    assert response.json()["n_judgments"] == N_PAIRS
    response = client.post("/api/v1/genie/", {"name": "lone", "file": uploads()["file"]})
    assert response.status_code == 400
    assert any("give the population's answers file too" in p for p in response.json()["problems"])
