"""Endings a crowd platform understands (SPEC.md, "Admission and leaving"): completed,
screened out, full and a plain thank you, each with its own wording, code and address;
a button only where there is an address; nobody from an invitation link is asked to
return a study. Through real HTTP requests, on the entry page and the worker API."""

import re

import pytest
from django.test import Client

from annotation.models import Participation
from annotation.services.admission import Completion, Ending, completion
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db

PLATFORM_LINKS = {
    "prolific": {"PROLIFIC_PID": "p-1", "STUDY_ID": "s", "SESSION_ID": "x"},
    "mturk": {"workerId": "m-1", "assignmentId": "A1", "hitId": "H1"},
    "generic": {"worker": "g-1"},
}


def visible_text(html: str) -> str:
    """The page's words, without its tags (and so without its ids and classes)."""
    return re.sub(r"<[^>]+>", " ", html)


def screen_out(batch, platform):
    params = PLATFORM_LINKS[platform]
    client = Client()
    client.get(f"/work/{batch.slug}/", params)
    Participation.objects.filter(batch=batch).update(status="excluded")
    return client, client.get(f"/work/{batch.slug}/", params)


@pytest.mark.parametrize("platform", ["prolific", "mturk"])
def test_a_screened_out_worker_reads_screened_out_never_completion(platform):
    batch = make_batch(
        n_items=2, screen_out_code="SCREEN42", screen_out_url="https://app.example.org/so"
    )
    _, page = screen_out(batch, platform)
    html = page.content.decode()
    assert "screened out" in html
    assert "completion" not in visible_text(html).lower()
    assert "SCREEN42" in html and batch.completion_code not in html
    assert 'href="https://app.example.org/so"' in html


def test_a_screened_out_worker_without_a_code_is_asked_to_return_and_gets_no_button():
    batch = make_batch(n_items=2)
    _, page = screen_out(batch, "prolific")
    html = page.content.decode()
    assert "return the study" in html
    assert "completion-link" not in html and 'href="#"' not in html


def test_an_invited_worker_is_never_asked_to_return_a_study():
    batch = make_batch(n_items=2, screen_out_code="SCREEN42")
    _, page = screen_out(batch, "generic")
    html = page.content.decode()
    assert "return the" not in html and "screened out" in html


def test_the_worker_api_names_the_ending_and_never_offers_mturk_submit_to_the_screened_out():
    batch = make_batch(n_items=2, screen_out_code="SCREEN42", screen_out_url="https://x.org/s")
    params = {**PLATFORM_LINKS["mturk"], "turkSubmitTo": "https://www.mturk.com"}
    client = Client()
    client.get(f"/work/{batch.slug}/", params)
    Participation.objects.filter(batch=batch).update(status="excluded")
    body = client.post(
        f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    ).json()
    assert body["reason"] == "excluded" and body["ending"] == "screened_out"
    assert body["completion_code"] == "SCREEN42"
    assert body["completion_url"] == "https://x.org/s"
    assert body["mturk_submit"] is None


def test_each_ending_has_its_code_and_address():
    batch = make_batch(
        n_items=1,
        per_item=1,
        completion_url="https://x.org/done",
        full_code="FULL1",
        screen_out_code="SO1",
        screen_out_url="https://x.org/so",
    )
    worker = make_participant(batch, "w", platform="prolific")
    assert completion(batch, worker, 1) == Completion(
        Ending.COMPLETED, batch.completion_code, "https://x.org/done", False
    )
    nothing = completion(batch, worker, 0)
    # the full code, without the completion URL: that address carries the completion code
    assert (nothing.ending, nothing.code, nothing.url) == (Ending.FULL, "FULL1", None)
    worker.status = "excluded"
    out = completion(batch, worker, 3)
    assert (out.ending, out.code, out.url) == (Ending.SCREENED_OUT, "SO1", "https://x.org/so")
    invited = make_participant(batch, "g", platform="generic")
    batch.completion_url = ""
    assert completion(batch, invited, 2).ending == Ending.THANKS


def test_the_rating_page_holds_no_link_to_nowhere():
    batch = make_batch(n_items=1, per_item=1)
    client = Client()
    client.get(f"/work/{batch.slug}/", PLATFORM_LINKS["prolific"])
    html = client.get(f"/work/{batch.slug}/task").content.decode()
    assert 'href="#"' not in html
