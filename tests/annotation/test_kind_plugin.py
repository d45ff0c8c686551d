"""A kind added in the test settings runs end to end without touching platform code:
import → publish → lease → label (and a refused value) → exports → data card."""

import io
import json

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from annotation.kinds import get_kind
from annotation.models import Item, Label

pytestmark = pytest.mark.django_db


@pytest.fixture
def thumbs(settings):
    settings.TASK_KINDS = [*settings.TASK_KINDS, "tests.annotation.toy_kind.ThumbsKind"]
    return get_kind("thumbs")


def admin() -> Client:
    user = User.objects.create_user("kind-admin", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="admin"))
    client = Client()
    client.force_login(user)
    return client


def items_file() -> io.BytesIO:
    rows = [
        {
            "item_id": f"t{index}",
            "query_id": f"tq{index}",
            "query": f"Question **{index}**?",
            "response_id": f"tr{index}",
            "response": f"Answer {index}",
        }
        for index in range(3)
    ]
    upload = io.BytesIO("".join(json.dumps(row) + "\n" for row in rows).encode())
    upload.name = "thumbs.jsonl"
    return upload


def test_a_kind_from_the_settings_runs_end_to_end(thumbs):
    staff = admin()
    created = staff.post(
        "/api/v1/batches/",
        {"slug": "thumbs", "kind": "thumbs", "title": "Thumbs", "annotations_per_item": 2},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert staff.post("/api/v1/batches/thumbs/items", {"file": items_file()}).status_code == 201
    assert staff.post("/api/v1/batches/thumbs/state", {"state": "live"}).status_code == 200

    worker = Client()
    page = worker.get("/work/thumbs/", {"worker": "toy-worker"})
    assert page.status_code == 200
    task = worker.get("/work/thumbs/task")
    if task.status_code == 302:  # consent first when the batch asks for it
        worker.post("/work/thumbs/consent")
        task = worker.get("/work/thumbs/task")
    html = task.content.decode()
    assert "Do you like this response?" in html and "Thumbs down" in html
    csrf = worker.cookies["csrftoken"].value
    next_item = worker.post("/api/v1/work/thumbs/next", HTTP_X_CSRFTOKEN=csrf).json()
    item = next_item["item"]
    assert '<p class="toy-query">' in item["html"] and "<strong>" in item["query_html"]
    label_url = f"/api/v1/assignments/{next_item['assignment']}/label"
    refused = worker.post(
        label_url, {"value": 5}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert refused.status_code == 400 and refused.json()["field"] == "value"
    stored = worker.post(
        label_url, {"value": 0}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert stored.status_code == 201
    label = Label.objects.get()
    assert (label.kind, label.value, label.status) == ("thumbs", 0, "counted")
    assert Item.objects.get(item_id=item["item_id"]).counted_count == 1

    long_rows = [
        json.loads(line)
        for line in b"".join(
            staff.get("/api/v1/batches/thumbs/export?layout=long&format=jsonl").streaming_content
        ).splitlines()
    ]
    assert long_rows == [
        {
            "batch": "thumbs",
            "kind": "thumbs",
            "item_id": item["item_id"],
            "query_id": long_rows[0]["query_id"],
            "query": long_rows[0]["query"],
            "category": "",
            "subcategory": "",
            "bundle_id": "",
            "response_id": long_rows[0]["response_id"],
            "response": long_rows[0]["response"],
            "annotator": label.annotator.pseudonym,
            "value": 0,
            "status": "counted",
            "shown_order": None,
            "position_in_bundle": None,
            "check_passed": None,
            "comment": "",
            "duration_ms": None,
            "submitted_at": long_rows[0]["submitted_at"],
            "language": "en",  # the batch offers no other: its default
        }
    ]
    dense = b"".join(
        staff.get("/api/v1/batches/thumbs/export?layout=dense&format=csv").streaming_content
    ).decode()
    assert dense.splitlines()[0].endswith("labels,annotators,n")
    card = b"".join(
        staff.get("/api/v1/batches/thumbs/export?layout=card").streaming_content
    ).decode()
    assert "| 0 | Thumbs down | 1 | 100.0% |" in card


def test_an_unknown_kind_is_refused_naming_the_field():
    response = admin().post(
        "/api/v1/batches/",
        {"slug": "nope", "kind": "thumbs", "title": "T"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["field"] == "kind" and "absolute" in response.json()["detail"]
