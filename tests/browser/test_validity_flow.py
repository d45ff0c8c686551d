"""The measurement-validity flow in Chromium: a worker answers the background
questionnaire, meets an attention check, keeps a lease alive through heartbeats past the
base lease; a late arrival sees "study full" before any consent page."""

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from annotation.models import Assignment, Item, Label, Participation
from tests.factories import make_batch, make_participant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTIONS = [
    {"id": "english", "text": "Is English your first language?", "type": "choice",
     "options": ["yes", "no"]},
    {"id": "age", "text": "Your age in years", "type": "number", "min": 18, "max": 99},
]  # fmt: skip


def test_questionnaire_check_and_heartbeat(page: Page, live_server):
    batch = make_batch(
        n_items=4, per_item=1, lease_seconds=3, max_lease_seconds=60, check_every=1,
        questionnaire=QUESTIONS, completion_url="https://example.org/done",
    )  # fmt: skip
    batch.consent_text = "I agree to take part in this study."
    batch.save()
    check = Item.objects.filter(batch=batch).order_by("position").first()
    Item.objects.filter(pk=check.pk).update(is_check=True, gold=[5], target=0)

    page.goto(f"{live_server.url}/work/{batch.slug}/?PROLIFIC_PID=pq&STUDY_ID=s&SESSION_ID=x")
    expect(page.get_by_text("I agree to take part in this study.")).to_be_visible()
    page.get_by_role("button", name=re.compile("I agree")).click()
    expect(page).to_have_url(re.compile(r"/questionnaire$"))
    # a wrong answer is explained next to its question
    page.get_by_label("no").check()
    page.get_by_label("Your age in years").fill("12")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator(".field-problem")).to_contain_text("between 18 and 99")
    page.get_by_label("Your age in years").fill("34")
    page.get_by_role("button", name="Continue").click()
    expect(page).to_have_url(re.compile(r"/task$"))
    expect(page.locator("#rating")).to_be_visible()
    participation = Participation.objects.get(annotator__platform_id="pq")
    assert participation.questionnaire_answers == {"english": "no", "age": 34}

    # the first item: kept open past the 3 s base lease by the page's heartbeat
    first = Assignment.objects.get(annotator=participation.annotator, state="open")
    time.sleep(4.5)
    first.refresh_from_db()
    # extended by heartbeats beyond leased_at + 3 s, and still in the future
    assert first.expires_at > first.leased_at + timedelta(seconds=4), first.expires_at
    assert first.expires_at > timezone.now(), "the heartbeat should have kept the lease open"
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    # then the attention check (indistinguishable on the page), then the rest
    for _ in range(4):
        expect(page.locator("#saved")).to_be_attached()
        if not page.locator("#rating").is_visible():
            break
        page.keyboard.press("5")
        page.keyboard.press("Enter")
        page.wait_for_timeout(400)
    expect(page.locator("#completion-code")).to_have_text(batch.completion_code)
    labels = Label.objects.filter(annotator=participation.annotator)
    assert labels.filter(status="check", check_passed=True).count() == 1
    assert labels.filter(status="counted").count() == 3
    assert Label.objects.get(assignment=first).status == "counted"


def test_a_late_arrival_sees_study_full_before_consent(page: Page, live_server):
    batch = make_batch(n_items=1, per_item=1)
    early = make_participant(batch, "early")
    from annotation.services.labelling import submit_label
    from annotation.services.leasing import lease_next_item

    submit_label(early.annotator, lease_next_item(batch, early).assignment.pk, 3)
    batch.consent_text = "I agree to take part."
    batch.save()
    page.goto(f"{live_server.url}/work/{batch.slug}/?PROLIFIC_PID=late&STUDY_ID=s&SESSION_ID=x")
    expect(page.get_by_role("heading", name="This study is full")).to_be_visible()
    expect(page.locator("#return-study")).to_contain_text("return the study")
    assert page.locator("#start").count() == 0
    assert "I agree to take part." not in page.content()
    assert batch.completion_code not in page.content()
