"""Crowdworker entry page and JSON API through real HTTP requests (Django test client)."""

import json

import pytest
from django.test import Client

from annotation.models import Annotator, Label, Participation
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


def enter(batch, worker="w1", client=None, **params):
    client = client or Client(enforce_csrf_checks=True)
    query = params or {"worker": worker}
    response = client.get(f"/work/{batch.slug}/", query)
    assert response.status_code == 200, response.content
    client.post(
        f"/work/{batch.slug}/consent",
        {"csrfmiddlewaretoken": client.cookies["csrftoken"].value},
    )
    return client


def post_json(client, url, body=None):
    return client.post(
        url,
        data=json.dumps(body or {}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value if "csrftoken" in client.cookies else "",
    )


def next_item(client, batch):
    return post_json(client, f"/api/v1/work/{batch.slug}/next")


def label(client, assignment, value, duration_ms=1200):
    return post_json(
        client,
        f"/api/v1/assignments/{assignment}/label",
        {"value": value, "duration_ms": duration_ms},
    )


def test_full_flow_to_completion_code():
    batch = make_batch(n_items=2, per_item=1, completion_url="https://app.prolific.com/x")
    client = enter(batch, PROLIFIC_PID="p1", STUDY_ID="s", SESSION_ID="x")
    annotator = Annotator.objects.get(platform="prolific", platform_id="p1")
    assert Participation.objects.get(annotator=annotator).entry_params == {
        "STUDY_ID": "s",
        "SESSION_ID": "x",
    }
    seen = []
    for expected_done in range(2):
        response = next_item(client, batch)
        assert response.status_code == 200
        body = response.json()
        assert body["progress"]["done"] == expected_done
        assert set(body["item"]) >= {"item_id", "query", "response"}
        again = next_item(client, batch).json()
        assert again["assignment"] == body["assignment"]
        seen.append(body["item"]["item_id"])
        created = label(client, body["assignment"], 4)
        assert (created.status_code, created.json()) == (201, {"status": "counted"})
    assert sorted(seen) == ["item-0", "item-1"]
    end = next_item(client, batch).json()
    assert end["assignment"] is None
    assert end["completion_code"] == batch.completion_code
    assert end["completion_url"] == "https://app.prolific.com/x"


def test_pairwise_items_carry_both_responses():
    batch = make_batch(kind="pairwise")
    body = next_item(enter(batch), batch).json()
    assert {"response_a", "response_b", "response_a_html", "response_b_html"} <= set(body["item"])
    assert "response" not in body["item"]


def test_label_status_codes():
    batch = make_batch()
    client = enter(batch)
    assignment = next_item(client, batch).json()["assignment"]
    assert label(client, assignment, 9).status_code == 400
    assert label(client, assignment, 9).json()["field"] == "value"
    malformed = post_json(client, f"/api/v1/assignments/{assignment}/label", {"duration_ms": 5})
    assert malformed.status_code == 400 and "value" in malformed.json()["detail"]
    assert label(client, assignment, 2).status_code == 201
    assert label(client, assignment, 2).status_code == 200
    assert label(client, assignment, 2).json() == {"status": "counted"}
    conflict = label(client, assignment, 3)
    assert conflict.status_code == 409 and "detail" in conflict.json()
    # a stable word a client acts on (the detail is in the participant's language)
    assert conflict.json()["code"] == "already_answered"
    assert Label.objects.count() == 1


def test_someone_elses_assignment_and_unknown_id_look_the_same():
    batch = make_batch()
    owner = enter(batch, "owner")
    stranger = enter(batch, "stranger")
    assignment = next_item(owner, batch).json()["assignment"]
    other = label(stranger, assignment, 3)
    unknown = label(stranger, "00000000-0000-0000-0000-000000000000", 3)
    assert other.status_code == unknown.status_code == 404
    assert other.json() == unknown.json()


def test_csrf_header_is_required():
    batch = make_batch()
    client = enter(batch)
    response = client.post(
        f"/api/v1/work/{batch.slug}/next", data="{}", content_type="application/json"
    )
    assert response.status_code == 403


def test_anonymous_client_gets_403_on_the_api():
    batch = make_batch()
    client = Client()
    assert client.post(f"/api/v1/work/{batch.slug}/next").status_code == 403
    assert client.post("/api/v1/assignments/x/label", {"value": 1}).status_code == 403
    assert client.get(f"/work/{batch.slug}/task").status_code == 403


def test_session_for_one_batch_does_not_open_another():
    mine, theirs = make_batch(), make_batch()
    client = enter(mine)
    assert next_item(client, theirs).status_code == 404


def test_non_live_batches_answer_403_pages_and_api():
    batch = make_batch(live=False)
    assert Client().get(f"/work/{batch.slug}/", {"worker": "w"}).status_code == 403
    live = make_batch()
    client = enter(live)
    from annotation.services.batches import change_state

    change_state(live, "paused")
    response = next_item(client, live)
    assert response.status_code == 403
    assert "paused" in response.json()["detail"]
    # a pause passes: the answer says so and when to ask again (the page carries on)
    assert response.json()["state"] == "paused" and response["Retry-After"] == "15"
    change_state(live, "closed")
    closed = next_item(client, live)
    assert closed.status_code == 403 and closed.json()["state"] == "closed"
    assert "Retry-After" not in closed


@pytest.mark.parametrize(
    "params, missing",
    [
        ({}, "worker id"),
        ({"STUDY_ID": "s", "SESSION_ID": "x"}, "PROLIFIC_PID"),
        ({"hitId": "h", "assignmentId": "a"}, "workerId"),
        ({"PROLIFIC_PID": ""}, "PROLIFIC_PID"),
    ],
)
def test_missing_worker_id_answers_400_naming_it(params, missing):
    batch = make_batch()
    response = Client().get(f"/work/{batch.slug}/", params)
    assert response.status_code == 400
    assert missing in response.content.decode()


def test_mturk_preview_shows_instructions_and_hands_out_nothing():
    batch = make_batch()
    response = Client().get(
        f"/work/{batch.slug}/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "h"}
    )
    assert response.status_code == 200
    assert b"preview" in response.content
    assert b"carefully" in response.content  # the Markdown instructions
    assert not Annotator.objects.exists()


def test_unknown_batch_is_a_404_page():
    assert Client().get("/work/no-such-batch/", {"worker": "w"}).status_code == 404


def test_script_in_a_response_is_inert():
    batch = make_batch()
    item = batch.items.first()
    item.response.text = (
        'Hi <script>alert(1)</script> <img src=x onerror="alert(2)"> [c](javascript:alert(3))'
    )
    item.response.save()
    body = next_item(enter(batch), batch).json()
    html = body["item"]["response_html"]
    assert (
        "<script" not in html and "<img" not in html and "javascript:" not in html.split("[c]")[0]
    )
    assert 'href="javascript' not in html
    assert "&lt;script&gt;" in html


def test_mturk_worker_gets_the_externalsubmit_target_at_the_end():
    # the batch also takes Prolific links: its completion link is Prolific's, not theirs
    batch = make_batch(n_items=1, per_item=1)
    batch.completion_url = "https://app.prolific.com/submissions/complete?cc=DONE1"
    batch.full_code = "FULL9"
    batch.save(update_fields=["completion_url", "full_code"])
    client = enter(
        batch,
        workerId="W1",
        assignmentId="A1",
        hitId="H1",
        turkSubmitTo="https://workersandbox.mturk.com",
    )
    assignment = next_item(client, batch).json()["assignment"]
    label(client, assignment, 3)
    end = next_item(client, batch).json()
    assert end["mturk_submit"] == {
        "url": "https://workersandbox.mturk.com/mturk/externalSubmit",
        "assignmentId": "A1",
    }
    assert end["ending"] == "completed" and end["completion_url"] is None
    # a second MTurk worker finds the batch full: return the HIT, no code that pays nothing
    late = Client(enforce_csrf_checks=True)
    page = late.get(f"/work/{batch.slug}/", {"workerId": "W9", "assignmentId": "A9", "hitId": "H1"})
    assert "FULL9" not in page.content.decode() and "return the HIT" in page.content.decode()
    from annotation.services.admission import completion_for_newcomer

    full = completion_for_newcomer(batch, "mturk")
    assert (full.code, full.url, full.return_study) == (None, None, True)
    assert completion_for_newcomer(batch, "prolific").code == "FULL9"


def test_untrusted_turk_submit_host_is_ignored_and_prolific_gets_none():
    batch = make_batch(n_items=1, per_item=2)
    evil = enter(
        batch, workerId="W2", assignmentId="A2", hitId="H", turkSubmitTo="https://x.example"
    )
    label(evil, next_item(evil, batch).json()["assignment"], 3)
    assert next_item(evil, batch).json()["mturk_submit"] is None
    prolific = enter(batch, PROLIFIC_PID="p9", STUDY_ID="s", SESSION_ID="x")
    label(prolific, next_item(prolific, batch).json()["assignment"], 3)
    assert next_item(prolific, batch).json()["mturk_submit"] is None


def test_single_newlines_in_a_response_stay_line_breaks():
    batch = make_batch()
    item = batch.items.first()
    item.response.text = "Quiet white arrives at night,\nand morning wakes the world."
    item.response.save()
    html = next_item(enter(batch), batch).json()["item"]["response_html"]
    assert "night,<br" in html


def test_the_rating_calls_take_json_and_answer_json_whatever_is_asked():
    batch = make_batch(n_items=2, per_item=1)
    client = enter(batch, worker="formy")
    token = client.cookies["csrftoken"].value
    assignment = next_item(client, batch).json()["assignment"]
    # a body that is not JSON is not read: a form's fields are missing (400 naming the
    # field), another type is refused (415); said in JSON, and nothing stored
    form = client.post(
        f"/api/v1/assignments/{assignment}/label",
        {"value": "3", "duration_ms": "900"},
        HTTP_X_CSRFTOKEN=token,
    )
    text = client.post(
        f"/api/v1/assignments/{assignment}/label",
        data="value=3",
        content_type="text/plain",
        HTTP_X_CSRFTOKEN=token,
    )
    assert (form.status_code, form.json()["field"]) == (400, "value")
    assert text.status_code == 415, text.content
    for refused in (form, text):
        assert refused["Content-Type"].startswith("application/json")
        assert refused.json()["detail"]
    assert not Label.objects.filter(batch=batch).exists()
    # an Accept header asking for HTML still gets the JSON answer
    answered = client.post(
        f"/api/v1/assignments/{assignment}/label",
        data=json.dumps({"value": 3, "duration_ms": 900}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
        HTTP_ACCEPT="text/html",
    )
    assert answered.status_code == 201
    assert answered.json() == {"status": "counted"}


def test_duration_ms_is_a_whole_non_negative_number_of_milliseconds():
    batch = make_batch(n_items=1, per_item=1)
    client = enter(batch, worker="timer")
    token = client.cookies["csrftoken"].value
    assignment = next_item(client, batch).json()["assignment"]

    def send(raw_duration: str):
        return client.post(
            f"/api/v1/assignments/{assignment}/label",
            data='{"value": 3, "duration_ms": ' + raw_duration + "}",
            content_type="application/json",
            HTTP_X_CSRFTOKEN=token,
        )

    # 1e309 is valid JSON that parses as infinity; each is refused alike, naming the field
    for raw in ("2.5", "1e309", "-5", '"x"', "true"):
        refused = send(raw)
        assert (refused.status_code, refused.json().get("field")) == (400, "duration_ms"), raw
    for not_json in ("NaN", "Infinity"):  # refused by the parser
        assert send(not_json).status_code == 400
    assert not Label.objects.filter(batch=batch).exists()
    assert send("1500.0").status_code == 201  # a whole number written as a float
    assert Label.objects.get(batch=batch).duration_ms == 1500


@pytest.mark.parametrize("instructions", ["Rate **carefully**.", ""])
def test_the_instructions_are_shown_only_when_the_batch_has_some(instructions):
    batch = make_batch(n_items=1, instructions=instructions)
    client = Client()
    entry = client.get(f"/work/{batch.slug}/", {"worker": "reader"}).content.decode()
    client.post(f"/work/{batch.slug}/consent")
    task = client.get(f"/work/{batch.slug}/task").content.decode()
    for page in (entry, task):
        assert ('id="instructions-text"' in page) == bool(instructions)
        assert ("carefully" in page) == bool(instructions)
    assert ("<h2>Instructions</h2>" in entry) == bool(instructions)
