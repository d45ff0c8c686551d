"""Hostile input answers 4xx with a message, never a 500 (README "Deployment", limits).

Nested JSON, control characters in entry links, form fields and JSON strings, and bodies
over the size caps, each through the real middleware stack (Django test client).
"""

import io
import json
import logging
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Annotator, Participation
from tests.annotation.test_worker_api import enter, next_item, post_json
from tests.factories import make_batch

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"
NESTED = "[" * 3000 + "]" * 3000


@pytest.fixture
def no_server_errors(caplog):
    """Fails the test if anything was logged at ERROR (a traceback per request)."""
    caplog.set_level(logging.WARNING)
    yield
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]


def _post_raw(client, url, body: str):
    return client.post(
        url,
        data=body,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def test_deeply_nested_json_is_400_json_on_next_and_label(no_server_errors):
    batch = make_batch(n_items=2, per_item=1)
    client = enter(batch)
    assignment = next_item(client, batch).json()["assignment"]
    for url in (f"/api/v1/work/{batch.slug}/next", f"/api/v1/assignments/{assignment}/label"):
        for _ in range(20):
            response = _post_raw(client, url, NESTED)
            assert response.status_code == 400, response.content[:200]
            assert response["Content-Type"] == "application/json"
            body = response.json()
            assert body["field"] == "body" and "nested deeper than 32" in body["detail"]
    # the worker's real work is unaffected
    assert post_json(client, f"/api/v1/assignments/{assignment}/label", {"value": 3}).status_code


def test_the_api_parser_refuses_deep_json_by_itself(rf, settings):
    from rest_framework.exceptions import ParseError

    from core.api.parsers import JSONParser

    with pytest.raises(ParseError, match="deeper than 32"):
        JSONParser().parse(io.BytesIO(NESTED.encode()))
    settings.JSON_MAX_DEPTH = 10**9  # the scan lets it through: json's own recursion fails
    with pytest.raises(ParseError, match="too deeply"):
        JSONParser().parse(io.BytesIO(("[" * 100_000 + "]" * 100_000).encode()))
    assert JSONParser().parse(io.BytesIO(b'{"a": [[1]], "b": "[[[["}')) == {
        "a": [[1]],
        "b": "[[[[",
    }


@pytest.mark.parametrize(
    "query, field",
    [
        ("worker=a%00b", "worker"),
        ("workerId=a%00b&assignmentId=x&hitId=h", "workerId"),
        ("workerId=w&assignmentId=a%00b&hitId=h", "assignmentId"),
        ("PROLIFIC_PID=p&STUDY_ID=s%00t&SESSION_ID=x", "STUDY_ID"),
        ("PROLIFIC_PID=p&STUDY_ID=s&SESSION_ID=%01", "SESSION_ID"),
    ],
)
def test_control_characters_in_the_entry_link_are_400_naming_the_parameter(
    query, field, no_server_errors
):
    batch = make_batch(n_items=1)
    response = Client().get(f"/work/{batch.slug}/?{query}")
    assert response.status_code == 400
    text = response.content.decode()
    assert "<html" in text and f"{field}: contains the control character" in text
    assert not Annotator.objects.exists() and not Participation.objects.exists()


def test_entry_services_refuse_control_characters_themselves():
    from annotation.services.annotators import identify_annotator, join_batch
    from core.errors import InvalidInput

    batch = make_batch(n_items=1)
    with pytest.raises(InvalidInput) as refused:
        identify_annotator("generic", "a\x00b")
    assert refused.value.field == "platform_id"
    annotator = identify_annotator("generic", "fine")
    with pytest.raises(InvalidInput) as refused:
        join_batch(batch, annotator, {"STUDY_ID": "s\x00"})
    assert refused.value.field == "STUDY_ID"


def test_a_nul_in_a_json_string_is_400_naming_the_field(no_server_errors):
    batch = make_batch(n_items=1)
    client = enter(batch)
    assignment = next_item(client, batch).json()["assignment"]
    response = post_json(client, f"/api/v1/assignments/{assignment}/label", {"value": "a\x00b"})
    assert response.status_code == 400
    assert response.json() == {
        "detail": "value: contains the control character U+0000 at position 2; remove it",
        "field": "value",
    }


@pytest.fixture
def admin_user():
    user = User.objects.create_user("boss", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="admin"))
    return user


def test_control_characters_in_a_staff_form_are_400(admin_user, no_server_errors):
    client = Client()
    client.force_login(admin_user)
    form = {"slug": "s", "kind": "absolute", "title": "bad\x01title", "annotations_per_item": 3}
    for body in ({"data": form}, {"data": urlencode(form), "content_type": FORM}):
        response = client.post("/manage/new", **body)
        assert response.status_code == 400
        assert "title: contains the control character U+0001" in response.content.decode()
    # line breaks and tabs are text, in the Markdown fields
    form.update(title="fine", instructions="line one\r\n\tline two", lease_seconds=60)
    response = client.post("/manage/new", data=urlencode(form), content_type=FORM)
    assert response.status_code != 400 or "control character" not in response.content.decode()


def test_oversized_uploads_and_bodies_are_413_with_the_limit(admin_user, settings):
    settings.UPLOAD_MAX_BYTES = 10_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 5_000
    batch = make_batch(n_items=0, live=False)
    token = Token.objects.create(user=admin_user).key
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    big = io.BytesIO(b"x" * 20_000)
    big.name = "items.jsonl"
    response = api.post(f"/api/v1/batches/{batch.slug}/items", {"file": big})
    assert response.status_code == 413
    assert "at most 10,000 bytes" in response.json()["detail"]
    assert "UPLOAD_MAX_BYTES" in response.json()["detail"]
    response = api.post(
        "/api/v1/batches/",
        data=json.dumps({"slug": "x", "kind": "absolute", "instructions": "y" * 6000}),
        content_type="application/json",
    )
    assert response.status_code == 413 and "REQUEST_MAX_BYTES" in response.json()["detail"]
    # the staff page answers with a page that says the same
    page = Client()
    page.force_login(admin_user)
    big.seek(0)
    response = page.post(f"/manage/{batch.slug}/items", {"file": big})
    assert response.status_code == 413
    assert "at most 10,000 bytes" in response.content.decode()
    assert not batch.items.exists()
