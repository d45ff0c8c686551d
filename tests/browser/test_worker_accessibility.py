"""The crowdworker's pages through axe-core at a desktop (1280×900) and a phone (390×844)
size: consent (entry), questionnaire (as first shown and with a problem), the rating page
of every kind with long, nasty content (also with the instructions open, an option
chosen, and the key help open), the page's own end (completion code), the notices
(study full, screened out, done), the "open in another browser" page and a paused
study's page. Every violation of any impact fails.

A full-page screenshot of each state goes to ``test-artifacts/a11y-worker-*.png``.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotator
from annotation.services.annotators import exclude_annotator
from annotation.services.batches import change_state
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import PHONE, WIDE
from tests.browser.nasty_items import LONG_INSTRUCTIONS, NASTY_TEXTS, make_nasty_study
from tests.factories import make_batch, make_participant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DONE_URL = "https://app.prolific.com/submissions/complete?cc=A11Y"
PROLIFIC = "PROLIFIC_PID={}&STUDY_ID=s&SESSION_ID=x"
CONSENT = (
    "# Consent\n\nYou are invited to take part in a study about language models.\n\n"
    "## What you do\n\n- read answers\n- rate them\n\n"
    "#### Data\n\nYour answers are stored under a pseudonym. Contact: "
    "[the team](https://example.org/contact).\n\n"
    "```\nan example of a long line in a consent text, which should scroll sideways on its own "
    "rather than widen the page for everyone reading it on a phone\n```"
)
QUESTIONS = [
    {"id": "english", "text": "Is English your first language?", "type": "choice",
     "options": ["yes", "no"]},
    {"id": "age", "text": "Your age in years", "type": "number", "min": 18, "max": 99},
    {"id": "field", "text": "Your field of work", "type": "text", "required": False},
]  # fmt: skip


def check(page: Page, artifacts, name: str, *, full_page: bool = True) -> None:
    """axe-core at both sizes (the page as it is now), with a screenshot of each (of the
    screen only for the rating page, whose long texts make a very tall page)."""
    for size, viewport in (("desktop", WIDE), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(50)  # let the page's resize handlers run
        page.screenshot(path=artifacts / f"a11y-worker-{name}-{size}.png", full_page=full_page)
        assert_no_axe_violations(page, name=f"{name} ({size})")
    page.set_viewport_size(WIDE)


def start_rating(page: Page, live_server, batch, worker: str) -> None:
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format(worker)}")
    page.locator("#start").click()
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    expect(page.locator("#rating")).to_be_visible()


def test_entry_and_questionnaire(page: Page, live_server, artifacts):
    batch = make_batch(n_items=2, per_item=1, questionnaire=QUESTIONS, completion_url=DONE_URL)
    batch.consent_text = CONSENT
    batch.instructions = LONG_INSTRUCTIONS
    batch.save()
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('reader')}")
    expect(page.locator("#start")).to_be_focused()
    check(page, artifacts, "entry")

    page.locator("#start").click()
    expect(page).to_have_url(re.compile(r"/questionnaire$"))
    check(page, artifacts, "questionnaire")
    page.get_by_label("yes").check()
    page.get_by_label("Your age in years").fill("12")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator(".field-problem")).to_be_visible()
    check(page, artifacts, "questionnaire-problem")


@pytest.mark.parametrize("kind", ["absolute", "pairwise", "similarity", "short_text"])
def test_rating_page_of_every_kind(page: Page, live_server, artifacts, kind):
    batch = make_nasty_study(kind, slug=f"a11y-{kind.replace('_', '-')}", combined=True)
    start_rating(page, live_server, batch, f"rater-{kind}")
    if kind != "short_text":
        expect(page.locator("#item")).to_contain_text("END-OF-")
    check(page, artifacts, f"rating-{kind}", full_page=False)

    page.locator("#instructions summary").click()
    expect(page.locator("#instructions-text")).to_be_visible()
    if kind == "short_text":
        page.locator("#answer").fill("teal")
    else:
        page.keyboard.press("2")
        expect(page.locator(".choice.selected")).to_have_count(1)
    check(page, artifacts, f"rating-{kind}-instructions-chosen", full_page=False)

    page.locator("#keys-button").click()
    expect(page.locator("#keys-help")).to_be_visible()
    check(page, artifacts, f"rating-{kind}-keys", full_page=False)
    page.keyboard.press("Escape")
    expect(page.locator("#keys-help")).to_be_hidden()

    # the page's own end: thank you and the completion code
    page.locator("#submit").click()
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text("NASTY-DONE")
    check(page, artifacts, f"rating-{kind}-done")


def test_notices_elsewhere_and_unavailable(browser, page: Page, live_server, artifacts):
    # study full: a newcomer arrives after every slot was taken
    full = make_batch(n_items=1, per_item=1, completion_url=DONE_URL)
    early = make_participant(full, "early")
    submit_label(early.annotator, lease_next_item(full, early).assignment.pk, 3)
    page.goto(f"{live_server.url}/work/{full.slug}/?{PROLIFIC.format('late')}")
    expect(page.get_by_role("heading", name="This study is full")).to_be_visible()
    check(page, artifacts, "notice-full")

    # done: a worker who rated everything opens the link again
    done = make_batch(n_items=1, per_item=2, completion_url=DONE_URL)
    start_rating(page, live_server, done, "finisher")
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    page.goto(f"{live_server.url}/work/{done.slug}/?{PROLIFIC.format('finisher')}")
    expect(page.locator("#completion-code")).to_have_text(done.completion_code)
    check(page, artifacts, "notice-done")

    # screened out: excluded after taking part
    screened = make_batch(n_items=2, per_item=1, screen_out_code="SCREENED")
    start_rating(page, live_server, screened, "screened")
    annotator = Annotator.objects.get(platform="prolific", platform_id="screened")
    exclude_annotator(screened, annotator, reason="failed checks")
    page.goto(f"{live_server.url}/work/{screened.slug}/?{PROLIFIC.format('screened')}")
    expect(page.get_by_role("heading", name=re.compile("screened out"))).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text("SCREENED")
    check(page, artifacts, "notice-screened-out")

    # the same worker in a second browser
    other = browser.new_context(viewport=WIDE)
    try:
        second = other.new_page()
        second.goto(f"{live_server.url}/work/{done.slug}/?{PROLIFIC.format('finisher')}")
        expect(second.locator("#continue-here")).to_be_visible()
        check(second, artifacts, "elsewhere")
    finally:
        other.close()

    # a paused study
    change_state(full, "paused")
    page.goto(f"{live_server.url}/work/{full.slug}/?{PROLIFIC.format('late')}")
    expect(page.locator(".notice-message")).to_contain_text("paused")
    check(page, artifacts, "unavailable")


def test_long_consent_opens_at_the_top_on_a_phone(browser, live_server):
    """The Start button has the focus, but the page does not jump past the consent."""
    batch = make_batch(n_items=1, per_item=1)
    batch.consent_text = CONSENT + "\n\n" + NASTY_TEXTS["long-answer"]
    batch.save()
    context = browser.new_context(viewport=PHONE, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/work/{batch.slug}/?worker=phone-reader")
        expect(page.locator("#start")).to_be_focused()
        assert page.evaluate("() => document.documentElement.scrollHeight") > 3 * PHONE["height"]
        assert page.evaluate("() => window.scrollY") == 0
        expect(page.get_by_role("heading", name=batch.title)).to_be_in_viewport()
    finally:
        context.close()


def _is_dark(page: Page) -> bool:
    """Whether the page's background is dark (relative luminance under 0.2)."""
    return page.evaluate(
        """() => {
            const [r, g, b] = getComputedStyle(document.documentElement).backgroundColor
                .match(/\\d+/g).slice(0, 3).map((v) => Number(v) / 255)
                .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
            return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.2;
        }"""
    )


