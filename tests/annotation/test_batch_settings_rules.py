"""One rule for a batch's settings, whatever the way in: service, command, API, page."""

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Batch
from annotation.services.batches import create_batch, update_batch
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.errors import InvalidInput
from tests.factories import make_batch, make_participant
from tests.staff import token_client

pytestmark = pytest.mark.django_db

BAD_SETTINGS = [
    ({"completion_url": "javascript:alert(1)"}, "completion_url"),
    ({"completion_url": "data:text/html,<script>alert(1)</script>"}, "completion_url"),
    ({"completion_url": "ftp://files.example.org/x"}, "completion_url"),
    ({"completion_url": "https://example.org/" + "x" * 500}, "completion_url"),
    ({"title": "t" * 301}, "title"),
    ({"title": "a\x00b"}, "title"),
    ({"completion_code": "c" * 101}, "completion_code"),
    ({"completion_code": "ab\ncd"}, "completion_code"),
    ({"instructions": "fine\x07bell"}, "instructions"),
    ({"lease_seconds": 2**31}, "lease_seconds"),
    ({"quota_per_annotator": 0}, "quota_per_annotator"),
    ({"scale_labels": {"9": "nine"}}, "scale_labels.9"),
    ({"scale_labels": {"1": "x" * 101}}, "scale_labels.1"),
]


@pytest.mark.parametrize("values, field", BAD_SETTINGS)
def test_create_and_update_refuse_the_same_values(values, field):
    with pytest.raises(InvalidInput) as refused:
        create_batch(slug="new", kind="absolute", **values)
    assert refused.value.field == field
    batch = make_batch(n_items=1)
    with pytest.raises(InvalidInput) as refused:
        update_batch(batch, values)
    assert refused.value.field == field


def test_good_values_pass():
    batch = create_batch(
        slug="fine",
        kind="absolute",
        title="A study",
        instructions="Line one\n\tLine two\r\n",
        completion_url="https://app.prolific.com/submissions/complete?cc=ABC",
        scale_labels={"1": "awful", "5": "great"},
    )
    assert batch.completion_url.startswith("https://")
    update_batch(batch, {"completion_url": "http://example.org/done"})


def test_the_command_refuses_a_javascript_completion_url():
    with pytest.raises(CommandError, match="completion_url: .*http:// or https:// only"):
        call_command(
            "create_batch", "cli", "--kind", "absolute", "--completion-url", "javascript:alert(1)"
        )
    assert not Batch.objects.filter(slug="cli").exists()


