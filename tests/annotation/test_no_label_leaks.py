"""SPEC.md guarantee 2, second half: a worker never sees another annotator's label.

One worker labels an item with a distinctive comment (and, for ``short_text``, a
distinctive typed answer). A second worker, handed the same item, reads everything the
crowdworker side shows them — the entry page, ``POST /api/v1/work/<slug>/next``, the
rating page ``/work/<slug>/task``, the heartbeat's answers, and the answers to the first
worker's assignment id — and none of it holds the comment, the answer, or any count of
the item's labels (their progress counts their own labels only).

Through the HTTP views with Django's test client, against the real database."""

import json

import pytest
from django.test import Client

from annotation.models import Label
from tests.annotation.kinds.studies import make_study
from tests.factories import make_batch
from tests.staff import staff_client

pytestmark = pytest.mark.django_db

COMMENT = "Qzx-7731-leaky-note: the second answer rambles <b>badly</b>"
MARKER = "Qzx-7731"
TYPED = "Vermilionz"  # a one-word answer no page or prompt would hold by itself
# keys of the worker's JSON that would carry another annotator's labels or their counts
FORBIDDEN_KEY_PARTS = ("count", "label", "comment", "answer", "value", "annotator", "status")

# kind -> (the first worker's value, the second worker's value)
VALUES = {"absolute": (5, 2), "pairwise": (-2, 1), "short_text": (TYPED, "teal")}


def study(kind: str):
    if kind == "short_text":
        return make_study(
            kind, slug="leak-short-text", n_items=1, per_item=3, comment_box="optional"
        )
    return make_batch(kind=kind, slug=f"leak-{kind}", n_items=1, per_item=3, comment_box="optional")


def enter(batch, worker: str) -> tuple[Client, str]:
    """A worker's browser opens the study link and consents; returns the client and the
    entry page's text."""
    client = Client(enforce_csrf_checks=True)
    page = client.get(f"/work/{batch.slug}/", {"worker": worker})
    assert page.status_code == 200, page.content[:300]
    client.post(
        f"/work/{batch.slug}/consent", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    )
    return client, page.content.decode()


def post(client: Client, url: str, body: dict | None = None):
    return client.post(
        url,
        data=json.dumps(body or {}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def keys_of(data, path=""):
    """Every key of a JSON value, with its path."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield f"{path}.{key}", key
            yield from keys_of(value, f"{path}.{key}")
    elif isinstance(data, list):
        for value in data:
            yield from keys_of(value, path)


def assert_no_leak(text: str, where: str):
    assert MARKER not in text, where
    assert TYPED.lower() not in text.lower(), where


def assert_no_label_keys(data: dict, where: str):
    for path, key in keys_of(data):
        assert not any(part in key.lower() for part in FORBIDDEN_KEY_PARTS), (where, path)


@pytest.mark.parametrize("kind", ["absolute", "pairwise", "short_text"])
def test_a_second_worker_never_sees_the_first_workers_label(kind):
    batch = study(kind)
    first_value, second_value = VALUES[kind]
    first, _ = enter(batch, "first")
    lease = post(first, f"/api/v1/work/{batch.slug}/next").json()
    stored = post(
        first,
        f"/api/v1/assignments/{lease['assignment']}/label",
        {"value": first_value, "comment": COMMENT, "duration_ms": 4000},
    )
    assert stored.status_code == 201, stored.content
    label = Label.objects.get(batch=batch)
    assert (label.status, label.comment) == ("counted", COMMENT)  # it is there to leak

    second, entry_page = enter(batch, "second")
    assert_no_leak(entry_page, "entry page")
    answer = post(second, f"/api/v1/work/{batch.slug}/next")
    assert answer.status_code == 200
    body = answer.json()
    assert body["item"]["item_id"] == lease["item"]["item_id"]  # the same item
    assert_no_leak(answer.content.decode(), "next")
    assert_no_label_keys(body, "next")
    assert body["progress"]["done"] == 0  # their own labels, not the item's

    task = second.get(f"/work/{batch.slug}/task")
    assert task.status_code == 200
    assert_no_leak(task.content.decode(), "task page")

    beat = post(second, f"/api/v1/assignments/{body['assignment']}/heartbeat")
    assert beat.status_code == 200
    assert_no_leak(beat.content.decode(), "heartbeat")
    assert_no_label_keys(beat.json(), "heartbeat")

    # the first worker's assignment is not the second's: no heartbeat, no answer, and no
    # "already labelled …" message that would repeat the stored label
    theirs = lease["assignment"]
    for response in (
        post(second, f"/api/v1/assignments/{theirs}/heartbeat"),
        post(second, f"/api/v1/assignments/{theirs}/label", {"value": second_value}),
    ):
        assert response.status_code == 404, response.content
        assert_no_leak(response.content.decode(), "first worker's assignment")
        assert "already" not in response.content.decode()
    assert Label.objects.filter(batch=batch).count() == 1

    # the second worker answers; what they are told afterwards counts only their label
    done = post(second, f"/api/v1/assignments/{body['assignment']}/label", {"value": second_value})
    assert done.status_code == 201 and done.json() == {"status": "counted"}
    after = post(second, f"/api/v1/work/{batch.slug}/next")
    assert after.json()["assignment"] is None
    assert after.json()["progress"]["done"] == 1
    assert_no_leak(after.content.decode(), "next after answering")
    again = second.get(f"/work/{batch.slug}/task")
    assert_no_leak(again.content.decode(), "task page after answering")

    # the control: where labels may be read (a researcher's page of the item), the
    # comment and the typed answer are found by the very same search
    item_page = staff_client("researcher").get(
        f"/manage/{batch.slug}/item/{lease['item']['item_id']}"
    )
    assert item_page.status_code == 200
    assert MARKER in item_page.content.decode()
    if kind == "short_text":
        assert TYPED.lower() in item_page.content.decode().lower()


def test_a_third_worker_is_not_told_how_many_labels_the_item_holds():
    """Two labels already stored on the only item: a newcomer's ``next`` says nothing
    that grows with them (compared with the answer a newcomer got before any label)."""
    batch = make_batch(slug="leak-counts", n_items=1, per_item=4, comment_box="optional")
    answers = []
    for number in range(3):
        client, _ = enter(batch, f"counted-{number}")
        body = post(client, f"/api/v1/work/{batch.slug}/next").json()
        answers.append(body)
        post(
            client,
            f"/api/v1/assignments/{body['assignment']}/label",
            {"value": 3, "comment": f"{MARKER} number {number}"},
        )
    shapes = [
        (sorted(body), sorted(body["progress"].items()), sorted(body["item"])) for body in answers
    ]
    assert shapes[0] == shapes[1] == shapes[2]  # 0, 1 and 2 labels stored: the same answer
    for body in answers:
        assert_no_label_keys(body, "next")
        assert_no_leak(json.dumps(body), "next")
