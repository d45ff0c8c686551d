"""Every ending a worker can meet, and the waiting page, in Chromium at both sizes:
nothing marked ``hidden`` is displayed, no link leads nowhere (``#`` or no address),
the wording fits the ending (a screened-out worker never reads "completion"), and axe
finds no violation. The waiting page lets the worker in by itself once a held slot
comes back (SPEC.md, "Admission and leaving")."""

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotator
from annotation.services.annotators import exclude_annotator
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import PHONE, WIDE
from tests.factories import make_batch, make_participant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECT_TIMEOUT_MS = 15_000
PROLIFIC = "PROLIFIC_PID={}&STUDY_ID=s&SESSION_ID=x"

# what is on screen: elements marked hidden that are displayed anyway, and links to nowhere
SHOWN_HIDDEN = """() => [...document.querySelectorAll('[hidden]')]
  .filter((el) => getComputedStyle(el).display !== 'none').map((el) => el.id || el.tagName)"""
NOWHERE_LINKS = """() => [...document.querySelectorAll('a')]
  .filter((a) => a.offsetParent !== null)
  .filter((a) => !a.getAttribute('href') || a.getAttribute('href') === '#')
  .map((a) => a.id || a.textContent.trim())"""


def check_ending(page: Page, name: str) -> None:
    for size, viewport in (("desktop", WIDE), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(50)
        assert page.evaluate(SHOWN_HIDDEN) == [], f"{name} ({size}): hidden shown"
        assert page.evaluate(NOWHERE_LINKS) == [], f"{name} ({size}): a link to nowhere"
        assert_no_axe_violations(page, name=f"{name} ({size})")
    page.set_viewport_size(WIDE)


def visible_text(page: Page) -> str:
    return page.locator("main").inner_text()


def rate_one(page: Page, live_server, batch, worker: str) -> None:
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format(worker)}")
    page.locator("#start").click()
    page.wait_for_url(re.compile(rf"/work/{batch.slug}/task$"))
    expect(page.locator("#rating")).to_be_visible()
    page.keyboard.press("3")
    page.keyboard.press("Enter")


def test_completed_on_the_rating_page_without_and_with_an_address(page: Page, live_server):
    plain = make_batch(n_items=1, per_item=1)
    rate_one(page, live_server, plain, "no-address")
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#code-label")).to_have_text("Your completion code:")
    expect(page.locator("#completion-link")).to_be_hidden()
    check_ending(page, "completed-no-address")

    linked = make_batch(n_items=1, per_item=1, completion_url="https://app.example.org/done")
    rate_one(page, live_server, linked, "with-address")
    expect(page.locator("#completion-link")).to_have_attribute(
        "href", "https://app.example.org/done"
    )
    check_ending(page, "completed-with-address")


def test_screened_out_on_the_rating_page_and_on_the_entry_page(page: Page, live_server):
    batch = make_batch(
        n_items=3, per_item=1, screen_out_code="SCREEN42", screen_out_url="https://x.org/so"
    )
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('screened')}")
    page.locator("#start").click()
    expect(page.locator("#rating")).to_be_visible()
    exclude_annotator(batch, Annotator.objects.get(platform_id="screened"), reason="checks")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#code-label")).to_have_text("Your screen-out code:")
    expect(page.locator("#completion-link")).to_have_attribute("href", "https://x.org/so")
    assert "completion" not in visible_text(page).lower()
    check_ending(page, "screened-out-rating-page")

    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('screened')}")
    expect(page.get_by_role("heading", name=re.compile("screened out"))).to_be_visible()
    assert "completion" not in visible_text(page).lower()
    check_ending(page, "screened-out-entry")


def test_full_and_thanks_endings(page: Page, live_server):
    batch = make_batch(n_items=1, per_item=1)
    early = make_participant(batch, "early")
    submit_label(early.annotator, lease_next_item(batch, early).assignment.pk, 3)
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('late')}")
    expect(page.locator("#return-study")).to_contain_text("return the study")
    check_ending(page, "full-prolific")

    page.goto(f"{live_server.url}/work/{batch.slug}/?worker=invited-late")
    expect(page.get_by_role("heading", name="This study is full")).to_be_visible()
    assert "return" not in visible_text(page).lower()
    check_ending(page, "full-invitation")


def test_the_waiting_page_lets_the_worker_in_once_the_held_slot_comes_back(page: Page, live_server):
    """The holder walks away; when their lease runs out the page, which asks again when
    the server said, goes on to the consent form by itself."""
    batch = make_batch(n_items=1, per_item=1, lease_seconds=6)
    holder = make_participant(batch, "holder")
    assert lease_next_item(batch, holder).assignment is not None
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('waiting')}")
    expect(page.get_by_role("heading", name="The last items are being worked on")).to_be_visible()
    expect(page.locator("#wait-countdown")).to_contain_text("Next check in")
    check_ending(page, "waiting")
    expect(page.locator("#start")).to_be_visible()


def test_the_waiting_page_gives_up_with_the_full_ending(page: Page, live_server):
    batch = make_batch(n_items=1, per_item=1, lease_seconds=600, wait_for_release_seconds=3)
    holder = make_participant(batch, "holder")
    lease_next_item(batch, holder)
    page.goto(f"{live_server.url}/work/{batch.slug}/?{PROLIFIC.format('patient')}")
    expect(page.get_by_role("heading", name="The last items are being worked on")).to_be_visible()
    expect(page.get_by_role("heading", name="No place came back in time")).to_be_visible()
    expect(page.locator("#return-study")).to_contain_text("return the study")
    check_ending(page, "waited-out")
