"""The ``short_text`` and ``similarity`` kinds in a real Chromium, keyboard only: type a
word and press Enter; press a key 1–4 and Enter. The labels are read back from the
database; the page's own limits on a typed answer are checked as a worker meets them.

Screenshots go to ``test-artifacts/`` (gitignored).
"""

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotator, Label
from annotation.services.batches import change_state
from tests.annotation.kinds.studies import make_study
from tests.browser.conftest import PHONE, WIDE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECT_TIMEOUT_MS = 5_000

DONE_URL = "https://app.prolific.com/submissions/complete?cc=KINDS"


def enter_study(page: Page, live_server, batch, worker: str) -> None:
    """Open the invitation link, start with Enter on the start button, wait for an item."""
    page.goto(f"{live_server.url}/work/{batch.slug}/?worker={worker}")
    page.locator("#start").press("Enter")
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    expect(page.locator("#rating")).to_be_visible()


def submit_with_enter(page: Page) -> None:
    """Press Enter and wait until the answer was acknowledged and the next view is shown."""
    before = page.locator("#progress-text").text_content()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(before) => document.getElementById('progress-text').textContent !== before",
        arg=before,
    )


def labels_of(worker: str) -> list[Label]:
    annotator = Annotator.objects.get(platform="generic", platform_id=worker)
    return list(Label.objects.filter(annotator=annotator).order_by("submitted_at", "pk"))


def test_short_text_typed_answers_by_keyboard(page: Page, live_server, artifacts):
    batch = make_study(
        "short_text", slug="browser-short-text", n_items=2, per_item=1, completion_url=DONE_URL
    )
    enter_study(page, live_server, batch, "typist")
    field, problem, submit = (
        page.locator("#answer"),
        page.locator("#answer-problem"),
        page.locator("#submit"),
    )
    expect(field).to_be_focused()
    # named once, by the question (a screen reader said "Your answer" twice before)
    expect(field).to_have_accessible_name("Your answer")
    expect(page.locator("label[for=answer]")).to_have_count(0)
    expect(page.locator("#query")).to_contain_text("Reply with one word only.")
    expect(page.locator("input[name=value]")).to_have_count(0)

    # Digits are text here, not shortcuts.
    page.keyboard.type("42")
    expect(field).to_have_value("42")
    expect(submit).to_be_enabled()
    field.fill("")
    expect(submit).to_be_disabled()

    # Too many words: explained under the field, and Enter sends nothing.
    page.keyboard.type("light blue")
    expect(problem).to_be_visible()
    expect(problem).to_have_text("Please answer with one word (you typed 2).")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(submit).to_be_disabled()
    page.keyboard.press("Enter")
    page.wait_for_timeout(200)
    assert not Label.objects.exists()
    page.screenshot(path=artifacts / "short-text-problem.png", full_page=True)

    # Too many characters, counted as the server counts them.
    field.fill("")
    page.keyboard.type("a" * 41)
    expect(problem).to_have_text("Please use at most 40 characters (you typed 41).")
    # 40 emoji are 40 characters (80 UTF-16 units): a valid answer is never held back.
    field.fill("🌈" * 40)
    expect(problem).to_be_hidden()
    expect(submit).to_be_enabled()

    field.fill("")
    page.keyboard.type("Blue.")
    expect(problem).to_be_hidden()
    submit_with_enter(page)
    expect(page.locator("#progress-text")).to_have_text("1 / 2 done")
    expect(field).to_have_value("")
    expect(field).to_be_focused()

    page.keyboard.type("Soufflé")  # no answer under the census rule: a counted failed cell
    submit_with_enter(page)
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(batch.completion_code)

    stored = [(label.text, label.answer, label.status) for label in labels_of("typist")]
    assert stored == [("Blue.", "blue", "counted"), ("Soufflé", "", "counted")]


def test_short_text_limits_follow_the_batch_settings(page: Page, live_server):
    batch = make_study(
        "short_text",
        slug="browser-short-words",
        n_items=1,
        per_item=1,
        kind_settings={"max_words": 2, "max_chars": 12, "normaliser": "lowercase"},
    )
    enter_study(page, live_server, batch, "two-words")
    expect(page.locator("#answer-hint")).to_have_text("At most 2 words, at most 12 characters.")
    page.keyboard.type("New York City")
    expect(page.locator("#answer-problem")).to_have_text(
        "Please use at most 2 words (you typed 3)."
    )
    page.locator("#answer").fill("")
    page.keyboard.type("New York!")
    submit_with_enter(page)
    expect(page.locator("#done")).to_be_visible()
    (label,) = labels_of("two-words")
    assert (label.text, label.answer) == ("New York!", "new york")


def test_similarity_keys_1_to_4_and_layout(page: Page, live_server, artifacts):
    batch = make_study(
        "similarity", slug="browser-similarity", n_items=2, per_item=1, completion_url=DONE_URL
    )
    enter_study(page, live_server, batch, "judge")
    expect(page.locator(".choice-text")).to_have_text(
        ["Not similar at all", "Somewhat similar", "Very similar", "Essentially the same"]
    )
    expect(page.locator(".pair h2")).to_have_text(["Reference answer", "Candidate answer"])

    reference, candidate = page.locator("#reference"), page.locator("#candidate")
    box_r, box_c = reference.bounding_box(), candidate.bounding_box()
    assert abs(box_r["y"] - box_c["y"]) < 1, (box_r, box_c)  # side by side
    assert box_c["x"] > box_r["x"] + box_r["width"] - 1, (box_r, box_c)
    page.screenshot(path=artifacts / "similarity-wide.png", full_page=True)
    page.set_viewport_size(PHONE)
    box_r, box_c = reference.bounding_box(), candidate.bounding_box()
    assert box_c["y"] >= box_r["y"] + box_r["height"] - 1, (box_r, box_c)  # stacked
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "similarity-phone.png", full_page=True)
    page.set_viewport_size(WIDE)

    page.keyboard.press("5")  # not a key of this scale: nothing is chosen
    expect(page.locator(".choice.selected")).to_have_count(0)
    expect(page.locator("#submit")).to_be_disabled()
    given = {}
    for key in ["4", "1"]:
        item_text = reference.text_content()
        page.keyboard.press(key)
        expect(page.locator(f".choice[data-key='{key}']")).to_have_class(
            re.compile(r"\bselected\b")
        )
        given[item_text] = int(key)
        submit_with_enter(page)
    expect(page.locator("#done")).to_be_visible()

    stored = {
        label.item.content["reference"]: label.value
        for label in Label.objects.filter(batch=batch).select_related("item")
    }
    assert stored == {text.strip(): value for text, value in given.items()}
    assert [label.value for label in labels_of("judge")] == [4, 1]


def test_a_refusal_after_a_typed_answer_stays_on_the_page(page: Page, live_server):
    # closing the batch mid-task: the answer is kept, and the next item is refused; hiding
    # the form blurs the typed answer, whose change event must not wipe the explanation
    batch = make_study("short_text", slug="browser-short-closed", n_items=3, per_item=1)
    enter_study(page, live_server, batch, "closer")
    page.keyboard.type("green")
    change_state(batch, "closed")
    page.keyboard.press("Enter")
    status = page.locator("#status")
    expect(page.locator("#rating")).to_be_hidden()
    expect(status).to_be_visible()
    expect(status).to_contain_text("closed")
    page.wait_for_timeout(300)  # any late event has run
    expect(status).to_contain_text("closed")
    assert [label.text for label in labels_of("closer")] == ["green"]
