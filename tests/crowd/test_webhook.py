"""POST /hooks/prolific/: signature, timestamp, X-Event-ID, and a return releasing the
participant's slot within the request."""

import json
import time

import pytest

from annotation.models import Assignment, Item, Label
from crowd.models import WebhookEvent
from crowd.services.webhooks import signature
from tests.crowd.conftest import WEBHOOK_SECRET
from tests.crowd.helpers import hold_lease, label_items, prolific_batch, prolific_participant

pytestmark = pytest.mark.django_db


def post_signed(client, body: bytes, *, event_id=None, secret=WEBHOOK_SECRET, at=None):
    """Post ``body`` to the webhook signed with ``secret`` at time ``at`` (now unless given),
    with an ``X-Event-ID`` header when ``event_id`` is given."""
    timestamp = str(int(at if at is not None else time.time()))
    headers = {
        "X-Prolific-Request-Signature": signature(secret, timestamp, body),
        "X-Prolific-Request-Timestamp": timestamp,
    }
    if event_id is not None:
        headers["X-Event-ID"] = event_id
    return client.post(
        "/hooks/prolific/", data=body, content_type="application/json", headers=headers
    )


def deliver(client, event: dict, *, event_id="evt-1", secret=WEBHOOK_SECRET, at=None):
    body = json.dumps(event).encode()
    return post_signed(client, body, event_id=event_id, secret=secret, at=at)


def status_change(submission_id, pid, status):
    return {
        "resource_id": submission_id,
        "event_type": "submission.status.change",
        "participant_id": pid,
        "status": status,
    }


def test_a_return_releases_the_open_lease_at_once_and_counted_labels_stay(client, prolific):
    batch = prolific_batch(prolific, n_items=3, per_item=1)
    person, submission = prolific_participant(batch, prolific, "pid-1")
    label_items(batch, person, 1)
    held = hold_lease(batch, person)
    item = Item.objects.get(pk=held.item_id)
    assert item.reserved_count == 1
    answer = deliver(client, status_change(submission, "pid-1", "RETURNED"))
    assert answer.status_code == 200 and answer.json()["outcome"] == "applied"
    item.refresh_from_db()
    assert item.reserved_count == 0  # the slot is free for others now
    assert Assignment.objects.get(pk=held.pk).state == "expired"
    assert Label.objects.filter(annotator=person.annotator, status="counted").count() == 1
    person.refresh_from_db()
    assert person.platform_status == "RETURNED"


def test_a_repeated_event_id_answers_200_and_changes_nothing(client, prolific):
    batch = prolific_batch(prolific)
    person, submission = prolific_participant(batch, prolific, "pid-1")
    deliver(client, status_change(submission, "pid-1", "AWAITING REVIEW"), event_id="e-7")
    again = deliver(client, status_change(submission, "pid-1", "RETURNED"), event_id="e-7")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    person.refresh_from_db()
    assert person.platform_status == "AWAITING REVIEW"
    outcomes = list(WebhookEvent.objects.order_by("pk").values_list("outcome", flat=True))
    assert outcomes == ["applied", "duplicate"]


@pytest.mark.parametrize(
    ("secret", "age", "why"),
    [("not-the-secret", 0, "bad_signature"), (WEBHOOK_SECRET, 301, "stale")],
)
def test_a_bad_signature_or_an_old_timestamp_is_refused_and_recorded(
    client, prolific, secret, age, why
):
    batch = prolific_batch(prolific, n_items=2, per_item=1)
    person, submission = prolific_participant(batch, prolific, "pid-1")
    held = hold_lease(batch, person)
    answer = deliver(
        client,
        status_change(submission, "pid-1", "RETURNED"),
        secret=secret,
        at=time.time() - age,
    )
    assert answer.status_code == 401 and "detail" in answer.json()
    assert Assignment.objects.get(pk=held.pk).state == "open"
    person.refresh_from_db()
    assert person.platform_status == ""
    assert WebhookEvent.objects.get().outcome == why


def test_the_webhook_needs_no_csrf_token_and_answers_json_to_anything(prolific):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert (
        strict.post("/hooks/prolific/", data=b"{}", content_type="application/json").status_code
        == 401
    )
    assert strict.get("/hooks/prolific/").json()["detail"]
    answer = post_signed(strict, b"not json")
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"


def test_an_unknown_submission_is_recorded_and_changes_nothing(client, prolific):
    answer = deliver(client, status_change("sub-nobody", "nobody", "RETURNED"))
    assert answer.status_code == 200
    assert WebhookEvent.objects.get().outcome == "unknown_submission"


def test_someone_who_returned_the_study_gets_no_more_items(client, prolific):
    from django.test import Client

    from tests.annotation.test_worker_api import enter, label, next_item

    batch = prolific_batch(prolific, n_items=4, per_item=1)
    submission = prolific.add_submission(batch.prolific_study_id, "pid-r", status="ACTIVE")
    browser = enter(
        batch,
        client=Client(enforce_csrf_checks=True),
        PROLIFIC_PID="pid-r",
        STUDY_ID=batch.prolific_study_id,
        SESSION_ID=submission,
    )
    label(browser, next_item(browser, batch).json()["assignment"], 3)
    held = next_item(browser, batch).json()["assignment"]
    assert deliver(client, status_change(submission, "pid-r", "RETURNED")).status_code == 200
    # the lease they held is gone, and nothing more is handed out (an unpaid submission)
    after = next_item(browser, batch).json()
    assert after["assignment"] is None and after["reason"] == "departed"
    assert after["ending"] == "departed"
    assert (after["completion_code"], after["completion_url"]) == (None, None)
    assert Assignment.objects.get(pk=held).state == "expired"
    assert Assignment.objects.filter(batch=batch, state="open").count() == 0
    # what they did before stays counted
    assert Label.objects.filter(batch=batch, status="counted").count() == 1
