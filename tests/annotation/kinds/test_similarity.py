"""The ``similarity`` kind end to end: items files (texts in ``Item.content``, Genie keys in
the metadata), the 1–4 scale through the real HTTP API, exports and the data card."""

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Batch, Item, Label
from annotation.services.batches import create_batch
from annotation.services.importing import import_items
from core.tabular import ImportRejected
from tests.annotation.kinds import http
from tests.annotation.kinds.http import (
    answer,
    answer_as,
    enter,
    export,
    jsonl,
    lease,
    staff_client,
)
from tests.annotation.kinds.studies import items_file, make_study

pytestmark = pytest.mark.django_db

GENIE_ROW = {
    "item_id": "s1",
    "query_id": "gq1",
    "query": "Who wrote *Hamlet*?",
    "reference": "William Shakespeare wrote it.",
    "candidate": "It was **Shakespeare**.",
    "category": "literature",
    "gold": [3, 4],
    "prompt_id": "p-17",
    "question_id": "q-3",
    "feature": "author",
    "document_id": "doc-9",
    "population_id": "pop-2",
}


def test_items_keep_texts_in_content_and_genie_keys_in_metadata():
    batch = create_batch(slug="sim-import", kind="similarity", title="T")
    csv = io.BytesIO(
        b"item_id,query_id,query,reference,candidate,question_id\n"
        b's2,gq2,"Capital of France?",Paris.,"Paris, France.",q-4\n'
    )
    import_items(batch, items_file([GENIE_ROW]))
    import_items(batch, csv, filename="more.csv")
    first, second = Item.objects.filter(batch=batch).order_by("position")
    assert first.content == {
        "reference": "William Shakespeare wrote it.",
        "candidate": "It was **Shakespeare**.",
    }
    assert first.gold == [3, 4] and first.query.category == "literature"
    assert first.response is None and first.response_a is None
    assert first.metadata == {
        "prompt_id": "p-17",
        "question_id": "q-3",
        "feature": "author",
        "document_id": "doc-9",
        "population_id": "pop-2",
    }
    assert second.content == {"reference": "Paris.", "candidate": "Paris, France."}
    assert second.metadata == {"question_id": "q-4"}


def test_bad_items_file_is_refused_whole_with_file_line_field():
    batch = create_batch(slug="sim-bad", kind="similarity", title="T")
    rows = [
        GENIE_ROW,
        {**GENIE_ROW, "item_id": "s2", "reference": None},
        {**GENIE_ROW, "item_id": "s3", "candidate": 4},
        {**GENIE_ROW, "item_id": "s4", "gold": 5},
        {**GENIE_ROW, "item_id": "s5", "gold": "three"},
    ]
    del rows[1]["reference"]
    with pytest.raises(ImportRejected) as rejected:
        import_items(batch, items_file(rows, "genie.jsonl"))
    problems = rejected.value.problems
    assert problems[0] == "genie.jsonl:2: reference: required key is missing"
    assert problems[1] == "genie.jsonl:3: candidate: must be a string, not a number"
    assert problems[2] == "genie.jsonl:4: gold: 5 is not in the label set 1..4"
    assert problems[3] == "genie.jsonl:5: gold: 'three' is not an integer or a list of integers"
    assert not Item.objects.filter(batch=batch).exists()


def test_csv_without_the_candidate_column_is_refused_at_the_header():
    batch = create_batch(slug="sim-header", kind="similarity", title="T")
    csv = io.BytesIO(b"item_id,query_id,query,reference\ns1,q1,Q?,R\n")
    with pytest.raises(ImportRejected) as rejected:
        import_items(batch, csv, filename="genie.csv")
    assert rejected.value.problems[0].startswith("genie.csv:1: candidate: ")


def test_page_shows_question_then_reference_and_candidate():
    batch = make_study("similarity", slug="sim-page")
    client = enter(batch, "viewer")
    page = client.get(f"/work/{batch.slug}/task").content.decode()
    assert "How similar is the candidate answer to the reference answer?" in page
    for key, text in [("1", "Not similar at all"), ("4", "Essentially the same")]:
        assert f'data-key="{key}"' in page and text in page
    assert 'data-key="5"' not in page
    item = lease(client, batch)["item"]
    assert {"query", "reference", "candidate", "reference_html", "candidate_html"} <= set(item)
    html = item["html"]
    assert html.index("Question") < html.index("Reference answer") < html.index("Candidate answer")
    assert 'class="pair"' in html


def test_scale_is_1_to_4_and_a_retry_is_idempotent():
    batch = make_study("similarity", slug="sim-scale")
    client = enter(batch, "rater")
    assignment = lease(client, batch)["assignment"]
    for value in (5, 0, -1, "3", 2.5, True, None):
        refused = answer(client, assignment, value)
        assert refused.status_code == 400, (value, refused.content)
        assert refused.json()["field"] == "value"
    assert "must be one of [1, 2, 3, 4], got 5" in answer(client, assignment, 5).json()["detail"]
    assert answer(client, assignment, 3).status_code == 201
    assert answer(client, assignment, 3).status_code == 200
    assert answer(client, assignment, 4).status_code == 409
    label = Label.objects.get()
    assert (label.kind, label.value, label.text, label.status) == ("similarity", 3, None, "counted")


def test_exports_and_card():
    batch = make_study("similarity", slug="sim-export", n_items=1, per_item=3)
    for worker, value in [("a", 4), ("b", 2), ("c", 4)]:
        answer_as(batch, worker, value)
    staff = staff_client()
    long_rows = jsonl(export(staff, batch, "long", "jsonl"))
    assert [row["value"] for row in long_rows] == [4, 2, 4]
    first = long_rows[0]
    assert first["reference"] == "Reference answer 0: the capital is City 0."
    assert first["candidate"] == "Candidate answer 0: it is City 0."
    assert list(first)[:10] == [
        "batch",
        "kind",
        "item_id",
        "query_id",
        "query",
        "category",
        "subcategory",
        "bundle_id",
        "reference",
        "candidate",
    ]
    (dense,) = jsonl(export(staff, batch, "dense", "jsonl"))
    assert (dense["labels"], dense["n"]) == ([4, 2, 4], 3)
    types = http.column_types(http.parquet_export(staff, batch, "dense"))
    assert types["labels"] == "list<element: int64>" and types["reference"] == "string"
    card = export(staff, batch, "card", "md").decode()
    assert "- Label set: 1, 2, 3, 4" in card
    assert "| 4 | Essentially the same | 2 | 66.7% |" in card
    assert "| 1 | Not similar at all | 0 | 0.0% |" in card


def test_create_batch_command_and_api_create_similarity_batches():
    call_command("create_batch", "sim-command", "--kind", "similarity", stdout=io.StringIO())
    assert Batch.objects.get(slug="sim-command").kind == "similarity"
    created = staff_client().post(
        "/api/v1/batches/",
        {"slug": "sim-api", "kind": "similarity", "title": "Genie", "annotations_per_item": 5},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    refused = staff_client("other-admin").post(
        "/api/v1/batches/",
        {
            "slug": "sim-api-2",
            "kind": "similarity",
            "title": "T",
            "kind_settings": {"max_words": 2},
        },
        content_type="application/json",
    )
    assert refused.status_code == 400 and refused.json()["field"] == "kind_settings.max_words"
    assert json.loads(created.content)["kind_settings"] == {}