@pytest.mark.parametrize("kind", ["pairwise", "short_text"])
def test_the_worker_pages_in_dark_mode_with_reduced_motion(browser, live_server, artifacts, kind):
    """A participant whose system is dark and asks for less motion: the same pages, dark,
    axe-clean (contrast included), and no fading "Saved" cue."""
    context = browser.new_context(viewport=WIDE, color_scheme="dark", reduced_motion="reduce")
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        batch = make_nasty_study(kind, slug=f"dark-{kind.replace('_', '-')}", combined=True)
        batch.consent_text = CONSENT
        batch.allow_cant_judge = True
        batch.comment_box = "optional"
        batch.save()
        page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('night-' + kind)}")
        assert _is_dark(page)
        check(page, artifacts, f"dark-entry-{kind}")
        page.locator("#start").click()
        expect(page.locator("#rating")).to_be_visible()
        assert _is_dark(page)
        page.locator("#instructions summary").click()
        if kind == "short_text":
            page.locator("#answer").fill("teal")
        else:
            page.keyboard.press("2")
        check(page, artifacts, f"dark-rating-{kind}", full_page=False)
        if kind == "short_text":  # in the answer field 0 is text: a click
            page.locator("#cant-judge").click()
        else:
            page.keyboard.press("0")
        expect(page.locator("#cant-judge")).to_have_attribute("aria-pressed", "true")
        check(page, artifacts, f"dark-rating-{kind}-pass", full_page=False)
        page.locator("#keys-button").click()
        check(page, artifacts, f"dark-rating-{kind}-keys", full_page=False)
        page.keyboard.press("Escape")
        page.locator("#submit").click()
        expect(page.locator("#done")).to_be_visible()
        animation = page.evaluate(
            "() => getComputedStyle(document.getElementById('saved')).animationName"
        )
        assert animation == "none"
        check(page, artifacts, f"dark-done-{kind}")
    finally:
        context.close()
