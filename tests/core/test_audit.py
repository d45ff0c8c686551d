"""The audit trail: every state-changing action is recorded with actor, time and diff,
whatever the interface, and shown on the History tab, in the API and in the data card."""

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from annotation.services.annotators import exclude_annotator
from annotation.services.exports.card import data_card
from core.audit import Actor, history
from core.models import AuditEvent
from tests.factories import make_batch, make_participant
from tests.staff import logged_in, staff_user

pytestmark = pytest.mark.django_db


def admin_client() -> tuple[User, Client]:
    user = staff_user("admin", "ada")
    return user, logged_in(user)


def actions(batch) -> list[tuple[str, str]]:
    return [(event.actor_name, event.action) for event in history(batch).order_by("at", "pk")]


def test_page_actions_are_recorded_with_the_user_and_a_diff():
    user, client = admin_client()
    response = client.post(
        "/manage/new",
        {
            "slug": "audited",
            "kind": "absolute",
            "annotations_per_item": 3,
            "lease_seconds": 600,
            "completion_code": "",
        },
    )
    assert response.status_code == 302, response.content[:500]
    upload = io.BytesIO(
        b'{"item_id": "i1", "query_id": "aq", "query": "Q?", "response_id": "ar", '
        b'"response": "R"}\n'
    )
    upload.name = "items.jsonl"
    assert client.post("/manage/audited/items", {"file": upload}).status_code == 302
    assert client.post("/manage/audited/state", {"state": "live"}).status_code == 302
    from annotation.models import Batch

    batch = Batch.objects.get(slug="audited")
    edit = client.get("/manage/audited/edit")
    form = {
        name: value
        for name, value in edit.context["form"].initial.items()
        if value is not None and not isinstance(value, dict)
    }
    form.update({"annotations_per_item": 5, "title": "Renamed"})
    assert client.post("/manage/audited/edit", form).status_code == 302

    assert actions(batch) == [
        ("ada", "batch.create"),
        ("ada", "items.import"),
        ("ada", "batch.publish"),
        ("ada", "batch.edit"),
    ]
    events = list(history(batch).order_by("at", "pk"))
    assert events[0].actor == user and events[0].changes["annotations_per_item"] == 3
    imported = events[1].changes
    assert imported["file"] == "items.jsonl" and imported["items_created"] == 1
    assert imported["bytes"] == len(upload.getvalue()) and len(imported["sha256"]) == 64
    assert events[2].changes == {"state": ["draft", "live"]}
    assert events[3].changes == {"title": ["audited", "Renamed"], "annotations_per_item": [3, 5]}


def test_exclusion_from_the_api_and_the_command_line_are_recorded(tmp_path):
    batch = make_batch(slug="ex", n_items=2, per_item=2)
    person = make_participant(batch, "w1")
    user, client = admin_client()
    pseudonym = person.annotator.pseudonym
    assert client.post(f"/api/v1/batches/ex/annotators/{pseudonym}/exclude").status_code == 200
    assert client.post(f"/api/v1/batches/ex/annotators/{pseudonym}/include").status_code == 200
    exclude_annotator(batch, person.annotator, actor=Actor.policy("failed checks"), reason="2 of 3")
    # a real file: the command renames its output into place, which would replace
    # /dev/null itself with a regular file when the suite runs as root
    call_command("export_labels", "ex", "--format", "jsonl", "-o", str(tmp_path / "ex.jsonl"))
    assert actions(batch)[-4:] == [
        ("ada", "annotator.exclude"),
        ("ada", "annotator.include"),
        ("policy: failed checks", "annotator.exclude"),
        ("command line", "labels.export"),
    ]
    policy = history(batch).filter(actor_name__startswith="policy").get()
    assert policy.reason == "2 of 3" and policy.changes["annotator"] == pseudonym


def test_history_tab_api_and_card_show_the_trail():
    batch = make_batch(slug="shown", n_items=1, per_item=1)
    _, client = admin_client()
    client.post("/manage/shown/state", {"state": "paused"})
    page = client.get("/manage/shown/history")
    assert page.status_code == 200
    html = page.content.decode()
    assert "batch.pause" in html and "ada" in html and "live → paused" in html
    listed = client.get("/api/v1/batches/shown/history").json()
    assert listed[0]["action"] == "batch.pause" and listed[0]["actor"] == "ada"
    assert listed[0]["changes"] == {"state": ["live", "paused"]}
    card = data_card(batch)
    assert "## History (UTC)" in card
    assert "| ada | `batch.pause` | state: live → paused |" in card


def test_a_job_request_is_recorded_without_internal_file_names(
    django_capture_on_commit_callbacks,
):
    batch = make_batch(slug="jobbed", n_items=1, per_item=1)
    _, client = admin_client()
    upload = io.BytesIO(
        b'{"item_id": "i2", "query_id": "jq", "query": "Q?", "response_id": "jr", '
        b'"response": "R"}\n'
    )
    upload.name = "more.jsonl"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/batches/jobbed/import-jobs", {"file": upload})
    assert response.status_code == 202
    requested = history(batch).get(action="import.requested")
    assert requested.changes["filename"] == "more.jsonl" and "stored_file" not in requested.changes
    assert history(batch).get(action="items.import").actor_name == "ada"


def test_events_survive_as_text_and_are_json():
    batch = make_batch(slug="kept", n_items=1, per_item=1)
    for event in AuditEvent.objects.filter(subject_id=batch.pk):
        json.dumps(event.changes)
        assert event.subject_label == "kept"