def test_the_api_refuses_it_too():
    client = token_client("admin")
    response = client.post(
        "/api/v1/batches/",
        {"slug": "api", "kind": "absolute", "title": "t", "completion_url": "ftp://x.org/y"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "completion_url" in response.content.decode()
    batch = make_batch(n_items=1)
    response = client.patch(
        f"/api/v1/batches/{batch.slug}/",
        {"title": "ok", "scale_labels": {"7": "seven"}},
        content_type="application/json",
    )
    assert response.status_code == 400 and response.json()["field"] == "scale_labels.7"


def test_the_api_refuses_what_it_would_otherwise_drop():
    # a misspelt setting, or a state change sent to the settings, answered 200 and did
    # nothing; now 400 naming the key, and nothing changes
    batch = make_batch(n_items=1, live=False)
    client = token_client("admin")
    url = f"/api/v1/batches/{batch.slug}/"

    def patch(body):
        return client.patch(url, body, content_type="application/json")

    for body, field, words in [
        ({"bogus": 1}, "bogus", "is not a batch setting"),
        ({"annotations_per_itme": 5}, "annotations_per_itme", "is not a batch setting"),
        ({"state": "live"}, "state", "POST /api/v1/batches/<slug>/state"),
        ({"created_at": "2020-01-01T00:00:00Z"}, "created_at", "is set by the platform"),
    ]:
        answer = patch(body)
        assert answer.status_code == 400, body
        assert answer.json()["field"] == field and words in answer.json()["detail"]
    batch.refresh_from_db()
    assert batch.state == "draft"
    whole = client.get(url).json()  # read, change one setting, send it all back: fine
    assert patch({**whole, "title": "Renamed"}).status_code == 200
    created = client.post(
        "/api/v1/batches/",
        {"slug": "starts-live", "kind": "absolute", "title": "x", "state": "live"},
        content_type="application/json",
    )
    assert created.status_code == 400 and created.json()["field"] == "state"
    assert not Batch.objects.filter(slug="starts-live").exists()
    as_a_draft = {"slug": "a-draft", "kind": "absolute", "title": "x", "state": "draft"}
    assert (
        client.post("/api/v1/batches/", as_a_draft, content_type="application/json").status_code
        == 201
    )


def test_serializer_errors_come_in_the_shape_of_every_api_error():
    client = token_client("admin")
    answer = client.post(
        "/api/v1/batches/",
        {"slug": "shape", "kind": "absolute", "title": "t" * 301, "annotations_per_item": "x"},
        content_type="application/json",
    )
    body = answer.json()
    assert answer.status_code == 400
    assert body["field"] in ("title", "annotations_per_item")
    assert body["detail"].startswith(body["field"] + ": ")
    assert {problem.split(":")[0] for problem in body["problems"]} == {
        "title",
        "annotations_per_item",
    }


def test_an_amount_is_quoted_as_written():
    answer = token_client("admin").post(
        "/api/v1/batches/",
        {"slug": "paid", "kind": "absolute", "title": "x", "reward_per_participant": "-2.50"},
        content_type="application/json",
    )
    assert answer.status_code == 400 and answer.json()["field"] == "reward_per_participant"
    assert "got -2.50" in answer.json()["detail"] and "Decimal" not in answer.json()["detail"]


def test_a_prolific_study_id_is_asked_for_only_where_invitations_are_required():
    # the refusal named invitation-only batches on batches that were not
    plain = make_batch(n_items=1, live=False)
    plain = update_batch(plain, {"accept_platforms": ["prolific"]})
    assert plain.accept_platforms == ["prolific"]
    with pytest.raises(InvalidInput) as refused:
        update_batch(plain, {"invitations_required": True})
    assert refused.value.field == "prolific_study_id"
    closed = update_batch(
        plain, {"invitations_required": True, "prolific_study_id": "60ffe5c8371090c7041d43f8"}
    )
    assert closed.invitations_required and closed.accept_platforms == ["prolific"]


def test_a_new_batch_without_a_title_takes_its_slug_on_the_api_as_on_the_page():
    client = token_client("admin")
    for slug, body in [("untitled", {"title": ""}), ("no-title", {})]:
        made = client.post(
            "/api/v1/batches/", {"slug": slug, "kind": "absolute", **body},
            content_type="application/json",
        )  # fmt: skip
        assert made.status_code == 201 and made.json()["title"] == slug
    renamed = client.patch(
        "/api/v1/batches/untitled/", {"title": " "}, content_type="application/json"
    )
    assert renamed.status_code == 400 and renamed.json()["field"] == "title"


def test_a_conflict_names_its_field_as_a_refused_value_does():
    batch = make_batch(n_items=1, per_item=3)
    for _ in range(2):
        participation = make_participant(batch)
        outcome = lease_next_item(batch, participation)
        submit_label(participation.annotator, outcome.assignment.pk, 4, 1500)
    client = token_client("admin")
    lowered = client.patch(
        f"/api/v1/batches/{batch.slug}/",
        {"annotations_per_item": 1},
        content_type="application/json",
    )
    assert lowered.status_code == 409
    assert lowered.json()["field"] == "annotations_per_item"
    assert "N cannot go below 2" in lowered.json()["detail"]
    taken = client.post(
        "/api/v1/batches/",
        {"slug": batch.slug, "kind": "absolute", "title": "again"},
        content_type="application/json",
    )
    assert taken.status_code == 409 and taken.json()["field"] == "slug"
    # a message that does not start by naming a field names none
    missing = client.get("/api/v1/batches/no-such-batch/")
    assert missing.status_code == 404 and "field" not in missing.json()
