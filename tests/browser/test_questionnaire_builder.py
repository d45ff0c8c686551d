"""The questionnaire builder on the batch form, in Chromium: questions added, typed,
moved and removed with ordinary fields, saved as the batch's questionnaire; the same
questions on the edit page; YAML typed as text still accepted; axe-clean."""

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Batch
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.staff_login import log_in
from tests.factories import make_batch
from tests.staff import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _question(page: Page, number: int):
    return page.locator(".question-editor").nth(number - 1)


def test_questions_built_on_the_form_become_the_batchs_questionnaire(page: Page, live_server):
    log_in(page, live_server, staff_user("admin"))
    page.goto(f"{live_server.url}/manage/new")
    page.get_by_label("Slug").fill("built")
    page.get_by_label("Kind").select_option("absolute")
    page.get_by_label("Title").fill("Built questionnaire")
    page.get_by_label("Instructions").fill("Rate.")
    expect(page.locator(".builder-note")).to_contain_text("No questions")
    page.get_by_role("button", name="Add a question").click()
    first = _question(page, 1)
    expect(first.get_by_label("Question", exact=True)).to_be_focused()
    first.get_by_label("Question", exact=True).fill("Is English your first language?")
    first.get_by_label("Id (stored with each answer)").fill("english")
    first.get_by_label("Options, one per line").fill("yes\nno\n")
    page.get_by_role("button", name="Add a question").click()
    second = _question(page, 2)
    second.get_by_label("Question", exact=True).fill("Your age in years")
    second.get_by_label("Id (stored with each answer)").fill("age")
    second.get_by_label("Answer", exact=True).select_option("number")
    second.get_by_label("At least").fill("18")
    page.get_by_role("button", name="Add a question").click()
    third = _question(page, 3)
    third.get_by_label("Question", exact=True).fill("Anything else?")
    third.get_by_label("Answer", exact=True).select_option("text")
    third.get_by_label("Required").uncheck()
    third.get_by_role("button", name="Move up").click()  # now second
    assert_no_axe_violations(page, name="new batch with the questionnaire builder")
    page.get_by_role("button", name="Create batch").click()
    expect(page).to_have_url(f"{live_server.url}/manage/built/")
    assert Batch.objects.get(slug="built").questionnaire == [
        {"id": "english", "text": "Is English your first language?", "type": "choice",
         "required": True, "options": ["yes", "no"]},
        {"id": "q3", "text": "Anything else?", "type": "text", "required": False},
        {"id": "age", "text": "Your age in years", "type": "number", "required": True,
         "min": 18},
    ]  # fmt: skip

    # the edit page shows them in the builder; removing one is saved
    page.goto(f"{live_server.url}/manage/built/edit")
    expect(page.locator(".question-editor")).to_have_count(3)
    _question(page, 2).get_by_role("button", name="Remove").click()
    expect(page.locator(".question-editor")).to_have_count(2)
    page.get_by_role("button", name="Save changes").click()
    expect(page).to_have_url(f"{live_server.url}/manage/built/")
    assert [q["id"] for q in Batch.objects.get(slug="built").questionnaire] == ["english", "age"]


def test_yaml_typed_as_text_is_kept_and_the_builder_steps_aside(page: Page, live_server):
    batch = make_batch(live=False, slug="yaml-q")
    log_in(page, live_server, staff_user("admin"))
    page.goto(f"{live_server.url}/manage/{batch.slug}/edit")
    page.locator(".questionnaire-source summary").click()
    page.locator("#id_questionnaire").fill(
        "- id: field\n  text: Your field of work\n  type: text\n"
    )
    expect(page.locator(".questionnaire-builder")).to_be_hidden()
    page.get_by_role("button", name="Save changes").click()
    expect(page).to_have_url(f"{live_server.url}/manage/{batch.slug}/")
    batch.refresh_from_db()
    assert batch.questionnaire == [
        {"id": "field", "text": "Your field of work", "type": "text", "required": True}
    ]
